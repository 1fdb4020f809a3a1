// Archive: opening, reading, and the rollup of staged entries into the
// day documents. Verify is in verify.cc; file layout in doc_files.h.
#include "archive/archive.h"

#include <algorithm>

#include "archive/doc_files.h"
#include "archive/links.h"
#include "base/parallel.h"

namespace limbic::archive {
namespace {

uint64_t CountOr(const json& metadata, const char* name, uint64_t fallback) {
  auto it = metadata.find(name);
  return it != metadata.end() && it->is_number_unsigned() ? it->get<uint64_t>() : fallback;
}

// How many staged lines a document holds: a rollup must know, or it would
// append entries twice.
Result<uint64_t> StagedEntries(const Document& doc, const std::string& path) {
  auto it = doc.metadata.find("staged_entries");
  if (it == doc.metadata.end())
    return Status::Corruption(path +
                              ": metadata.staged_entries is missing (a document COMB wrote? "
                              "`limbic archive import` brings a COMB archive in)");
  if (!it->is_number_unsigned())
    return Status::Corruption(path + ": metadata.staged_entries is " + it->dump() +
                              ", not a count");
  return it->get<uint64_t>();
}

// A staging file shorter than what its document holds: its lines were lost
// or its count was raised; either way a rollup cannot know what is new.
Status ShorterThanHeld(const std::string& staging_path, size_t lines, uint64_t held,
                       const std::string& doc_path) {
  return Status::Corruption(staging_path + " has " + std::to_string(lines) + " entries, but " +
                            doc_path + " holds " + std::to_string(held) +
                            " (metadata.staged_entries)");
}

Result<std::string> Serialize(const Document& doc) {
  try {
    return DocumentToJson(doc).dump(1) + "\n";
  } catch (const json::exception& e) {
    return Status::Internal("document " + doc.date + ": " + e.what());
  }
}

LinkOptions LinkOptionsOf(const ArchiveOptions& o) {
  return LinkOptions{o.semantic_k, o.semantic_min, o.social_k};
}

}  // namespace

// What Rollup remembers of each document between calls, so that adding a
// day reads only the documents it rewrites. An entry is trusted while its
// file has the size it had when read or written.
struct Archive::Memo {
  struct Doc {
    uint64_t file_size = 0;
    std::string hash;
    uint64_t staged_entries = 0;
    Links links;
    Features features;
  };
  std::map<std::string, Doc> docs;
};

Archive::Archive(ArchiveOptions options)
    : options_(std::move(options)),
      staging_(options_.dir + "/staging", options_.env),
      memo_(std::make_unique<Memo>()) {}

Archive::~Archive() = default;

Result<std::unique_ptr<Archive>> Archive::Open(const ArchiveOptions& options) {
  if (options.dir.empty()) return Status::InvalidArgument("archive dir is empty");
  ArchiveOptions o = options;
  if (!o.env) o.env = Env::Default();
  if (!o.clock) o.clock = SystemClock::Default();
  std::unique_ptr<Archive> archive(new Archive(std::move(o)));
  if (!archive->options_.read_only) {
    LIMBIC_RETURN_IF_ERROR(archive->options_.env->CreateDirs(archive->staging_.dir()));
    LIMBIC_RETURN_IF_ERROR(archive->options_.env->CreateDirs(archive->options_.dir + "/archive"));
    LIMBIC_RETURN_IF_ERROR(archive->Recover());
  }
  return archive;
}

DocFiles Archive::Files() const { return DocFiles(options_.dir + "/archive", options_.env); }

Status Archive::Recover() { return Files().Recover(); }

std::string Archive::PathOf(std::string_view date) const { return Files().PathOf(date); }

Result<std::vector<std::string>> Archive::Dates() const {
  auto listing = Files().List();
  if (!listing.ok()) return listing.status();
  std::vector<std::string> dates;
  for (const auto& [date, path] : listing->paths) dates.push_back(date);
  return dates;
}

Result<Document> Archive::Load(std::string_view date) const {
  LIMBIC_RETURN_IF_ERROR(CheckDate(date));
  DocFiles files = Files();
  std::string path = files.PathToRead(date);
  if (!options_.env->FileExists(path))
    return Status::NotFound("no archived document for " + std::string(date) + " (" + path + ")");
  auto doc = files.Read(path);
  if (doc.ok() && doc->date != date)
    return Status::Corruption(path + ": date is \"" + doc->date + "\", not " + std::string(date));
  return doc;
}

Result<std::vector<Entry>> Archive::Pending(std::string_view date) const {
  auto entries = staging_.Read(date);
  if (!entries.ok()) return entries.status();
  uint64_t held = 0;
  if (auto doc = Load(date); doc.ok()) {
    auto n = StagedEntries(*doc, PathOf(date));
    if (!n.ok()) return n.status();
    held = *n;
  } else if (!doc.status().IsNotFound()) {
    return doc.status();
  }
  if (held > entries->size())
    return ShorterThanHeld(staging_.PathOf(date), entries->size(), held, PathOf(date));
  std::vector<Entry> pending;
  for (size_t i = held; i < entries->size(); ++i) pending.push_back(std::move((*entries)[i]));
  return pending;
}

Status Archive::RefreshMemo() {
  DocFiles files = Files();
  auto listing = files.List();
  if (!listing.ok()) return listing.status();
  auto& docs = memo_->docs;
  std::erase_if(docs, [&](const auto& kv) { return !listing->paths.contains(kv.first); });
  std::vector<std::pair<std::string, std::string>> stale;  // (date, path)
  for (const auto& [date, path] : listing->paths) {
    auto size = options_.env->GetFileSize(path);
    if (!size.ok()) return size.status();
    auto it = docs.find(date);
    if (it == docs.end() || it->second.file_size != *size) stale.emplace_back(date, path);
  }
  std::vector<Result<Memo::Doc>> loaded(stale.size(), Status::Internal("not loaded"));
  ParallelFor(stale.size(), [&](size_t i) {
    const auto& [date, path] = stale[i];
    Memo::Doc m;
    auto doc = files.Read(path, &m.file_size);
    if (!doc.ok()) {
      loaded[i] = doc.status();
      return;
    }
    if (doc->date != date) {
      loaded[i] = Status::Corruption(path + ": date is \"" + doc->date + "\"");
      return;
    }
    auto held = StagedEntries(*doc, path);
    if (!held.ok()) {
      loaded[i] = held.status();
      return;
    }
    m.staged_entries = *held;
    m.hash = std::move(doc->hash);
    m.links = std::move(doc->links);
    m.features = ComputeFeatures(doc->content);
    loaded[i] = std::move(m);
  });
  for (size_t i = 0; i < stale.size(); ++i) {
    if (!loaded[i].ok()) return loaded[i].status();
    docs[stale[i].first] = std::move(loaded[i]).value();
  }
  return Status::OK();
}

Result<RollupResult> Archive::Rollup(std::string_view date) {
  auto r = RollupDay(date);
  if (!r.ok()) return r.status();
  if (!*r)
    return Status::InvalidArgument("nothing to roll up for " + std::string(date) +
                                   ": no staged entries in " + staging_.PathOf(date) +
                                   " and no archived document");
  return std::move(**r);
}

Result<std::optional<RollupResult>> Archive::RollupDay(std::string_view date_view) {
  LIMBIC_RETURN_IF_ERROR(CheckDate(date_view));
  if (options_.read_only) return Status::FailedPrecondition("the archive is open read-only");
  const std::string date(date_view);
  LIMBIC_RETURN_IF_ERROR(Recover());
  if (Status s = RefreshMemo(); !s.ok()) {
    memo_->docs.clear();
    return s;
  }
  auto& memo = memo_->docs;

  // The day's new entries, and its document with them.
  auto entries = staging_.Read(date);
  if (!entries.ok()) return entries.status();
  auto known = memo.find(date);
  const bool created = known == memo.end();
  const uint64_t held = created ? 0 : known->second.staged_entries;
  if (entries->size() < held)
    return ShorterThanHeld(staging_.PathOf(date), entries->size(), held, PathOf(date));
  if (entries->size() == held) {
    if (created) return std::optional<RollupResult>();
    return std::optional<RollupResult>(RollupResult{date, 0, false, 0});
  }
  std::vector<Entry> pending(entries->begin() + static_cast<ptrdiff_t>(held), entries->end());
  DocFiles files = Files();
  Document doc;
  if (created) {
    doc.date = date;
  } else {
    auto old = files.Read(PathOf(date));
    if (!old.ok()) return old.status();
    doc = std::move(old).value();
  }
  uint64_t tokens = CountOr(doc.metadata, "est_tokens", 0);
  for (const Entry& e : pending) tokens += e.est_tokens;
  AppendToContent(&doc.content, pending);
  doc.metadata["staged_entries"] = entries->size();
  doc.metadata["entries"] = CountOr(doc.metadata, "entries", held) + pending.size();
  doc.metadata["byte_size"] = doc.content.size();
  doc.metadata["est_tokens"] = tokens;
  doc.metadata["rolled_up_at"] = FormatTime(options_.clock->Now());
  Features features = ComputeFeatures(doc.content);

  // Every document's links, with the day's new content.
  std::vector<std::string> dates;
  for (const auto& kv : memo) dates.push_back(kv.first);
  const size_t at = std::lower_bound(dates.begin(), dates.end(), date) - dates.begin();
  if (created) dates.insert(dates.begin() + static_cast<ptrdiff_t>(at), date);
  std::vector<const Features*> feature_of;
  for (size_t i = 0; i < dates.size(); ++i)
    feature_of.push_back(i == at ? &features : &memo.at(dates[i]).features);
  std::vector<Links> links = ComputeLinks(dates, feature_of, LinkOptionsOf(options_));

  // Write the day, every later document (re-hashed), and every earlier one
  // whose links changed; remember them once committed.
  DocFiles::Batch batch(&files);
  std::vector<std::pair<std::string, Memo::Doc>> written;
  auto write = [&](Document& d, size_t i) -> Status {
    d.links = links[i];
    auto data = Serialize(d);
    if (!data.ok()) return data.status();
    LIMBIC_RETURN_IF_ERROR(batch.Add(d.date, *data));
    Memo::Doc m;
    m.file_size = data->size();
    m.hash = d.hash;
    m.staged_entries = i == at ? entries->size() : memo.at(d.date).staged_entries;
    m.links = d.links;
    m.features = i == at ? features : memo.at(d.date).features;
    written.emplace_back(d.date, std::move(m));
    return Status::OK();
  };
  for (size_t i = 0; i < at; ++i) {
    if (links[i] == memo.at(dates[i]).links) continue;
    auto d = files.Read(PathOf(dates[i]));
    if (!d.ok()) return d.status();
    LIMBIC_RETURN_IF_ERROR(write(*d, i));
  }
  doc.prev_hash = at > 0 ? std::optional<std::string>(memo.at(dates[at - 1]).hash) : std::nullopt;
  doc.hash = ChainHash(doc.prev_hash, doc.content);
  LIMBIC_RETURN_IF_ERROR(write(doc, at));
  std::string prev = doc.hash;
  for (size_t i = at + 1; i < dates.size(); ++i) {
    auto d = files.Read(PathOf(dates[i]));
    if (!d.ok()) return d.status();
    d->prev_hash = prev;
    d->hash = prev = ChainHash(d->prev_hash, d->content);
    LIMBIC_RETURN_IF_ERROR(write(*d, i));
  }
  if (Status s = batch.Commit(); !s.ok()) {
    memo.clear();  // the files may be either version until Recover()
    return s;
  }
  for (auto& [d, m] : written) memo[d] = std::move(m);
  return std::optional<RollupResult>(RollupResult{date, pending.size(), created, written.size()});
}

Result<std::vector<RollupResult>> Archive::RollupBefore(std::string_view before) {
  LIMBIC_RETURN_IF_ERROR(CheckDate(before));
  auto days = staging_.Days();
  if (!days.ok()) return days.status();
  // A day that cannot be rolled up (a bad staging line) does not hold up
  // the others; its error is returned once they are done.
  std::vector<RollupResult> out;
  Status first_error;
  for (const std::string& day : *days) {
    if (day >= before) break;
    auto r = RollupDay(day);
    if (!r.ok()) {
      if (first_error.ok()) first_error = r.status();
      continue;
    }
    if (*r && (*r)->added > 0) out.push_back(std::move(**r));
  }
  if (!first_error.ok())
    return first_error.WithMessage(first_error.message() + " (" + std::to_string(out.size()) +
                                   " other days rolled up)");
  return out;
}

Result<size_t> Archive::Relink() {
  if (options_.read_only) return Status::FailedPrecondition("the archive is open read-only");
  LIMBIC_RETURN_IF_ERROR(Recover());
  if (Status s = RefreshMemo(); !s.ok()) {
    memo_->docs.clear();
    return s;
  }
  auto& memo = memo_->docs;
  std::vector<std::string> dates;
  std::vector<const Features*> features;
  for (const auto& [date, m] : memo) {
    dates.push_back(date);
    features.push_back(&m.features);
  }
  std::vector<Links> links = ComputeLinks(dates, features, LinkOptionsOf(options_));
  DocFiles files = Files();
  DocFiles::Batch batch(&files);
  std::vector<std::pair<std::string, uint64_t>> written;  // (date, file size)
  for (size_t i = 0; i < dates.size(); ++i) {
    if (links[i] == memo.at(dates[i]).links) continue;
    auto d = files.Read(PathOf(dates[i]));
    if (!d.ok()) return d.status();
    d->links = links[i];
    auto data = Serialize(*d);
    if (!data.ok()) return data.status();
    LIMBIC_RETURN_IF_ERROR(batch.Add(dates[i], *data));
    written.emplace_back(dates[i], data->size());
  }
  if (written.empty()) return size_t{0};
  if (Status s = batch.Commit(); !s.ok()) {
    memo.clear();
    return s;
  }
  for (size_t i = 0, w = 0; i < dates.size() && w < written.size(); ++i) {
    if (written[w].first != dates[i]) continue;
    memo.at(dates[i]).links = links[i];
    memo.at(dates[i]).file_size = written[w++].second;
  }
  return written.size();
}

Result<ArchiveStats> Archive::Stats() const {
  DocFiles files = Files();
  auto listing = files.List();
  if (!listing.ok()) return listing.status();
  std::vector<std::pair<std::string, std::string>> paths(listing->paths.begin(),
                                                         listing->paths.end());
  std::vector<Result<Document>> docs(paths.size(), Status::Internal("not read"));
  ParallelFor(paths.size(), [&](size_t i) { docs[i] = files.Read(paths[i].second); });
  ArchiveStats stats;
  std::map<std::string, uint64_t> held;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i].ok()) {
      stats.unreadable.push_back({paths[i].first, docs[i].status().message()});
      continue;
    }
    const Document& doc = *docs[i];
    stats.content_bytes += doc.content.size();
    stats.est_tokens += CountOr(doc.metadata, "est_tokens", (doc.content.size() + 3) / 4);
    held[paths[i].first] = CountOr(doc.metadata, "staged_entries", 0);
  }
  stats.documents = paths.size() - stats.unreadable.size();
  if (!paths.empty()) {
    stats.first = paths.front().first;
    stats.last = paths.back().first;
  }
  auto days = staging_.Days();
  if (!days.ok()) return days.status();
  stats.staged_days = days->size();
  for (const std::string& day : *days) {
    if (std::any_of(stats.unreadable.begin(), stats.unreadable.end(),
                    [&](const Problem& p) { return p.date == day; }))
      continue;  // what its document holds is unknown
    auto entries = staging_.Read(day);
    if (!entries.ok()) return entries.status();
    uint64_t h = held.contains(day) ? held[day] : 0;
    if (entries->size() > h) stats.staged_pending += entries->size() - h;
  }
  return stats;
}

}  // namespace limbic::archive
