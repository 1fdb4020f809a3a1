// consolidate / archive: the long-term archive from the command line. The
// same ArchiveStore calls as the HTTP API (docs/archive.md), so both print
// the same JSON.
#include <functional>
#include <iostream>
#include <optional>

#include "archive/store.h"
#include "runtime/cli/cli.h"
#include "runtime/config.h"
#include "state/consolidate.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

// The archive of the state dir. With the lock (`engine` writable) staging
// first catches up with the log and the index with the files; without it
// (another process runs) the files and index are read as they are.
Result<std::unique_ptr<archive::ArchiveStore>> OpenStore(const CliContext& ctx, const state::Engine& engine,
                                                         const ArchiveConfig& config) {
  archive::StoreOptions o;
  o.state_dir = ctx.state_dir;
  o.read_only = engine.read_only();
  o.semantic_links = config.semantic_links;
  o.social_links = config.social_links;
  o.analyzer = config.analyzer;
  auto store = archive::ArchiveStore::Open(o);
  if (!store.ok()) return store.status();
  if (!o.read_only) {
    auto caught = (*store)->CatchUp(engine.applied_seq());
    if (!caught.ok()) return caught.status();
  }
  return store;
}

// The archive settings of --config, or of the built-in config.
Result<ArchiveConfig> ArchiveSettings(const std::string& config_path) {
  auto config = config_path.empty() ? DefaultConfig() : LoadConfigFile(config_path);
  if (!config.ok()) return config.status();
  return config->archive;
}

void PrintArchiveText(const json& out, const std::string& what) {
  if (what == "search") {
    if (out["results"].empty()) std::cout << "no matches\n";
    for (const json& r : out["results"])
      std::printf("%s  %-8s  %8.4f  %s\n", r["date"].get<std::string>().c_str(),
                  r["kind"].get<std::string>().c_str(), r["score"].get<double>(),
                  r["snippet"].get<std::string>().c_str());
  } else if (what == "show") {
    std::cout << "date:      " << out["date"].get<std::string>() << "\n"
              << "hash:      " << out["hash"].get<std::string>() << "\n"
              << "prev_hash: " << (out["prev_hash"].is_null() ? "(none)" : out["prev_hash"].get<std::string>())
              << "\n\n"
              << out["content"].get<std::string>() << "\n";
  } else if (what == "walk") {
    for (const json& v : out["visited"]) {
      std::cout << std::string(2 * v["depth"].get<int>(), ' ') << v["date"].get<std::string>();
      if (v.contains("score")) std::cout << "  " << v["score"].get<double>();
      std::cout << "\n";
    }
  } else if (what == "verify") {
    for (const json& p : out["problems"])
      std::cout << p["date"].get<std::string>() << ": " << p["what"].get<std::string>() << "\n";
    for (const json& p : out["notes"])
      std::cout << "note: " << p["date"].get<std::string>() << ": " << p["what"].get<std::string>()
                << "\n";
    std::cout << out["documents"] << " documents, " << out["bytes"] << " bytes: "
              << (out["ok"].get<bool>() ? "ok" : std::to_string(out["problems"].size()) + " problems") << "\n";
  } else if (what == "recall") {
    for (const json& item : out["items"])
      std::cout << "--- " << item["kind"].get<std::string>() << " " << item["date"].get<std::string>()
                << (item.contains("timestamp") ? " " + item["timestamp"].get<std::string>() : "") << "\n"
                << item["text"].get<std::string>() << "\n";
  } else if (what == "import") {
    std::cout << "imported " << out["imported"] << " documents; "
              << (out["relinked"].get<bool>()
                      ? "links recomputed by limbic's rules"
                      : std::to_string(out["comb_links"].get<size_t>()) +
                            " with COMB's links kept (`limbic archive relink` recomputes them)")
              << "\n";
    for (const json& d : out["staged_days_left"])
      std::cout << "not imported: COMB staging for " << d.get<std::string>()
                << " (roll it up in COMB first)\n";
  } else if (what == "relink") {
    std::cout << "relinked " << out["relinked"] << " documents\n";
  } else if (what == "rollup") {
    if (out["rolled_up"].empty()) std::cout << "nothing to roll up\n";
    for (const json& r : out["rolled_up"])
      std::cout << r["date"].get<std::string>() << ": " << r["added"] << " entries added"
                << (r["created"].get<bool>() ? " (new document)" : "") << ", " << r["rewritten"]
                << " documents written\n";
  } else {
    PrintFields(out);
  }
}

void Print(const CliContext& ctx, const json& out, const std::string& what) {
  if (ctx.json) PrintJson(out);
  else PrintArchiveText(out, what);
}

// {entries, threads, percepts, actions, expired} of `limbic consolidate`.
void PrintConsolidated(const CliContext& ctx, const json& out) {
  if (ctx.json) return PrintJson(out);
  std::cout << "staged " << out.value("entries", 0) << " entries: " << out.value("threads", 0)
            << " threads, " << out.value("percepts", 0) << " percepts, " << out.value("actions", 0)
            << " actions; " << out.value("expired", 0) << " percepts expired\n";
}

struct ArchiveArgs {
  std::string config;
  std::string date;
  std::string query;
  size_t k = 5;
  std::string direction = "temporal";
  int depth = 1;
  std::string text;
  std::string metadata;
  std::string dir;
  bool relink = false;
  // consolidate: the policy's ages, overriding the config's
  std::string threads_after, percepts_after, actions_after;
};

// Opens the engine (`write`: with the lock) and the store, runs `fn`.
template <typename Fn>
int WithStore(const CliContext& ctx, const ArchiveArgs& a, bool write, Fn&& fn,
              const std::function<int(const Status& busy)>& forward = nullptr) {
  auto settings = ArchiveSettings(a.config);
  if (!settings.ok()) return Fail(settings.status());
  auto engine = write ? ctx.OpenForWrite() : ctx.OpenForRead(CliContext::ReadMode::kCatchUp);
  // A running `limbic run` holds the state: the write goes to its API.
  if (!engine.ok() && engine.status().IsBusy() && write && forward) return forward(engine.status());
  if (!engine.ok()) return Fail(engine.status());
  auto store = OpenStore(ctx, **engine, *settings);
  if (!store.ok()) return Fail(store.status());
  return fn(**engine, **store);
}

// The store's answer to `call`, printed as `what`; `write` opens it with the lock.
int StoreCall(const CliContext& ctx, const ArchiveArgs& a, bool write, const std::string& what,
              const std::function<Result<json>(archive::ArchiveStore&)>& call) {
  return WithStore(ctx, a, write, [&](state::Engine&, archive::ArchiveStore& store) {
    auto out = call(store);
    if (!out.ok()) return Fail(out.status());
    Print(ctx, *out, what);
    return 0;
  });
}

// `consolidate`: the config's policy with the flags' ages over it; the
// exit code of a bad flag in `rc`.
std::optional<state::ConsolidationPolicy> ConsolidationPolicyOf(const ArchiveArgs& a, int* rc) {
  auto settings = ArchiveSettings(a.config);
  if (!settings.ok()) {
    *rc = Fail(settings.status());
    return std::nullopt;
  }
  state::ConsolidationPolicy policy = settings->policy;
  for (auto [text, field, name] :
       {std::tuple{&a.threads_after, &policy.threads_after, "--threads-after"},
        std::tuple{&a.percepts_after, &policy.percepts_after, "--percepts-after"},
        std::tuple{&a.actions_after, &policy.actions_after, "--actions-after"}}) {
    if (text->empty()) continue;
    auto d = ParseDuration(*text);
    if (!d.ok()) {
      *rc = UsageError(std::string(name) + ": " + d.status().message());
      return std::nullopt;
    }
    *field = *d;
  }
  return policy;
}

// One pass, a step at a time: it drains everything due at `now`.
int ConsolidateHere(const CliContext& ctx, const state::ConsolidationPolicy& policy,
                    state::Engine& engine, archive::ArchiveStore& store) {
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  state::ConsolidationPass pass(engine.projection(), policy, *now);
  state::ConsolidationCounts done;
  while (!pass.done()) {
    auto step = pass.Next();
    if (!step.ok()) return Fail(step.status());
    if (step->events.empty()) continue;
    Status s = engine.Commit(step->events);
    if (!s.ok()) return Fail(s);
    done.Add(step->events);
  }
  auto staged = store.CatchUp(engine.applied_seq());
  if (!staged.ok()) return Fail(staged.status());
  PrintConsolidated(ctx, done.ToJson());
  return 0;
}

// The runtime consolidates with its own policy, one pass.
int ConsolidateThroughApi(const CliContext& ctx, const ArchiveArgs& a, const Status& busy) {
  if (!a.threads_after.empty() || !a.percepts_after.empty() || !a.actions_after.empty() ||
      !a.config.empty())
    return Fail(busy.WithMessage(busy.message() +
                                 "; it consolidates with its own policy: drop --threads-after, "
                                 "--percepts-after, --actions-after and --config, or stop it"));
  auto out = ForwardRequest(ctx, "consolidate", json::object(), busy);
  if (!out.ok()) return Fail(out.status());
  PrintConsolidated(ctx, *out);
  return 0;
}

int Consolidate(const CliContext& ctx, const ArchiveArgs& a) {
  int rc = 0;
  auto policy = ConsolidationPolicyOf(a, &rc);
  if (!policy) return rc;
  return WithStore(
      ctx, a, true,
      [&](state::Engine& engine, archive::ArchiveStore& store) {
        return ConsolidateHere(ctx, *policy, engine, store);
      },
      [&](const Status& busy) { return ConsolidateThroughApi(ctx, a, busy); });
}

int Rollup(const CliContext& ctx, const ArchiveArgs& a) {
  return WithStore(
      ctx, a, true,
      [&](state::Engine&, archive::ArchiveStore& store) {
        std::string before;  // every day before today, unless --date
        if (a.date.empty()) {
          auto now = ctx.Now();
          if (!now.ok()) return Fail(now.status());
          before = FormatDate(*now);
        }
        Result<json> out = a.date.empty() ? store.RollupBefore(before) : store.Rollup(a.date);
        if (!out.ok()) return Fail(out.status());
        Print(ctx, *out, "rollup");
        return 0;
      },
      [&](const Status& busy) {
        json req = json::object();
        if (!a.date.empty()) req["date"] = a.date;
        auto out = ForwardRequest(ctx, "archive_rollup", req, busy);
        if (!out.ok()) return Fail(out.status());
        Print(ctx, *out, "rollup");
        return 0;
      });
}

int Verify(const CliContext& ctx, const ArchiveArgs& a) {
  return WithStore(ctx, a, false, [&](state::Engine&, archive::ArchiveStore& store) {
    auto out = store.Verify();
    if (!out.ok()) return Fail(out.status());
    Print(ctx, *out, "verify");
    if (!(*out)["ok"].get<bool>()) {
      const json& first = (*out)["problems"][0];
      return Fail(Status::Corruption("archive broken from " + first["date"].get<std::string>() +
                                     ": " + first["what"].get<std::string>()));
    }
    return 0;
  });
}

int Import(const CliContext& ctx, const ArchiveArgs& a) {
  return StoreCall(ctx, a, true, "import",
                   [&](archive::ArchiveStore& store) { return store.Import(a.dir, a.relink); });
}

int Relink(const CliContext& ctx, const ArchiveArgs& a) {
  return StoreCall(ctx, a, true, "relink",
                   [](archive::ArchiveStore& store) { return store.Relink(); });
}

int Search(const CliContext& ctx, const ArchiveArgs& a) {
  return StoreCall(ctx, a, false, "search",
                   [&](archive::ArchiveStore& store) { return store.Search(a.query, a.k); });
}

int Show(const CliContext& ctx, const ArchiveArgs& a) {
  return StoreCall(ctx, a, false, "show",
                   [&](archive::ArchiveStore& store) { return store.Show(a.date); });
}

int Walk(const CliContext& ctx, const ArchiveArgs& a) {
  return StoreCall(ctx, a, false, "walk", [&](archive::ArchiveStore& store) {
    return store.Walk(a.date, a.direction, a.depth);
  });
}

int Stats(const CliContext& ctx, const ArchiveArgs& a) {
  return StoreCall(ctx, a, false, "stats",
                   [](archive::ArchiveStore& store) { return store.Stats(); });
}

int Recall(const CliContext& ctx, const ArchiveArgs& a) {
  return StoreCall(ctx, a, false, "recall",
                   [&](archive::ArchiveStore& store) { return store.Recall(a.k); });
}

int Blink(const CliContext& ctx, const ArchiveArgs& a) {
  json req = {{"text", a.text}};
  if (!a.metadata.empty()) {
    auto meta = state::ParseJsonObject(a.metadata, "--metadata");
    if (!meta.ok()) return Fail(meta.status());
    req["metadata"] = *meta;
  }
  return WithStore(
      ctx, a, true,
      [&](state::Engine& engine, archive::ArchiveStore& store) {
        auto now = ctx.Now();
        if (!now.ok()) return Fail(now.status());
        int code = CommitAndReport(ctx, engine, state::BuildBlink(req, *now), "");
        if (code != 0) return code;
        auto staged = store.CatchUp(engine.applied_seq());
        return staged.ok() ? 0 : Fail(staged.status());
      },
      [&](const Status& busy) {
        return ForwardWrite(ctx, "archive_blink", req, busy);
      });
}

}  // namespace

void AddArchiveCommands(CLI::App& app, CliContext& ctx, int& rc) {
  auto a = std::make_shared<ArchiveArgs>();

  auto* cons = app.add_subcommand("consolidate", "move finished work from the pools into the archive's staging");
  cons->add_option("--config", a->config, "config whose archive policy to use (default: the built-in one)");
  cons->add_option("--threads-after", a->threads_after,
                   "completed threads idle at least this long (e.g. 7d)");
  cons->add_option("--percepts-after", a->percepts_after,
                   "processed/dropped percepts at least this old");
  cons->add_option("--actions-after", a->actions_after, "complete/dead actions at least this old");
  cons->callback(Action(ctx, rc, a, Consolidate));

  auto* cmd = app.add_subcommand("archive", "the hash-chained daily archive: rollup, verify, search, ...");
  cmd->require_subcommand(1);
  cmd->add_option("--config", a->config, "config whose archive settings to use (default: the built-in one)");

  auto* rollup = cmd->add_subcommand("rollup", "roll staged entries up into day documents");
  rollup->add_option("--date", a->date, "only this day (default: every day before today with staged entries)");
  rollup->callback(Action(ctx, rc, a, Rollup));

  auto* verify = cmd->add_subcommand("verify", "recompute the hash chain and the links; exit 1 if broken");
  verify->callback(Action(ctx, rc, a, Verify));

  auto* import_cmd =
      cmd->add_subcommand("import", "bring in a COMB archive (into an empty archive)");
  import_cmd
      ->add_option("dir", a->dir, "a COMB store (with archive/DATE.json) or its archive folder")
      ->required();
  import_cmd->add_flag("--relink", a->relink,
                       "recompute every link by limbic's rules instead of keeping COMB's");
  import_cmd->callback(Action(ctx, rc, a, Import));

  auto* relink =
      cmd->add_subcommand("relink", "recompute every document's links by limbic's rules");
  relink->callback(Action(ctx, rc, a, Relink));

  auto* search = cmd->add_subcommand("search", "BM25 search over archived days and staged entries");
  search->add_option("query", a->query, "words to search for")->required();
  search->add_option("-k", a->k, "how many results")->capture_default_str();
  search->callback(Action(ctx, rc, a, Search));

  auto* show = cmd->add_subcommand("show", "print one day's document");
  show->add_option("date", a->date, "YYYY-MM-DD")->required();
  show->callback(Action(ctx, rc, a, Show));

  auto* walk = cmd->add_subcommand("walk", "follow a day's temporal or semantic links");
  walk->add_option("date", a->date, "YYYY-MM-DD")->required();
  walk->add_option("--direction", a->direction, "temporal or semantic")
      ->check(CLI::IsMember({"temporal", "semantic"}))
      ->capture_default_str();
  walk->add_option("--depth", a->depth, "steps to follow")->check(CLI::Range(1, 100))->capture_default_str();
  walk->callback(Action(ctx, rc, a, Walk));

  auto* stats = cmd->add_subcommand("stats", "documents, bytes, tokens, staged entries");
  stats->callback(Action(ctx, rc, a, Stats));

  auto* blink = cmd->add_subcommand("blink", "stage a text now (e.g. before the agent restarts)");
  blink->add_option("text", a->text, "what to keep")->required();
  blink->add_option("--metadata", a->metadata, "a JSON object stored with the entry");
  blink->callback(Action(ctx, rc, a, Blink));

  auto* recall = cmd->add_subcommand("recall", "the most recent staged and archived context");
  recall->add_option("-k", a->k, "how many items")->capture_default_str();
  recall->callback(Action(ctx, rc, a, Recall));
}

}  // namespace limbic::runtime
