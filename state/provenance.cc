#include "state/provenance.h"

#include <string>

#include "base/name.h"

namespace limbic::state {

bool IsAttributed(EventType type) {
  switch (type) {
    case EventType::kPerceptArrived:
    case EventType::kPerceptAssigned:
    case EventType::kPerceptProcessed:
    case EventType::kPerceptDropped:
    case EventType::kPerceptRemoved:
    case EventType::kThreadCreated:
    case EventType::kThreadUpdated:
    case EventType::kThreadPaused:
    case EventType::kThreadCompleted:
    case EventType::kThreadDeleted:
    case EventType::kArousalSet:
    case EventType::kArousalFactorSet:
    case EventType::kActionEnqueued:
    case EventType::kActionSent:
    case EventType::kActionComplete:
    case EventType::kActionFailed:
    case EventType::kActionDead:
    case EventType::kActionApproved:
    case EventType::kActionRejected:
    case EventType::kActionRetried:
    case EventType::kActionsPruned:
    case EventType::kReflexPut:
    case EventType::kReflexDeleted:
    case EventType::kReflexEnabled:
    case EventType::kEntryStaged:
    case EventType::kSegmentsAccepted:
    case EventType::kPrimaryPromoted:
    case EventType::kMindWoken:
    case EventType::kMindSlept:
      return true;
    case EventType::kReflexFired:
    case EventType::kMemoryStored:
    case EventType::kMemorySuperseded:
    case EventType::kMemoryTouched:
    case EventType::kMemoryForgotten:
    case EventType::kMemoryEmbedded:
    case EventType::kAssociationAdded:
    case EventType::kDocumentIngested:
    case EventType::kReflexesEvaluated:
    case EventType::kDedupPruned:
    case EventType::kMindStep:
      return false;
  }
  return false;
}

void Attribute(std::vector<Event>& events, std::string_view actor, std::string_view reason) {
  for (Event& e : events) {
    if (!IsAttributed(e.type)) continue;
    if (!actor.empty() && !e.fields.contains("actor")) e.fields["actor"] = std::string(actor);
    if (!reason.empty() && !e.fields.contains("reason")) e.fields["reason"] = std::string(reason);
  }
}

Status CheckActor(std::string_view actor) { return CheckName("actor", actor); }

}  // namespace limbic::state
