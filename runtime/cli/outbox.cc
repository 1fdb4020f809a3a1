// arousal / action / attention: the outbox side of the offline admin path
// and what the mind should work on now. As in cli_pools.cc, each write
// builds the HTTP API's request object (and goes to a running runtime's API
// while it holds the state dir).
#include <cstdio>
#include <iostream>

#include "runtime/attention.h"
#include "runtime/cli/pools.h"
#include "runtime/config.h"
#include "state/replay.h"

namespace limbic::runtime::pools {

namespace {

struct ArousalArgs {
  std::optional<double> level;
  std::vector<std::string> factors;
  std::string reason;
};

int GetArousal(const CliContext& ctx, const ArousalArgs&) {
  return WithReader(ctx, [&](Engine& e, TimeMs now) {
    auto arousal = e.projection().GetArousal();
    if (!arousal.ok()) return Fail(arousal.status());
    state::PerceptQuery q;
    q.max_age = ctx.recency.arousal_window;
    q.limit = 0;
    auto recent = e.projection().QueryPercepts(q, now);
    if (!recent.ok()) return Fail(recent.status());
    json out = *arousal;
    out["effective"] = state::EffectiveArousal(*arousal, *recent, now, ctx.recency);
    if (ctx.json) {
      PrintJson(out);
      return 0;
    }
    std::printf("level %.2f  effective %.2f  factors %s\n", out["level"].get<double>(),
                out["effective"].get<double>(), out["factors"].dump().c_str());
    return 0;
  });
}

int SetArousal(const CliContext& ctx, const ArousalArgs& s) {
  json req = json::object();
  PutIf(req, "level", s.level);
  PutIf(req, "reason", s.reason);
  for (const std::string& f : s.factors) {
    auto eq = f.find('=');
    if (eq == std::string::npos)
      return Fail(Status::InvalidArgument("--factor \"" + f + "\": want NAME=VALUE"));
    std::string value = f.substr(eq + 1);
    auto v = ParseInputJson(value);
    // A bare word is a string.
    req["factors"][f.substr(0, eq)] = v.ok() ? std::move(v).value() : json(value);
  }
  return WithWriter(ctx, {"set_arousal", {}, req}, [&](Engine& e) {
    return CommitAndReport(ctx, e, state::BuildArousalSet(req), "");
  });
}

}  // namespace

void AddArousal(CLI::App& app, CliContext& ctx, int& rc) {
  auto s = std::make_shared<ArousalArgs>();
  auto* cmd = app.add_subcommand("arousal", "get or set the agent's arousal");
  cmd->require_subcommand(1);
  auto* get = cmd->add_subcommand("get", "level, factors and effective level");
  get->callback(Action(ctx, rc, s, GetArousal));

  auto* set = cmd->add_subcommand("set", "set the level and/or factors");
  set->add_option("--level", s->level, "0..1");
  set->add_option("--factor", s->factors,
                  "NAME=VALUE, VALUE a JSON scalar (true, 3, \"x\", null); repeatable");
  set->add_option("--reason", s->reason, "why");
  set->callback(Action(ctx, rc, s, SetArousal));
}

namespace {

// `action enqueue` with no runtime holding the state dir: checked against
// the effectors the last `limbic run` had (RememberedEffectors), as that
// runtime's API would check it, and said to wait for a runtime.
int EnqueueOffline(const CliContext& ctx, Engine& e, const json& req) {
  auto effectors = RememberedEffectors(ctx.state_dir);
  if (!effectors.ok()) return Fail(effectors.status());
  std::vector<state::Event> committed;
  int code = CommitAndReport(ctx, e, state::BuildActionEnqueue(req, e.next_seq()), "action_id",
                             &*effectors, &committed);
  // The policy marks an action whose effector requires approval.
  const bool waits =
      !committed.empty() && committed.front().fields.value("require_approval", false);
  if (code == 0 && !ctx.json)
    std::cerr << "limbic: no runtime holds " << ctx.state_dir << ": the action stays "
              << (waits ? "pending_approval until approved, then pending" : "pending")
              << " until `limbic run` starts and delivers it\n";
  return code;
}

struct ActionArgs {
  std::string id, effector, type, payload, key, thread, percept, status, older_than = "24h", reason;
  bool require_approval = false;
};

int EnqueueAction(const CliContext& ctx, const ActionArgs& a) {
  json req = {{"effector", a.effector}, {"type", a.type}};
  if (!a.payload.empty()) {
    auto p = ParseInputJson(a.payload);
    if (!p.ok()) return Fail(p.status().WithContext("--payload"));
    req["payload"] = std::move(p).value();
  }
  PutIf(req, "idempotency_key", a.key);
  PutIf(req, "thread_id", a.thread);
  PutIf(req, "percept_id", a.percept);
  PutIf(req, "id", a.id);
  PutIf(req, "reason", a.reason);
  if (a.require_approval) req["require_approval"] = true;
  return WithWriter(ctx, {"enqueue_action", {}, req},
                    [&](Engine& e) { return EnqueueOffline(ctx, e, req); });
}

// A decision on action a.id ({reason?}): `build` makes its events; a
// running runtime gets the API operation `op` (approve_action, ...).
int DecideAction(const CliContext& ctx, const ActionArgs& a, const char* op,
                 Result<state::Events> (*build)(std::string_view, const json&)) {
  json req = json::object();
  PutIf(req, "reason", a.reason);
  return WithWriter(ctx, {op, {{"id", a.id}}, req}, [&](Engine& e) {
    return CommitAndReport(ctx, e, build(a.id, req), "action_id");
  });
}

int ApproveAction(const CliContext& ctx, const ActionArgs& a) {
  return DecideAction(ctx, a, "approve_action", state::BuildActionApprove);
}
int RejectAction(const CliContext& ctx, const ActionArgs& a) {
  return DecideAction(ctx, a, "reject_action", state::BuildActionReject);
}
int RetryAction(const CliContext& ctx, const ActionArgs& a) {
  return DecideAction(ctx, a, "retry_action", state::BuildActionRetry);
}

int ShowAction(const CliContext& ctx, const ActionArgs& a) {
  return ShowRecord(ctx, state::Pool::kActions, "action", a.id,
                    [](Engine&, const json& action, TimeMs) -> Result<json> { return action; });
}

int ListActions(const CliContext& ctx, const ActionArgs& a) {
  return WithReader(ctx, [&](Engine& e, TimeMs) {
    std::optional<std::string> status;
    if (!a.status.empty()) status = a.status;
    auto actions = e.projection().ListActions(status);
    if (!actions.ok()) return Fail(actions.status());
    if (ctx.json) {
      PrintJson(*actions);
      return 0;
    }
    std::printf("%-12s %-16s %-12s %-16s %4s %s\n", "ID", "STATUS", "EFFECTOR", "TYPE", "TRY",
                "LAST ERROR");
    for (const json& x : *actions)
      std::printf("%-12s %-16s %-12s %-16s %4s %s\n", Str(x["id"]).c_str(),
                  Str(x["status"]).c_str(), Short(Str(x["effector"]), 12).c_str(),
                  Short(Str(x["type"]), 16).c_str(), Str(x["attempts"]).c_str(),
                  Short(Str(x["last_error"]), 40).c_str());
    return 0;
  });
}

int PruneActions(const CliContext& ctx, const ActionArgs& a) {
  auto retention = ParseDuration(a.older_than);
  if (!retention.ok()) return Fail(retention.status());
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  return WithWriter(ctx, {"prune_actions", {}, {{"older_than", a.older_than}}},
                    [&](Engine& e) {
                      return CommitAndReport(
                          ctx, e, state::BuildActionsPrune(e.projection(), *retention, *now), "");
                    });
}

}  // namespace

void AddAction(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd =
      app.add_subcommand("action", "enqueue, approve, retry, list and prune outbox actions");
  cmd->require_subcommand(1);
  auto args = std::make_shared<ActionArgs>();
  auto* enqueue = cmd->add_subcommand("enqueue", "queue an action for an effector");
  enqueue->add_option("--effector", args->effector, "effector name")->required();
  enqueue->add_option("--type", args->type, "action type (e.g. comment)")->required();
  enqueue->add_option("--payload", args->payload, "JSON payload");
  enqueue->add_option("--key", args->key, "idempotency key (default: the action id)");
  enqueue->add_option("--thread", args->thread, "the thread it belongs to");
  enqueue->add_option("--percept", args->percept, "the percept that caused it");
  enqueue->add_option("--id", args->id, "use this id instead of a generated one");
  enqueue->add_flag("--require-approval", args->require_approval,
                    "wait in pending_approval until `action approve` (or reject)");
  enqueue->add_option("--reason", args->reason, "why (kept in the event)");
  enqueue->callback(Action(ctx, rc, args, EnqueueAction));

  // approve ID / reject ID: a pending_approval action is delivered, or never.
  auto* approve = cmd->add_subcommand("approve", "let an action waiting for approval be delivered");
  approve->add_option("id", args->id, "action id")->required();
  approve->add_option("--reason", args->reason, "why (kept in the event)");
  approve->callback(Action(ctx, rc, args, ApproveAction));
  auto* reject =
      cmd->add_subcommand("reject", "refuse an action waiting for approval: never delivered");
  reject->add_option("id", args->id, "action id")->required();
  reject->add_option("--reason", args->reason, "why (kept in the event)");
  reject->callback(Action(ctx, rc, args, RejectAction));

  // retry ID: a dead action goes out again, with a fresh attempt budget.
  auto* retry = cmd->add_subcommand("retry", "send a dead action again (its attempts start over)");
  retry->add_option("id", args->id, "action id")->required();
  retry->add_option("--reason", args->reason, "why (kept in the event)");
  retry->callback(Action(ctx, rc, args, RetryAction));

  auto* show = cmd->add_subcommand("show", "one action: status, attempts, last error");
  show->add_option("id", args->id, "action id")->required();
  show->callback(Action(ctx, rc, args, ShowAction));

  auto* list = cmd->add_subcommand("list", "actions, oldest first");
  list->add_option("--status", args->status,
                   "pending_approval, pending, inflight, failed, complete, dead or rejected");
  list->callback(Action(ctx, rc, args, ListActions));

  auto* prune =
      cmd->add_subcommand("prune", "remove complete, dead and rejected actions from the pool");
  prune->add_option("--older-than", args->older_than, "last updated at least this long ago")
      ->capture_default_str();
  prune->callback(Action(ctx, rc, args, PruneActions));
}

namespace {

void PrintAttentionText(const json& a) {
  std::printf("arousal %.2f (effective %.2f)\n", a["arousal"]["level"].get<double>(),
              a["arousal"]["effective"].get<double>());
  auto line = [](const json& p) {
    std::printf("  %-12s %-24s %5.2f  %s\n", Str(p["id"]).c_str(),
                Short(Str(p["source"]) + "/" + Str(p["type"]), 24).c_str(),
                p["effective_intensity"].get<double>(), Short(p.value("text", ""), 60).c_str());
  };
  const json& t = a["thread"];
  if (t.is_null()) {
    std::printf("no active thread\n");
  } else {
    std::printf("thread %s  %s  (salience %.2f, effective %.2f, %zu unprocessed)\n",
                Str(t["id"]).c_str(), Short(Str(t["goal"]), 60).c_str(),
                t["salience"].get<double>(), t["effective_salience"].get<double>(),
                t["unprocessed"].get<size_t>());
    for (const json& p : a["thread_percepts"]) line(p);
  }
  std::printf("unassigned: %zu\n", a["unassigned"].size());
  for (const json& p : a["unassigned"]) line(p);
  const json& waiting = a.value("pending_approval", json::array());
  if (waiting.empty()) return;
  std::printf("waiting for approval: %zu (limbic action approve|reject ID)\n", waiting.size());
  for (const json& x : waiting)
    std::printf("  %-12s %-24s %s\n", Str(x["id"]).c_str(),
                Short(Str(x["effector"]) + "/" + Str(x["type"]), 24).c_str(),
                Short(Str(x["payload"]), 60).c_str());
}

struct AttentionArgs {
  std::string config;
  std::optional<uint64_t> at_seq;
};

int ShowAttention(const CliContext& ctx, const AttentionArgs& a) {
  auto c = a.config.empty() ? DefaultConfig() : LoadConfigFile(a.config);
  if (!c.ok()) return Fail(c.status());
  AttentionParams params{a.config.empty() ? ctx.recency : c->recency, c->attention_threshold,
                         c->attention_limit};
  auto print = [&](const state::Projection& p, TimeMs now) {
    auto out = AttentionFromPools(p, now, params);
    if (!out.ok()) return Fail(out.status());
    if (ctx.json)
      PrintJson(*out);
    else
      PrintAttentionText(*out);
    return 0;
  };
  if (!a.at_seq)
    return WithReader(ctx, [&](Engine& e, TimeMs now) { return print(e.projection(), now); });
  auto past = OpenPast(ctx, *a.at_seq);
  if (!past.ok()) return Fail(past.status());
  // The seq's own time, unless --now says otherwise.
  auto now = ctx.now_text ? ctx.Now() : Result<TimeMs>((*past)->replay().last_ts);
  return now.ok() ? print((*past)->projection(), *now) : Fail(now.status());
}

}  // namespace

void AddAttention(CLI::App& app, CliContext& ctx, int& rc) {
  auto args = std::make_shared<AttentionArgs>();
  auto* cmd = app.add_subcommand(
      "attention",
      "what to work on now: the focused thread, its percepts, new percepts by intensity");
  cmd->add_option("--config", args->config,
                  "config whose attention and recency settings to use (default: the built-in one)");
  cmd->add_option("--at-seq", args->at_seq,
                  "as it was right after this seq, at that event's time (time travel)")
      ->check(SeqOption());
  cmd->callback(Action(ctx, rc, args, ShowAttention));
}

}  // namespace limbic::runtime::pools
