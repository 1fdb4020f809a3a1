// What the API's handlers get from a Runtime (api.h ApiServices): its
// services, and the few answers only the runtime has -- replication's
// state, promotion, the sandbox, effective arousal, sensors and rules.
#include "runtime/api/api.h"
#include "runtime/runtime.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

ReplicationHealth ReplicationOf(Runtime& rt) {
  ReplicationHealth out;
  out.gate = rt.following() ? Status::OK() : rt.engine().write_gate();
  if (Replicator* r = rt.replicator()) {
    Replicator::Snapshot s = r->snapshot();
    out.report = {{"role", "primary"},
                  {"mode", s.mode},
                  {"connected", s.connected},
                  {"durable_seq", s.durable_seq},
                  {"replicated_seq", s.replicated_seq},
                  {"lag", s.lag()},
                  {"stream_seq", s.stream_seq},
                  {"stream_last_seq", s.stream_last_seq}};
    if (!s.fenced.empty()) out.report["fenced"] = s.fenced;
    if (!s.error.empty()) out.report["error"] = s.error;
    out.lagging = r->health();
  } else if (Follower* f = rt.follower()) {
    Follower::Snapshot s = f->snapshot();
    out.report = {{"role", "standby"},
                  {"connected", s.connected},
                  {"applied_seq", s.applied_seq},
                  {"stream_last_seq", s.stream_last_seq},
                  {"lag", s.lag()}};
    if (!s.error.empty()) {
      out.report["error"] = s.error;
      out.lagging = Status::Unavailable("the standby cannot follow: " + s.error);
    }
  }
  return out;
}

}  // namespace

ApiServices ApiServicesOf(Runtime& rt) {
  return ApiServices{
      .engine = rt.engine(),
      .config = rt.config(),
      .archive = rt.archive(),
      .memory = rt.memory(),
      .ingest = rt.ingest(),
      .embed = rt.embed(),
      .world = rt.world(),
      .hub = rt.hub(),
      .metrics = rt.metrics(),
      .ioc = rt.ioc(),
      .effective_arousal = [&rt] { return rt.EffectiveArousal(); },
      .rule_context = [&rt] { return rt.MakeRuleContext(); },
      .sensor = [&rt](const std::string& name) { return rt.sensor(name); },
      .replication = [&rt] { return ReplicationOf(rt); },
      .promote = [&rt](std::function<void(Status, json)> done) { rt.Promote(std::move(done)); },
      .sandbox = [&rt] { return rt.sandbox() ? rt.sandbox()->ToJson() : json(); },
      .mind = [&rt] { return rt.mind(); },
  };
}

}  // namespace limbic::runtime
