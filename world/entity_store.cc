#include "world/entity_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <unordered_map>

#include "base/json.h"
#include "archive/text.h"
#include "world/files.h"
#include "world/page.h"
#include "base/time.h"

namespace limbic::world {
namespace {

constexpr size_t kMaxFileName = 120;
// Larger pages are not parsed whole: Apply and Read refuse them, List and
// Decay look at their first kMaxPageBytes only. A page this size is a paste
// gone wrong, and reading it on every Apply would be the cost of it.
constexpr size_t kMaxPageBytes = 16 << 20;
constexpr std::string_view kArchiveDir = "archive";
constexpr std::string_view kLockFile = ".lock";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

bool EndsWithMd(std::string_view file) {
  return file.size() > 3 && Lower(file.substr(file.size() - 3)) == ".md";
}

bool IsTrimmed(char c) { return c == '.' || c == ' ' || c == '-'; }

void TrimFileName(std::string* s) {
  size_t b = 0;
  while (b < s->size() && IsTrimmed((*s)[b])) ++b;
  s->erase(0, b);
  while (!s->empty() && IsTrimmed(s->back())) s->pop_back();
}

uint32_t Fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

// The page file of an entity whose SafeFileName is taken by another
// entity's page ("a/b" and "a:b" are both "a-b"): the name with a hash of
// its key, so it is found again without a directory scan.
std::string AltFileName(const std::string& safe, const std::string& key) {
  char hash[16];
  std::snprintf(hash, sizeof hash, "-%08x", Fnv1a(key));
  std::string base(archive::Utf8Prefix(safe, kMaxFileName - 9));
  TrimFileName(&base);
  return base + hash;
}

// A page file belongs to the entity `key` unless its title is another
// entity whose SafeFileName is this very file. A title edited by hand into
// something else does not give the page away.
bool Owns(const Page& page, const std::string& key, const std::string& lower_file) {
  std::string title = DisplayName(page.Title());
  if (title.empty() || NameKey(title) == key) return true;
  auto safe = SafeFileName(title);
  return !safe.ok() || Lower(*safe) + ".md" != lower_file;
}

// The page files of the entities dir, by lower-cased file name.
struct DirIndex {
  std::unordered_map<std::string, std::string> active, archived;
};

// Lists both folders; with `remove_temps_through` set, deletes temp files
// through that Env (see CurrentIndex).
Result<DirIndex> IndexDir(const std::string& dir, Env* remove_temps_through) {
  DirIndex index;
  for (bool archived : {false, true}) {
    std::string path = archived ? dir + "/" + std::string(kArchiveDir) : dir;
    auto names = ListDir(path, true);
    if (archived && !names.ok() && names.status().IsNotFound())
      continue;  // removed by hand: made again when needed
    if (!names.ok()) return names.status();
    for (std::string& name : *names) {
      if (name.starts_with('.')) {
        if (remove_temps_through && name.ends_with(".tmp"))
          (void)remove_temps_through->RemoveFile(path + "/" + name);  // gone already: as well
        continue;
      }
      if (!EndsWithMd(name)) continue;
      auto& map = archived ? index.archived : index.active;
      std::string lower = Lower(name);
      // Two files differing only in case: the first in byte order wins.
      auto [it, inserted] = map.emplace(lower, name);
      if (!inserted && name < it->second) it->second = name;
    }
  }
  return index;
}

// What says whether a listing of the entities dir is still true.
struct Stamp {
  uint64_t generation = 0;                   // in .lock
  int64_t active_ns = -1, archived_ns = -1;  // the folders' modification times
  bool operator==(const Stamp&) const = default;
};

// The count of writes in <dir>/.lock; 0 before the first.
uint64_t ReadGeneration(const std::string& dir) {
  char buf[32] = {0};
  int fd = ::open((dir + "/" + std::string(kLockFile)).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  return n > 0 ? std::strtoull(buf, nullptr, 10) : 0;
}

Result<Stamp> ReadStamp(const std::string& dir) {
  Stamp stamp;
  stamp.generation = ReadGeneration(dir);
  for (bool archived : {false, true}) {
    std::string path = archived ? dir + "/" + std::string(kArchiveDir) : dir;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (archived && errno == ENOENT) continue;
      return ErrnoStatus("stat " + path, errno);
    }
    (archived ? stamp.archived_ns : stamp.active_ns) =
        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return stamp;
}

std::string RelPath(const std::string& file, bool archived) {
  return archived ? std::string(kArchiveDir) + "/" + file : file;
}

// Apply's updates checked and merged by entity (one per name key), before
// anything is touched.
struct Merged {
  PageUpdate u;  // u.name is the DisplayName
  std::string key, safe;
};

Result<std::vector<Merged>> MergeUpdates(const std::vector<PageUpdate>& updates) {
  std::vector<Merged> merged;
  std::unordered_map<std::string, size_t> by_key;
  for (const PageUpdate& in : updates) {
    std::string display = DisplayName(in.name);
    auto safe = SafeFileName(display);
    if (!safe.ok())
      return Status::InvalidArgument("entity name " + JsonQuote(in.name) + " has no safe file name");
    std::string key = NameKey(display);
    auto [it, fresh] = by_key.emplace(key, merged.size());
    if (fresh)
      merged.push_back({PageUpdate{display, EntityType::kConcept, {}, {}, {}}, key, *safe});
    PageUpdate& u = merged[it->second].u;
    if (u.type == EntityType::kConcept) u.type = in.type;
    for (const std::string& f : in.facts) u.facts.push_back(OneLine(f));
    for (const std::string& r : in.relations) u.relations.push_back(OneLine(r));
    for (const auto& [date, line] : in.timeline) {
      if (!IsValidDate(date))
        return Status::InvalidArgument("entity " + JsonQuote(in.name) + ": timeline date " +
                                       JsonQuote(date) + " is not a date (YYYY-MM-DD)");
      u.timeline.emplace_back(date, OneLine(line));
    }
  }
  return merged;
}

// The pages an Apply touches, each read once and changed in memory, then
// written once.
class PageBatch {
 public:
  struct Staged {
    std::string file;
    bool archived = false, created = false, changed = false;
    Page page;
  };

  PageBatch(const std::string& dir, const DirIndex& index) : dir_(dir), index_(index) {}

  // The page of `m`'s entity: already staged, read from its file (active
  // or archived), or new. Its first file name may belong to another entity
  // (two names with one safe file name); then the second, whose hash is of
  // this entity's key, is its. The pointer is valid until the next Stage.
  Result<Staged*> Stage(const Merged& m) {
    for (const std::string& stem : {m.safe, AltFileName(m.safe, m.key)}) {
      const std::string lower = Lower(stem) + ".md";
      if (auto it = by_file_.find(lower); it != by_file_.end()) {
        if (stem == m.safe && !Owns(staged_[it->second].page, m.key, lower)) continue;
        return &staged_[it->second];
      }
      Staged s;
      auto text = ReadPage(lower, &s);
      if (!text.ok()) return text.status();
      if (*text) {
        s.page = Page::Parse((*text)->text);
        if (stem == m.safe && !Owns(s.page, m.key, lower)) continue;
      } else {  // no page, or one deleted by hand since the listing
        s.file = stem + ".md";
        s.archived = false;
        s.created = s.changed = true;
        s.page = Page::New(m.u.name, m.u.type);
      }
      by_file_[lower] = staged_.size();
      staged_.push_back(std::move(s));
      return &staged_.back();
    }
    return Status::Internal("no file for entity " + JsonQuote(m.u.name));
  }

  const std::vector<Staged>& staged() const { return staged_; }

 private:
  // The listed file `lower` (sets s->file, s->archived), or nullopt.
  Result<std::optional<FileText>> ReadPage(const std::string& lower, Staged* s) const {
    auto active = index_.active.find(lower);
    auto archived = index_.archived.find(lower);
    if (active == index_.active.end() && archived == index_.archived.end())
      return std::optional<FileText>();
    s->archived = active == index_.active.end();
    s->file = s->archived ? archived->second : active->second;
    std::string path = dir_ + "/" + RelPath(s->file, s->archived);
    auto read = ReadFilePrefix(path, kMaxPageBytes);
    if (!read.ok() && !read.status().IsNotFound()) return read.status();
    if (read.ok() && !read->whole)
      return Status::FailedPrecondition(path + " is larger than " +
                                        std::to_string(kMaxPageBytes >> 20) +
                                        " MiB: trim it by hand so pages can be added to again");
    if (!read.ok()) return std::optional<FileText>();
    return std::optional<FileText>(std::move(*read));
  }

  const std::string& dir_;
  const DirIndex& index_;
  std::vector<Staged> staged_;
  std::unordered_map<std::string, size_t> by_file_;  // lower-cased file name
};

}  // namespace

struct EntityStore::Index {
  DirIndex files;
  Stamp stamp;
};

struct EntityStore::Found {
  std::string file;  // relative to the entities dir
  bool archived = false;
  FileText text;  // up to kMaxPageBytes
  Page page;
};

Result<std::shared_ptr<const EntityStore::Index>> EntityStore::CurrentIndex(bool locked) const {
  auto stamp = ReadStamp(dir_);  // before listing: a change during the listing shows next time
  if (!stamp.ok()) return stamp.status();
  if (index_ && index_->stamp == *stamp) return index_;
  auto files = IndexDir(dir_, locked ? env_ : nullptr);
  if (!files.ok()) return files.status();
  index_ = std::make_shared<const Index>(Index{std::move(*files), *stamp});
  return index_;
}

void EntityStore::Remember(FileLock& lock, Index next) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu\n",
                static_cast<unsigned long long>(ReadGeneration(dir_) + 1));
  index_ = nullptr;  // on failure: list again next time
  if (!lock.Rewrite(buf).ok()) return;
  auto stamp = ReadStamp(dir_);
  if (!stamp.ok()) return;
  next.stamp = *stamp;
  index_ = std::make_shared<const Index>(std::move(next));
}

Result<std::optional<EntityStore::Found>> EntityStore::Find(std::string_view name) const {
  std::string display = DisplayName(name);
  auto safe = SafeFileName(display);
  if (!safe.ok()) return std::optional<Found>();
  const std::string key = NameKey(display);
  std::shared_ptr<const Index> index;  // only when a file is not where its name says
  for (const std::string& stem : {*safe, AltFileName(*safe, key)}) {
    const std::string lower = Lower(stem) + ".md";
    for (bool archived : {false, true}) {
      std::string file = stem + ".md";
      auto text = ReadFilePrefix(dir_ + "/" + RelPath(file, archived), kMaxPageBytes);
      if (!text.ok() && text.status().IsNotFound()) {
        if (!index) {
          auto current = CurrentIndex(false);
          if (!current.ok()) return current.status();
          index = std::move(*current);
        }
        auto& map = archived ? index->files.archived : index->files.active;
        auto it = map.find(lower);
        if (it == map.end() || it->second == file) continue;
        file = it->second;
        text = ReadFilePrefix(dir_ + "/" + RelPath(file, archived), kMaxPageBytes);
        if (!text.ok() && text.status().IsNotFound()) continue;  // moved meanwhile
      }
      if (!text.ok()) return text.status();
      Page page = Page::Parse(text->text);
      if (stem == *safe && !Owns(page, key, lower)) continue;
      return std::optional<Found>(Found{file, archived, std::move(*text), std::move(page)});
    }
  }
  return std::optional<Found>();
}

Result<std::string> SafeFileName(std::string_view name) {
  std::string clean = CleanName(name);
  std::string out;
  out.reserve(clean.size());
  auto dash = [&] {
    if (out.empty() || out.back() != '-') out += '-';
  };
  for (size_t i = 0; i < clean.size();) {
    auto c = static_cast<unsigned char>(clean[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f || c == '-' ||
          std::string_view("/\\:*?\"<>|").find(clean[i]) != std::string_view::npos)
        dash();
      else
        out += clean[i];
      ++i;
      continue;
    }
    size_t n = archive::detail::Utf8SeqLen(clean, i);
    bool c1_control = n == 2 && c == 0xC2 && static_cast<unsigned char>(clean[i + 1]) < 0xA0;
    if (n == 0 || c1_control) {
      dash();  // not UTF-8, or U+0080..U+009F
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(clean, i, n);
    i += n;
  }
  TrimFileName(&out);
  out = std::string(archive::Utf8Prefix(out, kMaxFileName));
  TrimFileName(&out);
  if (out.empty())
    return Status::InvalidArgument("entity name " + JsonQuote(name) + " has no safe file name");
  return out;
}

std::string IncomingRelation(const std::string& subject, const std::string& predicate) {
  return "[[" + DisplayName(subject) + "]] " + OneLine(predicate) + " → this";
}

std::string OutgoingRelation(const std::string& predicate, const std::string& object) {
  return "this " + OneLine(predicate) + " → [[" + DisplayName(object) + "]]";
}

EntityStore::EntityStore(std::string dir, Env* env) : dir_(std::move(dir)), env_(env) {}
EntityStore::~EntityStore() = default;

Result<std::unique_ptr<EntityStore>> EntityStore::Open(const std::string& dir, Env* env) {
  LIMBIC_RETURN_IF_ERROR(env->CreateDirs(dir + "/" + std::string(kArchiveDir)));
  return std::unique_ptr<EntityStore>(new EntityStore(dir, env));
}

Result<ApplyResult> EntityStore::Apply(const std::vector<PageUpdate>& updates) {
  auto merged = MergeUpdates(updates);
  if (!merged.ok()) return merged.status();
  ApplyResult result;
  if (merged->empty()) return result;

  auto lock = env_->LockFile(dir_ + "/" + std::string(kLockFile), LockWait::kYes);
  if (!lock.ok()) return lock.status();
  auto current = CurrentIndex(true);
  if (!current.ok()) return current.status();
  PageBatch batch(dir_, (*current)->files);
  for (const Merged& m : *merged) {
    auto staged = batch.Stage(m);
    if (!staged.ok()) return staged.status();
    bool changed = false;
    result.lines_added += (*staged)->page.Add(m.u, &changed);
    (*staged)->changed = (*staged)->changed || changed;
  }

  // Written: a changed page by rename (an archived one leaves the archive),
  // an unchanged archived one moved back; the index follows.
  Index next = **current;
  bool wrote = false;
  for (const PageBatch::Staged& s : batch.staged()) {
    wrote = wrote || s.changed || s.archived;
    const std::string path = dir_ + "/" + s.file;
    const std::string archived_path = dir_ + "/" + RelPath(s.file, true);
    if (s.changed) {
      LIMBIC_RETURN_IF_ERROR(env_->WriteFileAtomic(path, s.page.Render(), FileDurability::kDerived));
      if (s.archived) LIMBIC_RETURN_IF_ERROR(env_->RemoveFile(archived_path));
    } else if (s.archived) {
      LIMBIC_RETURN_IF_ERROR(env_->RenameFile(archived_path, path));
    }
    if (s.created)
      ++result.pages_created;
    else if (s.changed)
      ++result.pages_updated;
    if (s.archived) ++result.restored;
    if (s.created || s.archived) next.files.active[Lower(s.file)] = s.file;
    if (s.archived) next.files.archived.erase(Lower(s.file));
  }
  if (wrote) Remember(**lock, std::move(next));
  return result;
}

Result<std::vector<PageInfo>> EntityStore::List() const {
  auto index = CurrentIndex(false);
  if (!index.ok()) return index.status();
  std::vector<PageInfo> out;
  for (bool archived : {false, true}) {
    for (const auto& [lower, file] : archived ? (*index)->files.archived : (*index)->files.active) {
      PageInfo info;
      info.file = RelPath(file, archived);
      info.archived = archived;
      auto text = ReadFilePrefix(dir_ + "/" + info.file, kMaxPageBytes);
      if (!text.ok() && text.status().IsNotFound()) continue;  // moved by a writer meanwhile
      if (!text.ok()) return text.status();
      Page page = Page::Parse(text->text);
      PageStats stats = page.Stats();
      info.name = ToValidUtf8(DisplayName(page.Title()));
      if (info.name.empty()) info.name = ToValidUtf8(file.substr(0, file.size() - 3));
      info.type = page.Type();
      info.last_referenced =
          stats.newest_date.empty() ? FormatDate(text->mtime_ms) : stats.newest_date;
      info.facts = stats.facts;
      info.timeline = stats.timeline;
      info.relations = stats.relations;
      out.push_back(std::move(info));
    }
  }
  std::vector<std::pair<std::string, size_t>> order;
  for (size_t i = 0; i < out.size(); ++i) order.emplace_back(NameKey(out[i].name), i);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : out[a.second].file < out[b.second].file;
  });
  std::vector<PageInfo> sorted;
  sorted.reserve(out.size());
  for (const auto& [key, i] : order) sorted.push_back(std::move(out[i]));
  return sorted;
}

bool EntityStore::Exists(std::string_view name) const {
  auto found = Find(name);
  return found.ok() && found->has_value();
}

Result<std::string> EntityStore::Read(std::string_view name) const {
  auto found = Find(name);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return Status::NotFound("no entity page for " + JsonQuote(name));
  if (!(*found)->text.whole)
    return Status::FailedPrecondition(dir_ + "/" + (*found)->file + " is larger than " +
                                      std::to_string(kMaxPageBytes >> 20) + " MiB");
  return std::move((*found)->text.text);
}

Result<std::vector<std::string>> EntityStore::Decay(const std::string& today, int days,
                                                    const std::set<EntityType>& protected_types) {
  auto now = ParseDate(today);
  if (!now.ok())
    return Status::InvalidArgument("today: " + JsonQuote(today) + " is not a date (YYYY-MM-DD)");
  if (days < 0)
    return Status::InvalidArgument("decay days must not be negative, got " + std::to_string(days));
  auto lock = env_->LockFile(dir_ + "/" + std::string(kLockFile), LockWait::kYes);
  if (!lock.ok()) return lock.status();
  auto index = CurrentIndex(true);
  if (!index.ok()) return index.status();
  const DirIndex& now_files = (*index)->files;
  std::vector<std::string> files;
  for (const auto& [lower, file] : now_files.active)
    if (!now_files.archived.count(lower))
      files.push_back(file);  // never overwrite an archived page
  std::sort(files.begin(), files.end());

  std::vector<std::pair<std::string, std::string>> moved;  // {key, name}
  Index next = **index;
  for (const std::string& file : files) {
    const std::string path = dir_ + "/" + file;
    auto text = ReadFilePrefix(path, kMaxPageBytes);
    if (!text.ok() && text.status().IsNotFound()) continue;  // deleted by hand since the listing
    if (!text.ok()) return text.status();
    Page page = Page::Parse(text->text);
    if (protected_types.count(page.Type())) continue;
    std::string last = page.Stats().newest_date;
    if (last.empty()) last = FormatDate(text->mtime_ms);
    auto then = ParseDate(last);
    if (!then.ok() || (*now - *then) / 86400000 <= days) continue;
    const std::string to = dir_ + "/" + RelPath(file, true);
    if (moved.empty()) LIMBIC_RETURN_IF_ERROR(env_->CreateDirs(dir_ + "/" + std::string(kArchiveDir)));
    LIMBIC_RETURN_IF_ERROR(env_->RenameFile(path, to));
    next.files.active.erase(Lower(file));
    next.files.archived[Lower(file)] = file;
    std::string name = ToValidUtf8(DisplayName(page.Title()));
    if (name.empty()) name = ToValidUtf8(file.substr(0, file.size() - 3));
    moved.emplace_back(NameKey(name), std::move(name));
  }
  if (!moved.empty()) Remember(**lock, std::move(next));
  std::sort(moved.begin(), moved.end());
  std::vector<std::string> names;
  for (auto& [key, name] : moved) names.push_back(std::move(name));
  return names;
}

}  // namespace limbic::world
