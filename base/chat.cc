#include "base/chat.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "base/http_client.h"
#include "base/input_json.h"

namespace limbic {
namespace {

using nlohmann::json;

// The URL to POST to: http_client.h's rule, the same as the embedder's.
std::string Endpoint(const std::string& url) { return OpenAiEndpoint(url, "/chat/completions"); }

// Retry-After in seconds (an HTTP date is not waited on: the caller's own
// backoff applies), at most a day.
void ReadRetryAfter(const HttpResult& res, TimeMs* retry_after_ms) {
  if (retry_after_ms == nullptr || (res.status != 429 && res.status != 503)) return;
  auto it = res.headers.find("retry-after");
  if (it == res.headers.end()) return;
  uint64_t seconds = 0;
  const std::string& v = it->second;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (ec != std::errc() || end != v.data() + v.size()) return;
  *retry_after_ms = static_cast<TimeMs>(std::min<uint64_t>(seconds, 86400) * 1000);
}

// The POST of `body` to the chat endpoint.
Result<HttpCall> PostCall(const ChatSpec& spec, const json& body) {
  LIMBIC_RETURN_IF_ERROR(CheckChatSpec(spec));
  HttpCall call;
  call.method = "POST";
  call.url = Endpoint(spec.url);
  call.timeout_ms = spec.timeout_ms;
  // Texts are not always valid UTF-8; replacing bad bytes beats failing.
  call.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  call.headers.emplace_back("Accept", "application/json");
  if (!spec.api_key.empty()) call.headers.emplace_back("Authorization", "Bearer " + spec.api_key);
  return call;
}

// `text` with every occurrence of `secret` replaced: a server may echo the
// key it refuses in its error, which goes on into events and log lines.
std::string Redacted(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
    text.replace(at, secret.size(), "[api key]");
  return text;
}

// The answer's first choice's message, with the whole answer in `answer`.
Result<const json*> ReadAnswer(const std::string& endpoint, const std::string& api_key,
                               const HttpResult& res, json* answer, TimeMs* retry_after_ms) {
  const std::string where = "POST " + endpoint;
  if (res.status < 200 || res.status > 299) {
    ReadRetryAfter(res, retry_after_ms);
    // Redacted before it is cut: a key cut in two would not be found.
    return Status::Unavailable(where + ": HTTP " + std::to_string(res.status) + ": " +
                               Redacted(res.body, api_key).substr(0, 200));
  }
  auto parsed = ParseInputJson(res.body);
  if (!parsed.ok()) return Status::Corruption(where + ": the answer " + AnswerRefusal(parsed.status()));
  *answer = std::move(*parsed);
  // Walk choices[0].message without letting json throw.
  if (answer->is_object() && answer->contains("choices") && (*answer)["choices"].is_array() &&
      !(*answer)["choices"].empty()) {
    const json& choice = (*answer)["choices"][0];
    if (choice.is_object() && choice.contains("message") && choice["message"].is_object())
      return &choice["message"];
  }
  return Status::Corruption(where + ": the answer has no choices[0].message");
}

// POSTs `body` and reads the answer (ReadAnswer).
Result<const json*> Ask(const ChatSpec& spec, const json& body, json* answer,
                        TimeMs* retry_after_ms) {
  auto call = PostCall(spec, body);
  if (!call.ok()) return call.status();
  auto res = Fetch(*call);
  if (!res.ok()) return res.status();
  return ReadAnswer(call->url, spec.api_key, *res, answer, retry_after_ms);
}

std::string StringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A token count from the answer, at most kMaxTokenCount (a hostile server's
// 2^64 - 1 must not wrap a sum).
uint64_t CountAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_unsigned() ? std::min(it->get<uint64_t>(), kMaxTokenCount)
                                                        : 0;
}

}  // namespace

Status CheckChatSpec(const ChatSpec& spec) {
  if (spec.url.empty()) return Status::InvalidArgument("url: required");
  if (!spec.url.starts_with("http://") && !spec.url.starts_with("https://"))
    return Status::InvalidArgument("url: must start with http:// or https://, got \"" + spec.url +
                                   "\"");
  if (spec.model.empty()) return Status::InvalidArgument("model: required");
  if (spec.timeout_ms <= 0) return Status::InvalidArgument("timeout_ms: must be > 0");
  // A line break would end the header and start another one.
  if (spec.api_key.find_first_of("\r\n") != std::string::npos)
    return Status::InvalidArgument("api_key: has a line break");
  auto parsed = ParseUrl(Endpoint(spec.url));
  if (!parsed.ok()) return parsed.status().WithContext("url");
  return Status::OK();
}

Result<std::string> Complete(const ChatSpec& spec, const std::string& system,
                             const std::string& user, bool json_mode) {
  json body = {{"model", spec.model},
               {"temperature", 0},
               {"messages", json::array({{{"role", "system"}, {"content", system}},
                                         {{"role", "user"}, {"content", user}}})}};
  if (json_mode) body["response_format"] = {{"type", "json_object"}};
  json answer;
  auto message = Ask(spec, body, &answer, nullptr);
  if (!message.ok()) return message.status();
  auto content = (*message)->find("content");
  if (content == (*message)->end() || !content->is_string())
    return Status::Corruption("POST " + Endpoint(spec.url) +
                              ": the answer has no choices[0].message.content string");
  return content->get<std::string>();
}

namespace {

json ChatBody(const ChatSpec& spec, const json& messages, const json& tools) {
  json body = {{"model", spec.model}, {"temperature", 0}, {"messages", messages}};
  if (tools.is_array() && !tools.empty()) body["tools"] = tools;
  return body;
}

// The turn in a chat answer whose first message is `m`.
Result<ChatTurn> TurnOf(const std::string& endpoint, const json& answer, const json& m) {
  const std::string where = "POST " + endpoint;
  ChatTurn turn;
  if (auto c = m.find("content"); c != m.end() && !c->is_null()) {
    if (!c->is_string()) return Status::Corruption(where + ": the message's content is not a string");
    turn.content = c->get<std::string>();
  }
  if (auto calls = m.find("tool_calls"); calls != m.end() && !calls->is_null()) {
    if (!calls->is_array()) return Status::Corruption(where + ": tool_calls is not an array");
    for (size_t i = 0; i < calls->size(); ++i) {
      const json& call = (*calls)[i];
      const json* function = call.is_object() && call.contains("function") ? &call["function"] : nullptr;
      if (function == nullptr || !function->is_object() || StringAt(*function, "name").empty())
        return Status::Corruption(where + ": tool_calls[" + std::to_string(i) +
                                  "] has no function name");
      // Arguments are a JSON text; some servers send the value itself,
      // which is then checked as the text would be (an array is no object).
      std::string arguments = StringAt(*function, "arguments");
      if (auto a = function->find("arguments"); a != function->end() && !a->is_string() && !a->is_null())
        arguments = a->dump();
      turn.tool_calls.push_back({StringAt(call, "id"), StringAt(*function, "name"), std::move(arguments)});
    }
  }
  const json& choice = answer["choices"][0];
  turn.finish_reason = StringAt(choice, "finish_reason");
  if (auto usage = answer.find("usage"); usage != answer.end() && usage->is_object()) {
    turn.prompt_tokens = CountAt(*usage, "prompt_tokens");
    turn.completion_tokens = CountAt(*usage, "completion_tokens");
  }
  return turn;
}

}  // namespace

Result<HttpCall> ChatCall(const ChatSpec& spec, const json& messages, const json& tools) {
  return PostCall(spec, ChatBody(spec, messages, tools));
}

Result<ChatTurn> ReadChatAnswer(const ChatSpec& spec, const HttpReply& reply,
                                TimeMs* retry_after_ms) {
  if (!reply.status.ok()) return reply.status;
  const std::string endpoint = Endpoint(spec.url);
  json answer;
  auto message = ReadAnswer(endpoint, spec.api_key, reply.result, &answer, retry_after_ms);
  if (!message.ok()) return message.status();
  return TurnOf(endpoint, answer, **message);
}

Result<ChatTurn> Chat(const ChatSpec& spec, const json& messages, const json& tools,
                      TimeMs* retry_after_ms) {
  json answer;
  auto message = Ask(spec, ChatBody(spec, messages, tools), &answer, retry_after_ms);
  if (!message.ok()) return message.status();
  return TurnOf(Endpoint(spec.url), answer, **message);
}

}  // namespace limbic
