// Who may reach the HTTP API, and how much of it one client may hold: the
// pure rules the server applies to each request and connection
// (docs/api.md, "Limits and exposure"). No I/O here, so each rule is a unit
// test away.
//
// Browsers are the threat these rules answer: a web page can make the
// user's browser send "simple" cross-origin requests to 127.0.0.1, and can
// rebind its own DNS name to 127.0.0.1 to read the answers. So:
//   - the Host header must name this server (a loopback name or address,
//     the configured api.address, or a name in api.allowed_hosts): a
//     rebound name is refused;
//   - a state-changing request (POST, PUT, PATCH, DELETE) with an Origin
//     header must come from the same origin as its Host, or from one in
//     api.allowed_origins;
//   - a state-changing request's body, if any, is application/json, which a
//     browser cannot send cross-origin without a CORS preflight (which this
//     server never grants).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace limbic::runtime {

//! `s` with A-Z made a-z (header names, schemes, host names).
std::string AsciiLower(std::string_view s);

//! "Authorization: Bearer <token>", the scheme in any case (RFC 7235); the
//! token compared in constant time (its length is not secret).
bool HasBearerToken(std::string_view authorization, std::string_view token);

//! A Content-Type of application/json (parameters allowed).
bool IsJsonType(std::string_view content_type);

//! The allow lists, from the config (api.address, api.allowed_hosts,
//! api.allowed_origins).
struct ExposurePolicy {
  std::string api_address;                   //!< the address the API listens on
  std::vector<std::string> allowed_hosts;    //!< extra host names ("*" = any Host)
  std::vector<std::string> allowed_origins;  //!< "scheme://host[:port]" ("*" = any Origin)
};

//! The host of a Host header, lower-cased, without its port, brackets or a
//! trailing dot ("[::1]:7077" -> "::1", "LocalHost.:80" -> "localhost").
std::string HostName(std::string_view host_header);

//! "" when `host_header` names this server under `policy`, else why not.
//! An absent Host (HTTP/1.0) is allowed: every browser sends one.
std::string CheckHost(std::string_view host_header, const ExposurePolicy& policy);

//! "" when a request with this Origin may change state, else why not. An
//! absent Origin is allowed (not a browser, or a same-origin navigation);
//! "null" is refused unless allow-listed.
std::string CheckOrigin(std::string_view origin, std::string_view host_header,
                        const ExposurePolicy& policy);

//! POST, PUT, PATCH, DELETE.
bool IsStateChanging(std::string_view method);

//! "" when every transfer coding is one this server decodes (only
//! "chunked"), else the first one it does not ("gzip").
std::string UnsupportedTransferCoding(std::string_view transfer_encoding);

//! "" when the body is not content-encoded ("" or "identity"), else the
//! coding.
std::string UnsupportedContentCoding(std::string_view content_encoding);

//! Connection and stream counts per client (remote address), checked
//! against the limits before a connection or stream is admitted.
class ClientBook {
 public:
  struct Limits {
    size_t max_connections = 1024;
    size_t max_connections_per_client = 256;
    size_t max_streams = 256;
    size_t max_streams_per_client = 64;
  };
  enum class Verdict { kAdmit, kServerFull, kClientFull };

  explicit ClientBook(Limits limits) : limits_(limits) {}

  //! Whether one more connection from `client` fits.
  Verdict CanConnect(const std::string& client) const;
  //! Whether one of `client`'s connections may become an event stream.
  Verdict CanStream(const std::string& client) const;

  void Connected(const std::string& client);
  void Disconnected(const std::string& client);
  void StreamOpened(const std::string& client);
  void StreamClosed(const std::string& client);

  size_t connections() const { return connections_; }
  size_t streams() const { return streams_; }
  size_t connections(const std::string& client) const;
  const Limits& limits() const { return limits_; }

 private:
  struct Count {
    size_t connections = 0;
    size_t streams = 0;
  };
  Limits limits_;
  size_t connections_ = 0;
  size_t streams_ = 0;
  std::map<std::string, Count> clients_;
};

}  // namespace limbic::runtime
