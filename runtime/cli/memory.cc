// `limbic memory ...`: long-term memory from the command line. The same
// MemoryStore plans as the HTTP API (docs/memory.md), so both print the
// same JSON. Every command takes --json and --quiet (print nothing; the
// exit code tells).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>

#include "base/env.h"

#include "archive/store.h"
#include "memory/evaluate.h"
#include "memory/store.h"
#include "runtime/attention.h"
#include "runtime/cli/cli.h"
#include "runtime/cli/progress.h"
#include "runtime/cli/memory_text.h"
#include "runtime/config.h"
#include "runtime/context.h"
#include "world/world.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

struct MemoryArgs {
  std::string config;
  bool quiet = false;
  // remember / remember-episode / relate
  std::vector<std::string> words;
  double importance = -1;
  std::vector<std::string> tags;
  std::string ns, episode;
  // recall
  std::string query, kind, tag;
  size_t k = 5;
  bool explain = false, no_reinforce = false, include_superseded = false;
  // related, forget, decay, embed, ingest, show
  int depth = 1;
  std::string id, subject, older_than, path;
  bool force = false, all = false;
  bool by_id = false, by_subject = false, by_age = false;  // which of forget's flags was given
  // evaluate
  bool per_query = false;
  // context
  size_t budget = 2000;
};

Result<memory::MemoryOptions> MemorySettings(const std::string& config_path) {
  auto config = config_path.empty() ? DefaultConfig() : LoadConfigFile(config_path);
  if (!config.ok()) return config.status();
  return config->memory;
}

void Print(const CliContext& ctx, const MemoryArgs& a, const json& out, const std::string& what) {
  if (a.quiet) return;
  if (ctx.json)
    PrintJson(out);
  else
    PrintMemoryText(out, what);
}

enum class Access { kRead, kWrite, kWriteElseRead };

// A write's request to the HTTP API: the operation `op` (runtime/
// operations.h) with `body`, its answer printed as `what`.
struct Forwarding {
  std::string op;
  json body;
  std::string what;
  // When set, makes the write itself instead (given the lock's error).
  std::function<Result<json>(const Status& busy)> send;
};

// Opens the engine and the store. kWrite takes the lock -- or, while a
// running `limbic run` holds it and `forward` is given, sends the write to
// that runtime instead (ForwardRequest); kWriteElseRead opens read-only
// while another process holds it (`fn` sees read_only()).
template <typename Fn>
int WithMemory(const CliContext& ctx, const MemoryArgs& a, Access access, Fn&& fn,
               const Forwarding* forward = nullptr) {
  auto settings = MemorySettings(a.config);
  if (!settings.ok()) return Fail(settings.status());
  auto engine = access == Access::kRead ? ctx.OpenForRead() : ctx.OpenForWrite();
  if (!engine.ok() && engine.status().IsBusy() && access == Access::kWrite && forward) {
    auto reply = forward->send ? forward->send(engine.status())
                               : ForwardRequest(ctx, forward->op, forward->body, engine.status());
    if (!reply.ok()) return Fail(reply.status());
    Print(ctx, a, *reply, forward->what);
    return forward->what == "ingest" && reply->contains("errors") && !(*reply)["errors"].empty()
               ? 1
               : 0;
  }
  // Busy, or a standby's state dir (which takes no local write).
  if (!engine.ok() && access == Access::kWriteElseRead &&
      (engine.status().IsBusy() || engine.status().IsFailedPrecondition())) {
    if (!a.quiet)
      std::cerr << "limbic: note: " << engine.status().message()
                << "; recalling without reinforcing\n";
    engine = ctx.OpenForRead();
  }
  if (!engine.ok()) return Fail(engine.status());
  auto store = memory::MemoryStore::Open(**engine, *settings, ctx.logger);
  if (!store.ok()) return Fail(store.status());
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  return fn(**engine, **store, *now);
}

// Commits a plan and prints its answer (with seq and events_written).
int CommitPlan(const CliContext& ctx, const MemoryArgs& a, state::Engine& engine,
               Result<memory::MemoryPlan> plan, const std::string& what) {
  if (!plan.ok()) return Fail(plan.status());
  if (!plan->events.empty()) {
    std::vector<state::Event> committed;
    Status s = engine.Commit(std::move(plan->events), &committed);
    if (!s.ok()) return Fail(s);
    plan->answer["seq"] = committed.back().seq;
    plan->answer["events_written"] = committed.size();
  }
  Print(ctx, a, plan->answer, what);
  if (what == "ingest" && !plan->answer["errors"].empty()) return 1;
  return 0;
}

// A memory write: the plan made and committed here, or, while `limbic run`
// holds the state dir, `remote` sent to its API as the operation `op` (the
// answer printed the same way).
template <typename Plan>
int MemoryWrite(const CliContext& ctx, const MemoryArgs& a, const std::string& op,
                const json& remote, const std::string& what, Plan&& plan) {
  Forwarding api{op, remote, what, nullptr};
  return WithMemory(
      ctx, a, Access::kWrite,
      [&](state::Engine& e, memory::MemoryStore& m, TimeMs now) {
        return CommitPlan(ctx, a, e, plan(m, now), what);
      },
      &api);
}

json Common(const MemoryArgs& a) {
  json req = json::object();
  if (a.importance >= 0) req["importance"] = a.importance;
  if (!a.tags.empty()) req["tags"] = a.tags;
  if (!a.ns.empty()) req["namespace"] = a.ns;
  return req;
}

// Archive hits for recall from the state dir's archive, if it has one and
// the request may want them.
std::vector<memory::ArchiveHit> ArchiveHits(const CliContext& ctx, const memory::RecallRequest& req,
                                            const std::string& analyzer) {
  std::vector<memory::ArchiveHit> hits;
  if (!req.WantsArchive()) return hits;
  archive::StoreOptions o;
  o.state_dir = ctx.state_dir;
  o.read_only = true;
  o.analyzer = analyzer;
  auto store = archive::ArchiveStore::Open(o);
  if (!store.ok()) return hits;
  auto found = (*store)->Search(req.query, req.Depth());
  if (!found.ok()) return hits;
  return memory::ArchiveHitsFromSearch(*found);
}

int Context(const CliContext& ctx, const MemoryArgs& a) {
  auto config = a.config.empty() ? DefaultConfig() : LoadConfigFile(a.config);
  if (!config.ok()) return Fail(config.status());
  return WithMemory(
      ctx, a, Access::kRead, [&](state::Engine& e, memory::MemoryStore& m, TimeMs now) {
        AttentionParams params{a.config.empty() ? ctx.recency : config->recency,
                               config->attention_threshold, config->attention_limit};
        auto attention = AttentionFromPools(e.projection(), now, params);
        if (!attention.ok()) return Fail(attention.status());
        ContextInput in;
        in.budget = a.budget;
        in.attention = std::move(*attention);
        in.query = a.query;
        if (in.query.empty() && in.attention["thread"].is_object())
          in.query = in.attention["thread"].value("goal", "");
        if (!in.query.empty()) {
          memory::RecallRequest rr;
          rr.query = in.query;
          rr.k = 20;
          rr.reinforce = false;  // reading the context is not recalling on purpose
          auto plan = m.Recall(rr, now, ArchiveHits(ctx, rr, m.options().analyzer));
          if (!plan.ok()) return Fail(plan.status());
          for (json& r : plan->answer["results"]) in.memories.push_back(std::move(r));
        }
        // The world model's files may be missing or unreadable: the rest stands.
        auto world = world::WorldModel::Open(ctx.state_dir + "/memory", config->world, ctx.logger);
        Result<json> found = world.ok() ? (*world)->Context(in.query, FocusText(in.attention))
                                        : Result<json>(world.status());
        if (found.ok())
          in.world = std::move(*found);
        else if (!a.quiet)
          std::cerr << "limbic: note: the world model: " << found.status().ToString() << "\n";
        json out = ContextBundle(in);
        if (a.quiet) return 0;
        if (ctx.json)
          PrintJson(out);
        else
          PrintContext(out);
        return 0;
      });
}

int Remember(const CliContext& ctx, const MemoryArgs& a) {
  json req = Common(a);
  req["subject"] = a.words[0];
  req["relation"] = a.words[1];
  req["object"] = a.words[2];
  return MemoryWrite(ctx, a, "remember_fact", req, "remember",
                     [&](memory::MemoryStore& m, TimeMs) { return m.RememberFact(req); });
}

int RememberEpisode(const CliContext& ctx, const MemoryArgs& a) {
  json req = Common(a);
  req["text"] = a.query;
  if (!a.episode.empty()) req["episode_id"] = a.episode;
  return MemoryWrite(
      ctx, a, "remember_episode", req, "remember",
      [&](memory::MemoryStore& m, TimeMs now) { return m.RememberEpisode(req, now); });
}

int Recall(const CliContext& ctx, const MemoryArgs& a) {
  json req = {{"query", a.query},
              {"k", a.k},
              {"explain", a.explain},
              {"reinforce", !a.no_reinforce},
              {"include_superseded", a.include_superseded}};
  if (!a.kind.empty()) req["kind"] = a.kind;
  if (!a.tag.empty()) req["tag"] = a.tag;
  if (!a.ns.empty()) req["namespace"] = a.ns;
  if (!a.episode.empty()) req["episode_id"] = a.episode;
  auto parsed = memory::ParseRecallRequest(req);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  // Recall reinforces, so it wants the lock; while another process holds
  // it, recall reads without reinforcing.
  auto settings = MemorySettings(a.config);
  if (!settings.ok()) return Fail(settings.status());
  auto hits = ArchiveHits(ctx, *parsed, settings->analyzer);
  Access access = parsed->reinforce ? Access::kWriteElseRead : Access::kRead;
  return WithMemory(ctx, a, access, [&](state::Engine& e, memory::MemoryStore& m, TimeMs now) {
    if (e.read_only()) parsed->reinforce = false;
    return CommitPlan(ctx, a, e, m.Recall(*parsed, now, hits), "recall");
  });
}

int Relate(const CliContext& ctx, const MemoryArgs& a) {
  json req = {{"entity_a", a.words[0]}, {"relation", a.words[1]}, {"entity_b", a.words[2]}};
  return MemoryWrite(ctx, a, "relate", req, "relate",
                     [&](memory::MemoryStore& m, TimeMs) { return m.Relate(req); });
}

// A read of the store, printed as `what`.
int MemoryRead(const CliContext& ctx, const MemoryArgs& a, const std::string& what,
               const std::function<Result<json>(memory::MemoryStore&, TimeMs)>& read) {
  return WithMemory(ctx, a, Access::kRead, [&](state::Engine&, memory::MemoryStore& m, TimeMs now) {
    auto out = read(m, now);
    if (!out.ok()) return Fail(out.status());
    Print(ctx, a, *out, what);
    return 0;
  });
}

int Related(const CliContext& ctx, const MemoryArgs& a) {
  return MemoryRead(ctx, a, "related",
                    [&](memory::MemoryStore& m, TimeMs) { return m.Related(a.subject, a.depth); });
}

int Forget(const CliContext& ctx, const MemoryArgs& a) {
  if (!a.by_id && !a.by_subject && !a.by_age)
    return UsageError("memory forget: give one of --id, --subject, --older-than");
  json req = a.by_id        ? json{{"id", a.id}}
             : a.by_subject ? json{{"subject", a.subject}}
                            : json{{"older_than", a.older_than}};
  if (a.force) req["force"] = true;
  return MemoryWrite(ctx, a, "forget", req, "forget",
                     [&](memory::MemoryStore& m, TimeMs now) { return m.Forget(req, now); });
}

int Decay(const CliContext& ctx, const MemoryArgs& a) {
  return MemoryWrite(ctx, a, "decay", {{"force", a.force}}, "decay",
                     [&](memory::MemoryStore& m, TimeMs now) { return m.Decay(a.force, now); });
}

int Stats(const CliContext& ctx, const MemoryArgs& a) {
  return MemoryRead(ctx, a, "stats",
                    [](memory::MemoryStore& m, TimeMs now) { return m.Stats(now); });
}

// Re-embedding thousands of memories with a local model takes minutes: a
// running limbic gets up to kForwardedEmbedMs (its log shows the progress).
constexpr int kForwardedEmbedMs = 6 * 3600 * 1000;

int Embed(const CliContext& ctx, const MemoryArgs& a) {
  const json body = {{"all", a.all}};
  Forwarding api{"embed", body, "embed", [&](const Status& busy) {
                   if (!a.quiet)
                     std::cerr << "limbic: the running limbic embeds (its log shows the progress)\n";
                   return ForwardRequest(ctx, "embed", body, busy, kForwardedEmbedMs);
                 }};
  return WithMemory(
      ctx, a, Access::kWrite,
      [&](state::Engine& e, memory::MemoryStore& m, TimeMs) {
        // While vectors are made here. --quiet prints none.
        ProgressLine line({.doing = "embedding", .unit = "memories", .quiet = a.quiet,
                           .terminal = ::isatty(2) == 1});
        auto progress = [&line](size_t done, size_t total) {
          if (total > 0) line.Update(done, total, 0);
        };
        return CommitPlan(ctx, a, e, m.Embed(a.all, progress), "embed");
      },
      &api);
}

int Export(const CliContext& ctx, const MemoryArgs& a) {
  return WithMemory(ctx, a, Access::kRead, [&](state::Engine&, memory::MemoryStore& m, TimeMs) {
    auto out = m.Export();
    if (!out.ok()) return Fail(out.status());
    if (!a.quiet) PrintJson(*out);
    return 0;
  });
}

int Import(const CliContext& ctx, const MemoryArgs& a) {
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  auto doc = state::ParseJsonObject(text, "stdin");
  if (!doc.ok()) return Fail(doc.status());
  return MemoryWrite(ctx, a, "import_memory", *doc, "import",
                     [&](memory::MemoryStore& m, TimeMs) { return m.Import(*doc); });
}

int Ingest(const CliContext& ctx, const MemoryArgs& a) {
  json req = {{"path", a.path}};
  if (!a.episode.empty()) req["episode_id"] = a.episode;
  // Beside a running runtime, which may read only under its
  // memory.ingest_roots, the files are read here and their content sent.
  Forwarding api{"ingest", json(), "ingest", [&](const Status& busy) -> Result<json> {
                   auto settings = MemorySettings(a.config);
                   if (!settings.ok()) return settings.status();
                   return IngestThroughApi(ctx, a.path, a.episode, settings->ingest_max_bytes,
                                           busy);
                 }};
  return WithMemory(
      ctx, a, Access::kWrite,
      [&](state::Engine& e, memory::MemoryStore& m, TimeMs) {
        return CommitPlan(ctx, a, e, m.Ingest(req), "ingest");
      },
      &api);
}

int Show(const CliContext& ctx, const MemoryArgs& a) {
  return MemoryRead(ctx, a, "show",
                    [&](memory::MemoryStore& m, TimeMs now) { return m.Get(a.id, now); });
}

// `memory evaluate FILE...`: a labelled set's recall figures, limbic's and
// the baselines' (memory/evaluate.h), in a scratch state: the state dir is
// not touched.
int Evaluate(const CliContext& ctx, const MemoryArgs& a) {
  auto settings = MemorySettings(a.config);
  if (!settings.ok()) return Fail(settings.status());
  memory::EvalSet set;
  for (const std::string& file : a.words) {
    auto text = Env::Default()->ReadFileToString(file);
    if (!text.ok()) return Fail(text.status());
    auto part = memory::ParseEvalSet(*text, file);
    if (!part.ok()) return Fail(part.status());
    if (Status s = memory::AppendEvalSet(&set, std::move(*part), file); !s.ok()) return Fail(s);
  }
  memory::EvalOptions eo;
  eo.per_query = a.per_query;
  auto out = memory::EvaluateRecall(set, *settings, eo);
  if (!out.ok()) return Fail(out.status());
  if (a.quiet) return 0;
  if (ctx.json) {
    PrintJson(*out);
    return 0;
  }
  std::printf("%zu memories (%zu merged into another), %zu queries\n",
              (*out)["memories"].get<size_t>(), (*out)["merged"].get<size_t>(),
              (*out)["queries"].get<size_t>());
  std::printf("%-14s %-12s %5s %7s %7s %7s %7s %7s\n", "system", "category", "n", "R@1", "R@5",
              "R@10", "MRR", "nDCG@10");
  auto row = [](const std::string& sys, const std::string& cat, const json& m) {
    std::printf("%-14s %-12s %5zu %7.4f %7.4f %7.4f %7.4f %7.4f\n", sys.c_str(), cat.c_str(),
                m["n"].get<size_t>(), m["r1"].get<double>(), m["r5"].get<double>(),
                m["r10"].get<double>(), m["mrr"].get<double>(), m["ndcg10"].get<double>());
  };
  for (const char* sys : {"limbic", "bm25_stemmed", "bm25"}) {
    const json& s = (*out)["systems"][sys];
    row(sys, "all", s["overall"]);
    for (const auto& [cat, m] : s["categories"].items()) row("", cat, m);
  }
  const json& r = (*out)["ratio"];
  std::printf("limbic / bm25_stemmed: R@1 %.3f  R@5 %.3f  R@10 %.3f  MRR %.3f  nDCG@10 %.3f\n",
              r["r1"].get<double>(), r["r5"].get<double>(), r["r10"].get<double>(),
              r["mrr"].get<double>(), r["ndcg10"].get<double>());
  const json& l = (*out)["latency_ms"];
  std::printf("limbic recall: p50 %.2f ms, p99 %.2f ms\n", l["p50"].get<double>(),
              l["p99"].get<double>());
  return 0;
}

}  // namespace

void AddMemoryCommands(CLI::App& app, CliContext& ctx, int& rc) {
  auto a = std::make_shared<MemoryArgs>();
  auto* cmd =
      app.add_subcommand("memory", "long-term memory: facts, episodes, documents, recall, decay");
  cmd->require_subcommand(1);
  cmd->add_option("--config", a->config,
                  "config whose memory settings to use (default: the built-in one)");
  cmd->add_flag("--quiet,-q", a->quiet, "print nothing; the exit code tells");
  auto tagging = [a](CLI::App* c) {
    c->add_option("--importance", a->importance, "0..1 (default 0.5)")->check(CLI::Range(0.0, 1.0));
    c->add_option("--tag", a->tags, "a tag (repeatable)");
    c->add_option("--namespace", a->ns, "namespace (default \"default\")");
  };

  auto* remember = cmd->add_subcommand("remember", "remember a fact: SUBJECT RELATION OBJECT");
  remember->add_option("triple", a->words, "subject relation object")->required()->expected(3);
  tagging(remember);
  remember->callback(Action(ctx, rc, a, Remember));

  auto* episode = cmd->add_subcommand("remember-episode", "remember an episode (free text)");
  episode->add_option("text", a->query, "what happened")->required();
  episode->add_option("--episode", a->episode, "an episode id to file it under");
  tagging(episode);
  episode->callback(Action(ctx, rc, a, RememberEpisode));

  auto* recall = cmd->add_subcommand("recall", "hybrid search over memories and the archive");
  recall->add_option("query", a->query, "what to recall")->required();
  recall->add_option("-k,--limit", a->k, "how many (default 5)")->check(CLI::Range(1, 1000));
  recall->add_option("--kind", a->kind, "fact, episode, chunk, archive or staged");
  recall->add_option("--tag", a->tag, "only memories with this tag");
  recall->add_option("--namespace", a->ns, "only this namespace");
  recall->add_option("--episode", a->episode, "only memories of this episode id");
  recall->add_flag("--explain", a->explain, "show each score component");
  recall->add_flag("--no-reinforce", a->no_reinforce, "do not strengthen what is recalled");
  recall->add_flag("--include-superseded", a->include_superseded, "also superseded facts");
  recall->callback(Action(ctx, rc, a, Recall));

  auto* relate =
      cmd->add_subcommand("relate", "associate two entities: ENTITY_A RELATION ENTITY_B");
  relate->add_option("triple", a->words, "entity_a relation entity_b")->required()->expected(3);
  relate->callback(Action(ctx, rc, a, Relate));

  auto* related =
      cmd->add_subcommand("related", "what an entity is connected to (associations and facts)");
  related->add_option("entity", a->subject, "the entity")->required();
  related->add_option("--depth", a->depth, "hops, 1-3 (default 1)")->check(CLI::Range(1, 3));
  related->callback(Action(ctx, rc, a, Related));

  auto* forget = cmd->add_subcommand("forget", "delete memories: --id, --subject or --older-than");
  auto* by_id = forget->add_option("--id", a->id, "one memory")->each([a](const std::string&) {
    a->by_id = true;
  });
  auto* by_subject = forget->add_option("--subject", a->subject, "every fact about this subject")
                         ->each([a](const std::string&) { a->by_subject = true; });
  auto* by_age = forget
                     ->add_option("--older-than", a->older_than,
                                  "memories created before now - this (e.g. 30d)")
                     ->each([a](const std::string&) { a->by_age = true; });
  by_id->excludes(by_subject)->excludes(by_age);
  by_subject->excludes(by_age);
  forget->add_flag("--force", a->force,
                   "with --older-than: even when that is more than half of all memories");
  forget->callback(Action(ctx, rc, a, Forget));

  auto* decay =
      cmd->add_subcommand("decay", "delete memories whose strength has decayed below the minimum");
  decay->add_flag("--force", a->force, "even when that is more than half of all memories");
  decay->callback(Action(ctx, rc, a, Decay));

  auto* context = cmd->add_subcommand("context",
                                      "what a prompt needs now: arousal, the focused thread, its "
                                      "percepts, entity pages, MEMORY.md, memories, in a token "
                                      "budget");
  context->add_option("--query", a->query,
                      "what to remember about (default: the focused thread's goal)");
  context->add_option("--budget-tokens", a->budget, "at most this many tokens (default 2000)")
      ->check(CLI::Range(1, 1000000));
  context->callback(Action(ctx, rc, a, Context));

  auto* stats = cmd->add_subcommand("stats", "counts, embedder, average strength");
  stats->callback(Action(ctx, rc, a, Stats));

  auto* embed = cmd->add_subcommand("embed", "fill in missing vectors (--all: redo every one)");
  embed->add_flag("--all", a->all, "re-embed every memory");
  embed->callback(Action(ctx, rc, a, Embed));

  auto* exp =
      cmd->add_subcommand("export", "every memory, association and document as JSON on stdout");
  exp->callback(Action(ctx, rc, a, Export));

  auto* imp = cmd->add_subcommand(
      "import", "read an export from stdin (validated whole; existing items skipped)");
  imp->callback(Action(ctx, rc, a, Import));

  auto* ingest = cmd->add_subcommand(
      "ingest", "ingest files or folders (.md .txt .py .csv .yaml .yml .json .pdf)");
  ingest->add_option("path", a->path, "a file or folder")->required();
  ingest->add_option("--episode", a->episode, "an episode id stored on every chunk");
  ingest->callback(Action(ctx, rc, a, Ingest));

  AddWorldCommands(cmd, ctx, rc, &a->config, &a->quiet);

  auto* evaluate = cmd->add_subcommand(
      "evaluate", "recall figures on a labelled set (JSONL), beside BM25 baselines");
  evaluate->add_option("files", a->words, "the labelled set, in one or more JSONL files (docs/memory.md, \"Measuring recall\")")
      ->required();
  evaluate->add_flag("--per-query", a->per_query, "with --json: each query's ranked keys");
  evaluate->callback(Action(ctx, rc, a, Evaluate));

  auto* show = cmd->add_subcommand("show", "one memory");
  show->add_option("id", a->id, "its id")->required();
  show->callback(Action(ctx, rc, a, Show));
}

}  // namespace limbic::runtime
