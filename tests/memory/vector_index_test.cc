#include "memory/vector_index.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <set>

#include "memory/embedder.h"
#include "memory/vector_index_file.h"
#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace vector_index_test {

using namespace limbic;
using namespace limbic::memory;

namespace {

using TempDir = limbic::testing::ScratchDir;

Vector Unit(Vector v) {
  Normalize(&v);
  return v;
}

// Clustered gaussian unit vectors: a few centres, each point a centre plus
// noise, so neighbours are meaningful (as with real embeddings).
class Points {
 public:
  Points(size_t dims, uint64_t seed) : dims_(dims), rng_(seed) {
    for (int c = 0; c < 8; ++c) centres_.push_back(Noise(1.0f));
  }
  Vector Next() {
    Vector v = centres_[rng_() % centres_.size()];
    Vector n = Noise(0.6f);
    for (size_t i = 0; i < dims_; ++i) v[i] += n[i];
    return Unit(v);
  }

 private:
  Vector Noise(float sigma) {
    std::normal_distribution<float> g(0, sigma);
    Vector v(dims_);
    for (float& x : v) x = g(rng_);
    return Unit(v);
  }
  size_t dims_;
  std::mt19937_64 rng_;
  std::vector<Vector> centres_;
};

std::vector<std::string> Ids(const std::vector<VectorHit>& hits) {
  std::vector<std::string> out;
  for (const VectorHit& h : hits) out.push_back(h.id);
  return out;
}

std::string Id(size_t i) { return "e" + std::to_string(i); }

// The share of the exact top k that `got` found.
double Recall(const std::vector<VectorHit>& got, const std::vector<VectorHit>& exact) {
  if (exact.empty()) return 1;
  std::set<std::string> want;
  for (const VectorHit& h : exact) want.insert(h.id);
  size_t found = 0;
  for (const VectorHit& h : got) found += want.count(h.id);
  return static_cast<double>(found) / exact.size();
}

void FlipByte(const std::string& path, size_t at_from_end) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const std::streamoff pos = static_cast<std::streamoff>(f.tellg()) - static_cast<std::streamoff>(at_from_end);
  f.seekg(pos);
  char c;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x40);
  f.seekp(pos);
  f.write(&c, 1);
}

// 500 clustered entries of 32 dims in an index that turns approximate past 50.
VectorIndexOptions SmallGraph() {
  VectorIndexOptions o;
  o.dims = 32;
  o.exact_limit = 50;
  return o;
}

void Fill(VectorIndex* index, size_t n, uint64_t seed = 7) {
  Points points(32, seed);
  for (size_t i = 0; i < n; ++i) REQUIRE(index->Upsert(Id(i), 1, points.Next()).ok());
}

VectorIndexOptions ThreeDims() {
  VectorIndexOptions o;
  o.dims = 3;
  return o;
}

}  // namespace

TEST_CASE("exact search ranks by cosine, applies threshold and filter, ties by id", "[memory]") {
  VectorIndex index(ThreeDims());
  REQUIRE(index.Upsert("a", 1, Vector{1, 0, 0}).ok());
  REQUIRE(index.Upsert("b", 1, Vector{0.8f, 0.6f, 0}).ok());
  REQUIRE(index.Upsert("e", 1, Vector{0, 0, 1}).ok());
  REQUIRE(index.Upsert("c", 1, Vector{0, 1, 0}).ok());
  REQUIRE(index.Upsert("d", 1, Vector{0.6f, 0.8f, 0}).ok());
  const Vector q{1, 0, 0};

  auto top3 = index.Search(q, 3, -1);
  CHECK(Ids(top3) == std::vector<std::string>{"a", "b", "d"});
  CHECK(top3[0].score == Approx(1.0));
  CHECK(top3[1].score == Approx(0.8));
  CHECK(top3[2].score == Approx(0.6));
  // c and e both score 0: by id.
  CHECK(Ids(index.Search(q, 5, -1)) == std::vector<std::string>{"a", "b", "d", "c", "e"});
  CHECK(Ids(index.Search(q, 10, 0.7f)) == std::vector<std::string>{"a", "b"});
  auto not_b = [](const std::string& id) { return id != "b"; };
  CHECK(Ids(index.Search(q, 3, -1, not_b)) == std::vector<std::string>{"a", "d", "c"});
  CHECK(index.Search(q, 0, -1).empty());
  CHECK(index.Search(Vector{1, 0}, 3, -1).empty());  // wrong size: nothing
  CHECK(index.Search(q, 100, -1).size() == 5);
  CHECK(VectorIndex(ThreeDims()).Search(q, 3, -1).empty());

  VectorIndex ties(ThreeDims());
  for (const char* id : {"z", "m", "a", "q"}) REQUIRE(ties.Upsert(id, 1, Vector{0, 1, 0}).ok());
  CHECK(Ids(ties.Search(Vector{0, 1, 0}, 3, 0)) == std::vector<std::string>{"a", "m", "q"});
}

TEST_CASE("upsert: same version is a no-op, a new one replaces, wrong dims rejected", "[memory]") {
  TempDir dir;
  VectorIndex index(ThreeDims());
  REQUIRE(index.Upsert("a", 1, Vector{1, 0, 0}).ok());
  REQUIRE(index.Upsert("b", 1, Vector{0, 1, 0}).ok());
  CHECK(index.dirty());
  REQUIRE(index.Save(dir / "v").ok());
  CHECK_FALSE(index.dirty());

  REQUIRE(index.Upsert("a", 1, Vector{0, 0, 1}).ok());  // same version: ignored
  CHECK_FALSE(index.dirty());
  CHECK(index.Search(Vector{1, 0, 0}, 1, -1)[0].id == "a");

  REQUIRE(index.Upsert("a", 2, Vector{0, 0, 1}).ok());
  CHECK(index.dirty());
  CHECK(index.size() == 2);
  auto hits = index.Search(Vector{0, 0, 1}, 1, -1);
  CHECK(hits[0].id == "a");
  CHECK(hits[0].score == Approx(1.0));

  Status s = index.Upsert("c", 1, Vector{1, 0});
  CHECK(s.IsInvalidArgument());
  CHECK_FALSE(index.Contains("c"));
}

TEST_CASE("remove frees a slot that the next entry reuses, and RetainOnly drops the rest", "[memory]") {
  TempDir dir;
  VectorIndex index(ThreeDims());
  REQUIRE(index.Upsert("a", 1, Vector{1, 0, 0}).ok());
  REQUIRE(index.Upsert("b", 1, Vector{0, 1, 0}).ok());
  REQUIRE(index.Upsert("c", 1, Vector{0, 0, 1}).ok());
  index.Remove("b");
  index.Remove("nope");
  CHECK_FALSE(index.Contains("b"));
  CHECK(index.size() == 2);
  CHECK(Ids(index.Search(Vector{0, 1, 0}, 3, 0.5f)).empty());

  REQUIRE(index.Upsert("d", 1, Vector{0, 1, 0}).ok());
  CHECK(Ids(index.Search(Vector{0, 1, 0}, 1, 0.5f)) == std::vector<std::string>{"d"});
  REQUIRE(index.Save(dir / "v").ok());
  std::ifstream in(dir / "v.ids", std::ios::binary);
  auto file = DecodeIdsFile(std::string(std::istreambuf_iterator<char>(in), {}));
  REQUIRE(file.ok());
  CHECK(file->slots == 3);  // d took b's slot
  CHECK(file->entries.size() == 3);

  index.RetainOnly({"a", "d", "zz"});
  CHECK(index.size() == 2);
  CHECK(index.Contains("a"));
  CHECK(index.Contains("d"));
  CHECK_FALSE(index.Contains("c"));
}

TEST_CASE("past exact_limit the graph answers, with good recall, kept in sync", "[memory]") {
  VectorIndex index(SmallGraph());
  Fill(&index, 50);
  CHECK_FALSE(index.approximate());
  Fill(&index, 500);
  CHECK(index.approximate());
  CHECK(index.size() == 500);

  Points queries(32, 99);
  double recall = 0;
  for (int i = 0; i < 50; ++i) {
    Vector q = queries.Next();
    auto got = index.Search(q, 10, -1);
    CHECK(got.size() == 10);
    recall += Recall(got, index.SearchExact(q, 10, -1));
  }
  CHECK(recall / 50 >= 0.9);

  // Removed entries leave the graph; a new version moves a vector there.
  Vector q = queries.Next();
  const std::string best = index.Search(q, 1, -1)[0].id;
  index.Remove(best);
  for (const VectorHit& h : index.Search(q, 10, -1)) CHECK(h.id != best);
  REQUIRE(index.Upsert(Id(3), 2, q).ok());
  auto hits = index.Search(q, 1, -1);
  CHECK(hits[0].id == Id(3));
  CHECK(hits[0].score == Approx(1.0));
  const Vector fresh = queries.Next();
  REQUIRE(index.Upsert("new", 1, fresh).ok());  // into the removed entry's slot
  CHECK(index.size() == 500);
  CHECK(index.Search(fresh, 1, -1)[0].id == "new");
}

TEST_CASE("a deferred graph is built in steps, and searches miss no queued entry", "[memory]") {
  VectorIndexOptions o = SmallGraph();
  o.defer_graph = true;
  VectorIndex index(o);
  Fill(&index, 50);
  CHECK(index.graph_backlog() == 0);
  Fill(&index, 500);  // crossing the limit builds nothing: every entry is queued
  CHECK(index.approximate());
  CHECK(index.graph_backlog() == 500);

  Points queries(32, 21);
  std::vector<Vector> qs;
  for (int i = 0; i < 20; ++i) qs.push_back(queries.Next());
  auto even = [](const std::string& id) { return (id.back() - '0') % 2 == 0; };
  // The answer while entries are queued: the exact one, ids and scores,
  // whatever the share queued (all, most, a few).
  auto same_as_exact = [&](const char* when) {
    INFO(when << ", " << index.graph_backlog() << " queued");
    for (const Vector& q : qs) {
      auto got = index.Search(q, 10, 0.2f), want = index.SearchExact(q, 10, 0.2f);
      CHECK(Ids(got) == Ids(want));
      auto fgot = index.Search(q, 10, -1, even), fwant = index.SearchExact(q, 10, -1, even);
      CHECK(Ids(fgot) == Ids(fwant));
    }
  };
  same_as_exact("all queued");
  REQUIRE(index.GraphStep(200).ok());
  CHECK(index.graph_backlog() == 300);
  same_as_exact("most queued");
  REQUIRE(index.GraphStep(290).ok());
  CHECK(index.graph_backlog() == 10);
  // With few queued the graph answers, and a queued entry still comes
  // first where it is best: ten entries in the graph replaced by the
  // queries themselves (the graph keeps their old vectors till a step).
  auto replaced = [](size_t i) { return Id(400 + i); };
  for (size_t i = 0; i < 10; ++i) REQUIRE(index.Upsert(replaced(i), 2, qs[i]).ok());
  CHECK(index.graph_backlog() == 20);
  for (size_t i = 0; i < 10; ++i) {
    auto hits = index.Search(qs[i], 3, -1);
    REQUIRE_FALSE(hits.empty());
    CHECK(hits[0].id == replaced(i));
    CHECK(hits[0].score == Approx(1.0));
    const std::vector<std::string> ids = Ids(hits);
    const std::set<std::string> unique(ids.begin(), ids.end());
    CHECK(unique.size() == hits.size());  // the graph's old copy is not a second hit
  }

  // A queued entry removed is gone from the queue and the answers; its
  // slot reused and removed again before its insert is no graph error.
  const size_t before = index.graph_backlog();
  index.Remove(replaced(0));
  CHECK(index.graph_backlog() == before - 1);
  for (const VectorHit& h : index.Search(qs[0], 10, -1)) CHECK(h.id != replaced(0));
  REQUIRE(index.Upsert("reused", 1, qs[0]).ok());
  index.Remove("reused");
  REQUIRE(index.Upsert("reused-again", 1, qs[0]).ok());
  CHECK(index.Search(qs[0], 1, -1)[0].id == "reused-again");
  CHECK(index.graph_backlog() == before);  // the graph was kept, not dropped and queued whole again

  // Saved only once nothing is queued; then it loads and answers as before.
  TempDir dir;
  CHECK(index.Save(dir / "v").code() == Status::Code::kFailedPrecondition);
  CHECK_FALSE(std::filesystem::exists(dir / "v.ids"));
  REQUIRE(index.GraphStep(1000).ok());
  CHECK(index.graph_backlog() == 0);
  CHECK(index.approximate());
  REQUIRE(index.Save(dir / "v").ok());
  VectorIndex back(o);
  REQUIRE(back.Load(dir / "v").ok());
  CHECK(back.graph_backlog() == 0);
  for (const Vector& q : qs) CHECK(Ids(back.Search(q, 10, -1)) == Ids(index.Search(q, 10, -1)));
  double recall = 0;
  for (const Vector& q : qs) recall += Recall(index.Search(q, 10, -1), index.SearchExact(q, 10, -1));
  CHECK(recall / qs.size() >= 0.9);

  // The neighbouring case: without defer_graph, Upsert inserts at once.
  VectorIndex now(SmallGraph());
  Fill(&now, 500);
  CHECK(now.graph_backlog() == 0);
  CHECK(now.GraphStep(10).ok());
}

TEST_CASE("filtered approximate search returns k when enough pass", "[memory]") {
  VectorIndex index(SmallGraph());
  Fill(&index, 500);
  REQUIRE(index.approximate());
  Points queries(32, 5);
  auto even = [](const std::string& id) { return (id.back() - '0') % 2 == 0; };
  // One in 50 passes: k * 4 graph candidates cannot hold ten of them.
  auto rare = [](const std::string& id) { return std::stoi(id.substr(1)) % 50 == 0; };
  for (int i = 0; i < 10; ++i) {
    Vector q = queries.Next();
    auto hits = index.Search(q, 10, -1, even);
    CHECK(hits.size() == 10);
    for (const VectorHit& h : hits) CHECK(even(h.id));
    CHECK(Ids(index.Search(q, 10, -1, rare)) == Ids(index.SearchExact(q, 10, -1, rare)));
  }
}

TEST_CASE("save and load round-trip in both modes", "[memory]") {
  TempDir dir;
  Points queries(32, 11);
  std::vector<Vector> qs;
  for (int i = 0; i < 5; ++i) qs.push_back(queries.Next());

  for (size_t n : {40, 300}) {
    INFO("entries " << n);
    VectorIndex index(SmallGraph());
    Fill(&index, n);
    index.Remove(Id(7));
    const std::string path = dir / ("v" + std::to_string(n));
    REQUIRE(index.Save(path).ok());
    CHECK(std::filesystem::exists(path) == (n > 50));  // a graph only when approximate

    VectorIndex back(SmallGraph());
    Status loaded = back.Load(path);
    INFO(loaded.ToString());
    REQUIRE(loaded.ok());
    CHECK_FALSE(back.dirty());
    CHECK(back.size() == index.size());
    CHECK(back.approximate() == index.approximate());
    CHECK_FALSE(back.Contains(Id(7)));
    for (const Vector& q : qs) {
      auto a = index.Search(q, 10, -1), b = back.Search(q, 10, -1);
      CHECK(Ids(a) == Ids(b));
      auto ea = index.SearchExact(q, 10, -1), eb = back.SearchExact(q, 10, -1);
      REQUIRE(ea.size() == eb.size());
      for (size_t i = 0; i < ea.size(); ++i) CHECK(ea[i].score == eb[i].score);
    }
    // Versions survive: re-offering an entry unchanged is still a no-op.
    REQUIRE(back.Upsert(Id(1), 1, qs[0]).ok());
    CHECK_FALSE(back.dirty());
    // And the loaded index keeps working: a new entry reuses slot 7.
    REQUIRE(back.Upsert("fresh", 1, qs[1]).ok());
    CHECK(back.Search(qs[1], 1, -1)[0].id == "fresh");
  }

  // Saved exact under a large limit, loaded under a small one: the graph is built.
  VectorIndexOptions wide = SmallGraph();
  wide.exact_limit = 1000;
  VectorIndex exact(wide);
  Fill(&exact, 200);
  REQUIRE(exact.Save(dir / "wide").ok());
  VectorIndex narrow(SmallGraph());
  REQUIRE(narrow.Load(dir / "wide").ok());
  CHECK(narrow.approximate());
  CHECK(narrow.dirty());  // so that the built graph gets saved
}

TEST_CASE("load: missing is NotFound, damage and mismatch are Corruption", "[memory]") {
  TempDir dir;
  VectorIndex index(SmallGraph());
  CHECK(index.Load(dir / "none").IsNotFound());

  Fill(&index, 200);
  REQUIRE(index.Save(dir / "g").ok());
  VectorIndex small(SmallGraph());
  Fill(&small, 20);
  REQUIRE(small.Save(dir / "x").ok());

  auto load = [&](const std::string& name) {
    VectorIndex fresh(SmallGraph());
    REQUIRE(fresh.Upsert("keep", 1, Vector(32, 0.1f)).ok());
    Status s = fresh.Load(dir / name);
    if (!s.ok()) CHECK(fresh.Contains("keep"));  // a failed Load changes nothing
    return s;
  };
  auto copy = [&](const std::string& from, const std::string& to) {
    std::filesystem::copy_file(dir / from, dir / to, std::filesystem::copy_options::overwrite_existing);
  };
  REQUIRE(load("g").ok());
  REQUIRE(load("x").ok());

  SECTION("a flipped byte in the ids file") {
    FlipByte(dir / "g.ids", 20);
    CHECK(load("g").IsCorruption());
    FlipByte(dir / "x.ids", 100);
    CHECK(load("x").IsCorruption());
  }
  SECTION("a flipped byte in the graph") {
    FlipByte(dir / "g", 1000);
    CHECK(load("g").IsCorruption());
  }
  SECTION("a truncated graph") {
    std::filesystem::resize_file(dir / "g", std::filesystem::file_size(dir / "g") - 1);
    CHECK(load("g").IsCorruption());
  }
  SECTION("a truncated ids file") {
    std::filesystem::resize_file(dir / "x.ids", 30);
    CHECK(load("x").IsCorruption());
  }
  SECTION("the graph of another save") {
    VectorIndex other(SmallGraph());
    Fill(&other, 200, 8);
    REQUIRE(other.Save(dir / "h").ok());
    copy("h", "g");
    CHECK(load("g").IsCorruption());
  }
  SECTION("a missing graph") {
    std::filesystem::remove(dir / "g");
    CHECK(load("g").IsCorruption());
  }
  SECTION("other dims") {
    VectorIndexOptions o = SmallGraph();
    o.dims = 16;
    VectorIndex sixteen(o);
    CHECK(sixteen.Load(dir / "g").IsCorruption());
    CHECK(sixteen.Load(dir / "x").IsCorruption());
  }
}

TEST_CASE("exact search over quantised rows returns exactly what a full scan does", "[memory]") {
  // The scan reads int8 rows and rescores only rows whose bounds allow it;
  // its answer must be the brute-force one, ids and scores, ties included.
  VectorIndexOptions o;
  o.dims = 384;
  o.exact_limit = 100000;
  VectorIndex index(o);
  Points points(384, 11);
  std::vector<std::pair<std::string, Vector>> all;
  for (size_t i = 0; i < 3000; ++i) {
    Vector v = points.Next();
    if (i % 100 == 99) v = all[i - 50].second;  // exact duplicates: ties broken by id
    all.emplace_back(Id(i), v);
    REQUIRE(index.Upsert(Id(i), 1, v).ok());
  }
  for (size_t i = 0; i < 3000; i += 7) index.Remove(Id(i));  // dead rows are skipped
  auto brute = [&](const Vector& q, size_t k, float threshold, const auto& pass) {
    std::vector<VectorHit> hits;
    for (size_t i = 0; i < all.size(); ++i)
      if (i % 7 != 0 && pass(all[i].first)) {
        const float s = Cosine(all[i].second, q);
        if (s >= threshold) hits.push_back({all[i].first, s});
      }
    std::sort(hits.begin(), hits.end(), [](const VectorHit& a, const VectorHit& b) {
      return a.score != b.score ? a.score > b.score : a.id < b.id;
    });
    if (hits.size() > k) hits.resize(k);
    return hits;
  };
  auto even = [](const std::string& id) { return std::stoul(id.substr(1)) % 2 == 0; };
  auto any = [](const std::string&) { return true; };
  for (int t = 0; t < 40; ++t) {
    const Vector q = t % 4 == 0 ? all[static_cast<size_t>(t) * 13 + 1].second : points.Next();
    for (size_t k : {1, 10, 100}) {
      for (float threshold : {-1.0f, 0.3f, 0.6f}) {
        INFO("query " << t << ", k " << k << ", threshold " << threshold);
        auto got = index.Search(q, k, threshold);
        auto want = brute(q, k, threshold, any);
        REQUIRE(Ids(got) == Ids(want));
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].score == want[i].score);
        CHECK(Ids(index.Search(q, k, threshold, even)) == Ids(brute(q, k, threshold, even)));
      }
    }
  }
}

TEST_CASE("non-finite vectors are refused, and a non-finite query finds nothing", "[memory]") {
  VectorIndex index(ThreeDims());
  REQUIRE(index.Upsert("a", 1, Vector{1, 0, 0}).ok());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto bad = index.Upsert("b", 1, Vector{nan, 0, 0});
  CHECK(bad.IsInvalidArgument());
  CHECK_THAT(bad.message(), Catch::Contains("b") && Catch::Contains("finite"));
  CHECK_FALSE(index.Upsert("c", 1, Vector{0, inf, 0}).ok());
  CHECK(index.size() == 1);
  CHECK(index.Search(Vector{nan, 1, 0}, 3, -1).empty());
  CHECK(index.SearchExact(Vector{0, 0, -inf}, 3, -1).empty());
  // A vector of subnormal components still ranks, exactly.
  const float tiny = std::numeric_limits<float>::denorm_min();
  REQUIRE(index.Upsert("d", 1, Vector{tiny, tiny, 0}).ok());
  auto hits = index.Search(Vector{1, 0, 0}, 2, -1);
  REQUIRE(hits.size() == 2);
  CHECK(Ids(hits) == std::vector<std::string>{"a", "d"});
  CHECK(hits[1].score == Cosine(Vector{tiny, tiny, 0}, Vector{1, 0, 0}));
}

}  // namespace vector_index_test
