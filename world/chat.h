// A client for OpenAI-compatible chat completions (POST {url}/v1/chat/
// completions; OpenAI, Ollama, llama.cpp server, vLLM, ...), used by the llm
// extractor and the llm surprise scorer.
//
// Request: {"model", "temperature": 0, "messages": [{"role": "system",
// "content"}, {"role": "user", "content"}]}; with json_mode,
// "response_format": {"type": "json_object"} too. The answer's
// choices[0].message.content is returned as it is.
//
// Errors: Unavailable naming the URL for transport failures, timeouts and
// non-2xx statuses (with the start of the body); Corruption when the
// answer is not of that shape.
//
// Thread-safety: Complete is reentrant.
#pragma once

#include <string>

#include "base/status.h"

namespace limbic::world {

struct ChatSpec {
  std::string url;      // base URL, with or without /v1, or the full endpoint (OpenAiEndpoint)
  std::string model;    // required
  std::string api_key;  // optional, sent as "Authorization: Bearer"
  int timeout_ms = 60000;
};

// InvalidArgument naming the field ("url: required"): url or model empty,
// url not http(s) or not a URL, timeout <= 0, a line break in api_key.
// Complete checks it too.
Status CheckChatSpec(const ChatSpec& spec);

Result<std::string> Complete(const ChatSpec& spec, const std::string& system,
                             const std::string& user, bool json_mode = true);

}  // namespace limbic::world
