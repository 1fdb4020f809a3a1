// Small helpers shared by the state tests.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace limbic::testing {

// A fresh directory under /tmp, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/limbic-unit-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace limbic::testing
