// Helpers shared by the fuzz targets (fuzz/*_fuzz.cc).
//
// Each target defines LLVMFuzzerTestOneInput and is built twice: with clang
// and libFuzzer (`make fuzz`, LIMBIC_FUZZ=ON) to search for crashes, and
// with the normal build (gcc) against regression_main.cc, which replays the
// committed corpus and every crash found (`make test`). So nothing here may
// depend on libFuzzer. A property a target checks is a FUZZ_CHECK: when it
// fails, the process prints what and where, and aborts (libFuzzer then
// saves the input as crash-<sha1>).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace limbic::fuzz {

// Aborts with `what` when `cond` is false.
#define FUZZ_CHECK(cond, what)                                                                   \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s\n  %s\n", __FILE__, __LINE__, #cond, \
                   std::string(what).c_str());                                                   \
      std::abort();                                                                              \
    }                                                                                            \
  } while (0)

// A fresh directory, removed on destruction: under $LIMBIC_FUZZ_TMP, else
// /dev/shm when it exists (the targets write files for every input; memory
// is faster than a disk and wears nothing), else /tmp.
class ScratchDir {
 public:
  ScratchDir() {
    std::string base = "/tmp";
    if (const char* t = std::getenv("LIMBIC_FUZZ_TMP"); t && *t) base = t;
    else if (std::filesystem::is_directory("/dev/shm")) base = "/dev/shm";
    std::string tmpl = base + "/limbic-fuzz-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) {
      std::perror(("mkdtemp " + tmpl).c_str());
      std::abort();
    }
    path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The input split at '\n' (a line keeps no '\n'); at most `max_lines`.
inline std::vector<std::string_view> SplitLines(std::string_view input, size_t max_lines) {
  std::vector<std::string_view> lines;
  while (!input.empty() && lines.size() < max_lines) {
    size_t nl = input.find('\n');
    lines.push_back(input.substr(0, nl));
    if (nl == std::string_view::npos) break;
    input.remove_prefix(nl + 1);
  }
  return lines;
}

// Writes `data` to `path`, replacing it; aborts when it cannot (the
// scratch dir is ours, so that is the harness failing, not the target).
inline void WriteFileOrDie(const std::string& path, std::string_view data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data.data(), 1, data.size(), f) != data.size() || std::fclose(f) != 0) {
    std::perror(("writing " + path).c_str());
    std::abort();
  }
}

}  // namespace limbic::fuzz
