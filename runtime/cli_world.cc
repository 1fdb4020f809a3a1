// `limbic memory extract|graph|entities|surprise|consolidate`: the world
// model (docs/world.md) from the command line. Files under <state>/memory,
// shared safely with a running limbic (every file is appended or replaced
// under a flock), so these commands do not take the state dir's lock.
#include <iostream>

#include "runtime/cli.h"
#include "runtime/config.h"
#include "world/day_input.h"
#include "world/world.h"

namespace limbic::runtime {
namespace {

using nlohmann::json;

struct WorldArgs {
  std::string file, date, type, name, other;
  int hops = 1;
  bool force = false, stale = false;
};

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

}  // namespace

void AddWorldCommands(CLI::App* memory, CliContext& ctx, int& rc, const std::string* config, const bool* quiet) {
  auto a = std::make_shared<WorldArgs>();

  auto* extract = memory->add_subcommand(
      "extract", "feed the world model: a day of this state dir (events and archive), or a daily-log file");
  extract->add_option("file", a->file, "a Markdown daily log (default: the day's events and staged archive)");
  extract->add_option("--date", a->date, "the day, YYYY-MM-DD (default: today, or the file name's date)");
  extract->add_flag("--force", a->force, "extract again even when this input was extracted before");
  extract->callback([&ctx, &rc, a, config, quiet] {
    rc = WithWorld(ctx, *config, [&](world::WorldModel& w, const std::string& today) {
      auto input = a->file.empty() ? world::DayInput(ctx.state_dir, a->date.empty() ? today : a->date)
                                   : world::FileInput(a->file, a->date, w.options().max_file_bytes);
      if (!input.ok()) return Fail(input.status());
      return Print(ctx, *quiet, w.Extract(*input, a->force), "extract");
    });
  });

  auto* graph = memory->add_subcommand("graph", "the relation graph: neighbors and paths");
  graph->require_subcommand(1);
  auto* neighbors = graph->add_subcommand("neighbors", "what an entity is related to");
  neighbors->add_option("name", a->name, "the entity")->required();
  neighbors->add_option("--hops", a->hops, "how far, 1-5 (default 1)")->check(CLI::Range(1, 5));
  neighbors->callback([&ctx, &rc, a, config, quiet] {
    rc = WithWorld(ctx, *config, [&](world::WorldModel& w, const std::string&) {
      return Print(ctx, *quiet, w.Neighbors(a->name, a->hops), "neighbors");
    });
  });
  auto* path = graph->add_subcommand("path", "a shortest chain of relations from A to B");
  path->add_option("from", a->name, "A")->required();
  path->add_option("to", a->other, "B")->required();
  path->callback([&ctx, &rc, a, config, quiet] {
    rc = WithWorld(ctx, *config, [&](world::WorldModel& w, const std::string&) {
      return Print(ctx, *quiet, w.Path(a->name, a->other), "path");
    });
  });

  auto* entities = memory->add_subcommand("entities", "the entities of the world model");
  entities->add_option("--type", a->type, "person, company, project, tool or concept");
  entities->add_flag("--stale", a->stale, "only those not referenced for world.decay_days");
  entities->callback([&ctx, &rc, a, config, quiet] {
    std::optional<world::EntityType> type;
    if (!a->type.empty()) {
      auto t = world::ParseType(a->type);
      if (!t.ok()) {
        rc = UsageError("--type: " + t.status().message());
        return;
      }
      type = *t;
    }
    rc = WithWorld(ctx, *config, [&](world::WorldModel& w, const std::string& today) {
      return Print(ctx, *quiet, w.Entities(type, a->stale, today), "entities");
    });
  });

  auto* surprise = memory->add_subcommand("surprise", "surprise scores, highest first");
  surprise->add_option("--date", a->date, "only this day, YYYY-MM-DD");
  surprise->callback([&ctx, &rc, a, config, quiet] {
    rc = WithWorld(ctx, *config, [&](world::WorldModel& w, const std::string&) {
      return Print(ctx, *quiet, w.Surprise(a->date), "surprise");
    });
  });

  auto* consolidate = memory->add_subcommand(
      "consolidate", "add surprising events to MEMORY.md and archive entities not referenced lately");
  consolidate->callback([&ctx, &rc, config, quiet] {
    rc = WithWorld(ctx, *config, [&](world::WorldModel& w, const std::string& today) {
      return Print(ctx, *quiet, w.Consolidate(today), "consolidate");
    });
  });
}

}  // namespace limbic::runtime
