// ArchiveSearch: keeps a SearchBackend in step with the archive's files.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "archive/search.h"

namespace limbic::archive {
namespace {

// "size:mtime_ns" of a file: changes whenever the file is rewritten (all
// archive writes are a rename of a new file) or appended to.
std::string FileVersion(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return "missing";
  auto mtime = std::filesystem::last_write_time(path, ec);
  return std::to_string(size) + ":" + std::to_string(mtime.time_since_epoch().count());
}

constexpr std::string_view kArchivePrefix = "archive:";
constexpr std::string_view kStagingPrefix = "staging:";

}  // namespace

ArchiveSearch::ArchiveSearch(Archive& archive, SearchBackend& backend) : archive_(archive), backend_(backend) {}

Result<ArchiveSearch::RefreshStats> ArchiveSearch::Refresh() {
  RefreshStats stats;
  auto indexed = backend_.Versions();
  if (!indexed.ok()) return indexed.status();
  std::set<std::string> wanted;

  auto dates = archive_.Dates();
  if (!dates.ok()) return dates.status();
  std::map<std::string, std::string> doc_version;
  for (const std::string& date : *dates) {
    std::string id = std::string(kArchivePrefix) + date;
    std::string version = FileVersion(archive_.PathOf(date));
    doc_version[date] = version;
    auto it = indexed->find(id);
    if (it != indexed->end() && it->second == version) {
      wanted.insert(id);
      ++stats.unchanged;
      continue;
    }
    auto doc = archive_.Load(date);
    if (!doc.ok()) {
      stats.unreadable.push_back({date, doc.status().message()});
      continue;
    }
    wanted.insert(id);
    LIMBIC_RETURN_IF_ERROR(backend_.Index({id, doc->content, date, version}));
    ++stats.indexed;
  }

  // Staged entries not yet in their day's document. A day is re-indexed
  // whole when its staging file or its document changed.
  auto days = archive_.staging().Days();
  if (!days.ok()) return days.status();
  for (const std::string& day : *days) {
    std::string version = "s" + FileVersion(archive_.staging().PathOf(day)) + "|a" +
                          (doc_version.count(day) ? doc_version[day] : std::string("-"));
    std::string prefix = std::string(kStagingPrefix) + day + ":";
    bool current = true, any = false;
    for (auto it = indexed->lower_bound(prefix); it != indexed->end() && it->first.rfind(prefix, 0) == 0; ++it) {
      any = true;
      current = current && it->second == version;
    }
    auto pending = archive_.Pending(day);
    if (!pending.ok()) {
      // The document's own failure is already listed.
      if (!doc_version.count(day) || std::none_of(stats.unreadable.begin(), stats.unreadable.end(),
                                                  [&](const Problem& p) { return p.date == day; }))
        stats.unreadable.push_back({day, pending.status().message()});
      continue;
    }
    auto doc = archive_.Load(day);
    size_t held = doc.ok() ? doc->metadata.value("staged_entries", size_t{0}) : 0;
    for (size_t i = 0; i < pending->size(); ++i) wanted.insert(prefix + std::to_string(held + i + 1));
    if (current && (any || pending->empty())) {
      stats.unchanged += pending->size();
      continue;
    }
    for (size_t i = 0; i < pending->size(); ++i) {
      LIMBIC_RETURN_IF_ERROR(
          backend_.Index({prefix + std::to_string(held + i + 1), (*pending)[i].text, day, version}));
      ++stats.indexed;
    }
  }

  // Whatever is indexed and no longer wanted: rolled up, or gone.
  for (const auto& [id, version] : *indexed)
    if (!wanted.count(id)) {
      LIMBIC_RETURN_IF_ERROR(backend_.Remove(id));
      ++stats.removed;
    }
  return stats;
}

Result<std::vector<SearchHit>> ArchiveSearch::Search(std::string_view query, size_t k) const {
  return backend_.Search(query, k);
}

}  // namespace limbic::archive
