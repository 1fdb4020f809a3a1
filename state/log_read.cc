// LogReader, and the segment helpers shared with the writer.
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "state/event_log.h"
#include "base/json.h"
#include "state/segment.h"
#include "base/sha256.h"

namespace limbic::state {

std::string SegmentFileName(const std::string& dir, uint64_t first_seq) {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.jsonl", static_cast<unsigned long long>(first_seq));
  return dir + "/" + name;
}

Result<std::vector<Segment>> ListSegments(Env* env, const std::string& dir) {
  std::vector<Segment> out;
  if (!env->FileExists(dir)) return out;
  auto children = env->GetChildren(dir);
  if (!children.ok()) return children.status();
  for (const std::string& name : *children) {
    if (name.size() != 26 || name.compare(20, 6, ".jsonl") != 0) continue;
    uint64_t seq = 0;
    auto [ptr, ec] = std::from_chars(name.data(), name.data() + 20, seq);
    if (ec != std::errc() || ptr != name.data() + 20) continue;
    out.push_back(Segment{seq, dir + "/" + name});
  }
  std::sort(out.begin(), out.end(),
            [](const Segment& a, const Segment& b) { return a.first_seq < b.first_seq; });
  return out;
}

std::string SealFileName(const std::string& segment_path) {
  std::string path = segment_path;
  if (path.size() > 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0) path.resize(path.size() - 6);
  return path + ".seal";
}

Status WriteSeal(Env* env, const std::string& segment_path, const SegmentSeal& seal) {
  nlohmann::json j = {{"v", 1},
                      {"first_seq", seal.first_seq},
                      {"last_seq", seal.last_seq},
                      {"bytes", seal.bytes},
                      {"last_ts", FormatTime(seal.last_ts)},
                      {"sha256", seal.sha256}};
  return env->WriteFileAtomic(SealFileName(segment_path), j.dump() + "\n", FileDurability::kSynced);
}

Result<SegmentSeal> ReadSeal(Env* env, const std::string& segment_path) {
  const std::string path = SealFileName(segment_path);
  if (!env->FileExists(path)) return Status::NotFound("no seal " + path);
  auto text = env->ReadFileToString(path);
  if (!text.ok()) return text.status();
  std::optional<nlohmann::json> j = ParseJson(*text);
  auto bad = [&] { return Status::Corruption(path + ": not a valid segment seal"); };
  if (!j || !j->is_object()) return bad();
  SegmentSeal seal;
  for (const char* key : {"first_seq", "last_seq", "bytes"})
    if (!(*j)[key].is_number_unsigned()) return bad();
  if (!(*j)["sha256"].is_string() || !(*j)["last_ts"].is_string()) return bad();
  seal.first_seq = (*j)["first_seq"].get<uint64_t>();
  seal.last_seq = (*j)["last_seq"].get<uint64_t>();
  seal.bytes = (*j)["bytes"].get<uint64_t>();
  seal.sha256 = (*j)["sha256"].get<std::string>();
  auto ts = ParseTime((*j)["last_ts"].get<std::string>(), TimeRule::kLogged);
  if (!ts.ok()) return bad();
  seal.last_ts = *ts;
  return seal;
}

Status HashFile(Env* env, const std::string& path, uint64_t limit, std::string* sha256,
                uint64_t* bytes) {
  auto file = env->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  Sha256 sha;
  std::string chunk;
  *bytes = 0;
  while (*bytes < limit) {
    LIMBIC_RETURN_IF_ERROR((*file)->Read(static_cast<size_t>(std::min<uint64_t>(1 << 20, limit - *bytes)), &chunk));
    if (chunk.empty()) break;
    sha.Update(chunk);
    *bytes += chunk.size();
  }
  *sha256 = sha.HexDigest();
  return Status::OK();
}

Result<std::optional<Event>> FindLastEvent(Env* env, const std::string& dir, EventType type,
                                           uint64_t* bytes_read) {
  if (!env) env = Env::Default();
  if (bytes_read) *bytes_read = 0;
  auto segments = ListSegments(env, dir);
  if (!segments.ok()) return segments.status();
  // Our encoding names the type right after ts; the same text inside a
  // line's data (a nested object's member) is told apart by decoding.
  const std::string needle = "\"type\":\"" + std::string(EventTypeName(type)) + "\"";
  for (auto seg = segments->rbegin(); seg != segments->rend(); ++seg) {
    auto text = env->ReadFileToString(seg->path);
    if (!text.ok()) return text.status();
    if (bytes_read) *bytes_read += text->size();
    std::string_view all(*text);
    for (size_t at = all.rfind(needle); at != std::string_view::npos;
         at = at == 0 ? std::string_view::npos : all.rfind(needle, at - 1)) {
      const size_t begin = at == 0 ? 0 : all.rfind('\n', at - 1) + 1;  // npos + 1 == 0
      const size_t end = all.find('\n', at);
      if (end == std::string_view::npos) continue;  // a line not written whole yet
      auto e = DecodeEvent(all.substr(begin, end - begin));
      if (!e.ok())
        return Status::Corruption(seg->path + " offset " + std::to_string(begin) + ": " +
                                  e.status().message());
      if (e->type == type) return std::optional<Event>(std::move(e).value());
      at = begin;  // the rest of this line is not an event's envelope
    }
  }
  return std::optional<Event>();
}

bool FastSeq(std::string_view line, uint64_t* seq) {
  static constexpr std::string_view kPrefix = "{\"v\":1,\"seq\":";
  if (line.substr(0, kPrefix.size()) != kPrefix) return false;
  const char* begin = line.data() + kPrefix.size();
  auto [ptr, ec] = std::from_chars(begin, line.data() + line.size(), *seq);
  return ec == std::errc() && ptr != begin && ptr < line.data() + line.size() && *ptr == ',';
}

class LogReader::Impl {
 public:
  Impl(std::string path, Options options, bool is_dir)
      : path_(std::move(path)), options_(options), is_dir_(is_dir) {
    if (!options_.env) options_.env = Env::Default();
  }

  Status Init() {
    if (!is_dir_) {
      segments_.push_back(Segment{0, path_});
      return Status::OK();
    }
    return Relist();
  }

  Result<bool> Next(Event* event, EventLocation* where) {
    for (;;) {
      if (!file_) {
        if (is_dir_ && index_ >= segments_.size()) LIMBIC_RETURN_IF_ERROR(Relist());
        if (index_ >= segments_.size()) return false;
        LIMBIC_RETURN_IF_ERROR(OpenCurrent());
      }
      size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        std::string_view line(buf_.data() + pos_, nl - pos_);
        uint64_t offset = file_offset_ + pos_;
        pos_ = nl + 1;
        uint64_t fast = 0;
        if (FastSeq(line, &fast) && fast < options_.from_seq) continue;  // skip cheaply
        if (!options_.decode && fast != 0) {
          if (options_.check_contiguous && last_seq_ != 0 && fast != last_seq_ + 1)
            return Located(Status::Corruption("seq " + std::to_string(fast) + " follows seq " +
                                              std::to_string(last_seq_)),
                           offset);
          last_seq_ = fast;
          raw_ = line;
          event->seq = fast;
          if (where) {
            where->file = segments_[index_].path;
            where->offset = offset;
          }
          return true;
        }
        auto decoded = DecodeEvent(line);
        if (!decoded.ok()) return Located(decoded.status(), offset);
        if (decoded->seq < options_.from_seq) continue;
        if (options_.check_contiguous && last_seq_ != 0 && decoded->seq != last_seq_ + 1)
          return Located(Status::Corruption("seq " + std::to_string(decoded->seq) +
                                            " follows seq " + std::to_string(last_seq_)),
                         offset);
        if (options_.check_contiguous && decoded->ts < last_ts_)
          return Located(Status::Corruption("ts " + FormatTime(decoded->ts) + " of seq " +
                                            std::to_string(decoded->seq) +
                                            " is before the previous event's " +
                                            FormatTime(last_ts_)),
                         offset);
        last_seq_ = decoded->seq;
        last_ts_ = decoded->ts;
        raw_ = line;
        *event = std::move(decoded).value();
        if (where) {
          where->file = segments_[index_].path;
          where->offset = offset;
        }
        return true;
      }
      // No complete line buffered: read more of this file.
      buf_.erase(0, pos_);
      file_offset_ += pos_;
      pos_ = 0;
      LIMBIC_RETURN_IF_ERROR(file_->Read(1 << 20, &chunk_));
      if (!chunk_.empty()) {
        buf_ += chunk_;
        continue;
      }
      // End of this file. Move on only if a later segment exists; once it
      // does, this one is final, so read it once more for bytes that landed
      // between our last read and the rotation.
      if (is_dir_ && index_ + 1 >= segments_.size()) LIMBIC_RETURN_IF_ERROR(Relist());
      if (index_ + 1 < segments_.size()) {
        LIMBIC_RETURN_IF_ERROR(file_->Read(1 << 20, &chunk_));
        if (!chunk_.empty()) {
          buf_ += chunk_;
          continue;
        }
        if (!buf_.empty())
          return Located(Status::Corruption("incomplete line at the end of a segment that is "
                                            "followed by another"),
                         file_offset_);
        ++index_;
        file_.reset();
        continue;
      }
      if (!buf_.empty() && !options_.tolerate_partial_tail)
        return Located(Status::Corruption(
                           "incomplete final line (" + std::to_string(buf_.size()) +
                           " bytes without a newline; " +
                           (is_dir_ ? "a torn write, which limbic truncates when it next opens "
                                      "that state dir)"
                                    : "a torn write, or a file copied while it was written: "
                                      "remove the partial line to read the rest)")),
                       file_offset_);
      return false;  // the current end of the log
    }
  }

  std::string_view raw_line() const { return raw_; }

  double Progress() {
    for (size_t i = sizes_.size(); i < segments_.size(); ++i) {
      auto size = options_.env->GetFileSize(segments_[i].path);
      sizes_.push_back(size.ok() ? *size : 0);
      total_ += sizes_.back();
    }
    uint64_t at = file_ ? file_offset_ + pos_ : 0;
    for (size_t i = 0; i < index_ && i < sizes_.size(); ++i) at += sizes_[i];
    if (total_ == 0) return 1;
    return std::min(1.0, static_cast<double>(at) / static_cast<double>(total_));
  }

 private:
  Status Relist() {
    auto segments = ListSegments(options_.env, path_);
    if (!segments.ok()) return segments.status();
    if (segments_.empty()) {
      // Start at the last segment that can hold from_seq.
      size_t start = 0;
      for (size_t i = 0; i < segments->size(); ++i)
        if ((*segments)[i].first_seq <= options_.from_seq) start = i;
      index_ = start;
    }
    segments_ = std::move(segments).value();
    return Status::OK();
  }

  Status OpenCurrent() {
    auto file = options_.env->NewSequentialFile(segments_[index_].path);
    if (!file.ok()) return file.status();
    file_ = std::move(file).value();
    buf_.clear();
    pos_ = 0;
    file_offset_ = 0;
    return Status::OK();
  }

  Status Located(const Status& s, uint64_t offset) const {
    return s.WithContext(segments_[index_].path + " offset " + std::to_string(offset));
  }

  std::string path_;
  Options options_;
  bool is_dir_;
  std::vector<Segment> segments_;
  size_t index_ = 0;
  std::unique_ptr<SequentialFile> file_;
  std::string buf_, chunk_;
  size_t pos_ = 0;
  uint64_t file_offset_ = 0;
  uint64_t last_seq_ = 0;
  TimeMs last_ts_ = 0;
  std::string_view raw_;
  std::vector<uint64_t> sizes_;  // of segments_, for Progress
  uint64_t total_ = 0;
};

LogReader::LogReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LogReader::~LogReader() = default;

Result<std::unique_ptr<LogReader>> LogReader::Open(const std::string& path, Options options) {
  Env* env = options.env ? options.env : Env::Default();
  if (!env->FileExists(path)) return Status::NotFound("no events log at " + path);
  // A directory lists; a file reads.
  bool is_dir = env->GetChildren(path).ok();
  auto impl = std::make_unique<Impl>(path, options, is_dir);
  LIMBIC_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<LogReader>(new LogReader(std::move(impl)));
}

Result<bool> LogReader::Next(Event* event, EventLocation* where) { return impl_->Next(event, where); }
std::string_view LogReader::raw_line() const { return impl_->raw_line(); }
double LogReader::Progress() { return impl_->Progress(); }

}  // namespace limbic::state
