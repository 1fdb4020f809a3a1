// The one client for OpenAI-compatible chat completions (POST {url}/v1/chat/
// completions; OpenAI, Ollama, llama.cpp server, vLLM, ...): the world
// model's llm extractor and llm surprise scorer ask with Complete; Chat
// carries a conversation with tools, for a model that acts (tool calling).
//
// Complete's request: {"model", "temperature": 0, "messages": [{"role":
// "system", "content"}, {"role": "user", "content"}]}; with json_mode,
// "response_format": {"type": "json_object"} too. The answer's
// choices[0].message.content is returned as it is.
//
// Chat's request: {"model", "temperature": 0, "messages": MESSAGES,
// "tools": TOOLS} (tools left out when empty). Its answer: the first
// choice's message -- its content (a JSON null is ""), its tool_calls
// [{id, function: {name, arguments}}] (arguments are the JSON text the
// model wrote, checked by whoever runs the tool), finish_reason -- and the
// usage's prompt and completion tokens (0 when the server gives none).
//
// Answers are outside input: parsed with ParseInputJson (nesting bounded
// by api.max_json_depth) and read without letting the JSON throw.
//
// Errors: Unavailable naming the URL for transport failures, timeouts and
// non-2xx statuses (with the start of the body, api_key redacted: servers
// echo a key they refuse); for a 429 or a 503 with a Retry-After of
// seconds, `*retry_after_ms` is set (else left alone) so the caller can
// wait as the server asked. Corruption when the answer is
// not of the shape above.
//
// Thread-safety: Complete and Chat are reentrant.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/http_client.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic {

struct ChatSpec {
  std::string url;      // base URL, with or without /v1, or the full endpoint (OpenAiEndpoint)
  std::string model;    // required
  std::string api_key;  // optional, sent as "Authorization: Bearer"
  int timeout_ms = 60000;
};

// InvalidArgument naming the field ("url: required"): url or model empty,
// url not http(s) or not a URL, timeout <= 0, a line break in api_key.
// Complete and Chat check it too.
Status CheckChatSpec(const ChatSpec& spec);

Result<std::string> Complete(const ChatSpec& spec, const std::string& system,
                             const std::string& user, bool json_mode = true);

// A tool call the model asked for.
struct ToolCall {
  std::string id;         // the model's, echoed back with the tool's result
  std::string name;
  std::string arguments;  // JSON text, as the model wrote it
};

// The most tokens one answer may count in (usage's figures are capped here).
inline constexpr uint64_t kMaxTokenCount = uint64_t{1} << 40;

// One answer of the model in a conversation.
struct ChatTurn {
  std::string content;
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;
  uint64_t prompt_tokens = 0, completion_tokens = 0;
};

Result<ChatTurn> Chat(const ChatSpec& spec, const nlohmann::json& messages,
                      const nlohmann::json& tools, TimeMs* retry_after_ms = nullptr);

// Chat in two halves, for a caller that runs the call on its own loop
// (StartFetch, so it can be cancelled): the call to make, and the turn read
// from its reply (a transport error is returned as it is).
Result<HttpCall> ChatCall(const ChatSpec& spec, const nlohmann::json& messages,
                          const nlohmann::json& tools);
Result<ChatTurn> ReadChatAnswer(const ChatSpec& spec, const HttpReply& reply,
                                TimeMs* retry_after_ms = nullptr);

}  // namespace limbic
