#include "runtime/submit.h"

#include "effectors/effector.h"
#include "state/provenance.h"

namespace limbic::runtime {

Status SubmitCommand(state::Engine& engine, Result<state::Events> events, const Writer& writer,
                     state::Engine::Done done) {
  if (!events.ok()) return events.status();
  if (events->empty()) {
    // The engine refuses an empty batch; for a writer it is "nothing to do".
    if (done) done(Status::OK(), {});
    return Status::OK();
  }
  static const nlohmann::json kNoEffectors;
  LIMBIC_RETURN_IF_ERROR(
      effectors::PrepareEnqueued(writer.effectors ? *writer.effectors : kNoEffectors, &*events));
  state::Attribute(*events, writer.actor, writer.reason);
  if (!writer.wait) return engine.Submit(std::move(events).value(), std::move(done));
  std::vector<state::Event> committed;
  LIMBIC_RETURN_IF_ERROR(engine.Commit(std::move(events).value(), &committed));
  if (done) done(Status::OK(), committed);
  return Status::OK();
}

}  // namespace limbic::runtime
