#include "world/world.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "archive/archive.h"
#include "state/event.h"
#include "base/json.h"
#include "world/files.h"
#include "base/sha256.h"
#include "base/time.h"

namespace limbic::world {
namespace {

namespace fs = std::filesystem;

std::string ScoredKey(const std::string& date, const std::string& text) { return date + "\x1f" + NameKey(text); }

// The identity of an input: its text and its events, as written in the log.
std::string InputDigest(const ExtractInput& input) {
  Sha256 h;
  h.Update(input.date);
  h.Update("\n");
  h.Update(input.text);
  for (const state::Event& e : input.events) {
    h.Update("\n");
    h.Update(state::EncodeEvent(e));
  }
  return h.HexDigest();
}

// Reads a JSON-lines file from byte `offset`, calling fn(json) for each
// complete line that is a JSON object; returns the offset after the last
// complete line (a line still being written is left for later). A missing
// file has no lines.
template <typename Fn>
Result<uint64_t> ForEachLine(const std::string& path, uint64_t offset, Fn&& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return offset;
    return Status::IOError(path + ": cannot be read");
  }
  in.seekg(static_cast<std::streamoff>(offset));
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no '\n': not complete yet
    offset += line.size() + 1;
    auto doc = ParseJson(line);
    if (doc && doc->is_object()) fn(*doc);
  }
  if (in.bad()) return Status::IOError(path + ": cannot be read");
  return offset;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}


}  // namespace

WorldModel::WorldModel(std::string dir, WorldOptions options, std::shared_ptr<spdlog::logger> log, Env* env)
    : dir_(std::move(dir)), options_(std::move(options)), log_(std::move(log)), env_(env) {}

WorldModel::~WorldModel() = default;

Result<std::unique_ptr<WorldModel>> WorldModel::Open(const std::string& memory_dir, WorldOptions options,
                                                     std::shared_ptr<spdlog::logger> log, Env* env) {
  LIMBIC_RETURN_IF_ERROR(env->CreateDirs(memory_dir));
  std::unique_ptr<WorldModel> w(new WorldModel(memory_dir, std::move(options), log, env));
  auto extractor = MakeExtractor(w->options_.extractor, log);
  if (!extractor.ok()) return extractor.status().WithContext("world.extractor");
  w->extractor_ = std::move(*extractor);
  if (w->options_.surprise.mode == "llm") LIMBIC_RETURN_IF_ERROR(CheckChatSpec(w->options_.surprise.llm));
  else if (w->options_.surprise.mode != "heuristic")
    return Status::InvalidArgument("world.surprise: must be heuristic or llm, got \"" + w->options_.surprise.mode + "\"");
  w->scorer_ = std::make_unique<SurpriseScorer>(w->options_.surprise, log);
  auto entities = EntityStore::Open(memory_dir + "/entities", env);
  if (!entities.ok()) return entities.status();
  w->entities_ = std::move(*entities);
  auto graph = GraphStore::Open(w->PathOf(kGraphFile), env);
  if (!graph.ok()) return graph.status();
  w->graph_ = std::move(*graph);
  if (w->graph_->bad_lines() > 0 && log)
    log->warn("world: {}: {} lines are not triplets and were skipped", w->PathOf(kGraphFile),
              w->graph_->bad_lines());

  // What the model already knows: every scored event and MEMORY.md's items.
  LIMBIC_RETURN_IF_ERROR(w->CatchUpScores());
  auto md = ReadWholeFile(w->PathOf(kMemoryFile));
  if (!md.ok()) return md.status();
  std::vector<std::string> known;
  std::istringstream lines(*md);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (std::string item = MemoryItemText(line); !item.empty()) known.push_back(std::move(item));
  }
  w->scorer_->Remember(known);
  return w;
}

Status WorldModel::CatchUpScores() {
  std::vector<std::string> texts;
  auto end = ForEachLine(PathOf(kScoresFile), scores_offset_, [&](const json& j) {
    auto score = ScoreFromJson(j);
    if (!score.ok()) return;
    scored_.insert(ScoredKey(score->date, score->text));
    texts.push_back(std::move(score->text));
  });
  if (!end.ok()) return end.status();
  scores_offset_ = *end;
  scorer_->Remember(texts);
  return Status::OK();
}

Result<std::vector<SurpriseScore>> WorldModel::LoadScores() const {
  std::vector<SurpriseScore> out;
  size_t bad = 0;
  auto end = ForEachLine(PathOf(kScoresFile), 0, [&](const json& j) {
    auto score = ScoreFromJson(j);
    if (score.ok()) out.push_back(std::move(*score));
    else ++bad;
  });
  if (bad > 0 && log_) log_->warn("world: {}: {} lines are not scores and were skipped", PathOf(kScoresFile), bad);
  if (!end.ok()) return end.status();
  return out;
}

std::vector<PageUpdate> WorldModel::PageUpdates(const Extraction& x, const std::string& date,
                                                const std::string& source) const {
  // Pages are for the extraction's entities only: a triplet's other end
  // that is not one (an issue "repo#12") is named on the entity's page.
  std::map<std::string, PageUpdate> pages;  // by NameKey, so the order is stable
  for (const Entity& e : x.entities) {
    PageUpdate& p = pages[NameKey(e.name)];
    if (p.name.empty()) p.name = e.name;
    p.type = e.type;
    p.facts.insert(p.facts.end(), e.facts.begin(), e.facts.end());
  }
  auto page = [&](const std::string& name) -> PageUpdate* {
    auto it = pages.find(NameKey(name));
    return it == pages.end() ? nullptr : &it->second;
  };
  for (const WorldEvent& e : x.events)
    for (const std::string& name : e.entities)
      if (PageUpdate* p = page(name)) p->timeline.emplace_back(e.date, e.text);
  for (const Triplet& t : x.triplets) {
    if (PageUpdate* p = page(t.subject)) p->relations.push_back(OutgoingRelation(t.predicate, t.object));
    if (PageUpdate* p = page(t.object)) p->relations.push_back(IncomingRelation(t.subject, t.predicate));
  }
  // Every entity referenced gets a dated line, so its last reference (what
  // decay goes by) is this input's date even when no event named it.
  std::vector<PageUpdate> out;
  for (auto& [key, p] : pages) {
    if (p.timeline.empty()) p.timeline.emplace_back(date, "mentioned in " + source);
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// Names that cannot be a page (nothing left once made safe) are dropped
// everywhere in `x`, so one odd name does not cost the whole input. Returns
// them, sorted, once each.
std::vector<std::string> DropUnsafeNames(Extraction* x) {
  std::vector<std::string> dropped;
  auto unsafe = [&](const std::string& name) {
    if (SafeFileName(name).ok()) return false;
    dropped.push_back(name);
    return true;
  };
  std::erase_if(x->entities, [&](const Entity& e) { return unsafe(e.name); });
  std::erase_if(x->triplets, [&](const Triplet& t) { return unsafe(t.subject) || unsafe(t.object); });
  for (WorldEvent& e : x->events) std::erase_if(e.entities, unsafe);
  std::erase_if(x->events, [](const WorldEvent& e) { return e.text.empty(); });
  std::sort(dropped.begin(), dropped.end());
  dropped.erase(std::unique(dropped.begin(), dropped.end()), dropped.end());
  return dropped;
}

}  // namespace

Result<json> WorldModel::Extract(const ExtractInput& input, bool force) {
  std::string digest = InputDigest(input);
  json answer = {{"source", input.source}, {"date", input.date}, {"sha256", digest}, {"skipped", false}};
  // One extraction at a time across processes sharing this memory dir, and
  // each starts from what the others scored.
  auto lock = env_->LockFile(PathOf(kLockFile), LockWait::kYes);
  if (!lock.ok()) return lock.status();
  LIMBIC_RETURN_IF_ERROR(CatchUpScores());
  if (!force) {
    bool done = false;
    auto read = ForEachLine(PathOf(kLedgerFile), 0, [&](const json& j) {
      if (Str(j, "source") == input.source && Str(j, "sha256") == digest) done = true;
    });
    if (!read.ok()) return read.status();
    if (done) {
      answer["skipped"] = true;
      return answer;
    }
  }
  auto extracted = extractor_->Extract(input);
  if (!extracted.ok()) return extracted.status().WithContext(input.source);
  Extraction& x = *extracted;

  const std::vector<std::string> dropped = DropUnsafeNames(&x);

  // Surprise against the model as it was before this input; events scored
  // before (a forced re-extraction, an overlapping input) are not scored again.
  Extraction fresh;
  fresh.triplets = x.triplets;
  for (const WorldEvent& e : x.events)
    if (!scored_.count(ScoredKey(e.date, e.text))) fresh.events.push_back(e);
  Known known;
  known.entity = [this](std::string_view name) { return entities_->Exists(name); };
  known.edge = [this](const Triplet& t) { return graph_->HasEdge(t.subject, t.predicate, t.object); };
  if (options_.surprise.mode == "llm") {
    auto md = ReadWholeFile(PathOf(kMemoryFile));
    if (!md.ok()) return md.status();
    known.memory_md = std::move(*md);
  }
  std::string score_note;
  size_t mark = scorer_->Mark();
  std::vector<SurpriseScore> scores = scorer_->Score(fresh, known, input.source, &score_note);
  if (scorer_->stopping()) {
    scorer_->Rollback(mark);
    return Status::Unavailable("stopping: " + input.source +
                               " was not extracted (nothing of it written; the next pass will)");
  }
  // Until the scores are written, what Score remembered is taken back on failure.
  auto written = [&]() -> Result<std::pair<ApplyResult, size_t>> {
    auto applied = entities_->Apply(PageUpdates(x, input.date, input.source));
    if (!applied.ok()) return applied.status();
    auto added = graph_->Add(x.triplets);
    if (!added.ok()) return added.status();
    std::vector<std::string> lines;
    for (const SurpriseScore& s : scores)
      lines.push_back(ScoreToJson(s).dump(-1, ' ', false, json::error_handler_t::replace));
    LIMBIC_RETURN_IF_ERROR(AppendLines(env_, PathOf(kScoresFile), lines));
    return std::pair{*applied, *added};
  }();
  if (!written.ok()) {
    scorer_->Rollback(mark);
    return written.status();
  }
  const auto& [applied, graph_added] = *written;
  size_t surprising = 0;
  for (const SurpriseScore& s : scores) {
    scored_.insert(ScoredKey(s.date, s.text));
    if (s.score > options_.threshold) ++surprising;
  }

  answer["extractor"] = x.extractor;
  std::string note = x.note;
  if (!score_note.empty()) note += (note.empty() ? "" : "; ") + score_note;
  if (!dropped.empty())
    note += (note.empty() ? "" : "; ") + std::string("names with no safe file name were left out: ") + json(dropped).dump();
  if (!note.empty()) answer["note"] = note;
  answer["entities"] = x.entities.size();
  answer["triplets"] = x.triplets.size();
  answer["events"] = x.events.size();
  answer["pages_created"] = applied.pages_created;
  answer["pages_updated"] = applied.pages_updated;
  answer["lines_added"] = applied.lines_added;
  answer["restored"] = applied.restored;
  answer["graph_added"] = graph_added;
  answer["scored"] = scores.size();
  answer["surprising"] = surprising;

  json ledger = answer;
  ledger.erase("skipped");
  ledger["at"] = FormatTime(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  LIMBIC_RETURN_IF_ERROR(AppendLines(env_, PathOf(kLedgerFile), {ledger.dump(-1, ' ', false, json::error_handler_t::replace)}));
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
  auto graph = GraphStore::Open(PathOf(kGraphFile), env_);
  if (!graph.ok()) return graph.status();
  return (*graph)->Neighbors(name, hops);
}

Result<json> WorldModel::Path(std::string_view from, std::string_view to) const {
  auto graph = GraphStore::Open(PathOf(kGraphFile), env_);
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
  auto md = ReadWholeFile(path);
  if (!md.ok()) return md.status();
  return json{{"path", path}, {"markdown", archive::MakeEntry(0, std::move(*md)).text}};
}

Result<std::set<std::string>> WorldModel::ExtractedDays() const {
  std::set<std::string> days;
  auto read = ForEachLine(PathOf(kLedgerFile), 0, [&](const json& j) {
    std::string source = Str(j, "source");
    if (source.starts_with("day:")) days.insert(source.substr(4));
  });
  if (!read.ok()) return read.status();
  return days;
}

}  // namespace limbic::world
