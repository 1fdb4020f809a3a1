// MemoryStore over a real Engine: remember, supersede, reinforce, recall
// ranking and filters, decay arithmetic with injected time, forget,
// relate/related, export/import, ingest dedup, embedder fallback, replay.
#include "memory/store.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "memory/store_fixture.h"
#include "state/replay.h"
#include "tests/http_server.h"

// This file's own namespace: test programs compile in unity batches.
namespace store_test {

using namespace limbic;
using namespace limbic::memory;
using namespace limbic::memory::fixture;
using nlohmann::json;

TEST_CASE(
    "a fact with the same subject and relation supersedes the old one and the old one is kept",
    "[memory]") {
  Fixture f;
  json a = f.Fact("alice", "works_at", "Acme");
  CHECK(a["superseded"].empty());
  f.clock.Advance(kHour);
  json b = f.Fact("alice", "works_at", "Initech");
  REQUIRE(b["superseded"] == json::array({a["id"]}));
  json old = f.Get(a["id"]);
  CHECK(old["superseded_by"] == b["id"]);
  CHECK(old["valid_until"] == FormatTime(kT0 + kHour));
  CHECK(old["valid_from"] == FormatTime(kT0));
  // Recall gives the current fact only, unless asked.
  CHECK(f.Ids(f.Recall({{"query", "alice works at"}, {"reinforce", false}})) ==
        std::vector<std::string>{b["id"]});
  CHECK(
      f.Ids(f.Recall(
                {{"query", "alice works at"}, {"reinforce", false}, {"include_superseded", true}}))
          .size() == 2);
  // Another namespace is another world.
  json c = f.Fact("alice", "works_at", "Umbrella", {{"namespace", "fiction"}});
  CHECK(c["superseded"].empty());
  // The same fact again reinforces instead of adding.
  json again = f.Fact("alice", "works_at", "Initech");
  CHECK(again["reinforced"] == true);
  CHECK(again["id"] == b["id"]);
  CHECK(f.Get(b["id"])["access_count"] == 1);
}

TEST_CASE(
    "the texts to embed read in slices are those read at once, and one forgotten between is empty",
    "[memory]") {
  Fixture f;
  for (int i = 0; i < 30; ++i) f.Fact("s" + std::to_string(i), "is", "o" + std::to_string(i));
  auto whole = f.store->EmbedTodo(true);
  REQUIRE(whole.ok());
  REQUIRE(whole->ids.size() == 30);
  EmbedWork sliced = f.store->EmbedIds(true);
  CHECK(sliced.ids == whole->ids);
  CHECK(sliced.texts.empty());
  REQUIRE(f.store->ReadEmbedTexts(&sliced, 10).ok());
  CHECK(sliced.texts.size() == 10);
  f.Commit(f.store->Forget({{"id", sliced.ids[20]}}, f.clock.Now()));
  REQUIRE(f.store->ReadEmbedTexts(&sliced, 99).ok());  // past the end: to the end
  REQUIRE(sliced.texts.size() == 30);
  CHECK(sliced.texts[20].empty());
  CHECK_FALSE(whole->texts[20].empty());
  sliced.texts[20] = whole->texts[20];
  CHECK(sliced.texts == whole->texts);
}

TEST_CASE("a deferred graph is saved only when at most kSaveCatchUp vectors wait", "[memory]") {
  MemoryOptions o;
  o.vectors.defer_graph = true;
  o.vectors.exact_limit = 20;
  Fixture f(o);
  const size_t n = MemoryStore::kSaveCatchUp + 100;
  json doc = {{"version", 1}, {"memories", json::array()}};
  for (size_t i = 0; i < n; ++i)
    doc["memories"].push_back({{"id", "m-" + std::to_string(i + 1)},
                               {"kind", "fact"},
                               {"subject", "s" + std::to_string(i)},
                               {"relation", "is"},
                               {"object", "o" + std::to_string(i % 97)},
                               {"namespace", "default"},
                               {"importance", 0.5},
                               {"strength", 1.0},
                               {"access_count", 0},
                               {"created_at", "2026-09-21T00:00:00.000Z"},
                               {"last_accessed_at", "2026-09-21T00:00:00.000Z"},
                               {"tags", json::array()}});
  f.Commit(f.store->Import(doc));
  {
    // Planned by pieces (as the runtime commits a large embed): a range of
    // the ids, 256 vectors an event; a forgotten memory is skipped.
    auto work = f.store->EmbedTodo(false);
    REQUIRE(work.ok());
    REQUIRE(work->ids.size() == n);
    std::vector<Vector> vectors(n, Vector(384, 0.05f));
    auto piece = f.store->PlanEmbedded(*work, vectors, "hash-384", 100, 100 + 600);
    REQUIRE(piece.ok());
    CHECK(piece->answer["embedded"] == 600);
    CHECK(piece->events.size() == 3);  // 256 + 256 + 88
    CHECK(piece->events[0].fields["vectors"][0]["memory_id"] == work->ids[100]);
  }
  f.Commit(f.store->Embed(false));
  CHECK(f.store->IndexBacklog() == n);  // nothing built within the commits
  const std::string saved = f.store->dir() + "/vectors-hash-384.idx";
  // Over the bound: a stop would wait for all of them; nothing is written.
  REQUIRE(f.store->SaveIndex().ok());
  CHECK_FALSE(std::filesystem::exists(saved + ".ids"));
  CHECK(f.store->IndexBacklog() == n);
  // The neighbouring case: at the bound, the rest go in and it is saved.
  REQUIRE(f.store->IndexStep(100).ok());
  CHECK(f.store->IndexBacklog() == MemoryStore::kSaveCatchUp);
  REQUIRE(f.store->SaveIndex().ok());
  CHECK(std::filesystem::exists(saved + ".ids"));
  CHECK(f.store->IndexBacklog() == 0);
  f.Reopen(o);
  CHECK(f.store->IndexBacklog() == 0);  // loaded whole
  json r = f.Recall({{"query", "s1234 is"}, {"k", 1u}, {"reinforce", false}});
  REQUIRE_FALSE(r["results"].empty());
  CHECK(r["results"][0]["subject"] == "s1234");
}

TEST_CASE("a near-duplicate episode reinforces the existing one", "[memory]") {
  Fixture f;
  json a = f.Episode("Deployed release 4.2 to production; the migration took twenty minutes.");
  f.clock.Advance(24 * kHour);  // effective strength 0.5
  json b = f.Episode("Deployed release 4.2 to production; the migration took twenty minutes.");
  CHECK(b["reinforced"] == true);
  CHECK(b["id"] == a["id"]);
  CHECK(b["similarity"].get<double>() > 0.95);
  json rec = f.Get(a["id"]);
  CHECK(rec["strength"].get<double>() == Approx(0.7));  // 0.5 + 0.2
  CHECK(rec["access_count"] == 1);
  CHECK(rec["last_accessed_at"] == FormatTime(kT0 + 24 * kHour));
  json c = f.Episode("Lunch with the design team about the onboarding flow.");
  CHECK(c["reinforced"] == false);
  CHECK(c["id"] != a["id"]);
}

TEST_CASE("recall ranks a small hand-checked set and filters", "[memory]") {
  Fixture f;
  json deploy = f.Episode("The deploy failed on Friday because the database migration timed out.",
                          {{"tags", {"ops"}}, {"episode_id", "inc-7"}});
  json tea = f.Episode("Bob prefers green tea in the afternoon.", {{"tags", {"people"}}});
  json fact = f.Fact("deploy", "owner", "Carol", {{"tags", {"ops"}}});
  json other = f.Episode("Friday standup moved to 10am.", {{"namespace", "team"}});

  json out =
      f.Recall({{"query", "why did the deploy fail"}, {"reinforce", false}, {"explain", true}});
  auto ids = f.Ids(out);
  REQUIRE(!ids.empty());
  CHECK(ids[0] == deploy["id"]);
  CHECK(std::find(ids.begin(), ids.end(), tea["id"]) == ids.end());  // shares no word
  const json& top = out["results"][0];
  CHECK(top["explain"].contains("bm25"));
  CHECK(top["explain"].contains("vector"));
  // Score fusion: each list's weight x the item's score over the list's
  // best; the top hit is the best of both lists here.
  const json& parts = top["explain"]["parts"];
  CHECK(top["explain"]["fusion"] == "score");
  CHECK(parts["lexical"].get<double>() == Approx(1.0));
  CHECK(parts["vector"].get<double>() == Approx(0.2));
  CHECK(top["explain"]["fused"].get<double>() ==
        Approx(parts["lexical"].get<double>() + parts["vector"].get<double>()));
  CHECK(top["score"].get<double>() ==
        Approx(top["explain"]["fused"].get<double>() * top["explain"]["strength"].get<double>() *
               top["explain"]["recency"].get<double>()));

  CHECK(f.Ids(f.Recall({{"query", "deploy"}, {"kind", "fact"}, {"reinforce", false}})) ==
        std::vector<std::string>{fact["id"]});
  CHECK(
      f.Ids(f.Recall({{"query", "deploy friday"}, {"tag", "ops"}, {"reinforce", false}})).size() ==
      2);
  CHECK(f.Ids(f.Recall({{"query", "friday"}, {"namespace", "team"}, {"reinforce", false}})) ==
        std::vector<std::string>{other["id"]});
  CHECK(f.Ids(f.Recall({{"query", "friday"}, {"episode_id", "inc-7"}, {"reinforce", false}})) ==
        std::vector<std::string>{deploy["id"]});
  CHECK_FALSE(ParseRecallRequest({{"query", ""}}).ok());
  CHECK_FALSE(ParseRecallRequest({{"query", "x"}, {"kind", "thought"}}).ok());
  CHECK_FALSE(ParseRecallRequest({{"query", "x"}, {"bogus", 1}}).ok());
}

TEST_CASE("recall reinforces what it returns by 0.2 for episodes and 0.1 for facts up to the cap",
          "[memory]") {
  Fixture f;
  json e = f.Episode("Quarterly planning offsite in Lisbon.");
  json k = f.Fact("offsite", "location", "Lisbon");
  f.clock.Advance(48 * kHour);  // both at 0.25 effective
  json out = f.Recall({{"query", "Lisbon offsite"}});
  CHECK(out["reinforced"] == true);
  CHECK(f.Get(e["id"])["strength"].get<double>() == Approx(0.45));
  CHECK(f.Get(k["id"])["strength"].get<double>() == Approx(0.35));
  CHECK(f.Get(e["id"])["access_count"] == 1);
  // At full strength the cap holds.
  f.Recall({{"query", "Lisbon offsite"}});
  f.Recall({{"query", "Lisbon offsite"}});
  f.Recall({{"query", "Lisbon offsite"}});
  CHECK(f.Get(e["id"])["strength"].get<double>() <= 1.0);
  CHECK(f.Get(e["id"])["strength"].get<double>() == Approx(1.0));
  CHECK(f.Get(e["id"])["access_count"] == 4);
}

TEST_CASE(
    "decay halves strength every half-life and deletes faded memories but more than half needs "
    "force",
    "[memory]") {
  Fixture f;
  json a = f.Episode("alpha event happened");
  json b = f.Episode("beta event happened at the zoo");
  f.clock.Advance(24 * kHour);
  CHECK(f.Get(a["id"])["effective_strength"].get<double>() == Approx(0.5));
  json c = f.Episode("gamma: something new");
  // 7 days after a and b: 0.5^7 = 0.0078 < 0.01; c is 6 days old: 0.0156.
  f.clock.Advance(6 * 24 * kHour);
  auto refused = f.store->Decay(false, f.clock.Now());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().IsFailedPrecondition());
  CHECK(refused.status().message().find("--force") != std::string::npos);
  json out = f.Commit(f.store->Decay(true, f.clock.Now()));
  CHECK(out["deleted"] == 2);
  CHECK(out["remaining"] == 1);
  CHECK(out["decayed"] == 3);
  CHECK_FALSE(f.store->Get(a["id"], f.clock.Now()).ok());
  CHECK(f.store->Get(c["id"], f.clock.Now()).ok());
  // A pass with nothing faded writes nothing.
  auto none = f.store->Decay(false, f.clock.Now());
  REQUIRE(none.ok());
  CHECK(none->events.empty());
}

TEST_CASE("forget by id, subject and age", "[memory]") {
  Fixture f;
  json a = f.Fact("carol", "likes", "jazz");
  json b = f.Fact("carol", "lives_in", "Oslo");
  f.clock.Advance(40 * 24 * kHour);
  json c = f.Episode("recent thing");
  // 2 of 3 is more than half: refused, nothing planned, unless forced.
  auto refused = f.store->Forget({{"older_than", "30d"}}, f.clock.Now());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == limbic::Status::Code::kFailedPrecondition);
  CHECK(refused.status().message() ==
        "forget would delete 2 of 3 memories (more than half); send it again with force: true "
        "(--force) to proceed");
  CHECK(f.store->Forget({{"older_than", "30d"}, {"force", "yes"}}, f.clock.Now())
            .status()
            .IsInvalidArgument());
  CHECK(f.Commit(f.store->Forget({{"older_than", "30d"}, {"force", true}},
                                 f.clock.Now()))["forgotten"] == 2);
  CHECK(f.store->Get(c["id"], f.clock.Now()).ok());
  json d = f.Fact("dave", "likes", "chess");
  CHECK(f.Commit(f.store->Forget({{"subject", "dave"}}, f.clock.Now()))["ids"] ==
        json::array({d["id"]}));
  CHECK(f.Commit(f.store->Forget({{"id", c["id"]}}, f.clock.Now()))["forgotten"] == 1);
  CHECK(f.store->Forget({{"id", "m-999"}}, f.clock.Now()).status().IsNotFound());
  CHECK(
      f.store->Forget({{"id", "x"}, {"subject", "y"}}, f.clock.Now()).status().IsInvalidArgument());
  CHECK(f.store->Forget({{"older_than", "soon"}}, f.clock.Now()).status().IsInvalidArgument());
}

TEST_CASE("relate is unique and related walks associations and facts up to depth 3", "[memory]") {
  Fixture f;
  json r1 = f.Commit(
      f.store->Relate({{"entity_a", "limbic"}, {"relation", "uses"}, {"entity_b", "RocksDB"}}));
  CHECK(r1["created"] == true);
  json r2 = f.Commit(
      f.store->Relate({{"entity_a", "limbic"}, {"relation", "uses"}, {"entity_b", "RocksDB"}}));
  CHECK(r2["created"] == false);
  CHECK(r2["id"] == r1["id"]);
  f.Commit(
      f.store->Relate({{"entity_a", "RocksDB"}, {"relation", "written_in"}, {"entity_b", "C++"}}));
  f.Fact("C++", "standardised_by", "ISO");
  auto d1 = f.store->Related("limbic", 1);
  REQUIRE(d1.ok());
  CHECK((*d1)["related"].size() == 1);
  auto d3 = f.store->Related("limbic", 3);
  REQUIRE(d3.ok());
  REQUIRE((*d3)["related"].size() == 3);
  CHECK((*d3)["related"][2]["entity"] == "ISO");
  CHECK((*d3)["related"][2]["via"] == "fact");
  CHECK((*d3)["related"][2]["depth"] == 3);
  CHECK(f.store->Related("limbic", 4).status().IsInvalidArgument());
  CHECK(f.store->Relate({{"entity_a", "a/b\n"}, {"relation", "x"}, {"entity_b", "c"}})
            .status()
            .IsInvalidArgument());
}

TEST_CASE("export then import into another store is complete and idempotent", "[memory]") {
  Fixture f;
  f.Fact("erin", "role", "SRE");
  f.Fact("erin", "role", "manager");
  f.Episode("Erin ran the game day.", {{"tags", {"ops"}}});
  f.Commit(f.store->Relate({{"entity_a", "erin"}, {"relation", "mentors"}, {"entity_b", "frank"}}));
  auto exported = f.store->Export();
  REQUIRE(exported.ok());
  CHECK((*exported)["memories"].size() == 3);

  Fixture g;
  json first = g.Commit(g.store->Import(*exported));
  CHECK(first["imported"] == 4);
  json second = g.Commit(g.store->Import(*exported));
  CHECK(second["imported"] == 0);
  CHECK(second["skipped"] == 4);
  auto again = g.store->Export();
  REQUIRE(again.ok());
  CHECK((*again)["memories"] == (*exported)["memories"]);
  // A bad file is rejected whole, naming the item.
  json bad = *exported;
  bad["memories"][1]["importance"] = 7;
  auto r = g.store->Import(bad);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("memories[1]") != std::string::npos);
}

TEST_CASE("ingest stores chunks with episode ids and the same file twice adds nothing",
          "[memory]") {
  Fixture f;
  std::string path = f.dir / "notes.md";
  {
    std::ofstream out(path);
    for (int i = 0; i < 60; ++i)
      out << "Line " << i << " of the runbook: restart the ingest worker gently.\n";
  }
  json first = f.Commit(f.store->Ingest({{"path", path}, {"episode_id", "ep-1"}}));
  REQUIRE(first["files"].size() == 1);
  CHECK(first["files"][0]["status"] == "ingested");
  const size_t chunks = first["files"][0]["chunks"];
  CHECK(chunks >= 4);
  json second = f.Commit(f.store->Ingest({{"path", path}}));
  CHECK(second["files"][0]["status"] == "duplicate");
  auto stats = f.store->Stats(f.clock.Now());
  REQUIRE(stats.ok());
  CHECK((*stats)["chunks"] == chunks);
  CHECK((*stats)["documents"] == 1);
  json got = f.Recall(
      {{"query", "restart the ingest worker"}, {"episode_id", "ep-1"}, {"reinforce", false}});
  REQUIRE(!got["results"].empty());
  CHECK(got["results"][0]["source"].get<std::string>().find("notes.md#") != std::string::npos);
  CHECK(f.Recall({{"query", "restart"}, {"episode_id", "ep-2"}, {"reinforce", false}})["results"]
            .empty());
  CHECK(std::filesystem::exists(
      f.dir / ("memory/raw/" + first["files"][0]["sha256"].get<std::string>() + ".md")));
  CHECK(f.store->Ingest({{"path", f.dir / "missing.md"}}).status().IsNotFound());
  // Forgetting every chunk forgets the document: it can be ingested again.
  json forget =
      f.Commit(f.store->Forget({{"older_than", "0s"}, {"force", true}}, f.clock.Now() + 1));
  CHECK(forget["forgotten"] == chunks);
  CHECK(f.Commit(f.store->Ingest({{"path", path}}))["files"][0]["status"] == "ingested");
}

TEST_CASE("an unreachable embedder still remembers and recall falls back to BM25 saying so",
          "[memory]") {
  MemoryOptions o;
  o.embedder.kind = "openai";
  o.embedder.url = "http://127.0.0.1:9";  // discard port: nothing listens
  o.embedder.model = "test-model";
  o.embedder.timeout_ms = 2000;
  Fixture f(o);
  json a = f.Episode("The printer on floor 3 is out of toner.");
  CHECK(a.contains("note"));
  CHECK(f.Get(a["id"]).contains("embedder") == false);
  json out = f.Recall({{"query", "printer toner"}, {"reinforce", false}});
  CHECK(out["vector"]["used"] == false);
  CHECK(out["vector"]["note"].get<std::string>().find("BM25") != std::string::npos);
  REQUIRE(out["results"].size() == 1);
  CHECK(out["results"][0]["id"] == a["id"]);
}

TEST_CASE("memory survives reopen and replay reproduces it", "[memory]") {
  Fixture f;
  json a = f.Fact("gina", "team", "infra");
  json b = f.Episode("Gina fixed the flaky backup job.");
  f.Commit(f.store->Relate({{"entity_a", "gina"}, {"relation", "owns"}, {"entity_b", "backups"}}));
  f.Fact("gina", "team", "platform");  // supersedes the first
  f.Recall({{"query", "backup job"}});
  f.Reopen();
  CHECK(f.Ids(f.Recall({{"query", "flaky backup"}, {"reinforce", false}}))[0] == b["id"]);
  auto live = f.engine->projection().Digest();
  REQUIRE(live.ok());
  // Written once at the end, and a record at a time (each later write then
  // replaces index entries an earlier one wrote).
  for (size_t flush : {size_t{50000}, size_t{1}}) {
    state::ReplayOptions ro;
    ro.from = f.dir / "events";
    ro.flush_records = flush;
    ro.batch = flush == 1 ? 1 : 4096;  // the write comes after each chunk of events
    testing::ScratchDir into;
    ro.into = into / "replayed";
    auto replayed = state::Replay(ro);
    REQUIRE(replayed.ok());
    CHECK(replayed->digest == *live);
    state::ProjectionOptions po;
    po.path = state::DbDirPath(ro.into);
    po.read_only = true;
    auto rebuilt = state::Projection::Open(po);
    REQUIRE(rebuilt.ok());
    Status indexes = (*rebuilt)->CheckIndexes();
    INFO(indexes.ToString());
    CHECK(indexes.ok());
  }
}

TEST_CASE("an OpenAI-compatible embedder serves recall until it goes down, then recall falls back",
          "[memory]") {
  // The far end answers like /v1/embeddings with 16-dim hash vectors.
  EmbedderSpec spec16;
  spec16.dims = 16;
  auto hash16 = MakeEmbedder(spec16);
  REQUIRE(hash16.ok());
  auto server = std::make_unique<testing::TestHttpServer>(
      [&](const testing::TestRequest& req) -> std::optional<std::string> {
        json body = json::parse(req.body, nullptr, false);
        if (req.target != "/v1/embeddings" || body.is_discarded() || body["model"] != "mini")
          return testing::HttpAnswer(400, "{}");
        std::vector<std::string> texts = body["input"];
        auto v = (*hash16)->Embed(texts);
        json data = json::array();
        for (size_t i = 0; i < v->size(); ++i)
          data.push_back({{"index", i}, {"embedding", (*v)[i]}});
        return testing::HttpAnswer(200, json{{"data", data}}.dump());
      });
  MemoryOptions o;
  o.embedder.kind = "openai";
  o.embedder.url = server->url();
  o.embedder.model = "mini";
  o.embedder.timeout_ms = 2000;
  Fixture f(o);
  json a = f.Episode("Renewed the TLS certificate for the status page.");
  CHECK_FALSE(a.contains("note"));
  CHECK(f.Get(a["id"])["embedder"] == "openai:mini");
  json up = f.Recall(
      {{"query", "certificate renewal status page"}, {"reinforce", false}, {"explain", true}});
  CHECK(up["vector"]["used"] == true);
  REQUIRE(!up["results"].empty());
  CHECK(up["results"][0]["explain"].contains("vector"));
  server.reset();  // the endpoint goes down
  json down = f.Recall({{"query", "certificate renewal status page"}, {"reinforce", false}});
  CHECK(down["vector"]["used"] == false);
  CHECK(down["vector"]["note"].get<std::string>().find("unavailable") != std::string::npos);
  REQUIRE(!down["results"].empty());
  CHECK(down["results"][0]["id"] == a["id"]);
}

}  // namespace store_test
