#include "world/day_input.h"

#include <filesystem>
#include <fstream>

#include "archive/archive.h"
#include "base/env.h"
#include "state/event_log.h"
#include "base/json.h"
#include "base/time.h"

namespace limbic::world {
namespace {

namespace fs = std::filesystem;

bool Wanted(state::EventType t) {
  using state::EventType;
  return t == EventType::kPerceptArrived || t == EventType::kThreadCreated ||
         t == EventType::kThreadUpdated || t == EventType::kThreadCompleted;
}

// The first seq of the segment holding the first event at or after `from`:
// segments whose first event is before `from` are skipped but the last of
// them, which may run into the day. 0 when there is no log.
Result<uint64_t> FirstSeqFor(const std::string& log_dir, TimeMs from) {
  std::error_code ec;
  if (!fs::is_directory(log_dir, ec)) return uint64_t{0};
  std::vector<std::pair<uint64_t, std::string>> segments;
  for (const auto& entry : fs::directory_iterator(log_dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() != 26 || !name.ends_with(".jsonl")) continue;
    uint64_t seq = 0;
    bool digits = true;
    for (size_t i = 0; i < 20; ++i) {
      if (name[i] < '0' || name[i] > '9') digits = false;
      else seq = seq * 10 + static_cast<uint64_t>(name[i] - '0');
    }
    if (digits && seq > 0) segments.emplace_back(seq, entry.path().string());
  }
  if (ec) return Status::IOError(log_dir + ": " + ec.message());
  if (segments.empty()) return uint64_t{0};
  std::sort(segments.begin(), segments.end());
  uint64_t start = segments.front().first;
  for (const auto& [seq, path] : segments) {
    std::ifstream in(path);
    std::string line;
    if (!std::getline(in, line)) break;
    auto doc = ParseJson(line);
    if (!doc || !doc->contains("ts") || !(*doc)["ts"].is_string()) break;
    auto ts = ParseTime((*doc)["ts"].get<std::string>(), TimeRule::kLogged);
    if (!ts.ok() || *ts >= from) break;
    start = seq;
  }
  return start;
}

// Staged text of the day; episodes give their goal and outcome only and
// digests nothing, since their percepts come from the log.
Result<std::string> StagedText(const std::string& state_dir, const std::string& date) {
  archive::Staging staging(state_dir + "/archive/staging", Env::Default());
  std::error_code ec;
  if (!fs::exists(staging.PathOf(date), ec)) return std::string();
  auto entries = staging.Read(date);
  if (!entries.ok()) return entries.status();
  std::string text;
  for (const archive::Entry& e : *entries) {
    std::string kind = e.metadata.value("kind", "");
    if (kind == "digest") continue;
    if (kind == "episode") {
      size_t pos = 0;
      while (pos < e.text.size()) {
        size_t end = e.text.find('\n', pos);
        if (end == std::string::npos) end = e.text.size();
        std::string_view line(e.text.data() + pos, end - pos);
        if (line.starts_with("[episode] ")) text.append("- started: ").append(line.substr(10)).append("\n");
        else if (line.starts_with("outcome: ")) text.append("- ").append(line).append("\n");
        pos = end + 1;
      }
      continue;
    }
    text += e.text;
    text += "\n";
  }
  return text;
}

}  // namespace

Result<ExtractInput> DayInput(const std::string& state_dir, const std::string& date) {
  auto day = ParseDate(date);
  if (!day.ok()) return Status::InvalidArgument("date: \"" + date + "\" is not a date (YYYY-MM-DD)");
  ExtractInput input;
  input.date = date;
  input.source = "day:" + date;
  TimeMs from = *day, to = *day + 86400000;

  std::string log_dir = state_dir + "/events";
  auto first = FirstSeqFor(log_dir, from);
  if (!first.ok()) return first.status();
  if (*first > 0) {
    state::LogReader::Options o;
    o.from_seq = *first;
    auto reader = state::LogReader::Open(log_dir, o);
    if (!reader.ok()) return reader.status();
    for (;;) {
      state::Event e;
      auto more = (*reader)->Next(&e);
      if (!more.ok()) return more.status();
      if (!*more || e.ts >= to) break;
      if (e.ts >= from && Wanted(e.type)) input.events.push_back(std::move(e));
    }
  }
  auto staged = StagedText(state_dir, date);
  if (!staged.ok()) return staged.status();
  input.text = std::move(*staged);
  return input;
}

Result<ExtractInput> FileInput(const std::string& path, const std::string& date, size_t max_bytes) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return Status::IOError(path + ": " + ec.message());
  if (!fs::exists(st)) return Status::NotFound(path + ": no such file");
  if (fs::is_directory(st)) return Status::InvalidArgument(path + ": is a directory, not a daily log");
  uintmax_t size = fs::file_size(path, ec);
  if (ec) return Status::IOError(path + ": " + ec.message());
  if (size > max_bytes)
    return Status::InvalidArgument(path + ": " + std::to_string(size) + " bytes is over the limit of " +
                                   std::to_string(max_bytes) + " (world.max_file_bytes)");
  ExtractInput input;
  // The ledger knows an input by its source: the same file named from
  // another directory, or through a folder, is the same input.
  input.source = fs::absolute(path, ec).lexically_normal().string();
  if (ec) input.source = path;
  input.date = date;
  if (input.date.empty()) {
    std::string name = fs::path(path).filename().string();
    if (name.size() >= 10 && IsValidDate(std::string_view(name).substr(0, 10))) input.date = name.substr(0, 10);
    else return Status::InvalidArgument(path + ": the file name does not start with a date; give --date");
  } else if (!IsValidDate(input.date)) {
    return Status::InvalidArgument("date: \"" + input.date + "\" is not a date (YYYY-MM-DD)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot be read");
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.gcount() != static_cast<std::streamsize>(size)) return Status::IOError(path + ": short read");
  input.text = archive::MakeEntry(0, std::move(text)).text;  // invalid UTF-8 -> U+FFFD
  return input;
}

}  // namespace limbic::world
