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

struct StateArgs {
  std::string pool;
  std::optional<uint64_t> at_seq;
  // fork
  std::string at_time, into;
};

int Digest(const CliContext& ctx, const StateArgs& a) {
  Result<std::string> d = Status::Internal("unset");
  uint64_t seq = 0;
  if (a.at_seq) {
    auto past = OpenPast(ctx, *a.at_seq, /*digest=*/true);
    if (!past.ok()) return Fail(past.status());
    d = (*past)->replay().digest;
    seq = (*past)->replay().last_seq;
  } else {
    auto engine = ctx.OpenForRead();
    if (!engine.ok()) return Fail(engine.status());
    d = (*engine)->projection().Digest();
    seq = (*engine)->applied_seq();
  }
  if (!d.ok()) return Fail(d.status());
  if (ctx.json)
    PrintJson({{"applied_seq", seq}, {"digest", *d}});
  else
    std::printf("%s  seq %llu\n", d->c_str(), static_cast<unsigned long long>(seq));
  return 0;
}

// Every record of `pool` in `projection`, in key order (arousal: its one record).
Result<json> PoolRecords(const state::Projection& projection, state::Pool pool) {
  json all = json::array();
  if (pool == state::Pool::kArousal) {
    auto a = projection.GetArousal();
    if (!a.ok()) return a.status();
    all.push_back(*a);
    return all;
  }
  Status st = projection.ForEach(pool, [&](std::string_view, const json& rec) {
    all.push_back(rec);
    return true;
  });
  if (!st.ok()) return st;
  return all;
}

int ShowPool(const CliContext& ctx, const StateArgs& a) {
  auto pool = state::ParsePool(a.pool);
  if (!pool)
    return UsageError("unknown pool \"" + a.pool +
                      "\" (percepts, threads, arousal, actions, reflexes, memories, "
                      "associations, documents, dedup)");
  std::unique_ptr<state::Engine> engine;
  std::unique_ptr<state::TimeTravel> past;
  const state::Projection* projection = nullptr;
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  if (a.at_seq) {
    auto tt = OpenPast(ctx, *a.at_seq);
    if (!tt.ok()) return Fail(tt.status());
    past = std::move(tt).value();
    projection = &past->projection();
    if (!ctx.now_text) *now = past->replay().last_ts;  // effective as it was then
  } else {
    auto e = ctx.OpenForRead();
    if (!e.ok()) return Fail(e.status());
    engine = std::move(e).value();
    projection = &engine->projection();
  }
  auto all = PoolRecords(*projection, *pool);
  if (!all.ok()) return Fail(all.status());
  Status st = WithEffectiveValues(*projection, *pool, *now, ctx.recency, &*all);
  if (!st.ok()) return Fail(st);
  if (ctx.json)
    PrintJson(*all);
  else
    for (const json& rec : *all) PrintJson(rec);
  return 0;
}

int ForkState(const CliContext& ctx, const StateArgs& a) {
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  ForkOptions options;
  options.from_state = ctx.state_dir;
  options.into = a.into;
  options.at_seq = a.at_seq;
  options.now = *now;
  if (!a.at_time.empty()) {
    auto t = ParseTimeOrAgo("--at-time", a.at_time, *now);
    if (!t.ok()) return UsageError(t.status().message());
    options.at_time = *t;
  }
  if (!options.at_seq && !options.at_time)
    return UsageError("fork: give --at-seq SEQ or --at-time TIME");
  std::vector<std::string> warnings;
  auto info = Fork(options, &warnings);
  Warn(warnings);
  if (!info.ok()) return Fail(info.status());
  if (ctx.json) {
    nlohmann::json out = info->ToJson();
    out["into"] = a.into;
    PrintJson(out);
    return 0;
  }
  std::printf(
      "forked %s at seq %llu (%s) into %s: a sandbox\n"
      "digest %s\n"
      "run it: limbic run --state %s --port 7078\n"
      "  its effectors only record what they would send (%s); the reflexes file is not\n"
      "  synced into its rules unless you add --sync-rules\n",
      info->forked_from.c_str(), static_cast<unsigned long long>(info->at_seq),
      info->at_time.c_str(), a.into.c_str(), info->digest.c_str(), a.into.c_str(),
      DryRunFilePath(a.into).c_str());
  return 0;
}

}  // namespace

void AddTimeTravelCommands(CLI::App& app, CliContext& ctx, int& rc) {
  auto a = std::make_shared<StateArgs>();
  auto* cmd = app.add_subcommand("state", "inspect the pools");
  cmd->require_subcommand(1);
  auto* digest = cmd->add_subcommand("digest", "SHA-256 of every pool, and the seq it is at");
  digest->add_option("--at-seq", a->at_seq, "of the pools as they were right after this seq")
      ->check(SeqOption());
  digest->callback(Action(ctx, rc, a, Digest));

  auto* show = cmd->add_subcommand("show", "print every record of a pool, one JSON per line");
  show->add_option("pool", a->pool,
                   "percepts, threads, arousal, actions, reflexes, memories, associations, "
                   "documents or dedup")
      ->required();
  show->add_option("--at-seq", a->at_seq,
                   "as it was right after this seq (time travel); effective values at that "
                   "event's time")
      ->check(SeqOption());
  show->callback(Action(ctx, rc, a, ShowPool));

  auto* fork = app.add_subcommand(
      "fork",
      "a sandbox: this state as it was at a seq or a time, in a new state dir whose effectors "
      "only record what they would send");
  auto* seq = fork->add_option("--at-seq", a->at_seq, "the last event to keep")->check(SeqOption());
  auto* time = fork->add_option(
      "--at-time", a->at_time, "keep the events at or before this RFC 3339 time (or e.g. 10m ago)");
  fork->add_option("--into", a->into, "the new state dir (must not exist, or be empty)")
      ->required();
  seq->excludes(time);
  fork->callback(Action(ctx, rc, a, ForkState));
}

}  // namespace limbic::runtime
