// Issue 38 item 7: `limbic memory ingest` beside a running runtime reads
// any path, as it does alone (it sends the files' content), and the content
// form of POST /v1/memory/ingest that it uses stays bounded.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/base64.h"
#include "base/sha256.h"
#include "http.h"
#include "runtime_util.h"
#include "tests/make_pdf.h"

// This file's own namespace: test programs compile in unity batches.
namespace ingest_content_test {

using nlohmann::json;
using namespace limbic::testing;
namespace fs = std::filesystem;

namespace {

RunResult Memory(const std::string& state, std::vector<std::string> args, int want_exit) {
  args.insert(args.begin(), {"--state", state, "memory"});
  RunResult r = Limbic(args);
  INFO("limbic memory " << args[3] << " ... stdout: " << r.out << " stderr: " << r.err);
  REQUIRE(r.exit_code == want_exit);
  return r;
}

// A folder of every case: text inline, a PDF, a file too big for one request
// (api.body_limit 4096 in the tests' config), one that is not UTF-8, a type
// not ingested, a subfolder.
void MakeDocs(const std::string& docs) {
  fs::create_directories(docs + "/sub");
  std::ofstream(docs + "/guide.md") << "# Guide\n\nRotate the signing keys every ninety days.\n";
  std::ofstream(docs + "/paper.pdf", std::ios::binary)
      << MakePdf({"Quarterly zebra migration report", "Second page about otters"});
  std::string big;
  for (int i = 0; big.size() < 9000; ++i) big += "line " + std::to_string(i) + " of the big runbook\n";
  std::ofstream(docs + "/big.md") << big;
  std::ofstream(docs + "/bad.txt") << "ok then \xff broken";
  std::ofstream(docs + "/image.png") << "not really a png";
  std::ofstream(docs + "/sub/data.csv") << "name,city\nzoe,Lyon\n";
}

// What a memory export says of the ingested documents and chunks, without
// what depends on the clock.
json Ingested(const std::string& state) {
  json doc = json::parse(Memory(state, {"export"}, 0).out);
  json out = {{"documents", json::array()}, {"chunks", json::array()}};
  for (const json& d : doc["documents"])
    out["documents"].push_back({{"sha256", d["sha256"]}, {"source_uri", d["source_uri"]},
                                {"ext", d["ext"]}, {"bytes", d["bytes"]}, {"chunks", d["chunks"]}});
  for (const json& m : doc["memories"])
    if (m["kind"] == "chunk")
      out["chunks"].push_back({{"id", m["id"]}, {"text", m["text"]}, {"source_uri", m["source_uri"]},
                               {"chunk_index", m["chunk_index"]}, {"document", m["document"]},
                               {"embedded", m.contains("embedding")}});
  return out;
}

}  // namespace

TEST_CASE("beside a running runtime, memory ingest reads any path and does what it does alone",
          "[memory][ingest]") {
  TempDir dir;
  const std::string docs = dir / "docs";  // under no memory.ingest_roots
  MakeDocs(docs);
  const std::string alone = dir / "alone", beside = dir / "state";
  json config = BaseConfig(dir);
  // Alone: the command line ingests itself. Both state dirs start empty.
  RunResult a1 = Memory(alone, {"ingest", docs, "--episode", "ep-1", "--json"}, 1);
  RunResult a2 = Memory(alone, {"ingest", docs, "--json"}, 1);
  RunResult a3 = Memory(alone, {"ingest", docs + "/bad.txt"}, 1);
  RunResult a4 = Memory(alone, {"ingest", docs + "/guide.md"}, 0);

  RunningLimbic l(dir, config);  // on dir/state
  REQUIRE(l.port() != 0);
  REQUIRE(Http(l.port(), "GET", "/healthz").Json()["applied_seq"] == 0);
  RunResult b1 = Memory(beside, {"ingest", docs, "--episode", "ep-1", "--json"}, 1);
  RunResult b2 = Memory(beside, {"ingest", docs, "--json"}, 1);
  RunResult b3 = Memory(beside, {"ingest", docs + "/bad.txt"}, 1);
  RunResult b4 = Memory(beside, {"ingest", docs + "/guide.md"}, 0);

  // The same answers: files by their paths as listed, skips, errors, seqs.
  json first = json::parse(b1.out);
  CHECK(first == json::parse(a1.out));
  CHECK(json::parse(b2.out) == json::parse(a2.out));
  CHECK(b3.err == a3.err);
  CHECK(b4.out == a4.out);
  REQUIRE(first["files"].size() == 4);  // big, guide, paper, sub/data
  for (const json& f : first["files"]) CHECK(f["status"] == "ingested");
  CHECK(first["skipped"][0]["path"] == docs + "/image.png");
  REQUIRE(first["errors"].size() == 1);
  CHECK(first["errors"][0]["path"] == docs + "/bad.txt");
  CHECK_THAT(first["errors"][0]["error"].get<std::string>(),
             Catch::Contains(docs + "/bad.txt: not UTF-8 at byte offset 8"));
  for (const json& f : json::parse(b2.out)["files"]) CHECK(f["status"] == "duplicate");
  CHECK_THAT(b3.err, Catch::Contains("bad.txt: not UTF-8 at byte offset 8"));
  CHECK_THAT(b4.out, Catch::Contains("duplicate"));
  // The same documents and memories, ids included; the PDF read by the runtime.
  json alone_state = Ingested(alone), beside_state = Ingested(beside);
  CHECK(beside_state == alone_state);
  CHECK(beside_state["documents"].size() == 4);
  CHECK_THAT(beside_state.dump(), Catch::Contains("Quarterly zebra migration report"));
  // The big file went by its SHA-256: its original was kept first, once.
  const std::string big_sha = limbic::Sha256::Hex([&] {
    std::ifstream in(docs + "/big.md");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }());
  CHECK(fs::exists(beside + "/memory/raw/" + big_sha + ".md"));
  CHECK(Http(l.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("ingest of sent content is bounded: names, base64, sizes, kept originals, no symlink",
          "[memory][ingest]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["body_limit"] = 1 << 20;
  config["memory"]["ingest_max_bytes"] = 4096;
  RunningLimbic l(dir, config);
  const uint16_t port = l.port();
  REQUIRE(port != 0);
  auto ingest = [&](const json& body) { return HttpJson(port, "POST", "/v1/memory/ingest", body); };
  auto file = [](const std::string& name, const std::string& bytes) {
    return json{{"name", name}, {"content", limbic::Base64Encode(bytes)}};
  };
  auto one = [](json entry) { return json{{"files", json::array({std::move(entry)})}}; };

  // No memory.ingest_roots, yet content is taken: it reads nothing here.
  auto ok = ingest({{"files", json::array({file("notes.md", "Otters hold hands while sleeping."),
                                           file("/a/b/../c/plan.txt", "The plan has three steps.")})}});
  REQUIRE(ok.status == 201);
  CHECK(ok.Json()["files"][0]["path"] == "notes.md");
  json exported = Http(port, "GET", "/v1/memory/export").Json();
  std::set<std::string> uris;
  for (const json& d : exported["documents"]) uris.insert(d["source_uri"].get<std::string>());
  CHECK(uris == std::set<std::string>{"notes.md", "/a/c/plan.txt"});
  // Again: duplicates, nothing written.
  auto again = ingest(one(file("other-name.md", "Otters hold hands while sleeping.")));
  CHECK(again.status == 200);
  CHECK(again.Json()["files"][0]["status"] == "duplicate");

  // Request errors: 400 naming the field.
  struct Bad {
    json body;
    std::string mention;
  };
  json with_path = one(file("a.md", "x"));
  with_path["path"] = "/etc";
  json bad_episode = one(file("a.md", "x"));
  bad_episode["episode_id"] = "not an id!";
  const std::vector<Bad> bad = {
      {{{"files", json::array()}}, "field \"files\": must be a list of 1-1000"},
      {one({{"name", "a.md"}, {"content", "!!!!"}}),
       "field \"files[0].content\": not base64 at byte 0"},
      {one({{"name", "a\x01.md"}, {"content", ""}}),
       "field \"files[0].name\": must be 1-4096 bytes of UTF-8 without control or "
       "bidi-control characters; U+0001 (a control character) at byte 1"},
      {one({{"name", std::string(5000, 'a') + ".md"}, {"content", ""}}),
       "field \"files[0].name\": must be 1-4096 bytes of UTF-8 without control or "
       "bidi-control characters; 5003 bytes"},
      {one({{"name", "a.md"}}), "give one of content (base64) and sha256"},
      {one({{"name", "a.md"}, {"content", ""}, {"sha256", std::string(64, 'a')}}),
       "give one of content"},
      {one({{"name", "a.md"}, {"sha256", "../../etc/passwd"}}),
       "field \"files[0].sha256\": must be 64 lower-case hex digits"},
      {one({{"name", "a.md"}, {"content", ""}, {"path", "/etc"}}), "field \"files[0].path\": unknown"},
      {with_path, "give one of \"path\""},
      {bad_episode, "field \"episode_id\""},
  };
  for (const Bad& b : bad) {
    INFO(b.body.dump().substr(0, 120));
    auto reply = ingest(b.body);
    CHECK(reply.status == 400);
    CHECK_THAT(reply.Json()["error"]["message"].get<std::string>(), Catch::Contains(b.mention));
  }
  json many = json::array();
  for (int i = 0; i < 1001; ++i) many.push_back(file("f" + std::to_string(i) + ".md", "x"));
  CHECK(ingest({{"files", many}}).status == 400);
  CHECK(ingest(one(file("huge.md", std::string(2 << 20, 'h')))).status == 413);

  // A file's own trouble is listed in errors, the others ingested.
  const std::string secret = dir / "secret.md";
  std::ofstream(secret) << "hunter2-zebra is the password";
  const std::string secret_sha = limbic::Sha256::Hex(std::string("hunter2-zebra is the password"));
  const std::string raw = dir / "state/memory/raw";
  fs::create_directories(raw);
  REQUIRE(symlink(secret.c_str(), (raw + "/" + secret_sha + ".md").c_str()) == 0);
  auto mixed = ingest(
      {{"files", json::array({file("big.md", std::string(5000, 'y')), file("image.png", "png"),
                              file("bad.txt", "a\xff"), file("fine.md", "A fine file about lemurs."),
                              json{{"name", "kept.md"}, {"sha256", std::string(64, 'b')}},
                              json{{"name", "link.md"}, {"sha256", secret_sha}}})}});
  REQUIRE(mixed.status == 201);
  json answer = mixed.Json();
  REQUIRE(answer["files"].size() == 1);
  CHECK(answer["files"][0]["path"] == "fine.md");
  std::map<std::string, std::string> errors;
  for (const json& e : answer["errors"]) errors[e["path"]] = e["error"];
  CHECK_THAT(errors["big.md"], Catch::Contains("5000 bytes, over memory.ingest_max_bytes (4096)"));
  CHECK_THAT(errors["image.png"], Catch::Contains("unsupported type .png"));
  CHECK_THAT(errors["bad.txt"], Catch::Contains("not UTF-8 at byte offset 1"));
  CHECK_THAT(errors["kept.md"], Catch::Contains("is not kept in"));
  CHECK_THAT(errors["link.md"], Catch::Contains("is not kept in"));
  CHECK(errors.size() == 5);
  auto recall = HttpJson(port, "POST", "/v1/memory/recall", {{"query", "hunter2-zebra password"}});
  CHECK_THAT(recall.Json()["results"].dump(), !Catch::Contains("hunter2"));
  CHECK(Http(port, "GET", "/healthz").status == 200);
}

// Issue 42: EMBEDDING_MODEL naming a model that is neither a directory nor
// in the Hugging Face cache (and no server to send it to) stops the start,
// saying where it looked -- never a silent fallback to the hash embedder.
TEST_CASE("EMBEDDING_MODEL that names no model found is an error at start", "[memory]") {
  TempDir dir;
  ::setenv("EMBEDDING_MODEL", "some/model", 1);  // the children inherit it
  ::setenv("HF_HOME", (dir / "hf").c_str(), 1);
  struct Unset {
    ~Unset() {
      ::unsetenv("EMBEDDING_MODEL");
      ::unsetenv("HF_HOME");
    }
  } unset;
  RunResult run = Limbic({"--state", dir / "state", "memory", "remember-episode", "hello"});
  CHECK(run.exit_code != 0);
  CHECK_THAT(run.out + run.err, Catch::Contains("EMBEDDING_MODEL=some/model") &&
                                    Catch::Contains(dir / "hf/hub/models--some--model") &&
                                    Catch::Contains("memory.embedder.url"));
  ::unsetenv("EMBEDDING_MODEL");
  RunResult ok = Limbic({"--state", dir / "state", "memory", "remember-episode", "hello", "--json"});
  CHECK(ok.exit_code == 0);
  ok = Limbic({"--state", dir / "state", "memory", "stats", "--json"});
  CHECK(ok.exit_code == 0);
  CHECK(json::parse(ok.out)["embedder"] == "hash-384");
}

}  // namespace ingest_content_test
