// arousal / action / attention: the outbox side of the offline admin path
// and what the mind should work on now. As in cli_pools.cc, each write
// builds the HTTP API's request object (and goes to a running runtime's API
// while it holds the state dir).
#include <cstdio>
#include <iostream>

#include "runtime/attention.h"
#include "runtime/cli_pools.h"
#include "runtime/config.h"

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
    rc = WithWriter(ctx, {"PATCH", "/v1/arousal", req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildArousalSet(req), "");
    });
  });
}

void AddAction(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("action", "enqueue, list and prune outbox actions");
  cmd->require_subcommand(1);
  struct Args {
    std::string id, effector, type, payload, key, thread, percept, status, older_than = "24h";
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
    rc = WithWriter(ctx, {"POST", "/v1/actions", req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildActionEnqueue(req, e.next_seq()), "action_id");
    });
  });

  auto* show = cmd->add_subcommand("show", "one action: status, attempts, last error");
  show->add_option("id", args->id, "action id")->required();
  show->callback([&ctx, &rc, args] {
    rc = ShowRecord(ctx, state::Pool::kActions, "action", args->id,
                    [](Engine&, const json& a, TimeMs) -> Result<json> { return a; });
  });

  auto* list = cmd->add_subcommand("list", "actions, oldest first");
  list->add_option("--status", args->status, "pending, inflight, complete, failed or dead");
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
      std::printf("%-12s %-9s %-12s %-16s %4s %s\n", "ID", "STATUS", "EFFECTOR", "TYPE", "TRY",
                  "LAST ERROR");
      for (const json& a : *actions)
        std::printf("%-12s %-9s %-12s %-16s %4s %s\n", Str(a["id"]).c_str(),
                    Str(a["status"]).c_str(), Short(Str(a["effector"]), 12).c_str(),
                    Short(Str(a["type"]), 16).c_str(), Str(a["attempts"]).c_str(),
                    Short(Str(a["last_error"]), 40).c_str());
      return 0;
    });
  });

  auto* prune = cmd->add_subcommand("prune", "remove complete and dead actions from the pool");
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
    rc = WithWriter(ctx, {"POST", "/v1/actions/prune", {{"older_than", args->older_than}}},
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
}
}  // namespace

void AddAttention(CLI::App& app, CliContext& ctx, int& rc) {
  auto config = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "attention",
      "what to work on now: the focused thread, its percepts, new percepts by intensity");
  cmd->add_option("--config", *config,
                  "config whose attention and recency settings to use (default: the built-in one)");
  cmd->callback([&ctx, &rc, config] {
    auto c = config->empty() ? DefaultConfig() : LoadConfigFile(*config);
    if (!c.ok()) {
      rc = Fail(c.status());
      return;
    }
    AttentionParams params{config->empty() ? ctx.recency : c->recency, c->attention_threshold,
                           c->attention_limit};
    rc = WithReader(ctx, [&](Engine& e, TimeMs now) {
      auto out = AttentionFromPools(e.projection(), now, params);
      if (!out.ok()) return Fail(out.status());
      if (ctx.json)
        PrintJson(*out);
      else
        PrintAttentionText(*out);
      return 0;
    });
  });
}

}  // namespace limbic::runtime::pools
