// Staged entries, dates, and the staging directory.
//
// A staging file is JSON lines, each an entry (EntryToJson), each ended by
// "\n". Only Append writes it, and only at its end:
//
//   file = *(entry-json "\n") [torn]
//   torn = bytes of one interrupted append, without its "\n"
#include <algorithm>

#include "archive/archive.h"
#include "archive/text.h"
#include "base/json.h"

namespace limbic::archive {
namespace {

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = detail::Utf8SeqLen(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ToValidUtf8(std::string s) {
  if (IsValidUtf8(s)) return s;
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      out.push_back(s[i++]);
      continue;
    }
    size_t n = detail::Utf8SeqLen(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::optional<uint64_t> SeqOf(const Entry& e) {
  auto it = e.metadata.find("seq");
  if (it == e.metadata.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

// The entry on one line, or an error saying why it is not one.
Result<Entry> ParseLine(std::string_view line) {
  std::optional<json> j = ParseJson(line);
  if (!j) return Status::Corruption("not JSON (" + JsonError(line) + ")");
  return EntryFromJson(*j);
}

// The file's bytes split into whole lines and a possible unterminated tail.
struct Split {
  std::vector<std::string_view> lines;
  std::string_view tail;  // after the last "\n"; empty when none
};
Split SplitLines(std::string_view data) {
  Split out;
  size_t start = 0;
  for (size_t nl; (nl = data.find('\n', start)) != std::string_view::npos; start = nl + 1)
    out.lines.push_back(data.substr(start, nl - start));
  out.tail = data.substr(start);
  return out;
}

}  // namespace

Entry MakeEntry(TimeMs ts, std::string text, json metadata) {
  Entry e;
  e.timestamp = FormatTime(ts);
  e.text = ToValidUtf8(std::move(text));
  e.byte_size = e.text.size();
  e.est_tokens = (e.byte_size + 3) / 4;
  e.metadata = metadata.is_object() ? std::move(metadata) : json::object();
  return e;
}

json EntryToJson(const Entry& entry) {
  return json{{"timestamp", entry.timestamp},   {"text", entry.text},
              {"byte_size", entry.byte_size},   {"est_tokens", entry.est_tokens},
              {"metadata", entry.metadata}};
}

Result<Entry> EntryFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("an entry must be a JSON object");
  Entry e;
  auto string_field = [&](const char* name, std::string* out) -> Status {
    auto it = j.find(name);
    if (it == j.end()) return Status::InvalidArgument(std::string("missing \"") + name + "\"");
    if (!it->is_string()) return Status::InvalidArgument(std::string("\"") + name + "\" is not a string");
    *out = it->get<std::string>();
    return Status::OK();
  };
  auto count_field = [&](const char* name, uint64_t* out) -> Status {
    auto it = j.find(name);
    if (it == j.end()) return Status::InvalidArgument(std::string("missing \"") + name + "\"");
    if (!it->is_number_unsigned())
      return Status::InvalidArgument(std::string("\"") + name + "\" is not a non-negative integer");
    *out = it->get<uint64_t>();
    return Status::OK();
  };
  LIMBIC_RETURN_IF_ERROR(string_field("timestamp", &e.timestamp));
  if (auto t = ParseTime(e.timestamp, TimeRule::kLogged); !t.ok())
    return Status::InvalidArgument("\"timestamp\": " + t.status().message());
  LIMBIC_RETURN_IF_ERROR(string_field("text", &e.text));
  LIMBIC_RETURN_IF_ERROR(count_field("byte_size", &e.byte_size));
  LIMBIC_RETURN_IF_ERROR(count_field("est_tokens", &e.est_tokens));
  auto meta = j.find("metadata");
  if (meta == j.end()) return Status::InvalidArgument("missing \"metadata\"");
  if (!meta->is_object()) return Status::InvalidArgument("\"metadata\" is not an object");
  e.metadata = *meta;
  return e;
}

Status CheckDate(std::string_view date) {
  auto d = ParseDate(date);
  return d.ok() ? Status::OK() : d.status();
}

void AppendToContent(std::string* content, const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    if (!content->empty()) *content += "\n\n";
    *content += "## ";
    // Entries are checked on reading; an unparsable one is kept as it is.
    auto t = ParseTime(e.timestamp, TimeRule::kLogged);
    *content += t.ok() ? FormatTime(*t) : e.timestamp;
    *content += '\n';
    *content += e.text;
  }
}

Staging::Staging(std::string dir, Env* env) : dir_(std::move(dir)), env_(env) {}

std::string Staging::PathOf(std::string_view date) const {
  return dir_ + "/" + std::string(date) + ".jsonl";
}

Status Staging::Append(std::string_view date, const Entry& entry) {
  LIMBIC_RETURN_IF_ERROR(CheckDate(date));
  if (!IsValidUtf8(entry.text))
    return Status::InvalidArgument("entry text for " + std::string(date) + " is not valid UTF-8");
  std::string line;
  try {
    line = EntryToJson(entry).dump() + "\n";
  } catch (const json::exception& e) {
    return Status::InvalidArgument("entry for " + std::string(date) + ": " + e.what());
  }
  const std::string path = PathOf(date);
  std::optional<uint64_t> seq = SeqOf(entry);

  bool exists = env_->FileExists(path);
  uint64_t size = 0;
  if (exists) {
    auto got = env_->GetFileSize(path);
    if (!got.ok()) return got.status();
    size = *got;
  }
  std::string prefix;  // "\n" to end a whole but unterminated last entry
  if (exists && !(tail_.path == path && tail_.size == size)) {
    // Not the file we appended to last (or it changed): look at its end.
    auto data = env_->ReadFileToString(path);
    if (!data.ok()) return data.status();
    Split split = SplitLines(*data);
    tail_ = Tail{path, size, std::nullopt};
    if (!split.tail.empty()) {
      if (auto e = ParseLine(split.tail); e.ok()) {
        prefix = "\n";
        tail_.last_seq = SeqOf(*e);
      } else {
        // A torn append: its entry was never acknowledged.
        size = data->size() - split.tail.size();
        LIMBIC_RETURN_IF_ERROR(env_->TruncateFile(path, size));
        tail_.size = size;
      }
    }
    if (prefix.empty() && !split.lines.empty()) {
      // A last line that is not an entry does not stop appends: Read names it.
      if (auto e = ParseLine(split.lines.back()); e.ok()) tail_.last_seq = SeqOf(*e);
    }
  }
  if (exists && seq && tail_.last_seq && *tail_.last_seq >= *seq) {
    if (!prefix.empty()) tail_ = Tail{};  // the file still lacks its last "\n"
    return Status::OK();
  }

  if (!exists) LIMBIC_RETURN_IF_ERROR(env_->CreateDirs(dir_));
  auto file = env_->NewAppendableFile(path);
  if (!file.ok()) return file.status();
  tail_ = Tail{};  // unknown until the append is durable
  LIMBIC_RETURN_IF_ERROR((*file)->Append(prefix + line));
  LIMBIC_RETURN_IF_ERROR((*file)->Sync());
  LIMBIC_RETURN_IF_ERROR((*file)->Close());
  if (!exists) LIMBIC_RETURN_IF_ERROR(env_->SyncDir(dir_));
  tail_ = Tail{path, size + prefix.size() + line.size(), seq};
  return Status::OK();
}

Result<std::vector<Entry>> Staging::Read(std::string_view date) const {
  LIMBIC_RETURN_IF_ERROR(CheckDate(date));
  const std::string path = PathOf(date);
  if (!env_->FileExists(path)) return std::vector<Entry>{};
  auto data = env_->ReadFileToString(path);
  if (!data.ok()) return data.status();
  Split split = SplitLines(*data);
  std::vector<Entry> out;
  out.reserve(split.lines.size() + 1);
  for (size_t i = 0; i < split.lines.size(); ++i) {
    auto e = ParseLine(split.lines[i]);
    if (!e.ok())
      return Status::Corruption(path + " line " + std::to_string(i + 1) + ": " +
                                e.status().message());
    out.push_back(std::move(e).value());
  }
  if (!split.tail.empty()) {
    if (auto e = ParseLine(split.tail); e.ok()) out.push_back(std::move(e).value());
  }
  return out;
}

Result<std::vector<std::string>> Staging::Days() const {
  if (!env_->FileExists(dir_)) return std::vector<std::string>{};
  auto names = env_->GetChildren(dir_);
  if (!names.ok()) return names.status();
  std::vector<std::string> days;
  for (const std::string& name : *names) {
    if (name.size() == 16 && name.ends_with(".jsonl") && IsValidDate(name.substr(0, 10)))
      days.push_back(name.substr(0, 10));
  }
  std::sort(days.begin(), days.end());
  return days;
}

}  // namespace limbic::archive
