// arousal / action / attention: the outbox side of the offline admin path
// and what the mind should work on now. As in cli_pools.cc, each write
// builds the HTTP API's request object (and goes to a running runtime's API
// while it holds the state dir).
#include <cstdio>
#include <iostream>

#include "effectors/effector.h"
#include "runtime/attention.h"
#include "runtime/cli_pools.h"
#include "runtime/config.h"
#include "state/replay.h"

namespace limbic::runtime::pools {

void AddArousal(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("arousal", "get or set the agent's arousal");
  cmd->require_subcommand(1);
  auto* get = cmd->add_subcommand("get", "level, factors and effective level");
  get->callback([&ctx, &rc] {
    rc = WithReader(ctx, [&](Engine& e, TimeMs now) {
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
  });

  struct Set {
    std::optional<double> level;
    std::vector<std::string> factors;
    std::string reason;
  };
  auto s = std::make_shared<Set>();
  auto* set = cmd->add_subcommand("set", "set the level and/or factors");
  set->add_option("--level", s->level, "0..1");
  set->add_option("--factor", s->factors,
                  "NAME=VALUE, VALUE a JSON scalar (true, 3, \"x\", null); repeatable");
  set->add_option("--reason", s->reason, "why");
  set->callback([&ctx, &rc, s] {
    json req = json::object();
    PutIf(req, "level", s->level);
    PutIf(req, "reason", s->reason);
    for (const std::string& f : s->factors) {
      auto eq = f.find('=');
      if (eq == std::string::npos) {
        rc = Fail(Status::InvalidArgument("--factor \"" + f + "\": want NAME=VALUE"));
        return;
      }
      std::string value = f.substr(eq + 1);
      auto v = ParseInputJson(value);
      // A bare word is a string.
      req["factors"][f.substr(0, eq)] = v.ok() ? std::move(v).value() : json(value);
    }
    rc = WithWriter(ctx, {"set_arousal", {}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildArousalSet(req), "");
    });
  });
}

namespace {

// `action enqueue` with no runtime holding the state dir: checked against
// the effectors the last `limbic run` had (RememberedEffectors), as that
// runtime's API would check it, and said to wait for a runtime.
int EnqueueOffline(const CliContext& ctx, Engine& e, const json& req) {
  auto effectors = RememberedEffectors(ctx.state_dir);
  if (!effectors.ok()) return Fail(effectors.status());
  auto events = state::BuildActionEnqueue(req, e.next_seq());
  if (events.ok()) {
    if (Status s = effectors::PrepareEnqueued(*effectors, &*events); !s.ok()) return Fail(s);
  }
  const bool waits = events.ok() && events->front().fields.value("require_approval", false);
  int code = CommitAndReport(ctx, e, std::move(events), "action_id");
  if (code == 0 && !ctx.json)
    std::cerr << "limbic: no runtime holds " << ctx.state_dir << ": the action stays "
              << (waits ? "pending_approval until approved, then pending" : "pending")
              << " until `limbic run` starts and delivers it\n";
  return code;
}

}  // namespace

void AddAction(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd =
      app.add_subcommand("action", "enqueue, approve, retry, list and prune outbox actions");
  cmd->require_subcommand(1);
  struct Args {
    std::string id, effector, type, payload, key, thread, percept, status, older_than = "24h",
                                                                           reason;
    bool require_approval = false;
  };
  auto args = std::make_shared<Args>();
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
  enqueue->callback([&ctx, &rc, args] {
    json req = {{"effector", args->effector}, {"type", args->type}};
    if (!args->payload.empty()) {
      auto p = ParseInputJson(args->payload);
      if (!p.ok()) {
        rc = Fail(p.status().WithContext("--payload"));
        return;
      }
      req["payload"] = std::move(p).value();
    }
    PutIf(req, "idempotency_key", args->key);
    PutIf(req, "thread_id", args->thread);
    PutIf(req, "percept_id", args->percept);
    PutIf(req, "id", args->id);
    PutIf(req, "reason", args->reason);
    if (args->require_approval) req["require_approval"] = true;
    rc = WithWriter(ctx, {"enqueue_action", {}, req},
                    [&](Engine& e) { return EnqueueOffline(ctx, e, req); });
  });

  // approve ID / reject ID: a pending_approval action is delivered, or never.
  for (bool approve : {true, false}) {
    auto* decide =
        cmd->add_subcommand(approve ? "approve" : "reject",
                            approve ? "let an action waiting for approval be delivered"
                                    : "refuse an action waiting for approval: never delivered");
    decide->add_option("id", args->id, "action id")->required();
    decide->add_option("--reason", args->reason, "why (kept in the event)");
    decide->callback([&ctx, &rc, args, approve] {
      json req = json::object();
      PutIf(req, "reason", args->reason);
      rc = WithWriter(
          ctx, {approve ? "approve_action" : "reject_action", {{"id", args->id}}, req},
          [&](Engine& e) {
            return CommitAndReport(ctx, e,
                                   approve ? state::BuildActionApprove(args->id, req)
                                           : state::BuildActionReject(args->id, req),
                                   "action_id");
          });
    });
  }

  // retry ID: a dead action goes out again, with a fresh attempt budget.
  auto* retry = cmd->add_subcommand("retry", "send a dead action again (its attempts start over)");
  retry->add_option("id", args->id, "action id")->required();
  retry->add_option("--reason", args->reason, "why (kept in the event)");
  retry->callback([&ctx, &rc, args] {
    json req = json::object();
    PutIf(req, "reason", args->reason);
    rc = WithWriter(ctx, {"retry_action", {{"id", args->id}}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildActionRetry(args->id, req), "action_id");
    });
  });

  auto* show = cmd->add_subcommand("show", "one action: status, attempts, last error");
  show->add_option("id", args->id, "action id")->required();
  show->callback([&ctx, &rc, args] {
    rc = ShowRecord(ctx, state::Pool::kActions, "action", args->id,
                    [](Engine&, const json& a, TimeMs) -> Result<json> { return a; });
  });

  auto* list = cmd->add_subcommand("list", "actions, oldest first");
  list->add_option("--status", args->status,
                   "pending_approval, pending, inflight, failed, complete, dead or rejected");
  list->callback([&ctx, &rc, args] {
    rc = WithReader(ctx, [&](Engine& e, TimeMs) {
      std::optional<std::string> status;
      if (!args->status.empty()) status = args->status;
      auto actions = e.projection().ListActions(status);
      if (!actions.ok()) return Fail(actions.status());
      if (ctx.json) {
        PrintJson(*actions);
        return 0;
      }
      std::printf("%-12s %-16s %-12s %-16s %4s %s\n", "ID", "STATUS", "EFFECTOR", "TYPE", "TRY",
                  "LAST ERROR");
      for (const json& a : *actions)
        std::printf("%-12s %-16s %-12s %-16s %4s %s\n", Str(a["id"]).c_str(),
                    Str(a["status"]).c_str(), Short(Str(a["effector"]), 12).c_str(),
                    Short(Str(a["type"]), 16).c_str(), Str(a["attempts"]).c_str(),
                    Short(Str(a["last_error"]), 40).c_str());
      return 0;
    });
  });

  auto* prune =
      cmd->add_subcommand("prune", "remove complete, dead and rejected actions from the pool");
  prune->add_option("--older-than", args->older_than, "last updated at least this long ago")
      ->capture_default_str();
  prune->callback([&ctx, &rc, args] {
    auto retention = ParseDuration(args->older_than);
    if (!retention.ok()) {
      rc = Fail(retention.status());
      return;
    }
    auto now = ctx.Now();
    if (!now.ok()) {
      rc = Fail(now.status());
      return;
    }
    rc = WithWriter(ctx, {"prune_actions", {}, {{"older_than", args->older_than}}},
                    [&](Engine& e) {
                      return CommitAndReport(
                          ctx, e, state::BuildActionsPrune(e.projection(), *retention, *now), "");
                    });
  });
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
}  // namespace

void AddAttention(CLI::App& app, CliContext& ctx, int& rc) {
  struct Args {
    std::string config;
    std::optional<uint64_t> at_seq;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "attention",
      "what to work on now: the focused thread, its percepts, new percepts by intensity");
  cmd->add_option("--config", args->config,
                  "config whose attention and recency settings to use (default: the built-in one)");
  cmd->add_option("--at-seq", args->at_seq,
                  "as it was right after this seq, at that event's time (time travel)");
  cmd->callback([&ctx, &rc, args] {
    auto c = args->config.empty() ? DefaultConfig() : LoadConfigFile(args->config);
    if (!c.ok()) {
      rc = Fail(c.status());
      return;
    }
    AttentionParams params{args->config.empty() ? ctx.recency : c->recency, c->attention_threshold,
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
    if (!args->at_seq) {
      rc = WithReader(ctx, [&](Engine& e, TimeMs now) { return print(e.projection(), now); });
      return;
    }
    auto past = state::TimeTravel::Open(ctx.state_dir, *args->at_seq);
    if (!past.ok()) {
      rc = Fail(past.status());
      return;
    }
    // The seq's own time, unless --now says otherwise.
    auto now = ctx.now_text ? ctx.Now() : Result<TimeMs>((*past)->replay().last_ts);
    rc = now.ok() ? print((*past)->projection(), *now) : Fail(now.status());
  });
}

}  // namespace limbic::runtime::pools
