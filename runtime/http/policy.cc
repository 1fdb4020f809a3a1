#include "runtime/http/policy.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>

namespace limbic::runtime {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "host[:port]" -> {host, port}; brackets kept off IPv6 literals; "" port
// when none is given.
std::pair<std::string_view, std::string_view> SplitAuthority(std::string_view a) {
  if (!a.empty() && a.front() == '[') {
    size_t close = a.find(']');
    if (close == std::string_view::npos) return {a, ""};
    std::string_view rest = a.substr(close + 1);
    return {a.substr(1, close - 1), rest.size() > 1 && rest[0] == ':' ? rest.substr(1) : ""};
  }
  size_t colon = a.rfind(':');
  if (colon == std::string_view::npos || a.find(':') != colon) return {a, ""};
  return {a.substr(0, colon), a.substr(colon + 1)};
}

bool IsLoopbackName(const std::string& name) {
  if (name == "localhost") return true;
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(name, ec);
  return !ec && a.is_loopback();
}

bool Listed(const std::vector<std::string>& list, const std::string& value) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& e) { return e == "*" || AsciiLower(e) == value; });
}

}  // namespace

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

bool HasBearerToken(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "bearer ";
  if (token.empty() || authorization.size() <= kScheme.size() ||
      AsciiLower(authorization.substr(0, kScheme.size())) != kScheme)
    return false;
  std::string_view given = authorization.substr(kScheme.size());
  if (given.size() != token.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ token[i]);
  return diff == 0;
}

bool IsJsonType(std::string_view content_type) {
  return AsciiLower(content_type).rfind("application/json", 0) == 0;
}

std::string HostName(std::string_view host_header) {
  std::string name = AsciiLower(SplitAuthority(Trim(host_header)).first);
  if (name.size() > 1 && name.back() == '.') name.pop_back();
  return name;
}

std::string CheckHost(std::string_view host_header, const ExposurePolicy& policy) {
  if (Trim(host_header).empty()) return "";
  std::string name = HostName(host_header);
  if (IsLoopbackName(name) || name == HostName(policy.api_address) ||
      Listed(policy.allowed_hosts, name))
    return "";
  return "Host \"" + std::string(Trim(host_header)) +
         "\" is not a name of this server: loopback names, api.address and api.allowed_hosts are "
         "(a guard against DNS rebinding; docs/api.md, \"Limits and exposure\")";
}

std::string CheckOrigin(std::string_view origin, std::string_view host_header,
                        const ExposurePolicy& policy) {
  origin = Trim(origin);
  if (origin.empty()) return "";
  std::string lower = AsciiLower(origin);
  if (Listed(policy.allowed_origins, lower)) return "";
  size_t sep = lower.find("://");
  if (sep != std::string::npos && !Trim(host_header).empty()) {
    std::string scheme = lower.substr(0, sep);
    auto [o_host, o_port] = SplitAuthority(std::string_view(lower).substr(sep + 3));
    auto [h_host, h_port] = SplitAuthority(Trim(host_header));
    std::string dflt = scheme == "https" ? "443" : "80";
    if ((scheme == "http" || scheme == "https") && HostName(o_host) == HostName(h_host) &&
        (o_port.empty() ? dflt : std::string(o_port)) == (h_port.empty() ? dflt : std::string(h_port)))
      return "";
  }
  return "Origin \"" + std::string(origin) +
         "\" may not change state here: only the API's own origin and api.allowed_origins may";
}

bool IsStateChanging(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

std::string UnsupportedTransferCoding(std::string_view transfer_encoding) {
  size_t start = 0;
  while (start <= transfer_encoding.size()) {
    size_t comma = transfer_encoding.find(',', start);
    if (comma == std::string_view::npos) comma = transfer_encoding.size();
    std::string_view coding = Trim(transfer_encoding.substr(start, comma - start));
    coding = coding.substr(0, coding.find(';'));  // parameters
    coding = Trim(coding);
    if (!coding.empty() && AsciiLower(coding) != "chunked") return std::string(coding);
    start = comma + 1;
  }
  return "";
}

std::string UnsupportedContentCoding(std::string_view content_encoding) {
  std::string_view c = Trim(content_encoding);
  return c.empty() || AsciiLower(c) == "identity" ? "" : std::string(c);
}

ClientBook::Verdict ClientBook::CanConnect(const std::string& client) const {
  if (connections(client) >= limits_.max_connections_per_client) return Verdict::kClientFull;
  if (connections_ >= limits_.max_connections) return Verdict::kServerFull;
  return Verdict::kAdmit;
}

ClientBook::Verdict ClientBook::CanStream(const std::string& client) const {
  auto it = clients_.find(client);
  if (it != clients_.end() && it->second.streams >= limits_.max_streams_per_client)
    return Verdict::kClientFull;
  if (streams_ >= limits_.max_streams) return Verdict::kServerFull;
  return Verdict::kAdmit;
}

void ClientBook::Connected(const std::string& client) {
  ++connections_;
  ++clients_[client].connections;
}

void ClientBook::Disconnected(const std::string& client) {
  auto it = clients_.find(client);
  if (it == clients_.end() || it->second.connections == 0) return;
  --connections_;
  if (--it->second.connections == 0 && it->second.streams == 0) clients_.erase(it);
}

void ClientBook::StreamOpened(const std::string& client) {
  ++streams_;
  ++clients_[client].streams;
}

void ClientBook::StreamClosed(const std::string& client) {
  auto it = clients_.find(client);
  if (it == clients_.end() || it->second.streams == 0) return;
  --streams_;
  if (--it->second.streams == 0 && it->second.connections == 0) clients_.erase(it);
}

size_t ClientBook::connections(const std::string& client) const {
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.connections;
}

}  // namespace limbic::runtime
