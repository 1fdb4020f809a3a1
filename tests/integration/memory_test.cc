// Long-term memory through the real binary: every operation from the
// command line and over HTTP, the two agreeing; ingest of a folder;
// recall through a SIGKILL; the context bundle.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace memory_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

RunResult M(const TempDir& dir, std::vector<std::string> args, int want_exit = 0,
            const std::string& input = "") {
  args.insert(args.begin(), {"--state", dir / "state", "memory"});
  RunResult r = Limbic(args, input);
  INFO("limbic memory " << args[3] << " ... stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.exit_code == want_exit);
  return r;
}

json MJ(const TempDir& dir, std::vector<std::string> args, int want_exit = 0,
        const std::string& input = "") {
  args.push_back("--json");
  RunResult r = M(dir, std::move(args), want_exit, input);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("memory from the command line does every operation", "[memory]") {
  TempDir dir;
  json a = MJ(dir, {"remember", "alice", "works_at", "Acme", "--tag", "people"});
  CHECK(a["id"].get<std::string>().rfind("m-", 0) == 0);
  json b = MJ(dir, {"remember", "alice", "works_at", "Initech"});
  CHECK(b["superseded"] == json::array({a["id"]}));
  json e =
      MJ(dir, {"remember-episode", "The nightly backup failed twice because the disk was full.",
               "--episode", "inc-1"});
  CHECK(e["reinforced"] == false);
  CHECK(MJ(dir, {"remember-episode",
                 "The nightly backup failed twice because the disk was full."})["reinforced"] ==
        true);
  json r = MJ(dir, {"recall", "backup disk full", "-k", "3", "--explain"});
  REQUIRE(!r["results"].empty());
  CHECK(r["results"][0]["id"] == e["id"]);
  CHECK(r["results"][0].contains("explain"));
  CHECK(MJ(dir, {"recall", "where does alice work", "--kind", "fact"})["results"][0]["object"] ==
        "Initech");
  CHECK(MJ(dir, {"relate", "alice", "mentors", "bob"})["created"] == true);
  CHECK(MJ(dir, {"relate", "alice", "mentors", "bob"})["created"] == false);
  json rel = MJ(dir, {"related", "alice", "--depth", "2"});
  CHECK(rel["related"].size() == 2);  // the association and the current fact
  json stats = MJ(dir, {"stats"});
  CHECK(stats["memories"] == 3);
  CHECK(stats["superseded"] == 1);
  CHECK(stats["embedder"] == "hash-384");
  CHECK(MJ(dir, {"embed"})["embedded"] == 0);  // all have vectors already
  CHECK(MJ(dir, {"embed", "--all"})["embedded"] == 3);
  json shown = MJ(dir, {"show", e["id"]});
  CHECK(shown["episode_id"] == "inc-1");
  // export -> import into another state dir -> same memories; twice adds nothing.
  RunResult exported = M(dir, {"export"});
  TempDir other;
  CHECK(MJ(other, {"import"}, 0, exported.out)["imported"] == 4);
  CHECK(MJ(other, {"import"}, 0, exported.out)["imported"] == 0);
  CHECK(MJ(other, {"stats"})["memories"] == 3);
  RunResult bad = M(other, {"import"}, 1, "{\"version\": 1, \"memories\": [{\"id\": \"x\"}]}");
  CHECK(bad.err.find("memories[0]") != std::string::npos);
  // forget, decay
  CHECK(MJ(dir, {"forget", "--subject", "alice"})["forgotten"] == 2);
  M(dir, {"forget"}, 2);
  M(dir, {"forget", "--id", "m-999"}, 1);
  CHECK(MJ(dir, {"decay"})["deleted"] == 0);
  // A week later, everything has faded: more than half needs --force.
  std::string later = "2099-01-01T00:00:00.000Z";
  RunResult refused = M(dir, {"decay", "--now", later}, 1);
  CHECK(refused.err.find("--force") != std::string::npos);
  CHECK(MJ(dir, {"decay", "--force", "--now", later})["deleted"] == 1);
  // --quiet prints nothing.
  CHECK(M(dir, {"remember", "x", "y", "z", "--quiet"}).out.empty());
  // Bad input: a clear error, exit 1 or 2.
  M(dir, {"remember", "only", "two"}, 2);
  RunResult badkind = M(dir, {"recall", "x", "--kind", "thought"}, 2);
  CHECK(badkind.err.find("kind") != std::string::npos);
}

TEST_CASE("memory ingest of a folder skips types and dedups and filters by episode", "[memory]") {
  TempDir dir;
  std::filesystem::create_directories(dir / "docs/sub");
  std::ofstream(dir / "docs/guide.md") << "# Guide\n\nRotate the signing keys every ninety days.\n";
  std::ofstream(dir / "docs/sub/data.csv") << "name,city\nzoe,Lyon\n";
  std::ofstream(dir / "docs/image.png") << "not really a png";
  json out = MJ(dir, {"ingest", dir / "docs", "--episode", "ep-9"});
  CHECK(out["files"].size() == 2);
  CHECK(out["skipped"].size() == 1);
  json again = MJ(dir, {"ingest", dir / "docs"});
  for (const json& f : again["files"]) CHECK(f["status"] == "duplicate");
  json r = MJ(dir, {"recall", "signing keys rotation", "--episode", "ep-9"});
  REQUIRE(!r["results"].empty());
  CHECK(r["results"][0]["source"].get<std::string>().find("guide.md#0") != std::string::npos);
  RunResult missing = M(dir, {"ingest", dir / "nope.md"}, 1);
  CHECK(missing.err.find("nope.md") != std::string::npos);
  RunResult png = M(dir, {"ingest", dir / "docs/image.png"}, 1);
  CHECK(png.err.find(".pdf") != std::string::npos);  // lists what is supported
}

TEST_CASE(
    "memory over HTTP does the same and recall survives a SIGKILL and context fits its budget",
    "[memory]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["body_limit"] =
      1 << 20;  // an export with vectors is bigger than the tests' default
  config["memory"]["ingest_roots"] = {dir.path()};
  std::string id;
  {
    RunningLimbic l(dir, config);
    uint16_t port = l.port();
    auto fact = HttpJson(port, "POST", "/v1/memory/facts",
                         {{"subject", "limbic"}, {"relation", "written_in"}, {"object", "C++20"}});
    REQUIRE(fact.status == 201);
    CHECK(fact.Json()["seq"].is_number());
    auto ep = HttpJson(port, "POST", "/v1/memory/episodes",
                       {{"text", "Profiled replay: the JSON record model dominates apply time."},
                        {"tags", {"perf"}}});
    REQUIRE(ep.status == 201);
    id = ep.Json()["id"];
    CHECK(HttpJson(port, "POST", "/v1/memory/facts", {{"subject", "x"}}).status == 400);
    CHECK(HttpJson(port, "POST", "/v1/memory/episodes", {{"text", "t"}, {"bogus", 1}}).status ==
          400);
    auto recall = HttpJson(port, "POST", "/v1/memory/recall",
                           {{"query", "replay JSON profile"}, {"explain", true}});
    REQUIRE(recall.status == 200);
    CHECK(recall.Json()["results"][0]["id"] == id);
    CHECK(recall.Json()["results"][0]["access_count"] == 0);  // as it was before this recall
    auto got = Http(port, "GET", "/v1/memory/" + id);
    REQUIRE(got.status == 200);
    CHECK(got.Json()["access_count"] == 1);
    CHECK(Http(port, "GET", "/v1/memory/m-424242").status == 404);
    CHECK(HttpJson(port, "POST", "/v1/memory/associations",
                   {{"entity_a", "limbic"}, {"relation", "uses"}, {"entity_b", "RocksDB"}})
              .status == 201);
    auto related = Http(port, "GET", "/v1/memory/related?entity=limbic&depth=2");
    REQUIRE(related.status == 200);
    CHECK(related.Json()["related"].size() == 2);
    CHECK(Http(port, "GET", "/v1/memory/related?entity=limbic&depth=9").status == 400);
    CHECK(Http(port, "GET", "/v1/memory/stats").Json()["memories"] == 2);
    CHECK(HttpJson(port, "POST", "/v1/memory/decay", json::object()).Json()["deleted"] == 0);
    CHECK(HttpJson(port, "POST", "/v1/memory/embed", {{"all", true}}).Json()["embedded"] == 2);
    auto exported = Http(port, "GET", "/v1/memory/export");
    REQUIRE(exported.status == 200);
    auto imported = HttpJson(port, "POST", "/v1/memory/import", exported.Json());
    INFO(imported.body);
    CHECK(imported.Json()["imported"] == 0);
    std::ofstream(dir / "note.txt") << "The on-call rotation changes on Mondays at 9.";
    auto ingest = HttpJson(port, "POST", "/v1/memory/ingest", {{"path", dir / "note.txt"}});
    REQUIRE(ingest.status == 201);
    CHECK(ingest.Json()["files"][0]["status"] == "ingested");
    // Context: a thread in focus, the memories about its goal.
    REQUIRE(HttpJson(port, "POST", "/v1/threads", {{"goal", "speed up replay"}, {"salience", 0.9}})
                .status == 201);
    auto ctx = Http(port, "GET", "/v1/context?budget_tokens=4000");
    REQUIRE(ctx.status == 200);
    json c = ctx.Json();
    CHECK(c["thread"]["goal"] == "speed up replay");
    REQUIRE(!c["memories"].empty());
    CHECK(c["memories"][0]["id"] == id);
    CHECK(c["used_tokens"].get<int>() <= 4000);
    auto tight = Http(port, "GET", "/v1/context?query=replay&budget_tokens=30").Json();
    CHECK(tight["truncated"] == true);
    CHECK(tight["used_tokens"].get<int>() <= 30);
    auto forget = HttpJson(port, "POST", "/v1/memory/forget", {{"subject", "limbic"}});
    CHECK(forget.Json()["forgotten"] == 1);
    kill(l.child().pid(), SIGKILL);
    l.child().Wait();
  }
  // After the crash: recovered from the log, the index rebuilt.
  RunningLimbic l(dir, config);
  auto recall = HttpJson(l.port(), "POST", "/v1/memory/recall",
                         {{"query", "replay profile"}, {"reinforce", false}});
  REQUIRE(recall.status == 200);
  CHECK(recall.Json()["results"][0]["id"] == id);
  CHECK(Http(l.port(), "GET", "/v1/memory/stats").Json()["facts"] == 0);
}

TEST_CASE("ingest over HTTP reads only under memory.ingest_roots, no symlink out, no huge file",
          "[memory]") {
  TempDir dir;
  std::filesystem::create_directories(dir / "docs/sub");
  std::filesystem::create_directories(dir / "secret");
  const std::string secret = dir / "secret/creds.json";
  std::ofstream(secret) << "{\"password\": \"hunter2-zebra\"}";
  chmod(secret.c_str(), 0600);
  std::ofstream(dir / "docs/runbook.md") << "Restart the ingest worker gently.";
  std::ofstream(dir / "docs/big.txt") << std::string(5000, 'x');
  REQUIRE(symlink(secret.c_str(), (dir / "docs/creds.json").c_str()) == 0);
  REQUIRE(symlink((dir / "secret").c_str(), (dir / "docs/sub/out").c_str()) == 0);

  auto events = [&](uint16_t port) {
    return Http(port, "GET", "/v1/events?limit=10000").Json()["events"].size();
  };
  auto ingest = [&](uint16_t port, const std::string& path) {
    return HttpJson(port, "POST", "/v1/memory/ingest", {{"path", path}});
  };
  {
    // No roots (the default): refused, naming the key; nothing written.
    RunningLimbic l(dir, BaseConfig(dir));
    const size_t before = events(l.port());
    auto off = ingest(l.port(), dir / "docs/runbook.md");
    CHECK(off.status == 403);
    CHECK(off.Json()["error"]["code"] == "forbidden");
    CHECK_THAT(off.body, Catch::Contains("memory.ingest_roots"));
    CHECK(events(l.port()) == before);
  }
  json config = BaseConfig(dir);
  config["memory"]["ingest_roots"] = {dir / "docs"};
  config["memory"]["ingest_max_bytes"] = 4096;
  RunningLimbic l(dir, config);
  const uint16_t port = l.port();
  const size_t before = events(port);
  // Outside the root, by name, through "..", through a symlink: 403, nothing written.
  for (const std::string& path :
       {secret, dir / "docs/../secret/creds.json", dir / "docs/creds.json", dir / "docs/sub/out",
        dir / "missing/elsewhere.md"}) {
    auto r = ingest(port, path);
    INFO(path << " -> " << r.body);
    CHECK(r.status == 403);
    CHECK_THAT(r.body, Catch::Contains("outside memory.ingest_roots"));
  }
  CHECK(events(port) == before);
  CHECK(ingest(port, dir / "docs/nope.md").status == 404);  // inside, missing
  auto big = ingest(port, dir / "docs/big.txt");           // named directly: an error
  CHECK(big.status == 400);
  CHECK_THAT(big.body, Catch::Contains("5000 bytes, over memory.ingest_max_bytes (4096)"));
  CHECK(events(port) == before);
  // The root itself: the runbook in; the symlinks and the big file skipped by name.
  auto folder = ingest(port, dir / "docs");
  INFO(folder.body);
  REQUIRE(folder.status == 201);
  json out = folder.Json();
  REQUIRE(out["files"].size() == 1);
  CHECK(out["files"][0]["path"] == dir / "docs/runbook.md");
  std::map<std::string, std::string> skipped;
  for (const json& s : out["skipped"]) skipped[s["path"]] = s["reason"];
  CHECK(skipped[dir / "docs/creds.json"] == "symlink");
  CHECK(skipped[dir / "docs/sub/out"] == "symlink");
  CHECK(skipped[dir / "docs/big.txt"] == "5000 bytes, over memory.ingest_max_bytes (4096)");
  // The secret never made it into memory.
  auto recall = HttpJson(port, "POST", "/v1/memory/recall", {{"query", "hunter2-zebra password"}});
  CHECK_THAT(recall.Json()["results"].dump(), !Catch::Contains("hunter2"));
  CHECK(Http(port, "GET", "/v1/memory/stats").Json()["documents"] == 1);
  CHECK(Http(port, "GET", "/healthz").status == 200);
}

TEST_CASE("the command line ingests any path, but not a file over memory.ingest_max_bytes",
          "[memory]") {
  TempDir dir;
  std::ofstream(dir / "note.md") << "Anywhere on this machine.";
  std::ofstream(dir / "big.md") << std::string(5000, 'y');
  std::ofstream(dir / "limbic.json") << json{{"memory", {{"ingest_max_bytes", 4096}}}}.dump();
  CHECK(MJ(dir, {"ingest", dir / "note.md"})["files"][0]["status"] == "ingested");
  RunResult big = M(dir, {"--config", dir / "limbic.json", "ingest", dir / "big.md"}, 1);
  CHECK_THAT(big.err, Catch::Contains("5000 bytes, over memory.ingest_max_bytes (4096)"));
}

TEST_CASE(
    "recall brings associated memories with their path, the same from the command line and "
    "over HTTP",
    "[memory]") {
  TempDir dir;
  json alice = MJ(dir, {"remember", "alice", "works_at", "Initech"});
  json as = MJ(dir, {"relate", "alice", "mentors", "bob"});
  json bob = MJ(dir, {"remember", "bob", "likes", "green tea"});
  MJ(dir, {"remember", "dana", "likes", "jazz"});
  json cli = MJ(dir, {"recall", "where does alice work", "--explain", "--no-reinforce"});
  REQUIRE(cli["results"].size() == 2);
  CHECK(cli["results"][0]["id"] == alice["id"]);
  const json& hit = cli["results"][1];
  CHECK(hit["id"] == bob["id"]);
  CHECK(hit["via"] == alice["id"]);
  CHECK(hit["score"].get<double>() == Approx(0.8 * cli["results"][0]["score"].get<double>()));
  CHECK(hit["explain"]["association"]["id"] == as["id"]);
  CHECK(hit["explain"]["association"]["relation"] == "mentors");
  CHECK(hit["explain"]["association"]["factor"] == 0.8);
  // The text output names the source and the path.
  RunResult text = M(dir, {"recall", "where does alice work", "--explain", "--no-reinforce"});
  CHECK_THAT(text.out, Catch::Contains("(via " + alice["id"].get<std::string>() + ")"));
  CHECK_THAT(text.out, Catch::Contains("associated: " + alice["id"].get<std::string>()));
  CHECK_THAT(text.out, Catch::Contains("alice -mentors-> bob -> its subject \"bob\"; x 0.8"));
  CHECK(MJ(dir, {"recall", "where does alice work", "-k", "1"})["results"].size() == 1);

  RunningLimbic l(dir, BaseConfig(dir));
  auto http =
      HttpJson(l.port(), "POST", "/v1/memory/recall",
               {{"query", "where does alice work"}, {"explain", true}, {"reinforce", false}});
  REQUIRE(http.status == 200);
  // The same answer (but for the strengths' decay since: computed at each now).
  json results = http.Json()["results"];
  REQUIRE(results.size() == 2);
  CHECK(results[0]["id"] == alice["id"]);
  CHECK(results[1]["via"] == alice["id"]);
  json want = hit["explain"]["association"], got = results[1]["explain"]["association"];
  want.erase("from_score");
  got.erase("from_score");
  CHECK(got == want);
  // Forgotten, bob's fact is reached no more.
  REQUIRE(HttpJson(l.port(), "POST", "/v1/memory/forget", {{"id", bob["id"]}}).status == 200);
  auto after = HttpJson(l.port(), "POST", "/v1/memory/recall",
                        {{"query", "where does alice work"}, {"reinforce", false}});
  REQUIRE(after.Json()["results"].size() == 1);
}

}  // namespace memory_test

namespace memory_test {

TEST_CASE("memory evaluate measures a labelled set beside the BM25 baselines, and names a bad line",
          "[memory][evaluate]") {
  TempDir dir;
  const std::string small = std::string(LIMBIC_SOURCE_DIR) + "/tests/memory/data/recall_small.jsonl";
  json r = MJ(dir, {"evaluate", small});
  CHECK(r["memories"] == 20);
  CHECK(r["queries"] == 12);
  for (const char* system : {"limbic", "bm25", "bm25_stemmed"}) {
    INFO(system);
    const json& all = r["systems"][system]["overall"];
    CHECK(all["n"] == 12);
    for (const char* m : {"r1", "r5", "r10", "mrr", "ndcg10"}) CHECK(all[m].is_number());
    CHECK(r["systems"][system]["categories"].contains("paraphrase"));
  }
  CHECK(r["ratio"].contains("r10"));
  CHECK(!std::filesystem::exists(dir / "state"));  // a scratch state, removed

  RunResult text = M(dir, {"evaluate", small});
  CHECK(text.out.find("limbic / bm25_stemmed:") != std::string::npos);

  std::ofstream(dir / "bad.jsonl") << "{\"memory\": \"a\", \"text\": \"x\"}\n{\"memory\": \"b\", \"txt\": \"y\"}\n";
  RunResult bad = M(dir, {"evaluate", dir / "bad.jsonl"}, 1);
  CHECK(bad.err.find(dir / "bad.jsonl" + ":2: unknown field \"txt\"") != std::string::npos);
  RunResult twice = M(dir, {"evaluate", small, small}, 1);
  CHECK(twice.err.find("is in an earlier file too") != std::string::npos);

  std::ofstream(dir / "bad-config.json") << R"({"memory": {"analyzer": "klingon"}})";
  RunResult config = M(dir, {"--config", dir / "bad-config.json", "evaluate", small}, 1);
  CHECK(config.err.find("memory.analyzer") != std::string::npos);
}

TEST_CASE("default recall beats the stemmed BM25 by 10% on the held-out part of limbic's set",
          "[memory][evaluate][quality]") {
  // bench/recall's held-out part: never used to choose a default
  // (docs/memory.md, "Measuring recall"; docs/performance.md).
  TempDir dir;
  const std::string root = std::string(LIMBIC_SOURCE_DIR) + "/bench/recall/";
  json r = MJ(dir, {"evaluate", root + "heldout-a.jsonl", root + "heldout-b.jsonl"});
  CHECK(r["queries"] == 214);
  CHECK(r["ratio"]["r5"].get<double>() >= 1.10);
  CHECK(r["ratio"]["r10"].get<double>() >= 1.10);
  const json& limbic = r["systems"]["limbic"]["categories"];
  const json& stemmed = r["systems"]["bm25_stemmed"]["categories"];
  for (const auto& [category, figures] : limbic.items()) {
    INFO(category);
    CHECK(figures["r5"].get<double>() >= stemmed[category]["r5"].get<double>());
    CHECK(figures["r10"].get<double>() >= stemmed[category]["r10"].get<double>());
  }
}

}  // namespace memory_test

namespace memory_test {

// The HNSW graph off the commit path (docs/memory.md "Vector search"): an
// embed of many memories past memory.vector_exact_limit answers at once,
// the graph is built behind it a slice at a time (its backlog on
// /metrics), recall answers meanwhile, the graph is saved on stop and
// loaded whole at the next start, and after a SIGKILL (nothing saved) it
// is built again in the background.
TEST_CASE("the vector graph is built in the background, saved on stop, rebuilt after a SIGKILL",
          "[memory]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["body_limit"] = 8 << 20;
  config["memory"]["vector_exact_limit"] = 50;
  const int n = 3000;
  json doc = {{"version", 1}, {"memories", json::array()}, {"associations", json::array()},
              {"documents", json::array()}};
  const char* words[] = {"amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heath"};
  for (int i = 0; i < n; ++i) {
    std::string object;
    for (int w = 0; w < 4; ++w) object += std::string(w ? " " : "") + words[(i * 7 + w * 3 + i / 8) % 8];
    doc["memories"].push_back({{"id", "m-" + std::to_string(i + 1)},
                               {"kind", "fact"},
                               {"subject", "subject" + std::to_string(i)},
                               {"relation", "likes"},
                               {"object", object},
                               {"namespace", "default"},
                               {"importance", 0.5},
                               {"strength", 1.0},
                               {"access_count", 0},
                               {"created_at", "2026-11-29T09:20:12.304Z"},
                               {"last_accessed_at", "2026-11-29T09:20:12.304Z"},
                               {"tags", json::array()}});
  }
  const json query = {{"query", "subject2345 likes"}, {"k", 3}, {"reinforce", false}};
  const std::string graph = dir / "state/memory/vectors-hash-384.idx";
  {
    RunningLimbic l(dir, config);
    REQUIRE(HttpJson(l.port(), "POST", "/v1/memory/import", doc).status == 200);
    CHECK(Metric(l.port(), "limbic_memory_graph_backlog") == 0);  // exact: under no graph yet
    auto embedded = HttpJson(l.port(), "POST", "/v1/memory/embed", json::object());
    REQUIRE(embedded.status == 200);
    CHECK(embedded.Json()["embedded"] == n);
    // Committed a piece at a time (1,024 memories each), answered with the
    // totals: 256 vectors an event, as in one commit.
    CHECK(embedded.Json()["events_written"] == (n + 255) / 256);
    CHECK(embedded.Json()["seq"].get<uint64_t>() <= Http(l.port(), "GET", "/healthz").Json()["applied_seq"].get<uint64_t>());
    CHECK(embedded.Json()["seq"].get<uint64_t>() > static_cast<uint64_t>(n));  // after the import's n events
    // Answered before the graph is built: every vector waits for it.
    const double waiting = Metric(l.port(), "limbic_memory_graph_backlog");
    CHECK(waiting > 0);
    CHECK(waiting <= n);
    auto early = HttpJson(l.port(), "POST", "/v1/memory/recall", query);
    REQUIRE(early.status == 200);
    CHECK(early.Json()["results"][0]["subject"] == "subject2345");
    CHECK(early.Json()["vector"]["used"] == true);
    WaitJson(l.port(), "/v1/memory/stats", [&](const json&) {
      return Metric(l.port(), "limbic_memory_graph_backlog") == 0;
    }, 120000);
    auto late = HttpJson(l.port(), "POST", "/v1/memory/recall", query);
    CHECK(late.Json()["results"][0]["subject"] == "subject2345");
    CHECK_FALSE(std::filesystem::exists(graph));
    REQUIRE(l.child().Kill(SIGTERM) == 0);
  }
  CHECK(std::filesystem::exists(graph));  // saved on stop
  {
    RunningLimbic l(dir, config);
    CHECK(Metric(l.port(), "limbic_memory_graph_backlog") == 0);  // loaded whole
    // New vectors (a new fact) go to the graph behind the commit too.
    REQUIRE(HttpJson(l.port(), "POST", "/v1/memory/facts",
                     {{"subject", "newcomer"}, {"relation", "likes"}, {"object", "tea"}})
                .status == 201);
    WaitJson(l.port(), "/v1/memory/stats", [&](const json&) {
      return Metric(l.port(), "limbic_memory_graph_backlog") == 0;
    });
    kill(l.child().pid(), SIGKILL);
    l.child().Wait();
  }
  // The neighbouring case: with the saved graph gone (as a SIGKILL before
  // the first stop leaves it), the start queues every vector again and
  // recall answers from the first request on.
  std::filesystem::remove(graph);
  std::filesystem::remove(graph + ".ids");
  RunningLimbic l(dir, config);
  auto again = HttpJson(l.port(), "POST", "/v1/memory/recall", query);
  REQUIRE(again.status == 200);
  CHECK(again.Json()["results"][0]["subject"] == "subject2345");
  WaitJson(l.port(), "/v1/memory/stats", [&](const json&) {
    return Metric(l.port(), "limbic_memory_graph_backlog") == 0;
  }, 120000);
  CHECK(Http(l.port(), "GET", "/v1/memory/stats").Json()["memories"] == n + 1);
}

}  // namespace memory_test
