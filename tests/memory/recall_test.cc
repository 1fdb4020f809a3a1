// Recall's associations (store.h, step 5): one hop from the best hits
// through associations, at 0.8 of the source's score, within the filters
// and the limit, with the path under explain.
#include <catch2/catch.hpp>

#include "memory/store_fixture.h"

// This file's own namespace: test programs compile in unity batches.
namespace recall_test {

using namespace limbic;
using namespace limbic::memory;
using namespace limbic::memory::fixture;
using nlohmann::json;

namespace {

json Relate(Fixture& f, const std::string& a, const std::string& rel, const std::string& b) {
  return f.Commit(f.store->Relate({{"entity_a", a}, {"relation", rel}, {"entity_b", b}}));
}

// The result with `id`, or null.
json Hit(const json& recall, const std::string& id) {
  for (const json& r : recall["results"])
    if (r["id"] == id) return r;
  return nullptr;
}

}  // namespace

TEST_CASE("recall brings the facts an association reaches at 0.8 of their source, with the path",
          "[memory][recall]") {
  Fixture f;
  json alice = f.Fact("alice", "works_at", "Initech", {{"tags", {"hr"}}});
  json mentors = Relate(f, "alice", "mentors", "bob");
  json bob = f.Fact("bob", "likes", "green tea");
  json dana = f.Fact("dana", "likes", "jazz");  // nobody's association

  json out =
      f.Recall({{"query", "where does alice work"}, {"reinforce", false}, {"explain", true}});
  REQUIRE(f.Ids(out) == std::vector<std::string>{alice["id"], bob["id"]});
  const json& src = out["results"][0];
  const json& hit = out["results"][1];
  CHECK_FALSE(src.contains("via"));
  CHECK_FALSE(src["explain"].contains("association"));
  CHECK(hit["via"] == alice["id"]);
  CHECK(hit["score"].get<double>() == Approx(0.8 * src["score"].get<double>()));
  const json& path = hit["explain"]["association"];
  CHECK(path["from"] == alice["id"]);
  CHECK(path["from_score"].get<double>() == Approx(src["score"].get<double>()));
  CHECK(path["factor"] == 0.8);
  CHECK(path["id"] == mentors["id"]);
  CHECK(path["entity_a"] == "alice");
  CHECK(path["relation"] == "mentors");
  CHECK(path["entity_b"] == "bob");
  CHECK(path["through"] == "alice");
  CHECK(path["reached"] == "bob");
  CHECK(path["as"] == "subject");
  CHECK_FALSE(hit["explain"].contains("fused"));  // in no list: no direct components
  CHECK(Hit(out, dana["id"]).is_null());

  // The limit holds: one result is the direct hit alone.
  CHECK(f.Ids(f.Recall({{"query", "where does alice work"}, {"k", 1u}, {"reinforce", false}})) ==
        std::vector<std::string>{alice["id"]});
  // The filters hold for associated memories too: bob's fact has no tag.
  CHECK(
      f.Ids(f.Recall({{"query", "where does alice work"}, {"tag", "hr"}, {"reinforce", false}})) ==
      std::vector<std::string>{alice["id"]});
  CHECK(f.Ids(f.Recall({{"query", "alice"}, {"kind", "episode"}, {"reinforce", false}})).empty());

  // Recall reinforces what it returns, associated hits too.
  f.Recall({{"query", "where does alice work"}});
  CHECK(f.Get(bob["id"])["access_count"] == 1);
}

TEST_CASE("superseded and forgotten memories are not reached through an association",
          "[memory][recall]") {
  Fixture f;
  json alice = f.Fact("alice", "works_at", "Initech");
  Relate(f, "alice", "mentors", "bob");
  json old = f.Fact("bob", "drinks", "green tea");
  json now = f.Fact("bob", "drinks", "coffee");
  REQUIRE(now["superseded"] == json::array({old["id"]}));
  json q = {{"query", "where does alice work"}, {"reinforce", false}};
  CHECK(f.Ids(f.Recall(q)) == std::vector<std::string>{alice["id"], now["id"]});
  q["include_superseded"] = true;
  CHECK(f.Ids(f.Recall(q)).size() == 3);
  q.erase("include_superseded");
  f.Commit(f.store->Forget({{"id", now["id"]}}, f.clock.Now()));
  CHECK(f.Ids(f.Recall(q)) == std::vector<std::string>{alice["id"]});
}

TEST_CASE("an association between memory ids links episodes, from either end", "[memory][recall]") {
  Fixture f;
  json outage = f.Episode("The deploy failed on Friday because the migration timed out.");
  json fix = f.Episode("Postmortem: raise the lock timeout and split the batch.");
  json link = Relate(f, fix["id"], "follows_up", outage["id"]);  // the hit is entity_b
  json out =
      f.Recall({{"query", "why did the deploy fail"}, {"reinforce", false}, {"explain", true}});
  REQUIRE(f.Ids(out) == std::vector<std::string>{outage["id"], fix["id"]});
  const json& path = out["results"][1]["explain"]["association"];
  CHECK(path["id"] == link["id"]);
  CHECK(path["through"] == outage["id"]);
  CHECK(path["reached"] == fix["id"]);
  CHECK(path["as"] == "id");
}

TEST_CASE("a direct hit keeps its own score unless its association gives more",
          "[memory][recall]") {
  Fixture f;
  // Faded to half before the others exist: its direct score is about half.
  json faded = f.Episode("Kafka consumer lag alerts during the nightly batch.");
  f.clock.Advance(24 * kHour);
  json top = f.Episode("Kafka consumer lag: the nightly batch saturates the consumer group.");
  json fresh = f.Episode("Graphs: the nightly batch saturates the Kafka consumer group, and lag grows.");
  Relate(f, top["id"], "explains", faded["id"]);
  Relate(f, top["id"], "explains", fresh["id"]);
  json out =
      f.Recall({{"query", "kafka consumer lag: the nightly batch saturates the consumer group"},
                {"reinforce", false},
                {"explain", true}});
  REQUIRE(f.Ids(out).size() == 3);
  const double best = out["results"][0]["score"];
  REQUIRE(out["results"][0]["id"] == top["id"]);
  json a = Hit(out, faded["id"]);
  REQUIRE(a.is_object());
  CHECK(a["score"].get<double>() == Approx(0.8 * best));
  CHECK(a["via"] == top["id"]);
  CHECK(a["explain"]["direct_score"].get<double>() < 0.8 * best);
  CHECK(a["explain"].contains("fused"));  // still shows its lists
  json d = Hit(out, fresh["id"]);
  REQUIRE(d.is_object());
  CHECK(d["score"].get<double>() > 0.8 * best);
  CHECK_FALSE(d.contains("via"));
  CHECK_FALSE(d["explain"].contains("association"));
}

TEST_CASE("a memory reached from several hits takes the best source, deterministically",
          "[memory][recall]") {
  Fixture f;
  json first = f.Fact("redis", "caches", "sessions");
  json second = f.Fact("redis", "runs_on", "port 6379 sessions");
  Relate(f, "redis", "replaced_by", "valkey");
  json target = f.Fact("valkey", "is", "a fork");
  json q = {{"query", "redis sessions"}, {"reinforce", false}, {"explain", true}};
  json out = f.Recall(q);
  REQUIRE(f.Ids(out).size() == 3);
  json t = Hit(out, target["id"]);
  REQUIRE(t.is_object());
  CHECK(t["via"] == out["results"][0]["id"]);
  CHECK(t["score"].get<double>() == Approx(0.8 * out["results"][0]["score"].get<double>()));
  CHECK(f.Recall(q)["results"] == out["results"]);  // the same answer again
}

}  // namespace recall_test
