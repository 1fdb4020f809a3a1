#include "bench/workload.h"

#include <array>

namespace limbic::bench {

PerceptIn MakePercept(std::mt19937_64& rng, uint64_t i) {
  static const char* const kTypes[] = {"message", "issues.opened", "mention", "tick", "email"};
  static const char* const kWords[] = {"build", "failed", "review", "please", "deploy", "urgent",
                                       "question", "meeting", "invoice", "crash", "release", "ok"};
  PerceptIn p;
  p.source = kSources[rng() % kSourceCount];
  p.type = kTypes[rng() % 5];
  p.intensity = static_cast<double>(rng() % 101) / 100.0;
  p.text = "percept " + std::to_string(i) + ":";
  while (p.text.size() < 80) p.text += std::string(" ") + kWords[rng() % 12];
  p.data = {{"n", i}, {"user", "u" + std::to_string(rng() % 1000)}};
  return p;
}

Preload MakePreload(size_t live, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Preload p;
  p.threads = std::max<size_t>(10, live / 20);
  p.actions = live / 10;
  p.percepts.reserve(live);
  for (size_t i = 0; i < live; ++i) {
    p.percepts.push_back(MakePercept(rng, i));
    bool assigned = rng() % 2 == 0;
    p.assign.push_back(assigned ? static_cast<int>(rng() % p.threads) : -1);
    p.processed.push_back(assigned && rng() % 10 < 6);
  }
  return p;
}

const char* OpName(Op op) {
  switch (op) {
    case Op::kAddPercept: return "add_percept";
    case Op::kUnassignedBySource: return "unassigned_by_source";
    case Op::kCreateThread: return "create_thread";
    case Op::kAssignPercept: return "assign_percept";
    case Op::kProcessPercept: return "process_percept";
    case Op::kUpdateThreadState: return "update_thread_state";
    case Op::kEnqueueAction: return "enqueue_action";
    case Op::kCompleteAction: return "complete_action";
    case Op::kTopThreads: return "top_threads";
    case Op::kReadArousal: return "read_arousal";
    case Op::kPerceptsByThread: return "percepts_by_thread";
    case Op::kPerceptsBySourceSince: return "percepts_by_source_since";
  }
  return "?";
}

bool IsWrite(Op op) {
  switch (op) {
    case Op::kAddPercept:
    case Op::kCreateThread:
    case Op::kAssignPercept:
    case Op::kProcessPercept:
    case Op::kUpdateThreadState:
    case Op::kEnqueueAction:
    case Op::kCompleteAction:
      return true;
    default:
      return false;
  }
}

std::vector<Step> MixedSteps(size_t n, uint64_t seed) {
  // The proportions of workload.h, as a table of 100 slots.
  static const std::array<std::pair<Op, int>, 10> kMix = {{{Op::kAddPercept, 30},
                                                           {Op::kUnassignedBySource, 12},
                                                           {Op::kCreateThread, 4},
                                                           {Op::kAssignPercept, 12},
                                                           {Op::kProcessPercept, 8},
                                                           {Op::kUpdateThreadState, 8},
                                                           {Op::kEnqueueAction, 6},
                                                           {Op::kCompleteAction, 6},
                                                           {Op::kTopThreads, 8},
                                                           {Op::kReadArousal, 6}}};
  std::vector<Op> slots;
  for (const auto& [op, weight] : kMix) slots.insert(slots.end(), static_cast<size_t>(weight), op);
  std::mt19937_64 rng(seed);
  std::vector<Step> steps;
  steps.reserve(n);
  for (size_t i = 0; i < n; ++i) steps.push_back({slots[rng() % slots.size()], rng(), rng()});
  return steps;
}

std::vector<Step> QuerySteps(size_t n, uint64_t seed) {
  static const Op kOps[] = {Op::kPerceptsByThread, Op::kPerceptsBySourceSince, Op::kTopThreads};
  std::mt19937_64 rng(seed);
  std::vector<Step> steps;
  steps.reserve(n);
  for (size_t i = 0; i < n; ++i) steps.push_back({kOps[rng() % 3], rng(), rng()});
  return steps;
}

}  // namespace limbic::bench
