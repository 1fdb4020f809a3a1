// base/nats.h's names and server URLs: what a NATS token, subject and
// server URL may be, and how a URL is shown. Plain string checks, kept
// apart from nats.cc's calls into libnats.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/nats.h"

namespace limbic::nats {
namespace {

bool IsToken(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace

Status CheckServerUrl(std::string_view url) {
  auto bad = [&] {
    return Status::InvalidArgument("\"" + std::string(url) +
                                   "\" is not a NATS server URL (nats://HOST:PORT)");
  };
  std::string_view rest = url;
  if (rest.starts_with("nats://")) rest.remove_prefix(7);
  // Another scheme ("http://h:1") or a path is not a host: refused here,
  // not by the first connect.
  if (rest.find('/') != std::string_view::npos) return bad();
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  // HOST:PORT, an IPv6 address in brackets ("[::1]:4222").
  size_t colon;
  if (rest.starts_with('[')) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close == 1 || close + 1 >= rest.size() ||
        rest[close + 1] != ':')
      return bad();
    colon = close + 1;
  } else {
    colon = rest.find(':');
    if (colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos)
      return Status::InvalidArgument("\"" + std::string(url) +
                                     "\" is not a NATS server URL (nats://HOST:PORT; an IPv6 "
                                     "host goes in brackets, nats://[::1]:4222)");
    if (colon == std::string_view::npos || colon == 0) return bad();
  }
  std::string_view port = rest.substr(colon + 1);
  if (port.empty()) return bad();
  if (port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::atoi(std::string(port).c_str()) > 65535 || std::atoi(std::string(port).c_str()) == 0)
    return Status::InvalidArgument("\"" + std::string(url) + "\": bad port");
  return Status::OK();
}

std::string RedactServerUrl(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t begin = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t at = url.rfind('@');
  if (at == std::string_view::npos || at < begin) return std::string(url);
  const std::string_view userinfo = url.substr(begin, at - begin);
  const size_t colon = userinfo.find(':');
  // user:password keeps the user; a token alone is all secret.
  const std::string shown =
      colon == std::string_view::npos ? "***" : std::string(userinfo.substr(0, colon)) + ":***";
  return std::string(url.substr(0, begin)) + shown + std::string(url.substr(at));
}

std::string JoinServers(const std::vector<std::string>& servers) {
  std::string out;
  for (const std::string& s : servers) out += (out.empty() ? "" : ",") + RedactServerUrl(s);
  return out;
}

Status CheckName(std::string_view what, std::string_view name) {
  if (!IsToken(name))
    return Status::InvalidArgument(std::string(what) + ": \"" + std::string(name) +
                                   "\" must be 1..128 characters of A-Z a-z 0-9 _ -");
  return Status::OK();
}

Status CheckSubject(std::string_view what, std::string_view subject) {
  if (subject.empty() || subject.size() > 256)
    return Status::InvalidArgument(std::string(what) + ": a subject must be 1..256 characters");
  size_t start = 0;
  while (true) {
    size_t dot = subject.find('.', start);
    std::string_view token =
        subject.substr(start, dot == std::string_view::npos ? subject.npos : dot - start);
    if (!IsToken(token))
      return Status::InvalidArgument(
          std::string(what) + ": \"" + std::string(subject) +
          "\" is not a subject (tokens of A-Z a-z 0-9 _ - joined by '.', no wildcards)");
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return Status::OK();
}

}  // namespace limbic::nats
