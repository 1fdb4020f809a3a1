// Hostile HTTP through the real binary (issue 22): a web page driving the
// loopback API, a token beside GitHub, clients that hold connections and
// streams, event streams that catch up from a long log or stop reading.
// After each: the runtime is alive, ordinary requests are answered, a
// refused request wrote nothing, and a SIGKILL is followed by a clean start.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <sstream>

#include "runtime_util.h"
#include "tests/raw_connection.h"

// This file's own namespace: test programs compile in unity batches.
namespace hostile_http_test {

using namespace limbic::testing;

namespace {

std::string Req(const std::string& method, const std::string& path,
                const std::vector<std::string>& headers = {}, const std::string& body = "") {
  std::string r = method + " " + path + " HTTP/1.1\r\n";
  bool host = false;
  for (const auto& h : headers) {
    r += h + "\r\n";
    host = host || RawConnection::Lower(h).rfind("host:", 0) == 0;
  }
  if (!host) r += "Host: 127.0.0.1\r\n";
  if (!body.empty()) r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return r + "\r\n" + body;
}

// One request on a fresh connection from 127.0.0.1; the response's status.
int Ask(uint16_t port, const std::string& request, std::string* response = nullptr) {
  RawConnection c(port);
  c.Send(request);
  std::string r = c.Read();
  if (response) *response = r;
  return StatusOf(r);
}

uint64_t LastSeq(uint16_t port) {
  return Http(port, "GET", "/v1/events?after=0&limit=1").Json().value("last_seq", uint64_t{0});
}

bool Healthy(uint16_t port) { return Http(port, "GET", "/healthz").status == 200; }

// Waits until /metrics counts at least `n` busy connections (the one
// asking included).
bool WaitForBusy(uint16_t port, int n) {
  const std::string key = "limbic_http_connections{state=\"busy\"} ";
  for (int i = 0; i < 500; ++i) {
    std::string text = Http(port, "GET", "/metrics").body;
    size_t at = text.find(key);
    if (at != std::string::npos && std::stoi(text.substr(at + key.size())) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// SIGKILL, then a clean start on the same state: every event is still
// there (a start may append its own).
void KillAndRestart(const TempDir& dir, const json& config, std::unique_ptr<RunningLimbic>& rt) {
  auto before = Http(rt->port(), "GET", "/v1/events?after=0&limit=10000").Json()["events"];
  CHECK(rt->child().Kill(SIGKILL) == -SIGKILL);
  rt = std::make_unique<RunningLimbic>(dir, config);
  REQUIRE(rt->port() != 0);
  CHECK(Healthy(rt->port()));
  auto after = Http(rt->port(), "GET", "/v1/events?after=0&limit=10000").Json()["events"];
  REQUIRE(after.size() >= before.size());
  for (size_t i = 0; i < before.size(); ++i) CHECK(after[i] == before[i]);
}

std::string Hmac(const std::string& secret, const std::string& body) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), md, &len);
  std::ostringstream os;
  os << "sha256=";
  for (unsigned i = 0; i < len; ++i) os << std::hex << (md[i] >> 4) << (md[i] & 15);
  return os.str();
}

}  // namespace

TEST_CASE("a web page cannot drive the loopback API", "[hostile]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["allowed_origins"] = {"http://localhost:3000"};
  auto rt = std::make_unique<RunningLimbic>(dir, config);
  uint16_t port = rt->port();
  REQUIRE(port != 0);
  std::string self = "http://127.0.0.1:" + std::to_string(port);
  json rule = {{"when", {{"source", "chat"}}},
               {"then", {{{"send", {{"effector", "log"}, {"type", "ack"}}}}}}};
  REQUIRE(HttpJson(port, "PUT", "/v1/reflexes/r1", rule).status == 200);
  const uint64_t seq = LastSeq(port);

  // DNS rebinding: a name that is not this server's is refused, reads too.
  std::string answer;
  CHECK(Ask(port, Req("GET", "/healthz", {"Host: attacker.example:" + std::to_string(port)}),
            &answer) == 421);
  CHECK(answer.find("misdirected_request") != std::string::npos);
  CHECK(Ask(port, Req("GET", "/v1/reflexes", {"Host: attacker.example"})) == 421);
  for (const char* host : {"localhost", "127.0.0.1", "[::1]", "127.1.2.3"})
    CHECK(Ask(port, Req("GET", "/healthz", {std::string("Host: ") + host + ":" +
                                                 std::to_string(port)})) == 200);
  // HTTP/1.0 without Host: served (browsers always send one).
  CHECK(Ask(port, "GET /healthz HTTP/1.0\r\n\r\n") == 200);

  // The repro: a text/plain POST from another origin, with and without a body.
  CHECK(Ask(port, Req("POST", "/v1/reflexes/r1/disable",
                      {"Origin: http://attacker.example", "Content-Type: text/plain"})) == 415);
  CHECK(Ask(port, Req("POST", "/v1/memory/decay",
                      {"Origin: http://attacker.example", "Content-Type: text/plain"}, "{}")) == 415);
  CHECK(Ask(port, Req("POST", "/v1/reflexes/r1/disable", {"Content-Type: text/plain"})) == 415);
  // Without a body or a type, another origin is still refused.
  CHECK(Ask(port, Req("POST", "/v1/reflexes/r1/disable", {"Origin: http://attacker.example"}),
            &answer) == 403);
  CHECK(answer.find("forbidden_origin") != std::string::npos);
  CHECK(Ask(port, Req("DELETE", "/v1/reflexes/r1", {"Origin: null"})) == 403);
  CHECK(Ask(port, Req("POST", "/v1/memory/decay",
                      {"Origin: " + self + "0", "Content-Type: application/json"}, "{}")) == 403);
  CHECK(Http(port, "GET", "/v1/reflexes/r1").Json()["enabled"] == true);
  CHECK(LastSeq(port) == seq);  // nothing written

  // Transfer and content codings it cannot decode.
  std::string chunked = "7\r\n{\"a\":1}\r\n0\r\n\r\n";
  {
    RawConnection c(port);
    c.Send(Req("POST", "/v1/percepts",
               {"Content-Type: application/json", "Transfer-Encoding: gzip, chunked"}) + chunked);
    std::string r = c.Read();
    CHECK(StatusOf(r) == 501);
    CHECK(r.find("gzip") != std::string::npos);
    CHECK(c.Closed());
  }
  CHECK(Ask(port, Req("POST", "/v1/percepts",
                      {"Content-Type: application/json", "Content-Encoding: gzip"},
                      R"({"source":"s","type":"t"})")) == 415);
  CHECK(LastSeq(port) == seq);

  // What a same-origin page, an allow-listed origin and a plain client may do.
  std::string host = "Host: 127.0.0.1:" + std::to_string(port);
  CHECK(Ask(port, Req("POST", "/v1/reflexes/r1/disable", {host, "Origin: " + self})) == 200);
  // The same host on another port is another origin.
  CHECK(Ask(port, Req("POST", "/v1/reflexes/r1/enable", {"Origin: " + self})) == 403);
  CHECK(Ask(port, Req("POST", "/v1/reflexes/r1/enable", {"Origin: http://localhost:3000"})) == 200);
  CHECK(Ask(port, Req("POST", "/v1/reflexes/r1/disable")) == 200);
  CHECK(Ask(port, Req("POST", "/v1/percepts", {"Content-Type: application/json", "Transfer-Encoding: chunked"}) +
                      "19\r\n{\"source\":\"s\",\"type\":\"t\"}\r\n0\r\n\r\n") == 201);
  CHECK(LastSeq(port) == seq + 4);
  KillAndRestart(dir, config, rt);
}

TEST_CASE("a token and a github sensor coexist", "[hostile]") {
  TempDir dir;
  json sensors = {{"gh", {{"kind", "github"}, {"secret", "s3cret"}}},
                  {"hook", {{"kind", "webhook"}, {"source", "hook"}, {"type", "/t"}}}};
  json config = BaseConfig(dir, json::object(), sensors);
  config["api"]["token"] = "tok";
  auto rt = std::make_unique<RunningLimbic>(dir, config);
  uint16_t port = rt->port();
  REQUIRE(port != 0);
  std::string body = R"({"action":"opened","issue":{"title":"x"}})";
  auto delivery = [&](const std::string& id, const std::string& sig, const std::string& host) {
    return Req("POST", "/v1/sensors/gh",
               {"Host: " + host, "Content-Type: application/json", "X-GitHub-Event: issues",
                "X-GitHub-Delivery: " + id, "X-Hub-Signature-256: " + sig},
               body);
  };
  // Signed: no token needed, and the public name behind a tunnel is fine.
  CHECK(Ask(port, delivery("d1", Hmac("s3cret", body), "agent.example.com")) == 202);
  CHECK(Http(port, "GET", "/healthz").status == 401);  // everything else needs the token
  CHECK(Ask(port, delivery("d2", Hmac("wrong", body), "agent.example.com")) == 401);
  CHECK(Ask(port, delivery("d3", "", "127.0.0.1")) == 401);
  // An unsigned webhook keeps needing the token, and an allowed Host.
  std::string hook = R"({"t":"ping"})";
  CHECK(Ask(port, Req("POST", "/v1/sensors/hook", {"Content-Type: application/json"}, hook)) == 401);
  CHECK(Ask(port, Req("POST", "/v1/sensors/hook",
                      {"Authorization: Bearer tok", "Content-Type: application/json",
                       "Host: agent.example.com"},
                      hook)) == 421);
  CHECK(Ask(port, Req("POST", "/v1/sensors/hook",
                      {"Authorization: Bearer tok", "Content-Type: application/json"}, hook)) == 202);
  std::string events;
  CHECK(Ask(port, Req("GET", "/v1/events?after=0", {"Authorization: Bearer tok"}), &events) == 200);
  json parsed = json::parse(events.substr(events.find("\r\n\r\n") + 4));
  CHECK(parsed["last_seq"] == 2);  // one delivery, one webhook: nothing from the refused ones
  CHECK(rt->child().Kill(SIGKILL) == -SIGKILL);
  rt = std::make_unique<RunningLimbic>(dir, config);
  CHECK(Ask(rt->port(), Req("GET", "/healthz", {"Authorization: Bearer tok"})) == 200);
}

TEST_CASE("connections and streams are bounded per client, not per server", "[hostile]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"].update({{"max_connections", 32},
                        {"max_connections_per_client", 16},
                        {"max_sse_streams", 8},
                        {"max_sse_streams_per_client", 4}});
  auto rt = std::make_unique<RunningLimbic>(dir, config);
  uint16_t port = rt->port();
  REQUIRE(port != 0);

  // Idle connections: one client holds at most its share, and a full
  // server closes an idle one to make room.
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (const char* from : {"127.0.0.2", "127.0.0.3", "127.0.0.4"})
    for (int i = 0; i < 16; ++i) {
      idle.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = from}));
      REQUIRE(idle.back()->ok());
    }
  int healthy = 0;
  for (int i = 0; i < 25; ++i) healthy += Healthy(port);
  CHECK(healthy == 25);
  idle.clear();

  // Busy connections (long-polls) from one client: over its share it is
  // answered 429 with Retry-After; others are still served.
  uint64_t last = LastSeq(port);
  std::vector<std::unique_ptr<RawConnection>> polls;
  for (int i = 0; i < 16; ++i) {
    polls.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.2"}));
    polls.back()->Send(Req("GET", "/v1/events?after=" + std::to_string(last + 1000) + "&wait=60"));
  }
  REQUIRE(WaitForBusy(port, 17));
  std::string answer;
  {
    RawConnection extra(port, {.from = "127.0.0.2"});
    extra.Send(Req("GET", "/v1/percepts"));
    answer = extra.Read();
  }
  CHECK(StatusOf(answer) == 429);
  CHECK(RawConnection::Lower(answer).find("retry-after: 1") != std::string::npos);
  CHECK(answer.find("api.max_connections_per_client") != std::string::npos);
  CHECK(Healthy(port));

  // Event streams take at most their share, per client and in all.
  std::vector<std::unique_ptr<RawConnection>> streams;
  auto open_stream = [&](const char* from) {
    streams.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = from}));
    streams.back()->Send(Req("GET", "/v1/events/stream"));
    return streams.back()->Read(10000);  // the headers, no Content-Length: "" unless refused
  };
  for (int i = 0; i < 4; ++i) {
    streams.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.5"}));
    streams.back()->Send(Req("GET", "/v1/events/stream"));
  }
  for (int i = 0; i < 4; ++i) {
    streams.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.6"}));
    streams.back()->Send(Req("GET", "/v1/events/stream"));
  }
  std::string over = open_stream("127.0.0.5");
  CHECK(StatusOf(over) == 429);
  CHECK(over.find("api.max_sse_streams_per_client") != std::string::npos);
  over = open_stream("127.0.0.7");
  CHECK(StatusOf(over) == 503);
  CHECK(over.find("api.max_sse_streams") != std::string::npos);
  healthy = 0;
  for (int i = 0; i < 25; ++i) healthy += Healthy(port);
  CHECK(healthy == 25);
  // A server full of busy connections answers 503 and stays alive.
  for (int i = 0; i < 7; ++i) {
    polls.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.8"}));
    polls.back()->Send(Req("GET", "/v1/events?after=" + std::to_string(last + 1000) + "&wait=60"));
  }
  {
    RawConnection extra(port, {.from = "127.0.0.9"});
    extra.Send(Req("GET", "/v1/percepts"));
    answer = extra.Read();
  }
  CHECK((StatusOf(answer) == 503 || StatusOf(answer) == 200));
  polls.clear();
  streams.clear();
  CHECK(Healthy(port));
  CHECK(rt->WaitForLog("http: refused"));
  KillAndRestart(dir, config, rt);
}

TEST_CASE("with every connection taken, /healthz is still answered at once", "[hostile]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"].update({{"max_connections", 8},
                        {"max_connections_per_client", 8},
                        {"max_sse_streams", 4},
                        {"max_sse_streams_per_client", 4}});
  auto rt = std::make_unique<RunningLimbic>(dir, config);
  const uint16_t port = rt->port();
  REQUIRE(port != 0);
  const std::string poll =
      Req("GET", "/v1/events?after=" + std::to_string(LastSeq(port) + 1000) + "&wait=60");

  // Every connection busy: long-polls from one client, then anything else
  // is refused 503 (its request is read first).
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 7; ++i) {
    held.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.2"}));
    held.back()->Send(poll);
  }
  REQUIRE(WaitForBusy(port, 8));  // 7 and the one asking
  held.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.2"}));
  held.back()->Send(poll);
  int status = 0;
  for (int i = 0; i < 250 && status != 503; ++i) {
    status = Ask(port, Req("GET", "/v1/percepts"));
    if (status != 503) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(status == 503);
  // And the slots beyond the limit taken by connections that say nothing.
  for (int i = 0; i < 20; ++i) {
    held.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.3"}));
    REQUIRE(held.back()->ok());
  }

  for (int i = 0; i < 10; ++i) {
    RawConnection check(port, {.from = "127.0.0.4"});
    check.Send(Req("GET", "/healthz"));
    // Well within the 2 s the silent connections may wait: not behind them.
    std::string answer = check.Read(1500);
    INFO("check " << i << ": " << answer);
    REQUIRE(StatusOf(answer) == 200);
    CHECK(answer.find("\"status\":\"ok\"") != std::string::npos);
  }
  // Anything else is still refused.
  CHECK(Ask(port, Req("GET", "/v1/percepts")) == 503);
  held.clear();
  CHECK(Healthy(port));
}

namespace {

// `n` percepts through 8 keep-alive connections at once; `data_bytes` of
// padding each.
void AddPercepts(uint16_t port, int n, size_t data_bytes = 0) {
  std::string body = json{{"source", "load"}, {"type", "t"}, {"data", {{"pad", std::string(data_bytes, 'x')}}}}.dump();
  std::vector<std::thread> threads;
  std::atomic<int> created{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      RawConnection c(port);
      for (int i = t; i < n; i += 8) {
        c.Send(Req("POST", "/v1/percepts", {"Content-Type: application/json"}, body));
        if (StatusOf(c.Read(30000)) == 201) ++created;
      }
    });
  for (auto& th : threads) th.join();
  REQUIRE(created == n);
}

}  // namespace

TEST_CASE("an event stream catches up from any point of a long log", "[hostile]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["durability"] = {{"mode", "none"}};
  auto rt = std::make_unique<RunningLimbic>(dir, config);
  REQUIRE(rt->port() != 0);
  AddPercepts(rt->port(), 12000);
  uint64_t last = LastSeq(rt->port());
  REQUIRE(last >= 12000);
  // The repro: 1999 got nothing (the backlog tripped the frame cap); 0
  // works too, also after a restart, when all of it comes from disk.
  for (int round = 0; round < 2; ++round) {
    uint16_t port = rt->port();
    for (uint64_t after : {uint64_t{1999}, uint64_t{0}}) {
      size_t want = last - after;
      auto events = ReadSse(port, "/v1/events/stream?after=" + std::to_string(after), want, 120000);
      REQUIRE(events.size() == want);
      CHECK(events.front().id == std::to_string(after + 1));
      CHECK(events.back().id == std::to_string(last));
      for (size_t i = 0; i < events.size(); ++i)
        if (events[i].id != std::to_string(after + 1 + i)) FAIL("gap or repeat at " << i);
    }
    // A live event follows the backlog without a gap.
    std::thread later([port] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      HttpJson(port, "POST", "/v1/percepts", {{"source", "s"}, {"type", "live"}});
    });
    auto tail = ReadSse(port, "/v1/events/stream?after=" + std::to_string(last - 2), 3, 30000);
    later.join();
    REQUIRE(tail.size() == 3);
    CHECK(tail[2].id == std::to_string(last + 1));
    last = LastSeq(port);
    if (round == 0) KillAndRestart(dir, config, rt);
  }
  CHECK(Healthy(rt->port()));
}

TEST_CASE("event stream clients that stop reading are dropped and memory stays flat", "[hostile]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["durability"] = {{"mode", "none"}};
  config["api"]["body_limit"] = 1 << 20;
  config["api"]["sse_max_queued_bytes"] = 256 * 1024;
  auto rt = std::make_unique<RunningLimbic>(dir, config);
  uint16_t port = rt->port();
  REQUIRE(port != 0);
  AddPercepts(port, 20, 64 * 1024);  // warm up: the ring, RocksDB, allocator
  const long before = RssKiB(rt->child().pid());
  REQUIRE(before > 0);
  // Ten clients that open a stream and never read (tiny receive buffers,
  // so the kernel holds little for them).
  std::vector<std::unique_ptr<RawConnection>> stalled;
  for (int i = 0; i < 10; ++i) {
    stalled.push_back(std::make_unique<RawConnection>(port, RawConnection::Options{.from = "127.0.0.2", .rcvbuf = 4096}));
    stalled.back()->Send(Req("GET", "/v1/events/stream?after=" + std::to_string(LastSeq(port))));
  }
  REQUIRE(WaitForBusy(port, 1));
  // 32 MiB of events: without the bound each stalled client would queue
  // all of it (10 x 32 MiB).
  const size_t pushed_kib = 512 * 64;
  AddPercepts(port, 512, 64 * 1024);
  for (int i = 0; i < 10; ++i) REQUIRE(rt->WaitForLog("its client is not reading", 20000));
  // What stays: the hub's ring and RocksDB hold the events themselves
  // (about 2 x 32 MiB), plus at most 256 KiB per stream: the bound stated
  // in docs/api.md. Queued copies for ten clients would be 320 MiB.
  const long after = RssKiB(rt->child().pid());
  INFO("RSS before " << before << " KiB, after " << after << " KiB");
  CHECK(after - before < static_cast<long>(2 * pushed_kib + 10 * 256 + 48 * 1024));
  size_t closed = 0;
  for (auto& c : stalled) {
    // Each stalled client finds its stream closed once it reads on.
    char buf[65536];
    while (read(c->fd(), buf, sizeof buf) > 0) {
    }
    ++closed;
  }
  CHECK(closed == 10);
  CHECK(Healthy(port));
  KillAndRestart(dir, config, rt);
}

TEST_CASE("quiet streams get a heartbeat and idle connections are closed", "[hostile]") {
  TempDir dir;
  json config = BaseConfig(dir);
  config["api"].update({{"sse_keepalive", "200ms"}, {"idle_timeout", "500ms"}});
  auto rt = std::make_unique<RunningLimbic>(dir, config);
  uint16_t port = rt->port();
  REQUIRE(port != 0);
  RawConnection stream(port);
  stream.Send(Req("GET", "/v1/events/stream?after=" + std::to_string(LastSeq(port))));
  std::string got;
  for (int i = 0; i < 50 && got.find(": keepalive") == std::string::npos; ++i) {
    pollfd p{stream.fd(), POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    ssize_t n = read(stream.fd(), buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  CHECK(got.find(": keepalive\n\n") != std::string::npos);
  // A connection that never sends a request is closed after idle_timeout
  // (a stream is not: it just got its heartbeat).
  RawConnection quiet(port);
  CHECK(quiet.Closed(10000));
  RawConnection kept(port);
  kept.Send(Req("GET", "/healthz"));
  CHECK(StatusOf(kept.Read()) == 200);
  CHECK(kept.Closed(10000));  // kept alive, then idle too long
  CHECK(Healthy(port));
}

}  // namespace hostile_http_test
