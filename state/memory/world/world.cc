#include "state/memory/world/world.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "state/archive/archive.h"
#include "state/event.h"
#include "state/json.h"
#include "state/memory/world/files.h"
#include "state/sha256.h"
#include "state/time.h"

namespace limbic::world {
namespace {

namespace fs = std::filesystem;

std::string ScoredKey(const std::string& date, const std::string& text) { return date + "\x1f" + NameKey(text); }

// The identity of an input: its text and its events, as written in the log.
std::string InputDigest(const ExtractInput& input) {
  state::Sha256 h;
  h.Update(input.date);
  h.Update("\n");
  h.Update(input.text);
  for (const state::Event& e : input.events) {
    h.Update("\n");
    h.Update(state::EncodeEvent(e));
  }
  return h.HexDigest();
}

// Reads a JSON-lines file, calling fn(json, line number) for each line that
// parses; a missing file has no lines.
template <typename Fn>
Status ForEachLine(const std::string& path, Fn&& fn) {
  std::ifstream in(path);
  if (!in) {
    std::error_code ec;
    return fs::exists(path, ec) ? Status::IOError(path + ": cannot be read") : Status::OK();
  }
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    auto doc = state::ParseJson(line);
    if (doc && doc->is_object()) fn(*doc, n);
  }
  return Status::OK();
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

WorldModel::WorldModel(std::string dir, WorldOptions options, std::shared_ptr<spdlog::logger> log)
    : dir_(std::move(dir)), options_(std::move(options)), log_(std::move(log)) {}

WorldModel::~WorldModel() = default;

Result<std::unique_ptr<WorldModel>> WorldModel::Open(const std::string& memory_dir, WorldOptions options,
                                                     std::shared_ptr<spdlog::logger> log) {
  std::error_code ec;
  fs::create_directories(memory_dir, ec);
  if (ec) return Status::IOError(memory_dir + ": " + ec.message());
  std::unique_ptr<WorldModel> w(new WorldModel(memory_dir, std::move(options), log));
  auto extractor = MakeExtractor(w->options_.extractor, log);
  if (!extractor.ok()) return extractor.status().WithContext("world.extractor");
  w->extractor_ = std::move(*extractor);
  if (w->options_.surprise.mode == "llm") LIMBIC_RETURN_IF_ERROR(CheckChatSpec(w->options_.surprise.llm));
  else if (w->options_.surprise.mode != "heuristic")
    return Status::InvalidArgument("world.surprise: must be heuristic or llm, got \"" + w->options_.surprise.mode + "\"");
  w->scorer_ = std::make_unique<SurpriseScorer>(w->options_.surprise, log);
  auto entities = EntityStore::Open(memory_dir + "/entities");
  if (!entities.ok()) return entities.status();
  w->entities_ = std::move(*entities);
  auto graph = GraphStore::Open(w->PathOf(kGraphFile));
  if (!graph.ok()) return graph.status();
  w->graph_ = std::move(*graph);
  if (w->graph_->bad_lines() > 0 && log)
    log->warn("world: {}: {} lines are not triplets and were skipped", w->PathOf(kGraphFile),
              w->graph_->bad_lines());

  // What the model already knows: every scored event and MEMORY.md's items.
  std::vector<std::string> known;
  auto scores = w->LoadScores();
  if (!scores.ok()) return scores.status();
  for (const SurpriseScore& s : *scores) {
    w->scored_.insert(ScoredKey(s.date, s.text));
    known.push_back(s.text);
  }
  std::istringstream md(ReadText(w->PathOf(kMemoryFile)));
  for (std::string line; std::getline(md, line);)
    if (std::string item = MemoryItemText(line); !item.empty()) known.push_back(std::move(item));
  w->scorer_->Remember(known);
  return w;
}

Result<std::vector<SurpriseScore>> WorldModel::LoadScores() const {
  std::vector<SurpriseScore> out;
  size_t bad = 0;
  Status s = ForEachLine(PathOf(kScoresFile), [&](const json& j, size_t) {
    auto score = ScoreFromJson(j);
    if (score.ok()) out.push_back(std::move(*score));
    else ++bad;
  });
  if (bad > 0 && log_) log_->warn("world: {}: {} lines are not scores and were skipped", PathOf(kScoresFile), bad);
  if (!s.ok()) return s;
  return out;
}

std::vector<PageUpdate> WorldModel::PageUpdates(const Extraction& x) const {
  std::map<std::string, PageUpdate> pages;  // by NameKey, so the order is stable
  auto page = [&](const std::string& name) -> PageUpdate& {
    PageUpdate& p = pages[NameKey(name)];
    if (p.name.empty()) p.name = name;
    return p;
  };
  for (const Entity& e : x.entities) {
    PageUpdate& p = page(e.name);
    p.type = e.type;
    p.facts.insert(p.facts.end(), e.facts.begin(), e.facts.end());
  }
  for (const WorldEvent& e : x.events)
    for (const std::string& name : e.entities) page(name).timeline.emplace_back(e.date, e.text);
  for (const Triplet& t : x.triplets) {
    page(t.subject).relations.push_back(OutgoingRelation(t.predicate, t.object));
    page(t.object).relations.push_back(IncomingRelation(t.subject, t.predicate));
  }
  std::vector<PageUpdate> out;
  for (auto& [key, p] : pages) out.push_back(std::move(p));
  return out;
}

Result<json> WorldModel::Extract(const ExtractInput& input, bool force) {
  std::string digest = InputDigest(input);
  json answer = {{"source", input.source}, {"date", input.date}, {"sha256", digest}, {"skipped", false}};
  if (!force) {
    bool done = false;
    LIMBIC_RETURN_IF_ERROR(ForEachLine(PathOf(kLedgerFile), [&](const json& j, size_t) {
      if (j.value("source", "") == input.source && j.value("sha256", "") == digest) done = true;
    }));
    if (done) {
      answer["skipped"] = true;
      return answer;
    }
  }
  auto extracted = extractor_->Extract(input);
  if (!extracted.ok()) return extracted.status().WithContext(input.source);
  Extraction& x = *extracted;

  // Names that cannot be a page (nothing left once made safe) are dropped
  // everywhere, so one odd name does not cost the whole input.
  std::vector<std::string> dropped;
  auto unsafe = [&](const std::string& name) {
    if (SafeFileName(name).ok()) return false;
    dropped.push_back(name);
    return true;
  };
  std::erase_if(x.entities, [&](const Entity& e) { return unsafe(e.name); });
  std::erase_if(x.triplets, [&](const Triplet& t) { return unsafe(t.subject) || unsafe(t.object); });
  for (WorldEvent& e : x.events) std::erase_if(e.entities, unsafe);
  std::erase_if(x.events, [](const WorldEvent& e) { return e.text.empty(); });

  // Surprise against the model as it was before this input; events scored
  // before (a forced re-extraction, an overlapping input) are not scored again.
  Extraction fresh;
  fresh.triplets = x.triplets;
  for (const WorldEvent& e : x.events)
    if (!scored_.count(ScoredKey(e.date, e.text))) fresh.events.push_back(e);
  Known known;
  known.entity = [this](std::string_view name) { return entities_->Exists(name); };
  known.edge = [this](const Triplet& t) { return graph_->HasEdge(t.subject, t.predicate, t.object); };
  if (options_.surprise.mode == "llm") known.memory_md = ReadText(PathOf(kMemoryFile));
  std::string score_note;
  std::vector<SurpriseScore> scores = scorer_->Score(fresh, known, input.source, &score_note);

  auto applied = entities_->Apply(PageUpdates(x));
  if (!applied.ok()) return applied.status();
  auto added = graph_->Add(x.triplets);
  if (!added.ok()) return added.status();
  std::vector<std::string> lines;
  size_t surprising = 0;
  for (const SurpriseScore& s : scores) {
    lines.push_back(ScoreToJson(s).dump(-1, ' ', false, json::error_handler_t::replace));
    scored_.insert(ScoredKey(s.date, s.text));
    if (s.score > options_.threshold) ++surprising;
  }
  LIMBIC_RETURN_IF_ERROR(AppendLines(PathOf(kScoresFile), lines));

  answer["extractor"] = x.extractor;
  std::string note = x.note;
  if (!score_note.empty()) note += (note.empty() ? "" : "; ") + score_note;
  if (!dropped.empty()) {
    std::sort(dropped.begin(), dropped.end());
    dropped.erase(std::unique(dropped.begin(), dropped.end()), dropped.end());
    note += (note.empty() ? "" : "; ") + std::string("names with no safe file name were left out: ") + json(dropped).dump();
  }
  if (!note.empty()) answer["note"] = note;
  answer["entities"] = x.entities.size();
  answer["triplets"] = x.triplets.size();
  answer["events"] = x.events.size();
  answer["pages_created"] = applied->pages_created;
  answer["pages_updated"] = applied->pages_updated;
  answer["lines_added"] = applied->lines_added;
  answer["restored"] = applied->restored;
  answer["graph_added"] = *added;
  answer["scored"] = scores.size();
  answer["surprising"] = surprising;

  json ledger = answer;
  ledger.erase("skipped");
  ledger["at"] = FormatTime(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  LIMBIC_RETURN_IF_ERROR(AppendLines(PathOf(kLedgerFile), {ledger.dump(-1, ' ', false, json::error_handler_t::replace)}));
  return answer;
}

Result<json> WorldModel::Entities(std::optional<EntityType> type, bool stale, const std::string& today) const {
  auto pages = entities_->List();
  if (!pages.ok()) return pages.status();
  auto now = ParseDate(today);
  if (!now.ok()) return Status::InvalidArgument("today: \"" + today + "\" is not a date");
  json out = json::array();
  for (const PageInfo& p : *pages) {
    if (type && p.type != *type) continue;
    auto last = ParseDate(p.last_referenced);
    bool is_stale = last.ok() && (*now - *last) / 86400000 > options_.decay_days;
    if (stale && !is_stale) continue;
    out.push_back({{"name", p.name},
                   {"type", TypeName(p.type)},
                   {"file", p.file},
                   {"last_referenced", p.last_referenced},
                   {"archived", p.archived},
                   {"stale", is_stale},
                   {"facts", p.facts},
                   {"timeline", p.timeline},
                   {"relations", p.relations}});
  }
  return json{{"entities", std::move(out)}};
}

// Traversals read the graph afresh: other processes may have added to it.
Result<json> WorldModel::Neighbors(std::string_view name, int hops) const {
  auto graph = GraphStore::Open(PathOf(kGraphFile));
  if (!graph.ok()) return graph.status();
  return (*graph)->Neighbors(name, hops);
}

Result<json> WorldModel::Path(std::string_view from, std::string_view to) const {
  auto graph = GraphStore::Open(PathOf(kGraphFile));
  if (!graph.ok()) return graph.status();
  return (*graph)->Path(from, to);
}

Result<json> WorldModel::Surprise(const std::string& date) const {
  if (!date.empty() && !IsValidDate(date))
    return Status::InvalidArgument("date: \"" + date + "\" is not a date (YYYY-MM-DD)");
  auto scores = LoadScores();
  if (!scores.ok()) return scores.status();
  std::vector<const SurpriseScore*> picked;
  for (const SurpriseScore& s : *scores)
    if (date.empty() || s.date == date) picked.push_back(&s);
  std::stable_sort(picked.begin(), picked.end(),
                   [](const SurpriseScore* a, const SurpriseScore* b) { return a->score > b->score; });
  json out = json::array();
  for (const SurpriseScore* s : picked) {
    json j = ScoreToJson(*s);
    j["surprising"] = s->score > options_.threshold;
    out.push_back(std::move(j));
  }
  return json{{"date", date.empty() ? json(nullptr) : json(date)}, {"threshold", options_.threshold}, {"scores", std::move(out)}};
}

Result<json> WorldModel::Page(std::string_view name) const {
  auto text = entities_->Read(name);
  if (!text.ok()) return text.status();
  return json{{"name", CleanName(name)}, {"markdown", archive::MakeEntry(0, std::move(*text)).text}};
}

Result<json> WorldModel::MemoryMd() const {
  std::string path = PathOf(kMemoryFile);
  return json{{"path", path}, {"markdown", archive::MakeEntry(0, ReadText(path)).text}};
}

Result<std::set<std::string>> WorldModel::ExtractedDays() const {
  std::set<std::string> days;
  LIMBIC_RETURN_IF_ERROR(ForEachLine(PathOf(kLedgerFile), [&](const json& j, size_t) {
    std::string source = j.value("source", "");
    if (source.starts_with("day:")) days.insert(source.substr(4));
  }));
  return days;
}

}  // namespace limbic::world
