#include "memory/embedder.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/http_server.h"

// This file's own namespace: test programs compile in unity batches.
namespace embedder_test {

using namespace limbic::memory;
using limbic::testing::ClosedPort;
using limbic::testing::HttpAnswer;
using limbic::testing::TestRequest;
using limbic::testing::TestHttpServer;
using nlohmann::json;

namespace {

std::unique_ptr<Embedder> Make(const EmbedderSpec& spec) {
  auto e = MakeEmbedder(spec);
  REQUIRE(e.ok());
  return std::move(e).value();
}

Vector EmbedOne(Embedder& e, const std::string& text) {
  auto v = e.Embed(std::vector<std::string>{text});
  REQUIRE(v.ok());
  REQUIRE(v->size() == 1);
  return v->at(0);
}

EmbedderSpec Hash(size_t dims) {
  EmbedderSpec spec;
  spec.dims = dims;
  return spec;
}

EmbedderSpec OpenAi(std::string url, std::string model = "m") {
  EmbedderSpec spec;
  spec.kind = "openai";
  spec.url = std::move(url);
  spec.model = std::move(model);
  return spec;
}

// `spec` with one field changed: `With(spec, &EmbedderSpec::batch, 2)`.
template <typename T, typename V>
EmbedderSpec With(EmbedderSpec spec, T EmbedderSpec::*field, V value) {
  spec.*field = std::move(value);
  return spec;
}

double Length(const Vector& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

}  // namespace

TEST_CASE("hash embedder: unit vectors stable across runs and versions", "[memory]") {
  auto e = Make({});
  CHECK(e->id() == "hash-384");
  Vector v = EmbedOne(*e, "Limbic remembers what happened");
  REQUIRE(v.size() == 384);
  CHECK(Length(v) == Approx(1.0).epsilon(1e-5));
  CHECK(EmbedOne(*Make({}), "Limbic remembers what happened") == v);
  CHECK(EmbedOne(*e, "LIMBIC remembers, what happened!") == v);  // case and punctuation
  // Pinned: a change here changes every stored vector and needs a new id().
  // The values were computed by an independent transcription of the
  // grammar at the top of embedder.cc.
  CHECK(EncodeVector(EmbedOne(*Make(Hash(8)), "hello world")) == "swEePrMBHj6zAZ4+swEePwAAAAAAAAAAswEeP7MBnj4=");
  CHECK(EncodeVector(EmbedOne(*Make(Hash(16)), "Café au lait, café noir")) ==
        "AAAAADrNEz86zRM+Os0TPjrNEz46zRO/Os0TvgAAAAAAAAAAOs2TPjrNE74AAAAAOs0TvjrNk746zRM+Os0Tvg==");
}

TEST_CASE("hash embedder: texts sharing words are close and unrelated texts are not", "[memory]") {
  auto e = Make({});
  Vector a = EmbedOne(*e, "the deployment failed because the database was down");
  Vector b = EmbedOne(*e, "deployment failures when the databases are down");
  Vector c = EmbedOne(*e, "grandmother baked apple pie for the picnic");
  CHECK(Cosine(a, b) > 0.3f);
  CHECK(Cosine(a, b) > Cosine(a, c) + 0.2f);
  CHECK(Cosine(b, c) < 0.2f);
}

TEST_CASE("hash embedder: an empty or featureless text is the zero vector", "[memory]") {
  auto e = Make(Hash(16));
  CHECK(e->id() == "hash-16");
  auto v = e->Embed(std::vector<std::string>{"", " ,.;! ", "x"});
  REQUIRE(v.ok());
  REQUIRE(v->size() == 3);
  CHECK((*v)[0] == Vector(16, 0.0f));
  CHECK((*v)[1] == Vector(16, 0.0f));
  CHECK(Length((*v)[2]) == Approx(1.0).epsilon(1e-5));
  CHECK(e->Embed(std::vector<std::string>{})->empty());
}

TEST_CASE("MakeEmbedder rejects a bad spec naming the field", "[memory]") {
  auto field = [](EmbedderSpec spec) {
    auto e = MakeEmbedder(spec);
    REQUIRE(e.status().IsInvalidArgument());
    return e.status().message();
  };
  CHECK_THAT(field(With(EmbedderSpec{}, &EmbedderSpec::kind, "word2vec")), Catch::Contains("kind"));
  CHECK_THAT(field(Hash(7)), Catch::Contains("dims"));
  EmbedderSpec local;
  local.kind = "local";
  local.model = "/nonexistent-model";
  CHECK_THAT(field(With(local, &EmbedderSpec::max_tokens, size_t{1})), Catch::Contains("max_tokens"));
  // max_tokens 2 passes that check: the model is looked for (and not found).
  CHECK(MakeEmbedder(With(local, &EmbedderSpec::max_tokens, size_t{2})).status().IsNotFound());
  CHECK_THAT(field(OpenAi("")), Catch::Contains("url"));
  CHECK_THAT(field(OpenAi("http://127.0.0.1:1", "")), Catch::Contains("model"));
  CHECK_THAT(field(OpenAi("ftp://h")), Catch::Contains("url"));
  CHECK_THAT(field(With(OpenAi("http://h"), &EmbedderSpec::timeout_ms, 0)),
             Catch::Contains("timeout_ms"));
  CHECK_THAT(field(With(OpenAi("http://h"), &EmbedderSpec::batch, 0)), Catch::Contains("batch"));
}

TEST_CASE("EMBEDDING_MODEL overrides the configured model", "[memory]") {
  EmbedderSpec with_url = With(OpenAi("http://127.0.0.1:11434", "old"), &EmbedderSpec::kind, "hash");
  const std::string home = ::getenv("HOME") ? ::getenv("HOME") : "";
  ::setenv("HOME", "/nonexistent-home", 1);  // no Hugging Face cache to find anything in
  ::unsetenv("HF_HOME");
  ::unsetenv("HF_HUB_CACHE");
  ::unsetenv("HUGGINGFACE_HUB_CACHE");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("EMBEDDING_MODEL");
  CHECK(ApplyEmbeddingEnv(with_url)->kind == "hash");
  ::setenv("EMBEDDING_MODEL", "", 1);
  CHECK(ApplyEmbeddingEnv(with_url)->model == "old");
  // A name the server knows: with a url, it is the server's model.
  ::setenv("EMBEDDING_MODEL", "nomic-embed-text", 1);
  auto s = ApplyEmbeddingEnv(with_url);
  REQUIRE(s.ok());
  CHECK(s->kind == "openai");
  CHECK(s->model == "nomic-embed-text");
  // Without a url and not found as a model: an error saying where it looked.
  s = ApplyEmbeddingEnv(EmbedderSpec{});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().IsNotFound());
  CHECK_THAT(s.status().message(),
             Catch::Contains("EMBEDDING_MODEL=nomic-embed-text") &&
                 Catch::Contains("/nonexistent-home/.cache/huggingface/hub/"
                                 "models--nomic-embed-text/snapshots/") &&
                 Catch::Contains("models--sentence-transformers--nomic-embed-text") &&
                 Catch::Contains("memory.embedder.url"));
  // A directory: local, whatever was configured (but an openai server's).
  ::setenv("EMBEDDING_MODEL", LIMBIC_MEMORY_TEST_DATA, 1);
  s = ApplyEmbeddingEnv(EmbedderSpec{});
  REQUIRE(s.ok());
  CHECK(s->kind == "local");
  CHECK(s->model == LIMBIC_MEMORY_TEST_DATA);
  // A file is not a model directory, and the error says so.
  const std::string file = std::string(LIMBIC_MEMORY_TEST_DATA) + "/recall_small.jsonl";
  ::setenv("EMBEDDING_MODEL", file.c_str(), 1);
  s = ApplyEmbeddingEnv(EmbedderSpec{});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.status().message(), Catch::Contains(file + " (not a directory)"));
  ::setenv("EMBEDDING_MODEL", "hash", 1);
  CHECK(ApplyEmbeddingEnv(OpenAi("http://h"))->kind == "hash");
  // A local spec with an E5 model's prefixes becomes a hash spec that
  // MakeEmbedder takes: the prefixes were the model's.
  EmbedderSpec e5;
  e5.kind = "local";
  e5.model = "intfloat/e5-small-v2";
  e5.query_prefix = "query: ";
  e5.passage_prefix = "passage: ";
  s = ApplyEmbeddingEnv(e5);
  REQUIRE(s.ok());
  CHECK(s->kind == "hash");
  CHECK(s->query_prefix.empty());
  CHECK(s->passage_prefix.empty());
  CHECK(MakeEmbedder(*s).ok());
  ::unsetenv("EMBEDDING_MODEL");
  ::setenv("HOME", home.c_str(), 1);
}

namespace {

// POST /v1/embeddings: the vector of a text is {length, 1, 0}, answered in
// reverse order with indexes, as servers may.
std::optional<std::string> FakeEmbeddings(const TestRequest& req) {
  if (req.method != "POST" || req.target != "/v1/embeddings") return HttpAnswer(404, "{}");
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body["input"].is_array()) return HttpAnswer(400, "{}");
  json data = json::array();
  for (size_t i = body["input"].size(); i-- > 0;) {
    const std::string text = body["input"][i];
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", {double(text.size()), 1.0, 0.0}}});
  }
  return HttpAnswer(200, json{{"object", "list"}, {"data", data}}.dump());
}

}  // namespace

TEST_CASE("openai embedder sends batches with the key and orders answers by index", "[memory]") {
  TestHttpServer server(FakeEmbeddings);
  auto e = Make(With(With(OpenAi(server.url() + "/", "m1"), &EmbedderSpec::api_key, "k"), &EmbedderSpec::batch, 2));
  CHECK(e->id() == "openai:m1");
  std::vector<std::string> texts{"a", "bb", "", "dddd", "eeeee", "ffffff"};
  auto v = e->Embed(texts);
  REQUIRE(v.ok());
  REQUIRE(v->size() == 6);
  for (size_t i = 0; i < texts.size(); ++i) {
    INFO(i);
    if (texts[i].empty()) {
      CHECK((*v)[i] == Vector(3, 0.0f));  // not sent; zero of the others' length
      continue;
    }
    const float n = float(texts[i].size()), len = std::sqrt(n * n + 1);
    CHECK((*v)[i][0] == Approx(n / len));
    CHECK((*v)[i][1] == Approx(1 / len));
  }
  auto seen = server.requests();
  REQUIRE(seen.size() == 3);  // 5 non-empty texts in batches of 2
  CHECK(json::parse(seen[0].body) == json{{"model", "m1"}, {"input", {"a", "bb"}}});
  CHECK(json::parse(seen[1].body)["input"] == json{"dddd", "eeeee"});
  CHECK(json::parse(seen[2].body)["input"] == json{"ffffff"});
  for (auto& r : seen) CHECK(r.headers["authorization"] == "Bearer k");

  // A URL that already ends with the path is used as it is; no key, no header.
  auto plain = Make(OpenAi(server.url() + "/v1/embeddings", "m2"));
  REQUIRE(plain->Embed(std::vector<std::string>{"x"}).ok());
  CHECK(server.requests().back().headers.count("authorization") == 0);
}

TEST_CASE("openai embedder: a bad answer or endpoint is an error", "[memory]") {
  auto embed = [](const std::string& answer) {
    TestHttpServer server([&](const TestRequest&) { return answer; });
    auto e = Make(OpenAi(server.url()));
    return e->Embed(std::vector<std::string>{"one", "two"}).status();
  };
  auto item = [](int index, json embedding) { return json{{"index", index}, {"embedding", embedding}}; };
  auto answer = [](json data) { return HttpAnswer(200, json{{"data", data}}.dump()); };

  CHECK(embed(HttpAnswer(500, "{\"error\":\"overloaded\"}")).IsUnavailable());
  CHECK(embed(HttpAnswer(200, "not json")).IsUnavailable());
  // Nested 100,000 deep: refused by a byte scan, never a recursive parse.
  limbic::Status deep = embed(HttpAnswer(200, std::string(100000, '[') + std::string(100000, ']')));
  CHECK(deep.IsUnavailable());
  CHECK_THAT(deep.message(), Catch::Contains("the answer is refused: JSON nested deeper than 128"));
  CHECK(embed(HttpAnswer(200, "{\"embeddings\":[]}")).IsUnavailable());
  CHECK(embed(answer({item(0, {1, 2}), item(1, {1, "x"})})).IsUnavailable());
  CHECK(embed(answer({item(0, {1, 2}), item(1, json::array())})).IsUnavailable());
  CHECK(embed(answer({item(0, {1, 2}), {{"index", 1}}})).IsUnavailable());
  CHECK(embed(answer({item(0, {1, 2})})).IsCorruption());                  // 1 vector for 2 texts
  CHECK(embed(answer({item(0, {1, 2}), item(1, {1, 2, 3})})).IsCorruption());  // dims differ
  CHECK(embed(answer({item(0, {1, 2}), item(0, {1, 2})})).IsCorruption());     // index repeated
  CHECK(embed(answer({item(0, {1, 2}), item(1, {3, 4})})).ok());

  SECTION("endpoint down") {
    const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
    auto s = Make(OpenAi(url))->Embed(std::vector<std::string>{"x"}).status();
    REQUIRE(s.IsUnavailable());
    CHECK_THAT(s.message(), Catch::Contains(url + "/v1/embeddings: connect"));
  }
  SECTION("endpoint silent past the timeout") {
    TestHttpServer server([](const TestRequest&) { return std::nullopt; });
    auto e = Make(With(OpenAi(server.url()), &EmbedderSpec::timeout_ms, 300));
    CHECK(e->Embed(std::vector<std::string>{"x"}).status().IsUnavailable());
  }
}

}  // namespace embedder_test
