#include "memory/ingest.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "state/test_util.h"
#include "tests/make_pdf.h"

// This file's own namespace: test programs compile in unity batches.
namespace ingest_test {

using namespace limbic::memory;
using limbic::Status;
using limbic::testing::MakePdf;
using limbic::testing::ScratchDir;

namespace {

void Write(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Decodes UTF-8 into code points; false when `s` is not well-formed.
bool Decode(std::string_view s, std::u32string* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    char32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = s[i + k];
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    out->push_back(cp);
    i += len;
  }
  return true;
}

}  // namespace

TEST_CASE("ingest extensions compare case-insensitively", "[memory]") {
  CHECK(IngestExtensions().size() == 8);
  CHECK(IngestExtension("notes/README.MD") == ".md");
  CHECK(IngestExtension("a.tar.Json") == ".json");
  CHECK(IngestExtension("x.png").empty());
  CHECK(IngestExtension("Makefile").empty());
  CHECK(IngestExtension(".md").empty());  // a hidden file named ".md" has no extension
  CHECK(IngestExtension("dir.md/file").empty());
}

TEST_CASE("a folder walk lists supported files in byte order and notes the rest", "[memory]") {
  ScratchDir dir;
  Write(dir / "b.md", "b");
  Write(dir / "B.txt", "B");  // 'B' < 'b' in bytes
  Write(dir / "sub/c.py", "c");
  Write(dir / "sub/deep/d.YAML", "d");
  Write(dir / "sub/deep/e.pdf", "not looked at by the walk");
  Write(dir / "img.png", "png");
  Write(dir / "Makefile", "all:");
  Write(dir / ".hidden.md", "h");
  Write(dir / ".git/config.md", "h");
  REQUIRE(::symlink((dir / "b.md").c_str(), (dir / "sub/link.md").c_str()) == 0);
  REQUIRE(::symlink((dir / "sub").c_str(), (dir / "sublink").c_str()) == 0);

  std::vector<std::string> files;
  std::vector<SkippedFile> skipped;
  REQUIRE(ListIngestable(dir.path(), &files, &skipped).ok());
  CHECK(files == std::vector<std::string>{dir / "B.txt", dir / "b.md", dir / "sub/c.py",
                                          dir / "sub/deep/d.YAML", dir / "sub/deep/e.pdf"});
  REQUIRE(skipped.size() == 4);
  CHECK(skipped[0].path == dir / "Makefile");
  CHECK(skipped[0].reason == "unsupported type (no extension)");
  CHECK(skipped[1].path == dir / "img.png");
  CHECK(skipped[1].reason == "unsupported type .png");
  CHECK(skipped[2].path == dir / "sub/link.md");
  CHECK(skipped[2].reason == "symlink");
  CHECK(skipped[3].path == dir / "sublink");
  CHECK(skipped[3].reason == "symlink");

  // A single file is its own list; another type named directly is an error.
  REQUIRE(ListIngestable(dir / "sub/c.py", &files, &skipped).ok());
  CHECK(files == std::vector<std::string>{dir / "sub/c.py"});
  CHECK(skipped.empty());
  Status s = ListIngestable(dir / "img.png", &files, &skipped);
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find(".png") != std::string::npos);
  CHECK(ListIngestable(dir / "nope", &files, &skipped).IsNotFound());
}

TEST_CASE("LoadFile reads, hashes and checks UTF-8", "[memory]") {
  ScratchDir dir;
  Write(dir / "NOTE.MD", "abc");
  auto f = LoadFile(dir / "NOTE.MD");
  REQUIRE(f.ok());
  CHECK(f->path == dir / "NOTE.MD");
  CHECK(f->ext == ".md");
  CHECK(f->bytes == 3);
  CHECK(f->sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(f->raw == "abc");
  CHECK(f->text == "abc");

  auto missing = LoadFile(dir / "missing.md");
  CHECK(missing.status().IsNotFound());
  CHECK(missing.status().message().find("missing.md") != std::string::npos);

  Write(dir / "pic.png", "x");
  auto png = LoadFile(dir / "pic.png");
  CHECK(png.status().IsInvalidArgument());
  CHECK(png.status().message().find("pic.png") != std::string::npos);
  CHECK(png.status().message().find(".md .txt .py .csv .yaml .yml .json .pdf") !=
        std::string::npos);

  CHECK(LoadFile(dir.path()).status().IsInvalidArgument());  // a folder is not a file

  struct Bad {
    std::string bytes;
    size_t offset;
  };
  for (const Bad& bad : {Bad{"ok\xff", 2}, Bad{"h\xc3\xa9llo\xc3", 6},  // truncated sequence
                         Bad{"a\xc0\xaf", 1},                           // overlong '/'
                         Bad{"ab\xed\xa0\x80", 2},                      // surrogate
                         Bad{"\xf4\x90\x80\x80", 0}}) {                 // above U+10FFFF
    Write(dir / "bad.txt", bad.bytes);
    auto r = LoadFile(dir / "bad.txt");
    CHECK(r.status().IsInvalidArgument());
    CHECK(r.status().message() ==
          dir / "bad.txt" + ": not UTF-8 at byte offset " + std::to_string(bad.offset));
  }
  Write(dir / "good.txt", "h\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");
  CHECK(LoadFile(dir / "good.txt").ok());
}

TEST_CASE("LoadFile extracts the text of a real PDF, page by page", "[memory]") {
  ScratchDir dir;
  Write(dir / "doc.PDF", MakePdf({"Hello limbic PDF", "Second page words"}));
  auto f = LoadFile(dir / "doc.PDF");
  REQUIRE(f.ok());
  CHECK(f->ext == ".pdf");
  CHECK(f->raw == Read(dir / "doc.PDF"));
  size_t first = f->text.find("Hello limbic PDF");
  size_t second = f->text.find("Second page words");
  REQUIRE(first != std::string::npos);
  REQUIRE(second != std::string::npos);
  CHECK(first < second);
  CHECK(f->text.find("\n\n", first) < second);  // the page separator
}

TEST_CASE("a damaged PDF is not a readable PDF", "[memory]") {
  ScratchDir dir;
  std::string pdf = MakePdf({"Hello limbic PDF"});
  Write(dir / "cut.pdf", pdf.substr(0, 40));
  Write(dir / "junk.pdf", "\x01\x02garbage that is no PDF at all\xff\xfe");
  Write(dir / "empty.pdf", "");
  for (const char* name : {"cut.pdf", "junk.pdf", "empty.pdf"}) {
    auto f = LoadFile(dir / name);
    CHECK(f.status().IsInvalidArgument());
    CHECK(f.status().message() == dir / name + ": not a readable PDF");
  }
}

TEST_CASE("chunks are code-point windows that overlap exactly", "[memory]") {
  // 2,500 code points of 1, 2, 3 and 4 bytes.
  const char* pieces[] = {"a", "\xc3\xa9", "\xe6\x97\xa5", "\xe6\x9c\xac", "\xf0\x9f\x98\x80", " "};
  std::string text;
  for (int i = 0; i < 2500; ++i) text += pieces[i % 6];
  std::u32string all;
  REQUIRE(Decode(text, &all));
  REQUIRE(all.size() == 2500);

  for (size_t total : {size_t{2500}, size_t{2700}}) {
    std::string sub;
    for (size_t i = 0; i < total; ++i) sub += pieces[i % 6];
    std::u32string want;
    REQUIRE(Decode(sub, &want));
    std::vector<std::string> chunks = ChunkText(sub);
    // Windows start at 0, 500, 1000, ...; the first to reach the end is last.
    size_t expect = total == 2500 ? 4 : 5;
    REQUIRE(chunks.size() == expect);
    std::u32string rebuilt;
    std::u32string prev;
    for (size_t i = 0; i < chunks.size(); ++i) {
      std::u32string cps;
      REQUIRE(Decode(chunks[i], &cps));
      CHECK(cps == want.substr(i * 500, 1000));
      if (i + 1 < chunks.size()) CHECK(cps.size() == 1000);
      if (i > 0) {
        CHECK(prev.substr(500) == cps.substr(0, 500));  // the overlap is exactly 500
        rebuilt += cps.substr(500);
      } else {
        rebuilt = cps;
      }
      prev = cps;
    }
    CHECK(rebuilt == want);
    CHECK(sub.compare(sub.size() - chunks.back().size(), std::string::npos, chunks.back()) == 0);
  }
}

TEST_CASE("short, empty and tightly overlapping chunkings", "[memory]") {
  CHECK(ChunkText("").empty());
  CHECK(ChunkText("short text") == std::vector<std::string>{"short text"});
  std::string exactly(1000, 'x');
  CHECK(ChunkText(exactly) == std::vector<std::string>{exactly});
  CHECK(ChunkText(exactly + "y").size() == 2);  // 1,001: the window at 500 reaches the end

  // Step of one code point: every cut still on a sequence boundary.
  std::string s = "a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80";  // a é 日 😀
  CHECK(ChunkText(s, 3, 2) ==
        std::vector<std::string>{"a\xc3\xa9\xe6\x97\xa5", "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80"});
  CHECK(ChunkText(s, 2, 0) ==
        std::vector<std::string>{"a\xc3\xa9", "\xe6\x97\xa5\xf0\x9f\x98\x80"});
  CHECK(ChunkText(s, 1, 0).size() == 4);
}

TEST_CASE("KeepRaw writes <sha><ext> once and keeps it", "[memory]") {
  ScratchDir dir;
  Write(dir / "in/Note.MD", "# kept\n");
  auto f = LoadFile(dir / "in/Note.MD");
  REQUIRE(f.ok());
  std::string raw_dir = dir / "raw/nested";  // created on demand
  auto p = KeepRaw(raw_dir, *f);
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  CHECK(*p == raw_dir + "/" + f->sha256 + ".md");
  CHECK(Read(*p) == "# kept\n");

  // A second keep of the same content leaves the first file alone.
  Write(*p, "touched");
  LoadedFile other = *f;
  other.raw = "different bytes, same name";
  auto again = KeepRaw(raw_dir, other);
  REQUIRE(again.ok());
  CHECK(*again == *p);
  CHECK(Read(*p) == "touched");

  size_t entries = 0;
  for (auto& e : std::filesystem::directory_iterator(raw_dir)) entries += e.exists();
  CHECK(entries == 1);  // no temp file left behind

  LoadedFile evil = *f;
  evil.sha256 = "../../etc/passwd";
  CHECK(KeepRaw(raw_dir, evil).status().IsInvalidArgument());
}

TEST_CASE("a restricted scope reads only under its roots, never through a symlink", "[memory]") {
  ScratchDir dir;
  Write(dir / "root/a.md", "a");
  Write(dir / "root/sub/b.md", "b");
  Write(dir / "root/big.md", "0123456789");
  Write(dir / "secret/b.md", "the secret");
  REQUIRE(::symlink((dir / "secret/b.md").c_str(), (dir / "root/link.md").c_str()) == 0);
  REQUIRE(::symlink((dir / "root/a.md").c_str(), (dir / "root/inside.md").c_str()) == 0);
  const std::string root = std::filesystem::canonical(dir / "root").string();
  IngestScope scope{true, {dir / "root"}, 5};
  std::string real;

  IngestScope none{true, {}, 5};
  CHECK(ScopeRefusal(dir / "root/a.md", none, &real).find("no memory.ingest_roots configured") !=
        std::string::npos);
  for (const std::string& path :
       {dir / "secret/b.md", dir / "root/../secret/b.md", dir / "root/link.md",
        dir / "elsewhere/missing.md", std::string("/etc/passwd")}) {
    INFO(path);
    CHECK(ScopeRefusal(path, scope, &real).find("is outside memory.ingest_roots [") !=
          std::string::npos);
  }
  // A symlink named directly may point inside: its real path is read.
  CHECK(ScopeRefusal(dir / "root/inside.md", scope, &real).empty());
  CHECK(real == root + "/a.md");
  CHECK(ScopeRefusal(dir / "root/sub/../a.md", scope, &real).empty());
  CHECK(real == root + "/a.md");
  // Missing but inside: not refused; the listing says NotFound.
  REQUIRE(ScopeRefusal(dir / "root/nope.md", scope, &real).empty());
  std::vector<std::string> files;
  std::vector<SkippedFile> skipped;
  CHECK(ListIngestable(real, &files, &skipped, scope).IsNotFound());

  // The walk: symlinks skipped (also one pointing inside), big files skipped unread.
  REQUIRE(ListIngestable(root, &files, &skipped, scope).ok());
  CHECK(files == std::vector<std::string>{root + "/a.md", root + "/sub/b.md"});
  REQUIRE(skipped.size() == 3);
  CHECK(skipped[0].path == root + "/big.md");
  CHECK(skipped[0].reason == "10 bytes, over memory.ingest_max_bytes (5)");
  CHECK(skipped[1].reason == "symlink");
  CHECK(skipped[2].reason == "symlink");
  auto big = LoadFile(root + "/big.md", scope);
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message() == root + "/big.md: 10 bytes, over memory.ingest_max_bytes (5)");
  Status named = ListIngestable(root + "/big.md", &files, &skipped, scope);
  CHECK(named.IsInvalidArgument());

  // Between the listing and the read, sub/ becomes a symlink out of the
  // root: the read does not follow it.
  REQUIRE(LoadFile(root + "/sub/b.md", scope).ok());
  std::filesystem::rename(root + "/sub", root + "/sub.old");
  REQUIRE(::symlink((dir / "secret").c_str(), (root + "/sub").c_str()) == 0);
  auto swapped = LoadFile(root + "/sub/b.md", scope);
  REQUIRE_FALSE(swapped.ok());
  CHECK(swapped.status().message() == root + "/sub/b.md: a symlink (not followed)");
  // The same for the file itself.
  std::filesystem::remove(root + "/a.md");
  REQUIRE(::symlink((dir / "secret/b.md").c_str(), (root + "/a.md").c_str()) == 0);
  CHECK_FALSE(LoadFile(root + "/a.md", scope).ok());
  // Outside the roots, LoadFile opens nothing, whatever it is given.
  CHECK_FALSE(LoadFile(dir / "secret/b.md", scope).ok());
}

}  // namespace ingest_test
