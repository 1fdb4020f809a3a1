#include "bench/driver.h"

#include <chrono>

namespace limbic::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Takes the element `pick` chooses out of `list` (order is not kept).
std::string Take(std::vector<std::string>& list, uint64_t pick) {
  size_t i = pick % list.size();
  std::string id = std::move(list[i]);
  list[i] = std::move(list.back());
  list.pop_back();
  return id;
}

}  // namespace

Driver::Driver(Store& store, const Preload& preload, const PreloadIds& ids) : store_(store) {
  for (size_t i = 0; i < ids.percepts.size(); ++i) {
    if (preload.assign[i] < 0) new_percepts_.push_back(ids.percepts[i]);
    else if (!preload.processed[i]) assigned_.push_back(ids.percepts[i]);
  }
  threads_ = ids.threads;
  for (size_t a = 0; a < ids.actions.size(); a += 2) pending_actions_.push_back(ids.actions[a]);
}

template <typename Call>
auto Driver::Write(RunStats* stats, Op op, Call call) {
  while (store_.inflight() >= store_.max_inflight()) store_.Poll(true);
  auto start = Clock::now();
  auto result = call([stats, start] { stats->latency_us.push_back(Us(Clock::now() - start)); });
  RunStats::PerOp& per = stats->by_op[static_cast<size_t>(op)];
  ++per.count;
  per.call_us += Us(Clock::now() - start);
  return result;
}

Status Driver::AddPercept(RunStats* stats) {
  PerceptIn p = MakePercept(percept_rng_, 1'000'000'000 + added_++);
  auto id = Write(stats, Op::kAddPercept,
                  [&](Ack ack) { return store_.AddPercept(p, std::move(ack)); });
  if (!id.ok()) return id.status();
  new_percepts_.push_back(*id);
  return Status::OK();
}

Status Driver::Do(const Step& step, RunStats* stats) {
  auto timed_read = [&](auto&& call) -> Status {
    auto start = Clock::now();
    auto r = call();
    double us = Us(Clock::now() - start);
    stats->latency_us.push_back(us);
    RunStats::PerOp& per = stats->by_op[static_cast<size_t>(step.op)];
    ++per.count;
    per.call_us += us;
    return r.status();
  };
  const std::string source = kSources[step.aux % kSourceCount];
  switch (step.op) {
    case Op::kAddPercept:
      return AddPercept(stats);
    case Op::kUnassignedBySource:
      return timed_read([&] { return store_.UnassignedBySource(source, 20); });
    case Op::kCreateThread: {
      double salience = 0.2 + static_cast<double>(step.aux % 80) / 100.0;
      auto id = Write(stats, step.op, [&](Ack ack) {
        return store_.CreateThread("work item " + std::to_string(step.pick % 100000), salience,
                                   std::move(ack));
      });
      if (!id.ok()) return id.status();
      threads_.push_back(*id);
      return Status::OK();
    }
    case Op::kAssignPercept: {
      if (new_percepts_.empty() || threads_.empty()) return AddPercept(stats);
      std::string percept = Take(new_percepts_, step.pick);
      const std::string& thread = threads_[step.aux % threads_.size()];
      Status s = Write(stats, step.op, [&](Ack ack) {
        return store_.AssignPercept(percept, thread, std::move(ack));
      });
      if (s.ok()) assigned_.push_back(percept);
      return s;
    }
    case Op::kProcessPercept: {
      if (assigned_.empty()) return AddPercept(stats);
      std::string percept = Take(assigned_, step.pick);
      return Write(stats, step.op, [&](Ack ack) { return store_.ProcessPercept(percept, std::move(ack)); });
    }
    case Op::kUpdateThreadState: {
      if (threads_.empty()) return AddPercept(stats);
      static const char* const kPhases[] = {"triage", "drafting", "waiting", "review"};
      json patch = {{"phase", kPhases[step.aux % 4]},
                    {"next_step", "step " + std::to_string(step.aux % 1000)},
                    {"context", {{"attempt", step.aux % 7}}}};
      const std::string& thread = threads_[step.pick % threads_.size()];
      return Write(stats, step.op, [&](Ack ack) {
        return store_.UpdateThreadState(thread, patch, std::move(ack));
      });
    }
    case Op::kEnqueueAction: {
      std::string thread = threads_.empty() ? "" : threads_[step.pick % threads_.size()];
      json payload = {{"text", "reply " + std::to_string(step.aux % 100000)}};
      auto id = Write(stats, step.op, [&](Ack ack) {
        return store_.EnqueueAction("log", "reply", payload, thread, std::move(ack));
      });
      if (!id.ok()) return id.status();
      pending_actions_.push_back(*id);
      return Status::OK();
    }
    case Op::kCompleteAction: {
      if (pending_actions_.empty()) return AddPercept(stats);
      std::string action = Take(pending_actions_, step.pick);
      return Write(stats, step.op, [&](Ack ack) { return store_.CompleteAction(action, std::move(ack)); });
    }
    case Op::kTopThreads:
      return timed_read([&] { return store_.TopActiveThreads(10); });
    case Op::kReadArousal:
      return timed_read([&] { return store_.Arousal(); });
    case Op::kPerceptsByThread: {
      if (threads_.empty()) return Status::OK();
      const std::string& thread = threads_[step.pick % threads_.size()];
      return timed_read([&] { return store_.PerceptsByThread(thread, 50); });
    }
    case Op::kPerceptsBySourceSince:
      return timed_read([&] { return store_.PerceptsBySourceSince(source, 3'600'000, 50); });
  }
  return Status::Internal("unknown op");
}

Result<RunStats> Driver::Run(const std::vector<Step>& steps, double budget_s) {
  RunStats stats;
  stats.latency_us.reserve(steps.size());
  auto start = Clock::now();
  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(budget_s));
  for (const Step& step : steps) {
    if (Clock::now() >= deadline) break;
    LIMBIC_RETURN_IF_ERROR(Do(step, &stats).WithContext(OpName(step.op)));
    ++stats.ops;
    if (store_.inflight() > 0) store_.Poll(false);
  }
  while (store_.inflight() > 0) store_.Poll(true);
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return stats;
}

}  // namespace limbic::bench
