#include "archive/doc_files.h"

#include <nlohmann/json.hpp>

#include "archive/archive.h"
#include "base/json.h"

namespace limbic::archive {

Result<std::optional<std::vector<std::string>>> DocFiles::ReadJournal() const {
  const std::string path = JournalPath();
  if (!env_->FileExists(path)) return std::optional<std::vector<std::string>>();
  auto text = env_->ReadFileToString(path);
  if (!text.ok()) return text.status();
  auto j = ParseJson(*text);
  // The journal appears by rename only after it was synced: a bad one is
  // not a crash artifact.
  auto bad = [&] { return Status::Corruption(path + ": not a rollup journal"); };
  if (!j || !j->is_object() || !j->contains("dates") || !(*j)["dates"].is_array()) return bad();
  std::vector<std::string> dates;
  for (const json& d : (*j)["dates"]) {
    if (!d.is_string() || !IsValidDate(d.get_ref<const std::string&>())) return bad();
    dates.push_back(d.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(dates));
}

Result<DocFiles::Listing> DocFiles::List() const {
  Listing out;
  if (!env_->FileExists(dir_)) return out;
  auto names = env_->GetChildren(dir_);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (!name.ends_with(".json")) continue;
    std::string stem = name.substr(0, name.size() - 5);
    if (IsValidDate(stem)) {
      out.paths[stem] = dir_ + "/" + name;
    } else {
      out.bad_names.push_back(name);
    }
  }
  auto journal = ReadJournal();
  if (!journal.ok()) return journal.status();
  if (*journal) {
    for (const std::string& date : **journal) {
      std::string tmp = PathOf(date) + ".tmp";
      if (env_->FileExists(tmp)) out.paths[date] = tmp;
    }
  }
  return out;
}

std::string DocFiles::PathToRead(std::string_view date) const {
  if (env_->FileExists(JournalPath())) {
    if (auto listing = List(); listing.ok()) {
      auto it = listing->paths.find(std::string(date));
      if (it != listing->paths.end()) return it->second;
    }
  }
  return PathOf(date);
}

// The whole file, read in one call of its size (Env::ReadFileToString reads
// 1 MB chunks, zero-filling each: twice the memory traffic of a 50 KB
// document, on Verify's hot path).
Status DocFiles::ReadAll(const std::string& path, std::string* out) const {
  auto size = env_->GetFileSize(path);
  if (!size.ok()) return size.status();
  auto file = env_->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  LIMBIC_RETURN_IF_ERROR((*file)->Read(static_cast<size_t>(*size), out));
  for (std::string chunk;;) {  // until end of file, should it have grown
    LIMBIC_RETURN_IF_ERROR((*file)->Read(4096, &chunk));
    if (chunk.empty()) return Status::OK();
    *out += chunk;
  }
}

Result<Document> DocFiles::Read(const std::string& path, uint64_t* bytes) const {
  std::string text;
  LIMBIC_RETURN_IF_ERROR(ReadAll(path, &text));
  if (bytes) *bytes = text.size();
  return Parse(text, path);
}

Result<Document> DocFiles::Parse(std::string_view text, const std::string& path) {
  std::optional<json> j = ParseJson(text);
  if (!j) return Status::Corruption(path + ": not JSON (" + JsonError(text) + ")");
  return DocumentFromJson(std::move(*j), path);
}

Status DocFiles::Recover() {
  auto journal = ReadJournal();
  if (!journal.ok()) return journal.status();
  if (*journal) {
    for (const std::string& date : **journal) {
      std::string tmp = PathOf(date) + ".tmp";
      // A missing temp file was renamed before the interruption.
      if (env_->FileExists(tmp)) LIMBIC_RETURN_IF_ERROR(env_->RenameFile(tmp, PathOf(date)));
    }
    LIMBIC_RETURN_IF_ERROR(env_->SyncDir(dir_));
    LIMBIC_RETURN_IF_ERROR(env_->RemoveFile(JournalPath()));
    LIMBIC_RETURN_IF_ERROR(env_->SyncDir(dir_));
  }
  auto names = env_->GetChildren(dir_);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (name.ends_with(".tmp")) LIMBIC_RETURN_IF_ERROR(env_->RemoveFile(dir_ + "/" + name));
  }
  return Status::OK();
}

Status DocFiles::WriteSynced(const std::string& path, std::string_view data) {
  // Appendable files append: a leftover of an interrupted write must go.
  if (env_->FileExists(path)) LIMBIC_RETURN_IF_ERROR(env_->RemoveFile(path));
  auto file = env_->NewAppendableFile(path);
  if (!file.ok()) return file.status();
  LIMBIC_RETURN_IF_ERROR((*file)->Append(data));
  LIMBIC_RETURN_IF_ERROR((*file)->Sync());
  return (*file)->Close();
}

Status DocFiles::Batch::Add(const std::string& date, std::string_view data) {
  LIMBIC_RETURN_IF_ERROR(files_->WriteSynced(files_->PathOf(date) + ".tmp", data));
  dates_.push_back(date);
  return Status::OK();
}

Status DocFiles::Batch::Commit() {
  if (dates_.empty()) return Status::OK();
  Env* env = files_->env_;
  const std::string& dir = files_->dir_;
  auto rename_all = [&]() -> Status {
    for (const std::string& date : dates_)
      LIMBIC_RETURN_IF_ERROR(env->RenameFile(files_->PathOf(date) + ".tmp", files_->PathOf(date)));
    return env->SyncDir(dir);
  };
  if (dates_.size() == 1) return rename_all();

  LIMBIC_RETURN_IF_ERROR(env->SyncDir(dir));  // the temp files' names are durable
  std::string journal = files_->JournalPath();
  LIMBIC_RETURN_IF_ERROR(
      files_->WriteSynced(journal + ".tmp", json{{"dates", dates_}}.dump() + "\n"));
  LIMBIC_RETURN_IF_ERROR(env->RenameFile(journal + ".tmp", journal));
  LIMBIC_RETURN_IF_ERROR(env->SyncDir(dir));  // committed
  LIMBIC_RETURN_IF_ERROR(rename_all());
  LIMBIC_RETURN_IF_ERROR(env->RemoveFile(journal));
  return env->SyncDir(dir);
}

}  // namespace limbic::archive
