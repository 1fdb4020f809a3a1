#include "archive/store.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "state/engine.h"
#include "state/event_log.h"

namespace limbic::archive {
namespace {

constexpr size_t kRecallTextBytes = 4000;

std::string FollowedPath(const Staging& staging) { return staging.dir() + "/.followed"; }

json RollupJson(const RollupResult& r) {
  return {{"date", r.date}, {"added", r.added}, {"created", r.created}, {"rewritten", r.rewritten}};
}

json RecallItem(const char* kind, const std::string& date, const std::string& timestamp, std::string_view text) {
  std::string_view cut = Utf8Prefix(text, kRecallTextBytes);
  json item = {{"kind", kind}, {"date", date}, {"text", std::string(cut)}};
  if (!timestamp.empty()) item["timestamp"] = timestamp;
  if (cut.size() < text.size()) item["truncated"] = true;
  return item;
}

json ProblemsJson(const std::vector<Problem>& problems) {
  json out = json::array();
  for (const Problem& p : problems) out.push_back({{"date", p.date}, {"what", p.what}});
  return out;
}

}  // namespace

Result<std::unique_ptr<ArchiveStore>> ArchiveStore::Open(const StoreOptions& options) {
  std::unique_ptr<ArchiveStore> s(new ArchiveStore());
  s->options_ = options;
  if (!s->options_.env) s->options_.env = Env::Default();
  ArchiveOptions ao;
  ao.dir = options.state_dir + "/archive";
  ao.env = s->options_.env;
  ao.semantic_k = options.semantic_links;
  ao.social_k = options.social_links;
  ao.read_only = options.read_only;
  auto archive = Archive::Open(ao);
  if (!archive.ok()) return archive.status();
  s->archive_ = std::move(archive).value();
  Bm25Options bo;
  bo.path = ao.dir + "/search";
  bo.read_only = options.read_only;
  auto analyzer = Analyzer::Make(options.analyzer);
  if (!analyzer.ok()) return analyzer.status();
  bo.analyzer = std::move(*analyzer);
  // A read-only store of a state whose index was never built searches nothing.
  if (!options.read_only || s->options_.env->FileExists(bo.path + "/CURRENT")) {
    auto backend = OpenBm25(bo);
    if (!backend.ok()) return backend.status();
    s->backend_ = std::move(backend).value();
    s->search_ = std::make_unique<ArchiveSearch>(*s->archive_, *s->backend_);
  }
  return s;
}

Status ArchiveStore::RefreshIndex() {
  if (options_.read_only || !search_) return Status::OK();
  auto r = search_->Refresh();
  if (!r.ok()) return r.status();
  unreadable_ = std::move(r->unreadable);
  return Status::OK();
}

Result<size_t> ArchiveStore::CatchUp(uint64_t up_to_seq) {
  if (options_.read_only) return size_t{0};
  Env* env = options_.env;
  Staging& staging = archive_->staging();
  uint64_t followed = 0;
  if (env->FileExists(FollowedPath(staging))) {
    auto text = env->ReadFileToString(FollowedPath(staging));
    if (!text.ok()) return text.status();
    try {
      followed = std::stoull(*text);
    } catch (const std::exception&) {
      followed = 0;  // re-read the whole log: appends are idempotent
    }
  }
  size_t appended = 0;
  std::string events_dir = state::EventsDirPath(options_.state_dir);
  if (env->FileExists(events_dir)) {
    state::LogReader::Options ro;
    ro.env = env;
    ro.from_seq = followed + 1;
    auto reader = state::LogReader::Open(events_dir, ro);
    if (!reader.ok()) return reader.status();
    state::Event e;
    uint64_t last = followed;
    for (;;) {
      auto more = (*reader)->Next(&e);
      if (!more.ok()) return more.status();
      if (!*more || (up_to_seq && e.seq > up_to_seq)) break;
      last = e.seq;
      if (e.type != state::EventType::kEntryStaged) continue;
      auto entry = EntryFromJson(e.fields["entry"]);
      if (!entry.ok()) return entry.status().WithContext("entry_staged seq " + std::to_string(e.seq));
      entry->metadata["seq"] = e.seq;
      LIMBIC_RETURN_IF_ERROR(staging.Append(e.Str("date"), *entry));
      ++appended;
    }
    if (last != followed) LIMBIC_RETURN_IF_ERROR(env->WriteFileAtomic(FollowedPath(staging), std::to_string(last), FileDurability::kSynced));
  }
  LIMBIC_RETURN_IF_ERROR(RefreshIndex());
  return appended;
}

Result<json> ArchiveStore::Rollup(const std::string& date) {
  LIMBIC_RETURN_IF_ERROR(CheckDate(date));
  auto r = archive_->Rollup(date);
  if (!r.ok()) return r.status();
  LIMBIC_RETURN_IF_ERROR(RefreshIndex());
  return json{{"rolled_up", json::array({RollupJson(*r)})}};
}

Result<json> ArchiveStore::RollupBefore(const std::string& today) {
  LIMBIC_RETURN_IF_ERROR(CheckDate(today));
  auto r = archive_->RollupBefore(today);
  if (!r.ok()) return r.status();
  json out = json::array();
  for (const RollupResult& one : *r) out.push_back(RollupJson(one));
  if (!r->empty()) LIMBIC_RETURN_IF_ERROR(RefreshIndex());
  return json{{"rolled_up", std::move(out)}};
}

Result<json> ArchiveStore::Search(const std::string& query, size_t k) {
  json results = json::array();
  if (search_) {
    auto hits = search_->Search(query, k);
    if (!hits.ok()) return hits.status();
    for (const SearchHit& h : *hits) {
      bool archived = h.id.rfind("archive:", 0) == 0;
      results.push_back({{"id", h.id},
                         {"kind", archived ? "archived" : "staged"},
                         {"date", h.date},
                         {"score", h.score},
                         {"snippet", h.snippet}});
    }
  }
  return json{{"query", query}, {"results", std::move(results)}};
}

Result<json> ArchiveStore::Show(const std::string& date) const {
  LIMBIC_RETURN_IF_ERROR(CheckDate(date));
  auto doc = archive_->Load(date);
  if (!doc.ok()) return doc.status();
  return DocumentToJson(*doc);
}

Result<json> ArchiveStore::Walk(const std::string& date, const std::string& direction, int depth) const {
  LIMBIC_RETURN_IF_ERROR(CheckDate(date));
  if (direction != "temporal" && direction != "semantic")
    return Status::InvalidArgument("direction must be temporal or semantic, got \"" + direction + "\"");
  if (depth < 1 || depth > 100) return Status::InvalidArgument("depth must be in [1, 100]");
  auto start = archive_->Load(date);
  if (!start.ok()) return start.status();
  json visited = json::array();
  if (direction == "temporal") {
    // Prev and next, one day further each step, in date order.
    std::vector<std::pair<std::string, int>> found;
    std::map<std::string, std::string> errors;  // date -> why it cannot be read
    for (bool forward : {false, true}) {
      Document at = *start;
      for (int d = 1; d <= depth; ++d) {
        const auto& step = forward ? at.links.next : at.links.prev;
        if (!step) break;
        auto next = archive_->Load(*step);
        if (!next.ok()) {
          if (!next.status().IsCorruption()) return next.status();
          errors[*step] = next.status().message();
          found.emplace_back(*step, d);
          break;
        }
        found.emplace_back(*step, d);
        at = std::move(next).value();
      }
    }
    std::sort(found.begin(), found.end());
    for (auto& [d, n] : found) {
      visited.push_back({{"date", d}, {"depth", n}});
      if (errors.count(d)) visited.back()["error"] = errors[d];
    }
  } else {
    std::set<std::string> seen{date};
    std::deque<std::pair<Document, int>> queue;
    queue.emplace_back(std::move(start).value(), 0);
    while (!queue.empty()) {
      auto [doc, d] = std::move(queue.front());
      queue.pop_front();
      if (d == depth) continue;
      for (const SemanticLink& link : doc.links.semantic) {
        if (!seen.insert(link.target).second) continue;
        auto next = archive_->Load(link.target);
        visited.push_back({{"date", link.target}, {"depth", d + 1}, {"score", link.score}, {"from", doc.date}});
        if (!next.ok()) {
          if (!next.status().IsCorruption()) return next.status();
          visited.back()["error"] = next.status().message();
          continue;
        }
        queue.emplace_back(std::move(next).value(), d + 1);
      }
    }
  }
  return json{{"date", date}, {"direction", direction}, {"depth", depth}, {"visited", std::move(visited)}};
}

Result<json> ArchiveStore::Stats() const {
  auto s = archive_->Stats();
  if (!s.ok()) return s.status();
  json out = {{"documents", s->documents},
              {"content_bytes", s->content_bytes},
              {"est_tokens", s->est_tokens},
              {"staged_days", s->staged_days},
              {"staged_pending", s->staged_pending},
              {"first", s->first ? json(*s->first) : json(nullptr)},
              {"last", s->last ? json(*s->last) : json(nullptr)},
              {"unreadable", ProblemsJson(s->unreadable)}};
  if (backend_) {
    auto versions = backend_->Versions();
    if (!versions.ok()) return versions.status();
    out["indexed"] = versions->size();
  }
  return out;
}

Result<json> ArchiveStore::Verify() const {
  auto r = archive_->Verify();
  if (!r.ok()) return r.status();
  return json{{"documents", r->documents},
              {"bytes", r->bytes},
              {"ok", r->ok()},
              {"problems", ProblemsJson(r->problems)},
              {"notes", ProblemsJson(r->notes)}};
}

Result<json> ArchiveStore::Import(const std::string& comb_dir, bool relink) {
  auto r = archive_->Import(comb_dir, relink);
  if (!r.ok()) return r.status();
  LIMBIC_RETURN_IF_ERROR(RefreshIndex());
  return json{{"imported", r->documents},
              {"comb_links", r->comb_links},
              {"relinked", r->relinked},
              {"staged_days_left", r->staged_days}};
}

Result<json> ArchiveStore::Relink() {
  auto r = archive_->Relink();
  if (!r.ok()) return r.status();
  LIMBIC_RETURN_IF_ERROR(RefreshIndex());
  return json{{"relinked", *r}};
}

Result<json> ArchiveStore::Recall(size_t k) const {
  json items = json::array();
  auto days = archive_->staging().Days();
  if (!days.ok()) return days.status();
  json unreadable = json::array();
  for (auto day = days->rbegin(); day != days->rend() && items.size() < k; ++day) {
    auto pending = archive_->Pending(*day);
    if (!pending.ok()) {
      if (!pending.status().IsCorruption()) return pending.status();
      unreadable.push_back({{"date", *day}, {"what", pending.status().message()}});
      continue;
    }
    for (auto e = pending->rbegin(); e != pending->rend() && items.size() < k; ++e)
      items.push_back(RecallItem("staged", *day, e->timestamp, e->text));
  }
  auto dates = archive_->Dates();
  if (!dates.ok()) return dates.status();
  for (auto d = dates->rbegin(); d != dates->rend() && items.size() < k; ++d) {
    auto doc = archive_->Load(*d);
    if (!doc.ok()) {
      if (!doc.status().IsCorruption()) return doc.status();
      bool listed = std::any_of(unreadable.begin(), unreadable.end(),
                                [&](const json& u) { return u["date"] == *d; });
      if (!listed) unreadable.push_back({{"date", *d}, {"what", doc.status().message()}});
      continue;
    }
    items.push_back(RecallItem("archived", *d, "", doc->content));
  }
  return json{{"items", std::move(items)}, {"unreadable", std::move(unreadable)}};
}

}  // namespace limbic::archive
