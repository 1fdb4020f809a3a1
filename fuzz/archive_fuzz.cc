// Fuzz target `archive`: the archive's day documents as read from disk
// (archive/doc_files.h): DocFiles::Read (nlohmann, what Load and
// Rollup use), DocReader::Read (simdjson, what Verify uses), and the
// verify and stats paths over an archive holding them.
//
// Input: up to three documents separated by a line "#doc"; they are written
// as <scratch>/archive/archive/2026-03-01.json, -02, -03 (a hash chain to
// follow, links to check).
//
// Properties: no crash; a file that is not a document is Corruption naming
// it; DocReader reads each file exactly as DocFiles does (the same error,
// or the same date, content, hash, prev_hash, links, staged_entries);
// Archive::Verify and Stats answer (problems are findings, not failures).
#include <cstdint>
#include <filesystem>

#include "fuzz/fuzz_util.h"
#include "archive/archive.h"
#include "archive/doc_files.h"

using namespace limbic;
using namespace limbic::archive;

namespace {

constexpr const char* kDates[] = {"2026-03-01", "2026-03-02", "2026-03-03"};

struct Session {
  fuzz::ScratchDir dir;
  std::string archive_dir() const { return dir / "archive"; }
  std::string docs_dir() const { return dir / "archive/archive"; }
};

Session& GetSession() {
  static Session* s = [] {
    auto* s = new Session();
    std::filesystem::create_directories(s->docs_dir());
    std::filesystem::create_directories(s->archive_dir() + "/staging");
    return s;
  }();
  return *s;
}

// DocReader's view against DocFiles' document.
void CheckSame(const Document& doc, const DocumentView& view, const std::string& path) {
  FUZZ_CHECK(view.date == doc.date, path + ": date differs");
  FUZZ_CHECK(view.content == doc.content, path + ": content differs");
  FUZZ_CHECK(view.hash == doc.hash, path + ": hash differs");
  FUZZ_CHECK(view.prev_hash == doc.prev_hash, path + ": prev_hash differs");
  FUZZ_CHECK(view.links == doc.links, path + ": links differ");
  FUZZ_CHECK(view.rolled_up_by_limbic == doc.metadata.contains("rolled_up_at"),
             path + ": rolled_up_at differs");
  auto staged = doc.metadata.find("staged_entries");
  if (staged == doc.metadata.end()) {
    FUZZ_CHECK(!view.staged_entries && view.staged_entries_bad.empty(),
               path + ": staged_entries seen where there is none");
  } else if (staged->is_number_unsigned()) {
    FUZZ_CHECK(view.staged_entries == staged->get<uint64_t>(), path + ": staged_entries differs");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Session& s = GetSession();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(s.docs_dir(), ec))
    std::filesystem::remove_all(e.path(), ec);

  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> paths;
  for (const char* date : kDates) {
    size_t cut = input.find("\n#doc\n");
    std::string path = s.docs_dir() + "/" + date + ".json";
    fuzz::WriteFileOrDie(path, input.substr(0, cut));
    paths.push_back(path);
    if (cut == std::string_view::npos) break;
    input.remove_prefix(cut + 6);
  }

  DocFiles files(s.docs_dir(), Env::Default());
  DocReader reader(&files);
  for (const std::string& path : paths) {
    uint64_t bytes = 0, view_bytes = 0;
    auto doc = files.Read(path, &bytes);
    auto view = reader.Read(path, &view_bytes);
    FUZZ_CHECK(doc.ok() == view.ok(),
               path + ": DocFiles says " + doc.status().ToString() + ", DocReader says " +
                   view.status().ToString());
    FUZZ_CHECK(bytes == view_bytes, path + ": sizes differ");
    if (!doc.ok()) {
      FUZZ_CHECK(doc.status().IsCorruption(), path + ": unexpected code: " + doc.status().ToString());
      FUZZ_CHECK(doc.status().message().find(path) != std::string::npos,
                 "the error does not name the file: " + doc.status().message());
      FUZZ_CHECK(view.status().message() == doc.status().message(),
                 "different errors: " + doc.status().message() + " / " + view.status().message());
      continue;
    }
    CheckSame(*doc, *view, path);
  }

  ArchiveOptions o;
  o.dir = s.archive_dir();
  o.read_only = true;
  auto archive = Archive::Open(o);
  FUZZ_CHECK(archive.ok(), archive.status().ToString());
  auto report = (*archive)->Verify();
  FUZZ_CHECK(report.ok(), "Verify: " + report.status().ToString());
  auto stats = (*archive)->Stats();
  FUZZ_CHECK(stats.ok(), "Stats: " + stats.status().ToString());
  FUZZ_CHECK(stats->documents + stats->unreadable.size() == paths.size(),
             "Stats counts " + std::to_string(stats->documents) + " + " +
                 std::to_string(stats->unreadable.size()) + " of " + std::to_string(paths.size()));
  return 0;
}
