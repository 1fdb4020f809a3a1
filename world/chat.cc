#include "world/chat.h"

#include <nlohmann/json.hpp>
#include <string_view>

#include "base/input_json.h"
#include "base/http_client.h"

namespace limbic::world {
namespace {

using nlohmann::json;

// The URL to POST to: http_client.h's rule, the same as the embedder's.
std::string Endpoint(const std::string& url) { return OpenAiEndpoint(url, "/chat/completions"); }

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
  LIMBIC_RETURN_IF_ERROR(CheckChatSpec(spec));
  const std::string endpoint = Endpoint(spec.url);
  json body = {{"model", spec.model},
               {"temperature", 0},
               {"messages", json::array({{{"role", "system"}, {"content", system}},
                                         {{"role", "user"}, {"content", user}}})}};
  if (json_mode) body["response_format"] = {{"type", "json_object"}};

  HttpCall call;
  call.method = "POST";
  call.url = endpoint;
  call.timeout_ms = spec.timeout_ms;
  // Texts are not always valid UTF-8; replacing bad bytes beats failing.
  call.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  call.headers.emplace_back("Accept", "application/json");
  if (!spec.api_key.empty()) call.headers.emplace_back("Authorization", "Bearer " + spec.api_key);
  auto res = Fetch(call);
  if (!res.ok()) return res.status();

  const std::string where = "POST " + endpoint;
  if (res->status < 200 || res->status > 299)
    return Status::Unavailable(where + ": HTTP " + std::to_string(res->status) + ": " +
                               res->body.substr(0, 200));
  auto parsed = ParseInputJson(res->body);
  if (!parsed.ok()) return Status::Corruption(where + ": the answer " + AnswerRefusal(parsed.status()));
  const json answer = std::move(*parsed);
  // Walk choices[0].message.content without letting json throw.
  const json* content = nullptr;
  if (answer.is_object() && answer.contains("choices") && answer["choices"].is_array() &&
      !answer["choices"].empty()) {
    const json& choice = answer["choices"][0];
    if (choice.is_object() && choice.contains("message") && choice["message"].is_object() &&
        choice["message"].contains("content"))
      content = &choice["message"]["content"];
  }
  if (content == nullptr || !content->is_string())
    return Status::Corruption(where + ": the answer has no choices[0].message.content string");
  return content->get<std::string>();
}

}  // namespace limbic::world
