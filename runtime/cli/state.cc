// `limbic state digest|show` and `limbic fork`: the state now, as it was at
// a seq (rebuilt from the log), and a sandbox state dir made from that point
// (runtime/sandbox.h, docs/cli.md).
#include <cstdio>

#include "base/json.h"
#include "runtime/attention.h"
#include "runtime/cli/cli.h"
#include "runtime/sandbox.h"
#include "state/recency.h"
#include "state/replay.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

// `state show`'s records with what recency makes of them at `now` (as the
// API shows them): percepts' effective_intensity, threads' effective
// salience and unprocessed count, arousal's effective level.
Status WithEffectiveValues(const state::Projection& p, state::Pool pool, TimeMs now,
                           const state::RecencyParams& recency, json* records) {
  for (json& rec : *records) {
    if (pool == state::Pool::kPercepts) {
      rec = state::PerceptWithRecency(rec, now, recency);
    } else if (pool == state::Pool::kThreads) {
      auto n = p.CountUnprocessed(rec.value("id", ""));
      if (!n.ok()) return n.status();
      rec = state::ThreadWithRecency(rec, *n, now, recency);
    } else if (pool == state::Pool::kArousal) {
      auto effective = EffectiveArousalNow(p, now, recency);
      if (!effective.ok()) return effective.status();
      rec["effective"] = *effective;
    }
  }
  return Status::OK();
}

void AddStateCommands(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("state", "inspect the pools");
  cmd->require_subcommand(1);
  auto digest_at = std::make_shared<std::optional<uint64_t>>();
  auto* digest = cmd->add_subcommand("digest", "SHA-256 of every pool, and the seq it is at");
  digest->add_option("--at-seq", *digest_at, "of the pools as they were right after this seq");
  digest->callback([&ctx, &rc, digest_at] {
    Result<std::string> d = Status::Internal("unset");
    uint64_t seq = 0;
    if (*digest_at) {
      auto past = state::TimeTravel::Open(ctx.state_dir, **digest_at);
      if (!past.ok()) {
        rc = Fail(past.status());
        return;
      }
      d = (*past)->replay().digest;
      seq = (*past)->replay().last_seq;
    } else {
      auto engine = ctx.OpenForRead();
      if (!engine.ok()) {
        rc = Fail(engine.status());
        return;
      }
      d = (*engine)->projection().Digest();
      seq = (*engine)->applied_seq();
    }
    if (!d.ok()) {
      rc = Fail(d.status());
      return;
    }
    if (ctx.json)
      PrintJson({{"applied_seq", seq}, {"digest", *d}});
    else
      std::printf("%s  seq %llu\n", d->c_str(), static_cast<unsigned long long>(seq));
  });

  struct Show {
    std::string pool;
    std::optional<uint64_t> at_seq;
  };
  auto s = std::make_shared<Show>();
  auto* show = cmd->add_subcommand("show", "print every record of a pool, one JSON per line");
  show->add_option("pool", s->pool,
                   "percepts, threads, arousal, actions, reflexes, memories, associations, "
                   "documents or dedup")
      ->required();
  show->add_option("--at-seq", s->at_seq,
                   "as it was right after this seq (time travel); effective values at that "
                   "event's time");
  show->callback([&ctx, &rc, s] {
    auto pool = state::ParsePool(s->pool);
    if (!pool) {
      rc = UsageError("unknown pool \"" + s->pool +
                      "\" (percepts, threads, arousal, actions, reflexes, memories, "
                      "associations, documents, dedup)");
      return;
    }
    std::unique_ptr<state::Engine> engine;
    std::unique_ptr<state::TimeTravel> past;
    const state::Projection* projection = nullptr;
    auto now = ctx.Now();
    if (!now.ok()) {
      rc = Fail(now.status());
      return;
    }
    if (s->at_seq) {
      auto tt = state::TimeTravel::Open(ctx.state_dir, *s->at_seq);
      if (!tt.ok()) {
        rc = Fail(tt.status());
        return;
      }
      past = std::move(tt).value();
      projection = &past->projection();
      if (!ctx.now_text) *now = past->replay().last_ts;  // effective as it was then
    } else {
      auto e = ctx.OpenForRead();
      if (!e.ok()) {
        rc = Fail(e.status());
        return;
      }
      engine = std::move(e).value();
      projection = &engine->projection();
    }
    json all = json::array();
    Status st;
    if (*pool == state::Pool::kArousal) {
      auto a = projection->GetArousal();
      if (!a.ok())
        st = a.status();
      else
        all.push_back(*a);
    } else {
      st = projection->ForEach(*pool, [&](std::string_view, const json& rec) {
        all.push_back(rec);
        return true;
      });
    }
    if (!st.ok()) {
      rc = Fail(st);
      return;
    }
    st = WithEffectiveValues(*projection, *pool, *now, ctx.recency, &all);
    if (!st.ok()) {
      rc = Fail(st);
      return;
    }
    if (ctx.json)
      PrintJson(all);
    else
      for (const json& rec : all) PrintJson(rec);
  });
}

}  // namespace

void AddTimeTravelCommands(CLI::App& app, CliContext& ctx, int& rc) {
  AddStateCommands(app, ctx, rc);
  struct Args {
    std::optional<uint64_t> at_seq;
    std::string at_time, into;
  };
  auto a = std::make_shared<Args>();
  auto* fork = app.add_subcommand(
      "fork",
      "a sandbox: this state as it was at a seq or a time, in a new state dir whose effectors "
      "only record what they would send");
  auto* seq = fork->add_option("--at-seq", a->at_seq, "the last event to keep");
  auto* time = fork->add_option(
      "--at-time", a->at_time, "keep the events at or before this RFC 3339 time (or e.g. 10m ago)");
  fork->add_option("--into", a->into, "the new state dir (must not exist, or be empty)")
      ->required();
  seq->excludes(time);
  fork->callback([&ctx, &rc, a] {
    auto now = ctx.Now();
    if (!now.ok()) {
      rc = Fail(now.status());
      return;
    }
    ForkOptions options;
    options.from_state = ctx.state_dir;
    options.into = a->into;
    options.at_seq = a->at_seq;
    options.now = *now;
    if (!a->at_time.empty()) {
      auto t = ParseTimeOrAgo("--at-time", a->at_time, *now);
      if (!t.ok()) {
        rc = Fail(t.status());
        return;
      }
      options.at_time = *t;
    }
    if (!options.at_seq && !options.at_time) {
      rc = UsageError("fork: give --at-seq SEQ or --at-time TIME");
      return;
    }
    auto info = Fork(options);
    if (!info.ok()) {
      rc = Fail(info.status());
      return;
    }
    if (ctx.json) {
      nlohmann::json out = info->ToJson();
      out["into"] = a->into;
      PrintJson(out);
      return;
    }
    std::printf(
        "forked %s at seq %llu (%s) into %s: a sandbox\n"
        "digest %s\n"
        "run it: limbic run --state %s --port 7078\n"
        "  its effectors only record what they would send (%s); the reflexes file is not\n"
        "  synced into its rules unless you add --sync-rules\n",
        info->forked_from.c_str(), static_cast<unsigned long long>(info->at_seq),
        info->at_time.c_str(), a->into.c_str(), info->digest.c_str(), a->into.c_str(),
        DryRunFilePath(a->into).c_str());
  });
}

}  // namespace limbic::runtime
