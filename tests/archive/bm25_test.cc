#include <rocksdb/db.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <optional>

#include "archive/search.h"
#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace bm25_test {

using namespace limbic;
using namespace limbic::archive;
using limbic::testing::ScratchDir;

namespace {

std::unique_ptr<SearchBackend> Open(const std::string& path, bool read_only = false) {
  Bm25Options options;
  options.path = path;
  options.read_only = read_only;
  auto r = OpenBm25(options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

SearchDoc Doc(std::string id, std::string text, std::string version = "v1") {
  std::string date = "2026-01-0" + (id.empty() ? std::string("1") : id.substr(id.size() - 1));
  return SearchDoc{std::move(id), std::move(text), std::move(date), std::move(version)};
}

std::vector<SearchHit> Find(const SearchBackend& b, std::string_view query, size_t k = 10) {
  auto r = b.Search(query, k);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::vector<std::string> Ids(const std::vector<SearchHit>& hits) {
  std::vector<std::string> out;
  for (const SearchHit& h : hits) out.push_back(h.id);
  return out;
}

// The hand-checked corpus (terms after tokenising; lengths count repeats):
//   d1 "apple banana apple"          length 3: apple 2, banana 1
//   d2 "banana cherry"               length 2: banana 1, cherry 1
//   d3 "cherry cherry cherry date"   length 4: cherry 3, date 1
// N = 3, avgdl = 9 / 3 = 3, k1 = 1.5, b = 0.75.
void IndexCorpus(SearchBackend& b) {
  REQUIRE(b.Index(Doc("d1", "Apple, banana; APPLE!")).ok());
  REQUIRE(b.Index(Doc("d2", "the banana and the cherry")).ok());  // stop words do not count
  REQUIRE(b.Index(Doc("d3", "cherry cherry cherry date")).ok());
}

bool Near(double a, double b) { return std::abs(a - b) < 1e-9; }

}  // namespace

TEST_CASE("BM25 scores a hand-checked corpus", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  IndexCorpus(*b);

  // "apple": n = 1, idf = ln(1 + (3 - 1 + 0.5) / 1.5) = ln(8/3).
  // d1: tf 2, dl 3: norm = 1.5 * (0.25 + 0.75 * 3/3) = 1.5,
  //     score = idf * 2 * 2.5 / (2 + 1.5) = idf * 10/7
  auto hits = Find(*b, "apple");
  REQUIRE(Ids(hits) == std::vector<std::string>{"d1"});
  CHECK(Near(hits[0].score, std::log(8.0 / 3) * 10 / 7));
  CHECK(Near(hits[0].score, 1.4011846471596088));
  CHECK(hits[0].date == "2026-01-01");

  // "banana cherry": both have n = 2, idf = ln(1 + 1.5 / 2.5) = ln(1.6).
  // d1: banana tf 1, dl 3: norm 1.5,   1 * 2.5 / 2.5   = 1
  // d2: banana and cherry tf 1, dl 2: norm = 1.5 * (0.25 + 0.5) = 1.125,
  //     each 2.5 / 2.125 = 20/17, together 40/17
  // d3: cherry tf 3, dl 4: norm = 1.5 * (0.25 + 1) = 1.875,
  //     3 * 2.5 / 4.875 = 20/13
  hits = Find(*b, "Banana CHERRY cherry");  // repeats count once
  REQUIRE(Ids(hits) == std::vector<std::string>{"d2", "d3", "d1"});
  const double idf = std::log(1.6);
  CHECK(Near(hits[0].score, idf * 40 / 17));
  CHECK(Near(hits[1].score, idf * 20 / 13));
  CHECK(Near(hits[2].score, idf * 1));
  // The same, as decimals (Python's math.log).
  CHECK(Near(hits[0].score, 1.1058908923429074));
  CHECK(Near(hits[1].score, 0.7230825065319009));
  CHECK(Near(hits[2].score, 0.47000362924573563));
}

TEST_CASE("equal scores rank by id, and k cuts the list", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  REQUIRE(b->Index(Doc("z1", "owl night")).ok());
  REQUIRE(b->Index(Doc("a2", "owl night")).ok());
  REQUIRE(b->Index(Doc("m3", "owl day")).ok());
  auto hits = Find(*b, "owl", 10);
  CHECK(Ids(hits) == std::vector<std::string>{"a2", "m3", "z1"});
  CHECK(hits[0].score == hits[2].score);
  CHECK(Ids(Find(*b, "owl", 2)) == std::vector<std::string>{"a2", "m3"});
  CHECK(Find(*b, "owl", 0).empty());
  CHECK(Find(*b, "night", 100).size() == 2);  // k beyond the matches
}

TEST_CASE("queries without terms find nothing, without error", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  CHECK(Find(*b, "apple").empty());  // an empty index
  IndexCorpus(*b);
  CHECK(Find(*b, "").empty());
  CHECK(Find(*b, "the and of").empty());  // stop words only
  CHECK(Find(*b, "?! -").empty());
  CHECK(Find(*b, "zebra").empty());  // a term no document has
  CHECK(Find(*b, "zebra apple").size() == 1);
}

TEST_CASE("re-indexing replaces a document and its totals", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  IndexCorpus(*b);
  REQUIRE(b->Index(Doc("d1", "kiwi mango kiwi banana mango kiwi", "v2")).ok());
  CHECK(Find(*b, "apple").empty());
  CHECK(Ids(Find(*b, "kiwi")) == std::vector<std::string>{"d1"});

  // Scores equal those of an index built with the final documents only.
  auto fresh = Open(dir / "fresh");
  REQUIRE(fresh->Index(Doc("d2", "the banana and the cherry")).ok());
  REQUIRE(fresh->Index(Doc("d3", "cherry cherry cherry date")).ok());
  REQUIRE(fresh->Index(Doc("d1", "kiwi mango kiwi banana mango kiwi", "v2")).ok());
  for (const char* q : {"banana", "cherry date", "kiwi mango", "banana cherry kiwi"}) {
    INFO(q);
    auto got = Find(*b, q), want = Find(*fresh, q);
    REQUIRE(Ids(got) == Ids(want));
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].score == want[i].score);
  }
  auto versions = b->Versions();
  REQUIRE(versions.ok());
  CHECK(*versions == std::map<std::string, std::string>{{"d1", "v2"}, {"d2", "v1"}, {"d3", "v1"}});
}

TEST_CASE("removing a document drops its postings and totals", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  IndexCorpus(*b);
  REQUIRE(b->Remove("d2").ok());
  REQUIRE(b->Remove("d2").ok());       // again: nothing to do
  REQUIRE(b->Remove("unknown").ok());  // never indexed
  CHECK(Ids(Find(*b, "banana cherry")) == std::vector<std::string>{"d3", "d1"});

  // N = 2, avgdl = (3 + 4) / 2 = 3.5; "banana": n = 1, idf = ln(1 + 1.5/1.5) = ln 2;
  // d1: tf 1, dl 3: norm = 1.5 * (0.25 + 0.75 * 3/3.5), score = ln2 * 2.5 / (1 + norm).
  auto hits = Find(*b, "banana");
  REQUIRE(hits.size() == 1);
  CHECK(Near(hits[0].score, std::log(2.0) * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 3 / 3.5))));

  auto fresh = Open(dir / "fresh");
  REQUIRE(fresh->Index(Doc("d1", "Apple, banana; APPLE!")).ok());
  REQUIRE(fresh->Index(Doc("d3", "cherry cherry cherry date")).ok());
  for (const char* q : {"banana", "cherry", "apple date"}) {
    INFO(q);
    auto got = Find(*b, q), want = Find(*fresh, q);
    REQUIRE(Ids(got) == Ids(want));
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].score == want[i].score);
  }

  REQUIRE(b->Remove("d1").ok());
  REQUIRE(b->Remove("d3").ok());
  CHECK(Find(*b, "banana cherry apple date").empty());
  auto versions = b->Versions();
  REQUIRE(versions.ok());
  CHECK(versions->empty());
}

TEST_CASE("the index survives close and reopen", "[bm25]") {
  ScratchDir dir;
  std::vector<SearchHit> before;
  {
    auto b = Open(dir / "search");
    IndexCorpus(*b);
    REQUIRE(b->Remove("d3").ok());
    before = Find(*b, "banana cherry apple");
  }
  auto b = Open(dir / "search");
  auto after = Find(*b, "banana cherry apple");
  REQUIRE(Ids(after) == Ids(before));
  for (size_t i = 0; i < after.size(); ++i) CHECK(after[i].score == before[i].score);
  auto versions = b->Versions();
  REQUIRE(versions.ok());
  CHECK(versions->size() == 2);
  // The reopened totals are the ones written: adding d3 back restores the
  // hand-checked scores.
  REQUIRE(b->Index(Doc("d3", "cherry cherry cherry date")).ok());
  auto hits = Find(*b, "banana cherry");
  REQUIRE(hits.size() == 3);
  CHECK(Near(hits[0].score, std::log(1.6) * 40 / 17));
}

TEST_CASE("a read-only index sees the data and refuses writes", "[bm25]") {
  ScratchDir dir;
  auto writer = Open(dir / "search");
  IndexCorpus(*writer);
  // The writer is still open, as when another process owns the state dir.
  auto reader = Open(dir / "search", /*read_only=*/true);
  CHECK(Ids(Find(*reader, "cherry")) == std::vector<std::string>{"d3", "d2"});
  auto versions = reader->Versions();
  REQUIRE(versions.ok());
  CHECK(versions->size() == 3);
  Status s = reader->Index(Doc("d4", "new text"));
  CHECK(s.IsFailedPrecondition());
  CHECK(s.message().find("read-only") != std::string::npos);
  CHECK(reader->Remove("d1").IsFailedPrecondition());
  CHECK(Find(*reader, "apple").size() == 1);

  Bm25Options missing;
  missing.path = dir / "nothing-here";
  missing.read_only = true;
  CHECK(OpenBm25(missing).status().IsNotFound());
}

TEST_CASE("non-ASCII terms are searchable", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  REQUIRE(b->Index(Doc("u1", "Café crème in 東京 at night")).ok());
  REQUIRE(b->Index(Doc("u2", "a cafe in Paris")).ok());
  CHECK(Ids(Find(*b, "café")) == std::vector<std::string>{"u1"});
  CHECK(Ids(Find(*b, "CAFÉ")) == std::vector<std::string>{"u1"});  // Latin-1 capitals too
  CHECK(Ids(Find(*b, "Café")) == std::vector<std::string>{"u1"});
  CHECK(Ids(Find(*b, "cafe")) == std::vector<std::string>{"u2"});
  auto hits = Find(*b, "東京");
  REQUIRE(Ids(hits) == std::vector<std::string>{"u1"});
  CHECK(hits[0].snippet.find("東京") != std::string::npos);
}

TEST_CASE("a hit's snippet shows the query term", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  std::string text;
  for (int i = 0; i < 300; ++i) text += "filler" + std::to_string(i) + " ";
  text += "here is the Needle in the haystack. ";
  for (int i = 0; i < 300; ++i) text += "more" + std::to_string(i) + " ";
  REQUIRE(b->Index(Doc("s1", text)).ok());
  REQUIRE(b->Index(Doc("s2", "no match but the start filler0")).ok());
  auto hits = Find(*b, "needle");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].snippet.find("Needle") != std::string::npos);
  CHECK(hits[0].snippet.size() <= 200);
  CHECK(hits[0].snippet.find("filler0 ") == std::string::npos);
}

TEST_CASE("bad document ids are refused", "[bm25]") {
  ScratchDir dir;
  auto b = Open(dir / "search");
  CHECK(b->Index(Doc("", "text")).IsInvalidArgument());
  CHECK(b->Index(SearchDoc{std::string("a\0b", 3), "text", "2026-01-01", "v"}).IsInvalidArgument());
  CHECK(b->Remove("").IsInvalidArgument());
  auto versions = b->Versions();
  REQUIRE(versions.ok());
  CHECK(versions->empty());
}

namespace {

// Overwrites one value of the index behind the backend's back.
// Puts `value` at `key` behind the backend's back; nullopt deletes the key.
void Poke(const std::string& path, const std::string& cf_name, const std::string& key,
          const std::optional<std::string>& value) {
  std::vector<std::string> names;
  REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::Open(rocksdb::Options(), path, cfs, &handles, &db).ok());
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == cf_name)
      CHECK((value ? db->Put(rocksdb::WriteOptions(), handles[i], key, *value)
                   : db->Delete(rocksdb::WriteOptions(), handles[i], key))
                .ok());
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  delete db;
}

}  // namespace

TEST_CASE("corrupted values are Corruption naming the key", "[bm25]") {
  ScratchDir dir;
  const std::string path = dir / "search";
  {
    auto b = Open(path);
    IndexCorpus(*b);
  }
  SECTION("a posting") {
    Poke(path, "postings", std::string("appl\0d1", 7), "\xff");  // "apple", stemmed
    auto b = Open(path);
    auto r = b->Search("apple", 10);
    REQUIRE(r.status().IsCorruption());
    CHECK(r.status().message().find("appl\\x00d1") != std::string::npos);
    CHECK(Find(*b, "cherry").size() == 2);  // other terms still answer
  }
  SECTION("a document record") {
    Poke(path, "docs", "d2", std::string("\x05") + "ab");  // a date longer than the value
    auto b = Open(path);
    auto v = b->Versions();
    REQUIRE(v.status().IsCorruption());
    CHECK(v.status().message().find("d2") != std::string::npos);
    CHECK(b->Search("banana", 10).status().IsCorruption());
    CHECK(b->Index(Doc("d2", "again")).IsCorruption());
    CHECK(b->Remove("d2").IsCorruption());
  }
  SECTION("a term list") {
    Poke(path, "terms", "d3", std::string("\x40") + "cherry");  // a term longer than the value
    auto b = Open(path);
    Status s = b->Remove("d3");
    REQUIRE(s.IsCorruption());
    CHECK(s.message().find("d3") != std::string::npos);
  }
  SECTION("the totals") {
    Poke(path, "default", "totals", "short");
    Bm25Options options;
    options.path = path;
    auto r = OpenBm25(options);
    REQUIRE(r.status().IsCorruption());
    CHECK(r.status().message().find("totals") != std::string::npos);
  }
  SECTION("the schema") {
    Poke(path, "default", "schema", "99");
    Bm25Options options;
    options.path = path;
    auto r = OpenBm25(options);
    REQUIRE(r.status().IsFailedPrecondition());
    CHECK(r.status().message().find("\"99\"") != std::string::npos);
  }
}

std::unique_ptr<SearchBackend> OpenWith(const std::string& path, const std::string& language,
                                        bool read_only = false) {
  Bm25Options options;
  options.path = path;
  options.read_only = read_only;
  auto analyzer = Analyzer::Make(language);
  REQUIRE(analyzer.ok());
  options.analyzer = *analyzer;
  auto r = OpenBm25(options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

TEST_CASE("documents and queries meet through the analyzer's stems", "[bm25]") {
  ScratchDir dir;
  auto b = OpenWith(dir / "search", "english");
  REQUIRE(b->Index(Doc("d1", "We were running the numbers on happy puppies")).ok());
  REQUIRE(b->Index(Doc("d2", "a quiet day")).ok());
  auto hits = Find(*b, "runs of a happy puppy");
  REQUIRE(Ids(hits) == std::vector<std::string>{"d1"});
  // The snippet is cut around the query's words, not its stems ("happi").
  CHECK(hits[0].snippet.find("running") != std::string::npos);
}

TEST_CASE("an index built by another analyzer is rebuilt by a writer and read as built "
          "by a reader", "[bm25]") {
  ScratchDir dir;
  const std::string path = dir / "search";
  {
    auto b = OpenWith(path, "none");
    REQUIRE(b->Index(Doc("d1", "running dogs")).ok());
    CHECK(Ids(Find(*b, "runs")).empty());  // no stems
  }
  SECTION("a reader queries with the analyzer the index was built by") {
    auto r = OpenWith(path, "english", /*read_only=*/true);
    CHECK(Ids(Find(*r, "running")) == std::vector<std::string>{"d1"});
    CHECK(Ids(Find(*r, "runs")).empty());
  }
  SECTION("a writer empties it, and indexing again uses the new analyzer") {
    auto w = OpenWith(path, "english");
    auto v = w->Versions();
    REQUIRE(v.ok());
    CHECK(v->empty());  // ArchiveSearch::Refresh indexes every document again
    REQUIRE(w->Index(Doc("d1", "running dogs")).ok());
    CHECK(Ids(Find(*w, "runs")) == std::vector<std::string>{"d1"});
  }
  SECTION("an index from before analyzers: rebuilt by a writer, refused to a reader") {
    Poke(path, "default", "analyzer", std::nullopt);
    auto r = [&] {
      Bm25Options options;
      options.path = path;
      options.read_only = true;
      return OpenBm25(options);
    }();
    REQUIRE(r.status().IsFailedPrecondition());
    CHECK(r.status().message().find("none recorded") != std::string::npos);
    auto w = OpenWith(path, "english");
    auto v = w->Versions();
    REQUIRE(v.ok());
    CHECK(v->empty());
  }
}

TEST_CASE("an archive search index from before analyzers is re-indexed on open",
          "[bm25][archive]") {
  ScratchDir dir;
  ArchiveOptions ao;
  ao.dir = dir / "archive";
  auto archive = Archive::Open(ao);
  REQUIRE(archive.ok());
  REQUIRE((*archive)->staging().Append("2026-03-01", MakeEntry(1772323200000, "the runners were running")).ok());
  {
    auto b = OpenWith(dir / "search", "none");
    ArchiveSearch search(**archive, *b);
    REQUIRE(search.Refresh().ok());
    CHECK(Find(*b, "runs").empty());
  }
  Poke(dir / "search", "default", "analyzer", std::nullopt);
  auto b = OpenWith(dir / "search", "english");
  ArchiveSearch search(**archive, *b);
  auto stats = search.Refresh();
  REQUIRE(stats.ok());
  CHECK(stats->indexed == 1);
  auto hits = search.Search("runs", 5);
  REQUIRE(hits.ok());
  REQUIRE(hits->size() == 1);
  CHECK((*hits)[0].id == "staging:2026-03-01:1");
}

}  // namespace bm25_test
