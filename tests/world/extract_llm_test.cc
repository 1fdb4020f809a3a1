// The llm extractor and the chat client against a local chat-completions
// server, and the validation of model answers.
#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <sstream>

#include "tests/http_server.h"
#include "base/chat.h"
#include "world/extract.h"
#include "base/time.h"

// This file's own namespace: test programs compile in unity batches.
namespace extract_llm_test {

using namespace limbic::world;
using limbic::ChatSpec;
using limbic::Complete;
using limbic::testing::ClosedPort;
using limbic::testing::HttpAnswer;
using limbic::testing::TestRequest;
using limbic::testing::TestHttpServer;
using nlohmann::json;

namespace {

const char* const kValid = R"({
  "entities": [{"name": "Alice Chen", "type": "person", "facts": ["is an engineer"]},
               {"name": "Acme Corp", "type": "company"}],
  "triplets": [{"subject": "Alice Chen", "predicate": "works at", "object": "Acme Corp"}],
  "events": [{"date": "2026-11-21", "text": "Alice Chen joined Acme Corp",
              "entities": ["Alice Chen", "Acme Corp"]}]})";

// A chat-completions answer whose message content is `content`.
std::string ChatAnswer(const std::string& content) {
  json answer = {
      {"id", "c-1"},
      {"object", "chat.completion"},
      {"choices", json::array({{{"index", 0},
                                {"message", {{"role", "assistant"}, {"content", content}}},
                                {"finish_reason", "stop"}}})}};
  return HttpAnswer(200, answer.dump());
}

// A server answering the i-th request with answers[i] (the last one after).
class ChatServer {
 public:
  explicit ChatServer(std::vector<std::string> answers)
      : answers_(std::move(answers)),
        server_([this](const TestRequest&) -> std::optional<std::string> {
          const size_t i = std::min<size_t>(count_++, answers_.size() - 1);
          return answers_[i];
        }) {}
  std::string url() const { return server_.url(); }
  std::vector<TestRequest> requests() { return server_.requests(); }

 private:
  std::vector<std::string> answers_;
  std::atomic<size_t> count_{0};
  TestHttpServer server_;  // last: its thread uses the members above
};

struct Logged {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> log =
      std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
};

ExtractorSpec LlmSpec(const std::string& url) {
  ExtractorSpec spec;
  spec.kind = "llm";
  spec.llm.url = url;
  spec.llm.model = "extract-model";
  spec.llm.api_key = "sk-test";
  spec.llm.timeout_ms = 10000;
  return spec;
}

std::unique_ptr<Extractor> Make(const ExtractorSpec& spec,
                                std::shared_ptr<spdlog::logger> log = nullptr) {
  auto e = MakeExtractor(spec, std::move(log));
  REQUIRE(e.ok());
  return std::move(e).value();
}

ExtractInput Input() {
  ExtractInput in{"2026-11-20", "notes/2026-11-20.md", "- Met Alice Chen at Acme Corp.\n", {}};
  limbic::state::Event e;
  e.type = limbic::state::EventType::kPerceptArrived;
  e.ts = *limbic::ParseTime("2026-11-20T09:00:00.000Z");
  e.fields = {{"percept_id", "p-1"},
              {"source", "github"},
              {"percept_type", "issues.opened"},
              {"intensity", 0.5},
              {"text", "crash on start"}};
  in.events.push_back(e);
  return in;
}

json Body(const TestRequest& r) {
  json body = json::parse(r.body, nullptr, false);
  REQUIRE(body.is_object());
  return body;
}

std::string UserMessage(const TestRequest& r) {
  const json body = Body(r);
  REQUIRE(body["messages"].size() == 2);
  return body["messages"][1]["content"].get<std::string>();
}

}  // namespace

TEST_CASE("llm extractor returns a valid answer and sends a chat request", "[world][llm]") {
  ChatServer server({ChatAnswer(kValid)});
  auto x = Make(LlmSpec(server.url()))->Extract(Input());
  REQUIRE(x.ok());
  CHECK(x->extractor == "llm");
  CHECK(x->note.empty());
  REQUIRE(x->entities.size() == 2);
  CHECK(x->entities[0].name == "Alice Chen");
  CHECK(x->entities[0].type == EntityType::kPerson);
  CHECK(x->entities[0].facts == std::vector<std::string>{"is an engineer"});
  CHECK(x->entities[1].type == EntityType::kCompany);
  REQUIRE(x->triplets.size() == 1);
  CHECK(x->triplets[0].predicate == "works_at");
  CHECK(x->triplets[0].date == "2026-11-20");  // the input's date when none is given
  REQUIRE(x->events.size() == 1);
  CHECK(x->events[0].date == "2026-11-21");
  CHECK(x->events[0].entities == std::vector<std::string>{"Alice Chen", "Acme Corp"});

  auto requests = server.requests();
  REQUIRE(requests.size() == 1);
  const TestRequest& r = requests[0];
  CHECK(r.method == "POST");
  CHECK(r.target == "/v1/chat/completions");
  CHECK(r.headers.at("authorization") == "Bearer sk-test");
  CHECK_THAT(r.headers.at("content-type"), Catch::Contains("application/json"));
  const json body = Body(r);
  CHECK(body["model"] == "extract-model");
  CHECK(body["temperature"] == 0);
  CHECK(body["response_format"] == json{{"type", "json_object"}});
  CHECK(body["messages"][0]["role"] == "system");
  CHECK_THAT(body["messages"][0]["content"].get<std::string>(), Catch::Contains("\"entities\""));
  CHECK(body["messages"][1]["role"] == "user");
  const std::string user = UserMessage(r);
  CHECK_THAT(user, Catch::Contains("2026-11-20") &&
                       Catch::Contains("Met Alice Chen at Acme Corp.") &&
                       Catch::Contains("percept_arrived") && Catch::Contains("crash on start"));
}

TEST_CASE("llm extractor retries once with the error appended", "[world][llm]") {
  ChatServer server({ChatAnswer(R"({"entities": [{"name": "Alice", "type": "person"},
                                                 {"name": "Paris", "type": "city"}]})"),
                     ChatAnswer(kValid)});
  auto x = Make(LlmSpec(server.url()))->Extract(Input());
  REQUIRE(x.ok());
  CHECK(x->extractor == "llm");
  CHECK(x->note.empty());
  CHECK(x->entities.size() == 2);
  auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK_THAT(UserMessage(requests[0]), !Catch::Contains("rejected"));
  CHECK_THAT(UserMessage(requests[1]),
             Catch::StartsWith(UserMessage(requests[0])) && Catch::Contains("rejected") &&
                 Catch::Contains("entities[1].type: must be one of person, company, project, tool, "
                                 "concept, got \"city\""));
}

TEST_CASE("llm extractor falls back to heuristic after two bad answers", "[world][llm]") {
  ChatServer server(
      {ChatAnswer("I think Alice works at Acme."), ChatAnswer(R"({"entities": "Alice"})")});
  Logged logged;
  auto x = Make(LlmSpec(server.url()), logged.log)->Extract(Input());
  REQUIRE(x.ok());
  CHECK(x->extractor == "heuristic");
  CHECK_THAT(x->note,
             Catch::Contains("llm failed twice") && Catch::Contains("entities: must be an array"));
  REQUIRE(x->entities.size() >= 2);  // what the heuristic extractor finds
  CHECK(x->entities[0].name == "GitHub");
  CHECK(x->entities[1].name == "Alice Chen");
  CHECK(server.requests().size() == 2);
  CHECK_THAT(UserMessage(server.requests()[1]), Catch::Contains("the answer is not JSON"));
  CHECK_THAT(logged.out.str(), Catch::Contains("warning") &&
                                   Catch::Contains("notes/2026-11-20.md") &&
                                   Catch::Contains("entities: must be an array"));
}

TEST_CASE("llm extractor falls back when the server is down", "[world][llm]") {
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  Logged logged;
  auto x = Make(LlmSpec(url), logged.log)->Extract(Input());
  REQUIRE(x.ok());
  CHECK(x->extractor == "heuristic");
  CHECK_THAT(x->note, Catch::Contains(url + "/v1/chat/completions") && Catch::Contains("connect"));
  CHECK_FALSE(x->entities.empty());
  CHECK_THAT(logged.out.str(), Catch::Contains("failed twice"));
}

TEST_CASE("llm extractor falls back after two HTTP errors", "[world][llm]") {
  ChatServer server({HttpAnswer(500, R"({"error": "model overloaded"})")});
  auto x = Make(LlmSpec(server.url()))->Extract(Input());
  REQUIRE(x.ok());
  CHECK(x->extractor == "heuristic");
  CHECK_THAT(x->note, Catch::Contains("HTTP 500") && Catch::Contains("model overloaded"));
  CHECK(server.requests().size() == 2);
}

TEST_CASE("llm extractor accepts a json fenced answer", "[world][llm]") {
  ChatServer server({ChatAnswer(std::string("```json\n") + kValid + "\n```\n")});
  auto x = Make(LlmSpec(server.url()))->Extract(Input());
  REQUIRE(x.ok());
  CHECK(x->extractor == "llm");
  CHECK(x->entities.size() == 2);
  CHECK(server.requests().size() == 1);
}

TEST_CASE("llm extractor cuts long inputs and says so", "[world][llm]") {
  ChatServer server({ChatAnswer(kValid)});
  ExtractorSpec spec = LlmSpec(server.url());
  spec.max_input_chars = 300;
  ExtractInput in = Input();
  for (int i = 0; i < 200; ++i) in.text += "- Another line about Zoë and the weather.\n";
  auto x = Make(spec)->Extract(in);
  REQUIRE(x.ok());
  CHECK(x->extractor == "llm");
  CHECK_THAT(x->note, Catch::Contains("input cut to") && Catch::Contains("of"));
  const std::string user =
      UserMessage(server.requests().at(0));  // valid UTF-8, or json::parse fails
  CHECK(user.size() <= 300);
  CHECK_THAT(user, Catch::Contains("Met Alice Chen"));
}

TEST_CASE("llm extractor refuses a bad input date without asking", "[world][llm]") {
  ChatServer server({ChatAnswer(kValid)});
  ExtractInput in = Input();
  in.date = "yesterday";
  auto x = Make(LlmSpec(server.url()))->Extract(in);
  REQUIRE_FALSE(x.ok());
  CHECK(x.status().IsInvalidArgument());
  CHECK(server.requests().empty());
}

TEST_CASE("ParseLlmExtraction errors name the element", "[world][llm]") {
  const std::pair<std::string, std::string> cases[] = {
      {"nope",
       "the answer is not JSON: syntax error at byte 2: parse error at line 1, column 2: syntax "
       "error while parsing value - invalid literal; last read: 'no'"},
      {std::string(200, '[') + std::string(200, ']'),
       "the answer is refused: JSON nested deeper than 128 (api.max_json_depth) at byte 129"},
      {"[]", "the answer is not a JSON object"},
      {R"({"entities": [{"name": "A", "type": "person"}, {"name": "B", "type": "city"}]})",
       "entities[1].type: must be one of person, company, project, tool, concept, got \"city\""},
      {R"({"entities": [{"name": "A", "type": 3}]})", "entities[0].type: must be a string"},
      {R"({"entities": [{"name": " \n\t ", "type": "person"}]})",
       "entities[0].name: must be a non-empty string"},
      {R"({"entities": ["A"]})", "entities[0]: must be an object"},
      {R"({"entities": [{"name": "A", "type": "tool", "facts": ["ok", 1]}]})",
       "entities[0].facts[1]: must be a string"},
      {R"({"triplets": [{"subject": "A", "predicate": "uses"}]})",
       "triplets[0].object: must be a non-empty string"},
      {R"({"triplets": [{"subject": "A", "predicate": "uses", "object": "B", "date": "2026-02-30"}]})",
       "triplets[0].date: must be YYYY-MM-DD, got \"2026-02-30\""},
      {R"({"events": [{"text": "ok"}, {"text": ""}]})",
       "events[1].text: must be a non-empty string"},
      {R"({"events": [{"text": "ok", "entities": "A"}]})",
       "events[0].entities: must be an array of strings"},
      {R"({"events": {}})", "events: must be an array"},
  };
  for (const auto& [answer, message] : cases) {
    INFO(answer);
    auto r = ParseLlmExtraction(answer, "2026-11-20");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK(r.status().message() == message);
  }
}

TEST_CASE("ParseLlmExtraction merges repeats and reads null as absent", "[world][llm]") {
  auto r = ParseLlmExtraction(R"({
    "entities": [{"name": "Bob", "type": "concept", "facts": ["is tall"]},
                 {"name": "**bob**", "type": "person", "facts": ["is tall", "likes Rust"]},
                 {"name": "Rust", "type": "tool", "facts": null}],
    "triplets": [{"subject": "Bob", "predicate": "Likes  A Lot", "object": "Rust", "date": null},
                 {"subject": "bob", "predicate": "likes_a_lot", "object": "rust"}],
    "events": null})",
                              "2026-11-20");
  REQUIRE(r.ok());
  CHECK(r->extractor == "llm");
  REQUIRE(r->entities.size() == 2);
  CHECK(r->entities[0].name == "Bob");
  CHECK(r->entities[0].type == EntityType::kPerson);
  CHECK(r->entities[0].facts == std::vector<std::string>{"is tall", "likes Rust"});
  REQUIRE(r->triplets.size() == 1);
  CHECK(r->triplets[0].predicate == "likes_a_lot");
  CHECK(r->triplets[0].date == "2026-11-20");
  CHECK(r->events.empty());
  CHECK(ParseLlmExtraction("{}", "2026-11-20").ok());
}

TEST_CASE("MakeExtractor names the bad field", "[world][llm]") {
  auto message = [](ExtractorSpec spec) {
    auto e = MakeExtractor(spec, nullptr);
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().IsInvalidArgument());
    return e.status().message();
  };
  ExtractorSpec spec = LlmSpec("http://127.0.0.1:9");
  auto with = [&](auto change) {
    ExtractorSpec s = spec;
    change(s);
    return s;
  };
  CHECK_THAT(message(with([](ExtractorSpec& s) { s.kind = "magic"; })),
             Catch::Contains("extractor kind \"magic\""));
  CHECK_THAT(message(with([](ExtractorSpec& s) { s.llm.url.clear(); })),
             Catch::StartsWith("extractor llm.url"));
  CHECK_THAT(message(with([](ExtractorSpec& s) { s.llm.url = "ftp://x"; })),
             Catch::StartsWith("extractor llm.url"));
  CHECK_THAT(message(with([](ExtractorSpec& s) { s.llm.model.clear(); })),
             Catch::StartsWith("extractor llm.model"));
  CHECK_THAT(message(with([](ExtractorSpec& s) { s.llm.timeout_ms = 0; })),
             Catch::StartsWith("extractor llm.timeout_ms"));
  CHECK_THAT(message(with([](ExtractorSpec& s) { s.llm.api_key = "a\r\nX: y"; })),
             Catch::StartsWith("extractor llm.api_key"));
  CHECK_THAT(message(with([](ExtractorSpec& s) { s.max_input_chars = 0; })),
             Catch::StartsWith("extractor max_input_chars"));
  CHECK(Make(spec)->kind() == "llm");
  CHECK(Make(ExtractorSpec{})->kind() == "heuristic");  // an llm spec is not needed for heuristic
}

TEST_CASE("chat client returns the content and names the endpoint on errors", "[world][llm]") {
  ChatServer ok({ChatAnswer("hello")});
  ChatSpec spec{ok.url() + "/v1/chat/completions/", "m", "", 10000};
  auto r = Complete(spec, "sys", "user", /*json_mode=*/false);
  REQUIRE(r.ok());
  CHECK(*r == "hello");
  CHECK(ok.requests().at(0).target == "/v1/chat/completions");  // not appended twice
  CHECK_FALSE(Body(ok.requests().at(0)).contains("response_format"));
  CHECK(ok.requests().at(0).headers.count("authorization") == 0);

  ChatServer status({HttpAnswer(503, "busy")});
  auto down = Complete({status.url(), "m", "", 10000}, "s", "u");
  REQUIRE_FALSE(down.ok());
  CHECK(down.status().IsUnavailable());
  CHECK(down.status().message() == "POST " + status.url() + "/v1/chat/completions: HTTP 503: busy");

  // An answer nested 100,000 deep is refused by a byte scan, not a
  // recursive parse that would overflow the stack.
  ChatServer shapes({HttpAnswer(200, "not json"), HttpAnswer(200, R"({"choices": []})"),
                     HttpAnswer(200, R"({"choices": [{"message": {"content": null}}]})"),
                     HttpAnswer(200, std::string(100000, '[') + std::string(100000, ']'))});
  for (int i = 0; i < 4; ++i) {
    auto bad = Complete({shapes.url(), "m", "", 10000}, "s", "u");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().IsCorruption());
    CHECK_THAT(bad.status().message(),
               Catch::StartsWith("POST " + shapes.url() + "/v1/chat/completions: the answer"));
  }
  CHECK(Complete({"", "m", "", 1}, "s", "u").status().IsInvalidArgument());
}

}  // namespace extract_llm_test
