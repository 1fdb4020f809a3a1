#include "bench/limbic_store.h"

#include "state/commands.h"
#include "state/engine.h"
#include "state/recency.h"

namespace limbic::bench {
namespace {

using state::Engine;
using state::Event;
using state::EventType;
using state::Events;

class LimbicStore final : public Store {
 public:
  LimbicStore(std::unique_ptr<Engine> engine, size_t window)
      : engine_(std::move(engine)), window_(window) {}

  Result<PreloadIds> Preload(const bench::Preload& p) override {
    PreloadIds ids;
    Events batch;
    auto flush = [&]() -> Status {
      if (batch.empty()) return Status::OK();
      Status s = engine_->Submit(std::move(batch), nullptr);
      batch.clear();
      if (engine_->pending_batches() > 64) (void)engine_->Poll(true);
      return s;
    };
    // Ids are "<prefix>-<seq>": the seq each creating event will get.
    auto next_seq = [&] { return engine_->next_seq() + batch.size(); };
    auto add = [&](Result<Events> events) -> Status {
      if (!events.ok()) return events.status();
      for (Event& e : *events) batch.push_back(std::move(e));
      return batch.size() >= 4096 ? flush() : Status::OK();
    };
    for (size_t t = 0; t < p.threads; ++t) {
      ids.threads.push_back("t-" + std::to_string(next_seq()));
      LIMBIC_RETURN_IF_ERROR(add(state::BuildThreadCreate(
          {{"goal", "preloaded thread " + std::to_string(t)}, {"salience", 0.5}},
          next_seq())));
    }
    for (size_t i = 0; i < p.percepts.size(); ++i) {
      ids.percepts.push_back("p-" + std::to_string(next_seq()));
      LIMBIC_RETURN_IF_ERROR(add(state::BuildPerceptAdd(Request(p.percepts[i]), next_seq())));
      if (p.assign[i] >= 0) {
        LIMBIC_RETURN_IF_ERROR(add(state::BuildPerceptAssign(
            ids.percepts.back(), {{"thread_id", ids.threads[static_cast<size_t>(p.assign[i])]}})));
        if (p.processed[i]) LIMBIC_RETURN_IF_ERROR(add(state::BuildPerceptProcess(ids.percepts.back())));
      }
    }
    for (size_t a = 0; a < p.actions; ++a) {
      ids.actions.push_back("a-" + std::to_string(next_seq()));
      LIMBIC_RETURN_IF_ERROR(add(state::BuildActionEnqueue(
          {{"effector", "log"}, {"type", "ack"}, {"payload", {{"n", a}}}}, next_seq())));
      if (a % 2 == 1) LIMBIC_RETURN_IF_ERROR(add(CompleteEvents(ids.actions.back())));
    }
    LIMBIC_RETURN_IF_ERROR(flush());
    LIMBIC_RETURN_IF_ERROR(engine_->WaitIdle());
    LIMBIC_RETURN_IF_ERROR(engine_->Flush());
    return ids;
  }

  Result<std::string> AddPercept(const PerceptIn& p, Ack ack) override {
    return Submit(state::BuildPerceptAdd(Request(p), engine_->next_seq()), "percept_id",
                  std::move(ack));
  }
  Status AssignPercept(const std::string& percept, const std::string& thread, Ack ack) override {
    return Submit(state::BuildPerceptAssign(percept, {{"thread_id", thread}}), nullptr,
                  std::move(ack))
        .status();
  }
  Status ProcessPercept(const std::string& percept, Ack ack) override {
    return Submit(state::BuildPerceptProcess(percept), nullptr, std::move(ack)).status();
  }
  Result<std::string> CreateThread(const std::string& goal, double salience, Ack ack) override {
    return Submit(state::BuildThreadCreate({{"goal", goal}, {"salience", salience}},
                                           engine_->next_seq()),
                  "thread_id", std::move(ack));
  }
  Status UpdateThreadState(const std::string& thread, const json& patch, Ack ack) override {
    return Submit(state::BuildThreadUpdate(thread, {{"state", patch}}), nullptr, std::move(ack))
        .status();
  }
  Result<std::string> EnqueueAction(const std::string& effector, const std::string& type,
                                    const json& payload, const std::string& thread,
                                    Ack ack) override {
    json req = {{"effector", effector}, {"type", type}, {"payload", payload}};
    if (!thread.empty()) req["thread_id"] = thread;
    return Submit(state::BuildActionEnqueue(req, engine_->next_seq()), "action_id",
                  std::move(ack));
  }
  Status CompleteAction(const std::string& action, Ack ack) override {
    return Submit(CompleteEvents(action), nullptr, std::move(ack)).status();
  }

  Result<std::vector<json>> UnassignedBySource(const std::string& source,
                                               size_t limit) override {
    state::PerceptQuery q;
    q.source = source;
    q.status = "new";
    q.limit = limit;
    return engine_->projection().QueryPercepts(q, engine_->clock().Now());
  }
  Result<std::vector<json>> PerceptsByThread(const std::string& thread,
                                             size_t limit) override {
    state::PerceptQuery q;
    q.thread_id = thread;
    q.limit = limit;
    return engine_->projection().QueryPercepts(q, engine_->clock().Now());
  }
  Result<std::vector<json>> PerceptsBySourceSince(const std::string& source, TimeMs max_age,
                                                  size_t limit) override {
    state::PerceptQuery q;
    q.source = source;
    q.max_age = max_age;
    q.limit = limit;
    return engine_->projection().QueryPercepts(q, engine_->clock().Now());
  }
  Result<std::vector<json>> TopActiveThreads(size_t limit) override {
    return state::ThreadsBySalience(engine_->projection(), std::string("active"),
                                    engine_->clock().Now(), state::RecencyParams(), limit);
  }
  Result<json> Arousal() override {
    auto a = engine_->projection().GetArousal();
    if (!a.ok()) return a.status();
    return json{{"level", (*a)["level"]}, {"factors", (*a)["factors"]}};
  }

  void Poll(bool block) override { (void)engine_->Poll(block); }
  size_t max_inflight() const override { return window_; }
  size_t inflight() const override { return engine_->pending_batches(); }

 private:
  static json Request(const PerceptIn& p) {
    return {{"source", p.source}, {"type", p.type}, {"intensity", p.intensity},
            {"text", p.text}, {"data", p.data}};
  }
  // What the outbox records for a successful first delivery.
  static Events CompleteEvents(const std::string& action) {
    return {Event{0, 0, EventType::kActionSent, {{"action_id", action}, {"attempt", 1}}},
            Event{0, 0, EventType::kActionComplete, {{"action_id", action}, {"attempt", 1}}}};
  }
  // Submits `events`; the id is the `id_field` of the first event (ids are
  // assigned when the command is built).
  Result<std::string> Submit(Result<Events> events, const char* id_field, Ack ack) {
    if (!events.ok()) return events.status();
    std::string id = id_field ? events->front().Str(id_field) : std::string();
    Status s = engine_->Submit(std::move(events).value(),
                               [ack = std::move(ack)](const Status& st, std::span<const Event>) {
                                 if (st.ok() && ack) ack();
                               });
    if (!s.ok()) return s;
    return id;
  }

  std::unique_ptr<Engine> engine_;
  size_t window_;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenLimbicStore(const LimbicStoreOptions& options) {
  state::EngineOptions eo;
  eo.state_dir = options.dir;
  eo.durability = options.durability;
  auto engine = state::Engine::Open(eo);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Store>(new LimbicStore(std::move(engine).value(), options.window));
}

}  // namespace limbic::bench
