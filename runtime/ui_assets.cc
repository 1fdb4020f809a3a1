#include "runtime/ui_assets.h"

#include <cctype>
#include <filesystem>
#include <fstream>

#include "base/sha256.h"

namespace limbic::runtime {

std::span<const UiFile> UiFiles() { return {kUiFiles, kUiFileCount}; }

const UiFile* FindUiFile(std::string_view path) {
  if (path.empty()) path = "index.html";
  for (const UiFile& f : UiFiles())
    if (f.path == path) return &f;
  return nullptr;
}

std::string_view UiContentType(std::string_view path) {
  auto ends = [&](std::string_view ext) { return path.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  if (ends(".ico")) return "image/x-icon";
  if (ends(".txt")) return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

bool IsUiPath(std::string_view path) {
  if (path.empty() || path.size() > 200) return false;
  size_t depth = 0, start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(start, slash - start);
    if (seg.empty() || seg.front() == '.' || ++depth > 8) return false;
    for (char c : seg)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
        return false;
    start = slash + 1;
  }
  return true;
}

Result<UiDiskFile> ReadUiFile(const std::string& dir, std::string_view path) {
  if (path.empty()) path = "index.html";
  if (!IsUiPath(path))
    return Status::InvalidArgument("not a file name: \"" + std::string(path) + "\"");
  const std::string full = dir + "/" + std::string(path);
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(full, ec)) in.open(full, std::ios::binary);
  if (!in.is_open()) return Status::NotFound("no file " + std::string(path) + " in api.ui_dir");
  constexpr uintmax_t kMax = 8 << 20;
  const uintmax_t size = std::filesystem::file_size(full, ec);
  if (ec) return Status::IOError(full + ": cannot be read: " + ec.message());
  if (size > kMax) return Status::InvalidArgument(full + ": larger than 8 MiB");
  UiDiskFile f;
  f.body.resize(static_cast<size_t>(size));
  in.read(f.body.data(), static_cast<std::streamsize>(size));
  if (in.bad() || in.gcount() != static_cast<std::streamsize>(size))
    return Status::IOError(full + ": cannot be read");
  f.etag = "\"" + Sha256::Hex(f.body).substr(0, 16) + "\"";
  return f;
}

}  // namespace limbic::runtime
