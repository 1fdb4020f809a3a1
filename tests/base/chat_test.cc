// The chat-completions client (base/chat.h): a conversation with tools
// against a scripted OpenAI-compatible server on loopback, and what it
// does with answers it must not trust.
#include "base/chat.h"

#include <catch2/catch.hpp>

#include "http_server.h"

// This file's own namespace: test programs compile in unity batches.
namespace chat_test {

using namespace limbic;
using limbic::testing::HttpAnswer;
using limbic::testing::TestHttpServer;
using limbic::testing::TestRequest;
using nlohmann::json;

ChatSpec Spec(const TestHttpServer& server) { return {server.url(), "m", "sk-secret", 5000}; }

TEST_CASE("chat sends the conversation and the tools and reads tool calls and usage", "[chat]") {
  TestHttpServer server([](const TestRequest&) -> std::optional<std::string> {
    json answer = {{"choices",
                    {{{"finish_reason", "tool_calls"},
                      {"message",
                       {{"role", "assistant"},
                        {"content", nullptr},
                        {"tool_calls",
                         {{{"id", "call_1"},
                           {"type", "function"},
                           {"function", {{"name", "create_thread"}, {"arguments", "{\"goal\":\"x\"}"}}}},
                          {{"id", "call_2"},
                           {"type", "function"},
                           {"function", {{"name", "recall"}, {"arguments", {{"query", "y"}}}}}}}}}}}}},
                   {"usage", {{"prompt_tokens", 120}, {"completion_tokens", 17}}}};
    return HttpAnswer(200, answer.dump());
  });
  const json messages = {{{"role", "system"}, {"content", "you act"}}, {{"role", "user"}, {"content", "go"}}};
  const json tools = {{{"type", "function"},
                       {"function", {{"name", "create_thread"}, {"parameters", {{"type", "object"}}}}}}};
  auto turn = Chat(Spec(server), messages, tools);
  REQUIRE(turn.ok());
  CHECK(turn->content.empty());
  CHECK(turn->finish_reason == "tool_calls");
  REQUIRE(turn->tool_calls.size() == 2);
  CHECK(turn->tool_calls[0].id == "call_1");
  CHECK(turn->tool_calls[0].name == "create_thread");
  CHECK(turn->tool_calls[0].arguments == "{\"goal\":\"x\"}");
  CHECK(json::parse(turn->tool_calls[1].arguments) == json{{"query", "y"}});  // an object, as text
  CHECK(turn->prompt_tokens == 120);
  CHECK(turn->completion_tokens == 17);
  auto sent = server.requests();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].target == "/v1/chat/completions");
  CHECK(sent[0].headers["authorization"] == "Bearer sk-secret");
  const json body = json::parse(sent[0].body);
  CHECK(body["model"] == "m");
  CHECK(body["messages"] == messages);
  CHECK(body["tools"] == tools);
  CHECK(!body.contains("response_format"));
}

TEST_CASE("chat without tools sends none, and reads a plain answer", "[chat]") {
  TestHttpServer server([](const TestRequest&) -> std::optional<std::string> {
    return HttpAnswer(200, R"({"choices":[{"finish_reason":"stop","message":{"content":"done"}}]})");
  });
  auto turn = Chat(Spec(server), json::array({{{"role", "user"}, {"content", "hi"}}}), json::array());
  REQUIRE(turn.ok());
  CHECK(turn->content == "done");
  CHECK(turn->tool_calls.empty());
  CHECK(turn->prompt_tokens == 0);
  CHECK(!json::parse(server.requests()[0].body).contains("tools"));
}

TEST_CASE("a 429's Retry-After is handed back, and other failures are Unavailable", "[chat]") {
  int status = 429;
  std::string retry = "Retry-After: 7\r\n";
  TestHttpServer server([&](const TestRequest&) -> std::optional<std::string> {
    return HttpAnswer(status, R"({"error":"slow down"})", "Content-Type: application/json\r\n" + retry);
  });
  const json one = json::array({{{"role", "user"}, {"content", "hi"}}});
  TimeMs wait = -1;
  auto r = Chat(Spec(server), one, json::array(), &wait);
  REQUIRE(r.status().IsUnavailable());
  CHECK(r.status().message().find("HTTP 429") != std::string::npos);
  CHECK(wait == 7000);
  status = 500;
  wait = -1;
  CHECK(Chat(Spec(server), one, json::array(), &wait).status().IsUnavailable());
  CHECK(wait == -1);  // only 429 and 503 say when to come back
  status = 429;
  retry = "Retry-After: Wed, 21 Oct 2026 07:28:00 GMT\r\n";
  CHECK(!Chat(Spec(server), one, json::array(), &wait).ok());
  CHECK(wait == -1);  // a date is not waited on
  CHECK(Chat({"", "m", "", 1}, one, json::array()).status().IsInvalidArgument());
}

TEST_CASE("chat in two halves: the call to make, and the turn read from its reply", "[chat]") {
  const json one = json::array({{{"role", "user"}, {"content", "hi"}}});
  const json tools = json::array({{{"type", "function"}, {"function", {{"name", "why"}}}}});
  auto call = ChatCall({"http://127.0.0.1:9/v1", "m", "sk-secret", 1234}, one, tools);
  REQUIRE(call.ok());
  CHECK(call->method == "POST");
  CHECK(call->url == "http://127.0.0.1:9/v1/chat/completions");
  CHECK(call->timeout_ms == 1234);
  CHECK(json::parse(call->body)["tools"] == tools);
  bool bearer = false;
  for (const auto& [name, value] : call->headers) bearer = bearer || (name == "Authorization" && value == "Bearer sk-secret");
  CHECK(bearer);
  CHECK(ChatCall({"ftp://x", "m", "", 1}, one, tools).status().IsInvalidArgument());

  const ChatSpec spec{"http://127.0.0.1:9", "m", "", 1000};
  HttpReply reply;
  reply.result.status = 200;
  reply.result.body = R"({"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}})";
  auto turn = ReadChatAnswer(spec, reply);
  REQUIRE(turn.ok());
  CHECK(turn->content == "ok");
  CHECK(turn->prompt_tokens == 3);
  // Arguments that are a JSON value rather than its text are checked as
  // that value (an array is no object); a count past kMaxTokenCount is capped.
  reply.result.body =
      R"({"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"t","arguments":[1,2]}},)"
      R"({"id":"b","function":{"name":"t","arguments":5}}]}}],"usage":{"prompt_tokens":18446744073709551615}})";
  auto odd = ReadChatAnswer(spec, reply);
  REQUIRE(odd.ok());
  REQUIRE(odd->tool_calls.size() == 2);
  CHECK(odd->tool_calls[0].arguments == "[1,2]");
  CHECK(odd->tool_calls[1].arguments == "5");
  CHECK(odd->prompt_tokens == kMaxTokenCount);
  reply.result.status = 429;
  reply.result.headers["retry-after"] = "2";
  TimeMs wait = -1;
  CHECK(ReadChatAnswer(spec, reply, &wait).status().IsUnavailable());
  CHECK(wait == 2000);
  reply.status = Status::Unavailable("POST x: read: timed out after 1000 ms");  // a transport failure
  CHECK(ReadChatAnswer(spec, reply).status().message() == "POST x: read: timed out after 1000 ms");
}

TEST_CASE("answers of the wrong shape, or nested 100,000 deep, are Corruption", "[chat]") {
  std::string body;
  TestHttpServer server([&](const TestRequest&) -> std::optional<std::string> {
    return HttpAnswer(200, body);
  });
  const json one = json::array({{{"role", "user"}, {"content", "hi"}}});
  for (const std::string& bad :
       {std::string(100000, '[') + std::string(100000, ']'), std::string("{\"choices\": []}"),
        std::string(R"({"choices":[{"message":{"content":5}}]})"),
        std::string(R"({"choices":[{"message":{"tool_calls":{"a":1}}}]})"),
        std::string(R"({"choices":[{"message":{"tool_calls":[{"function":{"arguments":"{}"}}]}}]})"),
        std::string("not json")}) {
    INFO(bad.substr(0, 80));
    body = bad;
    auto r = Chat(Spec(server), one, json::array());
    REQUIRE(!r.ok());
    CHECK(r.status().IsCorruption());
    CHECK(r.status().message().find("sk-secret") == std::string::npos);
  }
}

}  // namespace chat_test
