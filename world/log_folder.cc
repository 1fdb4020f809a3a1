#include "world/log_folder.h"

#include <algorithm>
#include <filesystem>

#include "base/time.h"

namespace limbic::world {
namespace fs = std::filesystem;

bool LogFolder::IsDailyLogName(std::string_view name) {
  return name.size() >= 13 && IsValidDate(name.substr(0, 10)) && name.ends_with(".md");
}

Result<LogFolder::Changes> LogFolder::Scan(bool settle) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir_, ec);
  if (!fs::exists(st)) return Status::NotFound(dir_ + ": no such folder");
  if (!fs::is_directory(st)) return Status::InvalidArgument(dir_ + ": not a folder");
  // Collected first and sorted, so logs are extracted in date order.
  std::map<std::string, Stamp> stamps;
  Changes out;
  std::vector<std::string> others;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.')) continue;
    std::error_code stat_ec;
    const fs::file_status entry = it->status(stat_ec);  // follows a symlink
    if (fs::is_directory(entry)) continue;
    if (!IsDailyLogName(name)) {
      if (ignored_.insert(name).second) others.push_back(name);
      continue;
    }
    Stamp stamp;
    if (!stat_ec && fs::is_regular_file(entry)) {
      std::error_code size_ec, time_ec;
      const uintmax_t size = fs::file_size(it->path(), size_ec);
      const auto mtime = fs::last_write_time(it->path(), time_ec);
      if (!size_ec && !time_ec) {
        stamp.size = size;
        stamp.mtime =
            std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count();
      }
    }
    stamps.emplace(name, stamp);
  }
  if (ec) return Status::IOError(dir_ + ": " + ec.message());

  std::erase_if(logs_, [&](const auto& kv) { return !stamps.count(kv.first); });
  for (const auto& [name, stamp] : stamps) {
    Seen& seen = logs_[name];
    const bool changed = seen.handed != stamp;
    const bool steady = seen.last == stamp;
    seen.last = stamp;
    if (!changed || (settle && !steady)) continue;
    seen.handed = stamp;
    out.due.push_back((fs::path(dir_) / name).string());
  }
  std::sort(others.begin(), others.end());
  for (const std::string& name : others) out.ignored.push_back((fs::path(dir_) / name).string());
  return out;
}

}  // namespace limbic::world
