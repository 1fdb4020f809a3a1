// The one HTTP/1.1 client of limbic (Boost.Beast; https through OpenSSL with
// host-name verification). One request per connection ("Connection:
// close"). Used by the http effector, the openai embedder, the world
// model's LLM and `limbic mcp` talking to a running `limbic run`.
//
// Two ways to call it:
//   StartFetch  runs on the caller's io_context: every handler, and `done`
//               (exactly once), run there; no thread is started. The http
//               effector delivers this way on the runtime's loop.
//   Fetch       blocks: StartFetch on a private io_context.
//
// Errors: a URL, method or header that cannot be sent is InvalidArgument; a
// failure to resolve, connect, handshake, send or read, the deadline
// passing, or Cancel() is Unavailable. Any HTTP status is a success here:
// the caller reads HttpResult::status.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace boost::asio {
class io_context;
}

namespace limbic {

struct ParsedUrl {
  bool tls = false;
  std::string host;    // a name or an address; IPv6 without the brackets
  std::string port;    // "80" / "443" when absent
  std::string target;  // path + query, "/" when absent
};
// http://host[:port][/path[?query]] or https://...; IPv6 hosts in brackets.
// No user:password@ (credentials go in headers). The error says what is
// wrong without repeating the URL ("has a bad port \"99999\"").
Result<ParsedUrl> ParseUrl(const std::string& url);

// The URL of an OpenAI-compatible endpoint, `path` being e.g.
// "/embeddings" or "/chat/completions", from what a user configures:
//   http://h:11434             -> http://h:11434/v1<path>
//   http://h:11434/v1          -> http://h:11434/v1<path>  (OpenAI's own base URLs end in /v1)
//   http://h:11434/v1<path>    -> as it is (a full endpoint)
//   http://h/openai<path>      -> as it is (a server with its own prefix)
// Trailing slashes are dropped first.
std::string OpenAiEndpoint(std::string_view url, std::string_view path);

// How https calls check the server: against the system's CAs (the
// default), only against the PEM file `ca_file`, or not at all.
struct TlsPolicy {
  bool verify = true;
  std::string ca_file;
};
// A loaded TlsPolicy (an OpenSSL client context), shared by any number of
// concurrent calls. Loading the system's CAs takes milliseconds: make one
// and keep it. The error names what could not be loaded ("cannot load
// /etc/x.pem: ...", "cannot load the system's CA certificates: ...").
class TlsClient;
Result<std::shared_ptr<const TlsClient>> MakeTlsClient(const TlsPolicy& policy);

struct HttpCall {
  std::string method = "GET";
  std::string url;
  std::string body;  // sent with Content-Type `content_type` when not empty
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // no CR or LF in them
  int64_t timeout_ms = 10000;  // the whole exchange, from resolve to the last byte
  size_t max_body = 64 << 20;  // a longer answer is an error
  std::shared_ptr<const TlsClient> tls;  // for https; null: the system's CAs
};

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case; repeats joined ", "
  std::string body;
};

// What a call came to. When `status` is not OK, `step` says where it
// stopped ("request" for a call that could not be made, "resolve",
// "connect", "tls handshake", "write", "read") and `error` what happened
// there ("Connection refused", "timed out after 300 ms", "cancelled");
// status's message is "METHOD URL: step: error".
struct HttpReply {
  Status status;
  std::string step;
  std::string error;
  bool timed_out = false;
  bool cancelled = false;
  HttpResult result;  // when status is OK
};

// A call in flight. Cancel() may be called from any thread, any number of
// times, also after the call ended (then it does nothing).
class HttpInFlight {
 public:
  virtual ~HttpInFlight() = default;
  virtual void Cancel() = 0;
};

std::shared_ptr<HttpInFlight> StartFetch(boost::asio::io_context& io, HttpCall call,
                                         std::function<void(HttpReply)> done);

// Blocking. Thread-safe: each call has its own io_context. Asio resolves
// names with a blocking getaddrinfo that cannot be cancelled: a hung DNS
// server can make Fetch return late (still with the timeout error).
Result<HttpResult> Fetch(const HttpCall& call);

}  // namespace limbic
