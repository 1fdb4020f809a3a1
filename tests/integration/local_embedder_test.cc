// The local sentence encoder through the real binary (issue 42): a state
// whose embedder is `local` remembers and recalls with its vectors over HTTP
// and the command line, `memory embed` after switching embedders, export and
// import, a replay to the same digest, EMBEDDING_MODEL naming a directory,
// and bad model files refused at start, naming the file. The model is a
// tiny BERT with random weights written by tests/memory/encoder/tiny_bert.py
// (numpy, Debian's python3): no model can be downloaded here.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "http.h"
#include "runtime_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace local_embedder_test {

using nlohmann::json;
using namespace limbic::testing;

namespace {

// Writes the tiny model into `dir` (a sentence-transformers directory).
void MakeModel(const std::string& dir, const std::string& extra = "") {
  const std::string cmd = "/usr/bin/python3 " LIMBIC_SOURCE_DIR "/tests/memory/encoder/tiny_bert.py make '" +
                          dir + "' --seed 3 " + extra + " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
}

json LocalConfig(const TempDir& dir, const std::string& model) {
  json c = BaseConfig(dir);
  c["api"]["body_limit"] = 1 << 20;  // exports carry vectors
  // The random weights know no meaning: every two texts are near (cosine
  // ~0.97), so near-duplicate episodes are judged on exact agreement only.
  c["memory"] = {{"embedder", {{"kind", "local"}, {"model", model}}}, {"duplicate_cosine", 0.9999}};
  return c;
}

json MemoryCli(const TempDir& dir, std::vector<std::string> args, const std::string& input = "") {
  args.insert(args.begin(), {"--state", dir / "state", "memory"});
  args.push_back("--json");
  RunResult r = Limbic(args, input);
  INFO("limbic memory " << args[3] << ": " << r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("a local embedder remembers, recalls, exports, imports and replays through the binary",
          "[memory][encoder]") {
  TempDir dir;
  const std::string model = dir / "tiny-model";
  MakeModel(model);
  const json config = LocalConfig(dir, model);
  std::string id;
  {
    RunningLimbic l(dir, config);
    REQUIRE(l.port() != 0);
    json health = Http(l.port(), "GET", "/healthz").Json();
    id = health["embedder"];
    CHECK_THAT(id, Catch::StartsWith("local:tiny-model@"));
    CHECK(l.WaitForLog("embedder " + id));
    for (const char* text : {"the cat sat on the mat", "a dog runs in the park",
                             "we ate rice in china", "the meeting is on monday"}) {
      auto r = HttpJson(l.port(), "POST", "/v1/memory/episodes", {{"text", text}});
      INFO(r.body);
      CHECK(r.status == 201);
    }
    auto fact = HttpJson(l.port(), "POST", "/v1/memory/facts",
                         {{"subject", "alice"}, {"relation", "likes"}, {"object", "tea"}});
    CHECK(fact.status == 201);
    auto recall = HttpJson(l.port(), "POST", "/v1/memory/recall",
                           {{"query", "a dog runs in the park"}, {"explain", true}});
    INFO(recall.body);
    REQUIRE(recall.status == 200);
    json r = recall.Json();
    CHECK(r["vector"]["used"] == true);
    CHECK(r["vector"]["embedder"] == id);
    REQUIRE_FALSE(r["results"].empty());
    CHECK(r["results"][0]["text"] == "a dog runs in the park");
    CHECK(r["results"][0]["explain"]["vector"].is_object());
    json stats = Http(l.port(), "GET", "/v1/memory/stats").Json();
    CHECK(stats["embedder"] == id);
    // The context bundle recalls with the same vectors, off the io thread too.
    auto context = Http(l.port(), "GET", "/v1/context?query=cat%20mat");
    CHECK(context.status == 200);
  }
  // The command line, on the same state: the same embedder, the same vectors.
  json r = MemoryCli(dir, {"--config", dir / "limbic.json", "recall", "the cat sat on the mat"});
  CHECK(r["vector"]["used"] == true);
  CHECK(r["results"][0]["text"] == "the cat sat on the mat");
  CHECK(MemoryCli(dir, {"--config", dir / "limbic.json", "embed"})["embedded"] == 0);

  // Export, then import into a fresh state: the vectors come along.
  RunResult exported = Limbic({"--state", dir / "state", "memory", "export"});
  REQUIRE(exported.exit_code == 0);
  CHECK_THAT(exported.out, Catch::Contains(id));
  TempDir other;
  std::ofstream(other / "limbic.json") << LocalConfig(other, model).dump();
  RunResult imported = Limbic({"--state", other / "state", "memory", "--config", other / "limbic.json",
                               "import", "--json"},
                              exported.out);
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(json::parse(imported.out)["imported"] == 5);
  json again = MemoryCli(other, {"--config", other / "limbic.json", "recall", "we ate rice in china"});
  CHECK(again["vector"]["used"] == true);
  CHECK(again["results"][0]["text"] == "we ate rice in china");

  // A replay of the log rebuilds the same pools: the vectors are in the events.
  const std::string digest = CliDigest(dir / "state");
  RunResult replayed =
      Limbic({"replay", "--from", dir / "state/events", "--into", dir / "replayed"});
  INFO(replayed.err);
  REQUIRE(replayed.exit_code == 0);
  CHECK(CliDigest(dir / "replayed") == digest);
}

TEST_CASE("memory embed gives a hash state's memories local vectors, with a progress line",
          "[memory][encoder]") {
  TempDir dir;
  const std::string model = dir / "tiny-model";
  MakeModel(model);
  for (int i = 0; i < 40; ++i)
    MemoryCli(dir, {"remember-episode", "note number " + std::to_string(i) + " about the park"});
  CHECK(MemoryCli(dir, {"remember", "bob", "likes", "coffee"})["id"].is_string());
  std::ofstream(dir / "local.json") << LocalConfig(dir, model).dump();
  // Under the local embedder the hash vectors are not compared: BM25 only.
  json before = MemoryCli(dir, {"--config", dir / "local.json", "recall", "the park", "--explain"});
  CHECK(before["vector"]["used"] == true);
  REQUIRE_FALSE(before["results"].empty());
  CHECK_FALSE(before["results"][0]["explain"].contains("vector"));
  RunResult embed = Limbic({"--state", dir / "state", "memory", "--config", dir / "local.json",
                            "embed", "--json"});
  INFO(embed.err);
  REQUIRE(embed.exit_code == 0);
  json e = json::parse(embed.out);
  CHECK(e["embedded"] == 41);
  CHECK_THAT(e["embedder"].get<std::string>(), Catch::StartsWith("local:tiny-model@"));
  CHECK_THAT(embed.err, Catch::Contains("embedding: 41/41 memories (100%)"));
  CHECK(MemoryCli(dir, {"--config", dir / "local.json", "embed"})["embedded"] == 0);
  json stats = MemoryCli(dir, {"--config", dir / "local.json", "stats"});
  CHECK(stats["embedder"] == e["embedder"]);
  // A fact's vector is of its text "subject relation object": found by it.
  json fact = MemoryCli(dir, {"--config", dir / "local.json", "recall", "bob likes coffee", "--kind",
                              "fact", "--explain"});
  REQUIRE_FALSE(fact["results"].empty());
  CHECK(fact["results"][0]["explain"]["vector"]["cosine"].get<double>() > 0.999);
  // The running runtime does the same through POST /v1/memory/embed.
  RunningLimbic l(dir, LocalConfig(dir, model));
  auto all = HttpJson(l.port(), "POST", "/v1/memory/embed", {{"all", true}});
  INFO(all.body);
  CHECK(all.Json()["embedded"] == 41);
}

TEST_CASE("texts with no tokens of their own are not near-duplicates of each other",
          "[memory][encoder]") {
  TempDir dir;
  const std::string model = dir / "tiny-model";
  MakeModel(model);
  json config = LocalConfig(dir, model);
  // With a prefix too: "passage: " alone would be the same text for each.
  config["memory"]["embedder"]["passage_prefix"] = "passage: ";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  // Control characters, spaces and a zero-width space are dropped by the
  // tokenizer: each text is [CLS] [SEP], and gets the zero vector.
  for (const char* text : {"\x01\x02", " \t ", "\xe2\x80\x8b"}) {
    auto r = HttpJson(l.port(), "POST", "/v1/memory/episodes", {{"text", text}});
    INFO(r.body);
    REQUIRE(r.status == 201);
    CHECK(r.Json()["reinforced"] == false);
  }
  // The neighbouring case: a text with tokens, twice, is one memory reinforced.
  auto first = HttpJson(l.port(), "POST", "/v1/memory/episodes", {{"text", "the cat sat on the mat"}});
  REQUIRE(first.status == 201);
  auto again = HttpJson(l.port(), "POST", "/v1/memory/episodes", {{"text", "the cat sat on the mat"}});
  INFO(again.body);
  CHECK(again.Json()["reinforced"] == true);
  CHECK(again.Json()["id"] == first.Json()["id"]);
}

TEST_CASE("EMBEDDING_MODEL naming a model directory selects the local embedder",
          "[memory][encoder]") {
  TempDir dir;
  const std::string model = dir / "tiny-model";
  MakeModel(model);
  ::setenv("EMBEDDING_MODEL", model.c_str(), 1);  // the children inherit it
  struct Unset {
    ~Unset() { ::unsetenv("EMBEDDING_MODEL"); }
  } unset;
  MemoryCli(dir, {"remember-episode", "the cat sat on the mat"});
  json stats = MemoryCli(dir, {"stats"});
  CHECK(stats["embedded"] == 1);
  CHECK_THAT(stats["embedder"].get<std::string>(), Catch::StartsWith("local:tiny-model@"));
  // And in the Hugging Face cache layout, by name.
  const std::string hub = dir / "hf/hub";
  const std::string snapshot = hub + "/models--acme--tiny/snapshots/0123abcd";
  std::filesystem::create_directories(hub + "/models--acme--tiny/refs");
  std::ofstream(hub + "/models--acme--tiny/refs/main") << "0123abcd";
  MakeModel(snapshot);
  ::setenv("HF_HOME", (dir / "hf").c_str(), 1);
  ::setenv("EMBEDDING_MODEL", "acme/tiny", 1);
  stats = MemoryCli(dir, {"stats"});
  CHECK_THAT(stats["embedder"].get<std::string>(), Catch::StartsWith("local:acme/tiny@"));
  ::unsetenv("HF_HOME");
}

TEST_CASE("bad model files stop the start with the file named, and never crash",
          "[memory][encoder]") {
  TempDir dir;
  const std::string model = dir / "tiny-model";
  MakeModel(model);
  std::ofstream(dir / "local.json") << LocalConfig(dir, model).dump();
  MemoryCli(dir, {"remember-episode", "made with the hash embedder"});
  auto start_error = [&] {
    RunResult r = Limbic({"--state", dir / "state", "memory", "--config", dir / "local.json", "stats"});
    CHECK(r.exit_code == 1);  // an error, not a signal
    return r.out + r.err;
  };
  const std::string weights = model + "/model.safetensors";
  const auto size = std::filesystem::file_size(weights);
  std::filesystem::copy_file(weights, dir / "good.safetensors");
  std::filesystem::resize_file(weights, size / 2);  // truncated
  CHECK_THAT(start_error(), Catch::Contains(weights) && Catch::Contains("truncated"));
  std::filesystem::remove(weights);
  CHECK_THAT(start_error(), Catch::Contains(weights));
  std::filesystem::copy_file(dir / "good.safetensors", weights);
  std::ofstream(model + "/tokenizer.json") << "{\"model\": ";  // does not parse
  CHECK_THAT(start_error(), Catch::Contains(model + "/tokenizer.json"));
  std::filesystem::remove(model + "/tokenizer.json");
  std::ofstream(model + "/vocab.txt") << "[CLS]\n[SEP]\nhello\n";  // no [UNK]
  CHECK_THAT(start_error(), Catch::Contains("vocab.txt") && Catch::Contains("[UNK]"));
  // `limbic run` says it the same way, and exits.
  RunResult run = Limbic({"--state", dir / "state", "run", "--config", dir / "local.json"});
  CHECK(run.exit_code != 0);
  CHECK_THAT(run.out + run.err, Catch::Contains("vocab.txt"));
}

}  // namespace local_embedder_test
