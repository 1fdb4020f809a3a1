// A small blocking HTTP/1.1 client (Boost.Beast; https through OpenSSL with
// the system's CA store and host-name verification). One request per
// connection. Used by the openai embedder and by `limbic mcp` talking to a
// running `limbic run`.
//
// Errors: a URL that does not parse is InvalidArgument; a failure to
// resolve, connect, handshake, send or read, or the deadline passing, is
// Unavailable naming the URL and the step ("POST http://127.0.0.1:9/v1/x:
// connect: Connection refused"). Any HTTP status is a success here: the
// caller reads HttpResult::status.
//
// Thread-safety: Fetch is reentrant (each call has its own io_context).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace limbic {

struct ParsedUrl {
  bool tls = false;
  std::string host;    // a name or an address; IPv6 without the brackets
  std::string port;    // "80" / "443" when absent
  std::string target;  // path + query, "/" when absent
};
// http://host[:port][/path[?query]] or https://...; IPv6 hosts in brackets.
Result<ParsedUrl> ParseUrl(const std::string& url);

// The URL of an OpenAI-compatible endpoint, `path` being e.g.
// "/embeddings" or "/chat/completions", from what a user configures:
//   http://h:11434             -> http://h:11434/v1<path>
//   http://h:11434/v1          -> http://h:11434/v1<path>  (OpenAI's own base URLs end in /v1)
//   http://h:11434/v1<path>    -> as it is (a full endpoint)
//   http://h/openai<path>      -> as it is (a server with its own prefix)
// Trailing slashes are dropped first.
std::string OpenAiEndpoint(std::string_view url, std::string_view path);

struct HttpCall {
  std::string method = "GET";
  std::string url;
  std::string body;  // sent with Content-Type `content_type` when not empty
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  int timeout_ms = 10000;  // the whole exchange
  size_t max_body = 64 << 20;  // a longer answer is Unavailable
};

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

Result<HttpResult> Fetch(const HttpCall& call);

}  // namespace limbic
