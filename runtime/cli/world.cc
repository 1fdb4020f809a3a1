// `limbic memory extract|graph|entities|surprise|consolidate`: the world
// model (docs/world.md) from the command line. Files under <state>/memory,
// shared safely with a running limbic (every file is appended or replaced
// under a flock), so these commands do not take the state dir's lock.
#include <signal.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "runtime/cli/cli.h"
#include "runtime/config.h"
#include "world/day_input.h"
#include "world/extract_eval.h"
#include "world/log_folder.h"
#include "world/world.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

struct WorldArgs {
  std::string file, date, type, name, other, evaluate;
  int hops = 1;
  bool force = false, stale = false, watch = false;
  // The memory command's --config and --quiet (AddWorldCommands).
  const std::string* config = nullptr;
  const bool* quiet = nullptr;
};

// How often `extract DIR --watch` looks at the folder.
constexpr auto kWatchInterval = std::chrono::seconds(1);

Result<world::WorldOptions> WorldSettings(const std::string& config_path) {
  auto config = config_path.empty() ? DefaultConfig() : LoadConfigFile(config_path);
  if (!config.ok()) return config.status();
  return config->world;
}

// Opens the world model and hands it today's date.
template <typename Fn>
int WithWorld(const CliContext& ctx, const std::string& config, Fn&& fn) {
  auto options = WorldSettings(config);
  if (!options.ok()) return Fail(options.status());
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  auto model = world::WorldModel::Open(ctx.state_dir + "/memory", *options, ctx.logger);
  if (!model.ok()) return Fail(model.status());
  return fn(**model, FormatDate(*now));
}

void PrintText(const json& out, const std::string& what) {
  if (what == "extract") {
    if (out["skipped"].get<bool>()) {
      std::cout << out["source"].get<std::string>() << ": already extracted (--force to redo)\n";
      return;
    }
    std::cout << out["source"].get<std::string>() << " (" << out["date"].get<std::string>() << ", "
              << out["extractor"].get<std::string>() << "): " << out["entities"] << " entities, "
              << out["triplets"] << " triplets, " << out["events"] << " events, " << out["surprising"]
              << " surprising; " << out["pages_created"] << " pages created, " << out["pages_updated"]
              << " updated, " << out["graph_added"] << " relations added\n";
    if (out.contains("note")) std::cerr << "limbic: note: " << out["note"].get<std::string>() << "\n";
  } else if (what == "entities") {
    for (const json& e : out["entities"])
      std::printf("%-32s %-8s %s%s%s\n", e["name"].get<std::string>().c_str(), e["type"].get<std::string>().c_str(),
                  e["last_referenced"].get<std::string>().c_str(), e["archived"].get<bool>() ? "  archived" : "",
                  e["stale"].get<bool>() ? "  stale" : "");
  } else if (what == "surprise") {
    for (const json& s : out["scores"])
      std::printf("%.2f  %s  %s\n", s["score"].get<double>(), s["date"].get<std::string>().c_str(),
                  s["text"].get<std::string>().substr(0, 160).c_str());
  } else if (what == "neighbors" || what == "path") {
    for (const json& n : out[what == "path" ? "path" : "neighbors"]) {
      const json& e = what == "path" ? n : n["edge"];
      if (what == "neighbors") std::cout << n["hops"] << "  " << n["entity"].get<std::string>() << "  ";
      std::cout << e["subject"].get<std::string>() << " —" << e["predicate"].get<std::string>() << "→ "
                << e["object"].get<std::string>() << "  (" << e["date"].get<std::string>() << ")\n";
    }
  } else if (what == "consolidate") {
    std::cout << out["added"] << " items added to " << out["memory_md"].get<std::string>() << "; "
              << out["decayed"].size() << " entities archived\n";
  } else {
    PrintFields(out);
  }
}

int Print(const CliContext& ctx, bool quiet, const Result<json>& out, const std::string& what) {
  if (!out.ok()) return Fail(out.status());
  if (quiet) return 0;
  if (ctx.json) PrintJson(*out);
  else PrintText(*out, what);
  return 0;
}

// ---- extract --evaluate FILE ----

Result<std::string> ReadSample(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Status::NotFound(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return Status::IOError(path + ": cannot be read");
  return text.str();
}

void PrintEvaluation(const std::string& path, const world::Evaluation& ev) {
  std::printf("%s: %zu lines, %zu days, extractor %s\n", path.c_str(), ev.lines, ev.days,
              ev.extractor.c_str());
  std::printf("%-10s %9s %7s %5s %6s %6s %9s\n", "", "precision", "recall", "F1", "right", "found",
              "labelled");
  for (const auto& [what, s] :
       {std::pair{"entities", ev.entities}, {"names", ev.names}, {"triplets", ev.triplets}})
    std::printf("%-10s %9.2f %7.2f %5.2f %6zu %6zu %9zu\n", what, s.precision(), s.recall(), s.f1(),
                s.right, s.found, s.labelled);
  for (const std::string& m : ev.missed) std::printf("missed  %s\n", m.c_str());
  for (const std::string& m : ev.extra) std::printf("extra   %s\n", m.c_str());
  for (const std::string& n : ev.notes) std::fprintf(stderr, "limbic: note: %s\n", n.c_str());
}

// Runs the configured extractor over a labelled sample; nothing is written.
int Evaluate(const CliContext& ctx, const std::string& config, bool quiet, const WorldArgs& a) {
  if (!a.file.empty() || !a.date.empty() || a.force || a.watch)
    return UsageError("--evaluate: takes no daily log, --date, --force or --watch");
  auto options = WorldSettings(config);
  if (!options.ok()) return Fail(options.status());
  auto extractor = world::MakeExtractor(options->extractor, ctx.logger);
  if (!extractor.ok()) return Fail(extractor.status().WithContext("world.extractor"));
  auto text = ReadSample(a.evaluate);
  if (!text.ok()) return Fail(text.status());
  auto sample = world::ParseSample(*text, a.evaluate);
  if (!sample.ok()) return Fail(sample.status());
  auto ev = world::Evaluate(**extractor, *sample);
  if (!ev.ok()) return Fail(ev.status());
  if (quiet) return 0;
  if (ctx.json)
    PrintJson(world::EvaluationToJson(*ev));
  else
    PrintEvaluation(a.evaluate, *ev);
  return 0;
}

// ---- extract DIR [--watch] ----

// SIGINT and SIGTERM while a folder is watched: a handler notes them, and
// they are looked at between files and between passes, so an extraction
// under way finishes. (A signal mask would not do: main.cc runs the command
// on a thread of its own, and the signal may go to any thread.)
volatile std::sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }

class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa = {};
    sa.sa_handler = OnStop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  bool Pending() const { return g_stop != 0; }
  // Waits `d` or until one arrives (noticed within 50 ms); true when one did.
  bool Wait(std::chrono::milliseconds d) const {
    const auto deadline = std::chrono::steady_clock::now() + d;
    for (auto now = std::chrono::steady_clock::now(); !g_stop && now < deadline;
         now = std::chrono::steady_clock::now())
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(50), deadline - now));
    return g_stop != 0;
  }

 private:
  struct sigaction old_int_ = {}, old_term_ = {};
};

// One look at the folder: extracts what is due and prints the pass's
// report (always on the first pass; later, only when there was something
// to say). Returns how many files failed, or the folder's own error.
Result<size_t> FolderPass(const CliContext& ctx, bool quiet, world::WorldModel& w,
                          world::LogFolder& folder, bool first, bool force,
                          const StopSignals* stop) {
  auto changes = folder.Scan(/*settle=*/!first);
  if (!changes.ok()) return changes.status();
  for (const std::string& path : changes->ignored)
    std::cerr << "limbic: warning: " << path
              << ": not a daily log (a daily log is named YYYY-MM-DD….md); left alone\n";
  json files = json::array();
  size_t extracted = 0, unchanged = 0, failed = 0;
  for (const std::string& path : changes->due) {
    if (stop && stop->Pending()) break;
    auto input = world::FileInput(path, "", w.options().max_file_bytes);
    auto out = input.ok() ? w.Extract(*input, force) : Result<json>(input.status());
    if (!out.ok()) {
      Fail(out.status());  // names the file
      ++failed;
      files.push_back({{"source", path}, {"error", out.status().message()}});
      continue;
    }
    if ((*out)["skipped"].get<bool>())
      ++unchanged;
    else
      ++extracted;
    if (!quiet && !ctx.json && !(*out)["skipped"].get<bool>()) PrintText(*out, "extract");
    files.push_back(std::move(*out));
  }
  if (quiet || (!first && files.empty() && changes->ignored.empty())) return failed;
  if (ctx.json) {
    PrintJson({{"dir", folder.dir()},
               {"files", std::move(files)},
               {"extracted", extracted},
               {"unchanged", unchanged},
               {"failed", failed},
               {"ignored", changes->ignored}});
  } else {
    std::cout << folder.dir() << ": " << extracted << " extracted, " << unchanged << " unchanged, "
              << failed << " failed";
    if (const size_t n = changes->ignored.size(); n > 0)
      std::cout << "; " << n << (n == 1 ? " file is" : " files are") << " not a daily log";
    std::cout << "\n";
  }
  std::cout.flush();
  return failed;
}

// A folder of daily logs, once or (--watch) until SIGINT or SIGTERM.
int ExtractFolder(const CliContext& ctx, const std::string& config, bool quiet,
                  const WorldArgs& a) {
  if (!a.date.empty()) return UsageError("--date: a folder's daily logs are dated by their names");
  std::optional<StopSignals> stop;
  if (a.watch) stop.emplace();
  return WithWorld(ctx, config, [&](world::WorldModel& w, const std::string&) {
    world::LogFolder folder(a.file);
    auto failed = FolderPass(ctx, quiet, w, folder, true, a.force, stop ? &*stop : nullptr);
    if (!failed.ok()) return Fail(failed.status());
    if (!a.watch) return *failed > 0 ? 1 : 0;
    while (!stop->Wait(kWatchInterval)) {
      auto pass = FolderPass(ctx, quiet, w, folder, false, false, &*stop);
      if (!pass.ok()) return Fail(pass.status());
    }
    return 0;
  });
}

int RunExtract(const CliContext& ctx, const std::string& config, bool quiet, const WorldArgs& a) {
  if (!a.evaluate.empty()) return Evaluate(ctx, config, quiet, a);
  std::error_code ec;
  if (!a.file.empty() && std::filesystem::is_directory(a.file, ec))
    return ExtractFolder(ctx, config, quiet, a);
  if (a.watch) return UsageError("--watch: give a folder of daily logs to watch");
  return WithWorld(ctx, config, [&](world::WorldModel& w, const std::string& today) {
    auto input = a.file.empty() ? world::DayInput(ctx.state_dir, a.date.empty() ? today : a.date)
                                : world::FileInput(a.file, a.date, w.options().max_file_bytes);
    if (!input.ok()) return Fail(input.status());
    return Print(ctx, quiet, w.Extract(*input, a.force), "extract");
  });
}

int Extract(const CliContext& ctx, const WorldArgs& a) {
  return RunExtract(ctx, *a.config, *a.quiet, a);
}

// The world model's answer to `query`, printed as `what`.
int WorldQuery(const CliContext& ctx, const WorldArgs& a, const std::string& what,
               const std::function<Result<json>(world::WorldModel&, const std::string&)>& query) {
  return WithWorld(ctx, *a.config, [&](world::WorldModel& w, const std::string& today) {
    return Print(ctx, *a.quiet, query(w, today), what);
  });
}

int Neighbors(const CliContext& ctx, const WorldArgs& a) {
  return WorldQuery(ctx, a, "neighbors", [&](world::WorldModel& w, const std::string&) {
    return w.Neighbors(a.name, a.hops);
  });
}

int Path(const CliContext& ctx, const WorldArgs& a) {
  return WorldQuery(ctx, a, "path", [&](world::WorldModel& w, const std::string&) {
    return w.Path(a.name, a.other);
  });
}

int Entities(const CliContext& ctx, const WorldArgs& a) {
  std::optional<world::EntityType> type;
  if (!a.type.empty()) {
    auto t = world::ParseType(a.type);
    if (!t.ok()) return UsageError("--type: " + t.status().message());
    type = *t;
  }
  return WorldQuery(ctx, a, "entities", [&](world::WorldModel& w, const std::string& today) {
    return w.Entities(type, a.stale, today);
  });
}

int Surprise(const CliContext& ctx, const WorldArgs& a) {
  return WorldQuery(ctx, a, "surprise",
                    [&](world::WorldModel& w, const std::string&) { return w.Surprise(a.date); });
}

int Consolidate(const CliContext& ctx, const WorldArgs& a) {
  return WorldQuery(ctx, a, "consolidate", [](world::WorldModel& w, const std::string& today) {
    return w.Consolidate(today);
  });
}

}  // namespace

void AddWorldCommands(CLI::App* memory, CliContext& ctx, int& rc, const std::string* config,
                      const bool* quiet) {
  auto a = std::make_shared<WorldArgs>();
  a->config = config;
  a->quiet = quiet;

  auto* extract = memory->add_subcommand(
      "extract",
      "feed the world model: a day of this state dir (events and archive), a daily-log file, or a "
      "folder of them");
  extract->add_option("file", a->file,
                      "a Markdown daily log or a folder of them (default: the day's events and "
                      "staged archive)");
  extract->add_option("--date", a->date, "the day, YYYY-MM-DD (default: today, or the file name's date)");
  extract->add_flag("--force", a->force, "extract again even when this input was extracted before");
  extract->add_flag("--watch", a->watch,
                    "with a folder: keep running, extracting daily logs as they appear or change");
  extract->add_option("--evaluate", a->evaluate,
                      "score the extractor against a labelled sample (JSON lines); writes nothing");
  extract->callback(Action(ctx, rc, a, Extract));

  auto* graph = memory->add_subcommand("graph", "the relation graph: neighbors and paths");
  graph->require_subcommand(1);
  auto* neighbors = graph->add_subcommand("neighbors", "what an entity is related to");
  neighbors->add_option("name", a->name, "the entity")->required();
  neighbors->add_option("--hops", a->hops, "how far, 1-5 (default 1)")->check(CLI::Range(1, 5));
  neighbors->callback(Action(ctx, rc, a, Neighbors));
  auto* path = graph->add_subcommand("path", "a shortest chain of relations from A to B");
  path->add_option("from", a->name, "A")->required();
  path->add_option("to", a->other, "B")->required();
  path->callback(Action(ctx, rc, a, Path));

  auto* entities = memory->add_subcommand("entities", "the entities of the world model");
  entities->add_option("--type", a->type, "person, company, project, tool or concept");
  entities->add_flag("--stale", a->stale, "only those not referenced for world.decay_days");
  entities->callback(Action(ctx, rc, a, Entities));

  auto* surprise = memory->add_subcommand("surprise", "surprise scores, highest first");
  surprise->add_option("--date", a->date, "only this day, YYYY-MM-DD");
  surprise->callback(Action(ctx, rc, a, Surprise));

  auto* consolidate = memory->add_subcommand(
      "consolidate", "add surprising events to MEMORY.md and archive entities not referenced lately");
  consolidate->callback(Action(ctx, rc, a, Consolidate));
}

}  // namespace limbic::runtime
