// The inspector's files (runtime/api/ui/: HTML, CSS, JavaScript modules), built
// into the binary by cmake/embed_files.cmake, so `limbic run` serves them
// with nothing fetched at run time. api.ui_dir serves them from a directory
// instead (for working on the inspector without rebuilding).
//
// Thread-safety: immutable tables and pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic::runtime {

struct UiFile {
  std::string_view path;  // relative to runtime/api/ui/: "index.html", "views/now.js"
  std::string_view body;
  std::string_view etag;  // quoted, from the content's SHA-256
};

// Defined in the generated ui_assets_data.cc.
extern const UiFile kUiFiles[];
extern const size_t kUiFileCount;

std::span<const UiFile> UiFiles();
// The built-in file at `path` ("" means index.html); nullptr when none.
const UiFile* FindUiFile(std::string_view path);

// The Content-Type for a file name, by its extension (text types in UTF-8);
// "application/octet-stream" for others.
std::string_view UiContentType(std::string_view path);

// Whether `path` may name a file under the inspector's root: segments of
// [A-Za-z0-9._-], none empty or starting with '.', at most 8 deep and 200
// bytes. (So ".." and hidden files never reach the disk.)
bool IsUiPath(std::string_view path);

// The file at `path` under `dir` (api.ui_dir), with an ETag from its
// content; NotFound when there is none or reaching it would leave `dir` (a
// symlink pointing out of it, however deep: the file is never opened),
// InvalidArgument when `path` is not IsUiPath or the file is over 8 MiB.
struct UiDiskFile {
  std::string body;
  std::string etag;
};
Result<UiDiskFile> ReadUiFile(const std::string& dir, std::string_view path);

}  // namespace limbic::runtime
