// The inspector's files: the built-in set, and the names a directory
// (api.ui_dir) may serve.
#include "runtime/api/ui_assets.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "state/test_util.h"

using namespace limbic::runtime;

TEST_CASE("the built-in inspector has its page, each file with a type and an ETag", "[ui]") {
  const UiFile* index = FindUiFile("");
  REQUIRE(index != nullptr);
  CHECK(index == FindUiFile("index.html"));
  CHECK(index->body.find("<html") != std::string_view::npos);
  REQUIRE(UiFiles().size() > 1);
  for (const UiFile& f : UiFiles()) {
    CAPTURE(f.path);
    CHECK(IsUiPath(f.path));
    CHECK(UiContentType(f.path) != "application/octet-stream");
    CHECK(f.etag.size() == 18);  // 16 hex digits, quoted
  }
  CHECK(FindUiFile("nothing.js") == nullptr);
  CHECK(FindUiFile("../index.html") == nullptr);
}

TEST_CASE("ui paths: plain names only, no parent or hidden segment", "[ui]") {
  CHECK(IsUiPath("index.html"));
  CHECK(IsUiPath("views/now.js"));
  CHECK(IsUiPath("a-b_c.d/e.css"));
  CHECK_FALSE(IsUiPath(""));
  CHECK_FALSE(IsUiPath(".."));
  CHECK_FALSE(IsUiPath("../x"));
  CHECK_FALSE(IsUiPath("views/../../x"));
  CHECK_FALSE(IsUiPath(".git/config"));
  CHECK_FALSE(IsUiPath("/etc/passwd"));
  CHECK_FALSE(IsUiPath("a//b"));
  CHECK_FALSE(IsUiPath("a/"));
  CHECK_FALSE(IsUiPath("a\\b"));
  CHECK_FALSE(IsUiPath("a b"));
  CHECK_FALSE(IsUiPath(std::string("a\0b", 3)));
  CHECK_FALSE(IsUiPath("a/b/c/d/e/f/g/h/i"));
  CHECK_FALSE(IsUiPath(std::string(201, 'a')));
  CHECK(UiContentType("x.js") == "text/javascript; charset=utf-8");
  CHECK(UiContentType("x.css") == "text/css; charset=utf-8");
  CHECK(UiContentType("x") == "application/octet-stream");
}

TEST_CASE("ReadUiFile reads a file under the directory and nothing else", "[ui]") {
  limbic::testing::ScratchDir dir;
  std::filesystem::create_directories(dir.path() + "/ui/views");
  std::ofstream(dir.path() + "/ui/index.html") << "<html></html>";
  std::ofstream(dir.path() + "/secret.txt") << "no";
  const std::string root = dir.path() + "/ui";
  auto index = ReadUiFile(root, "");
  REQUIRE(index.ok());
  CHECK(index->body == "<html></html>");
  CHECK(index->etag.size() == 18);
  CHECK(ReadUiFile(root, "missing.js").status().IsNotFound());
  CHECK(ReadUiFile(root, "views").status().IsNotFound());  // a directory
  CHECK(ReadUiFile(root, "../secret.txt").status().IsInvalidArgument());
}
