// follow / promote, and the stream reader of `replay --from nats://`:
// the command line of replication (runtime/replication.h, docs/scale.md).
#include <cstdio>
#include <fstream>
#include <thread>

#include "base/nats.h"
#include "runtime/cli.h"
#include "runtime/config.h"
#include "runtime/replication.h"
#include "runtime/runtime.h"
#include "state/event.h"

namespace limbic::runtime {
namespace {

// "--nats a,b --nats c" -> {a, b, c}
std::vector<std::string> SplitServers(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const std::string& item : given) {
    size_t start = 0;
    while (start <= item.size()) {
      size_t comma = item.find(',', start);
      std::string one =
          item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!one.empty()) out.push_back(one);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace

Result<uint64_t> DownloadStream(const std::string& url, const std::string& stream,
                                const std::string& agent, const std::string& path) {
  LIMBIC_RETURN_IF_ERROR(nats::CheckName("--stream", stream));
  LIMBIC_RETURN_IF_ERROR(nats::CheckName("--agent", agent));
  nats::ConnectOptions co;
  co.servers = SplitServers({url});
  co.name = "limbic replay " + agent;
  auto conn = nats::Connection::Connect(co);
  if (!conn.ok()) return conn.status();
  const std::string subject = "limbic." + agent + ".events";
  auto last = (*conn)->LastMessage(stream, subject);
  if (!last.ok()) return last.status();
  if (!last->has_value())
    return Status::NotFound("stream " + stream + " holds no events of agent " + agent +
                            " (subject " + subject + ")");
  const uint64_t end = ReplicatedSeq(**last, agent);
  if (end == 0)
    return Status::Corruption("the last message of " + subject + " is not an event of agent " +
                              agent);
  // A cluster that just lost a server may still be electing leaders: a
  // few seconds of retries before giving up.
  auto sub = (*conn)->SubscribeOrdered(stream, subject, 1);
  for (int i = 0; i < 50 && !sub.ok() && sub.status().IsUnavailable(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    sub = (*conn)->SubscribeOrdered(stream, subject, 1);
  }
  if (!sub.ok()) return sub.status();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError("cannot write " + path);
  uint64_t expected = 1;
  while (expected <= end) {
    auto next = (*sub)->Next(10000);
    if (!next.ok()) return next.status();
    if (!next->has_value())
      return Status::Unavailable("the stream stopped sending at event seq " +
                                 std::to_string(expected) + " of " + std::to_string(end));
    const nats::Message& m = **next;
    const uint64_t seq = ReplicatedSeq(m, agent);
    if (seq < expected) continue;  // a duplicate
    if (seq != expected)
      return Status::Corruption(
          "stream " + stream + " seq " + std::to_string(m.stream_seq) + " holds event seq " +
          std::to_string(seq) + " where seq " + std::to_string(expected) + " was expected" +
          (expected == 1 ? ": the stream does not hold the whole history" : ""));
    out << m.data << '\n';
    ++expected;
  }
  out.close();
  if (!out) return Status::IOError("writing " + path);
  return end;
}

void AddReplicationCommands(CLI::App& app, CliContext& ctx, int& rc) {
  struct FollowArgs {
    std::string config_path;
    std::vector<std::string> nats;
    std::string stream = "LIMBIC";
    std::string agent;
    std::string mode = "async";
    std::optional<uint16_t> port;
  };
  auto f = std::make_shared<FollowArgs>();
  auto* follow = app.add_subcommand("follow",
                                    "run a hot standby that applies an agent's events stream from "
                                    "NATS JetStream (docs/scale.md)");
  follow->add_option("--nats", f->nats,
                     "NATS server URL(s), nats://HOST:PORT (repeat or comma-separate)");
  follow->add_option("--stream", f->stream, "the agent's JetStream stream")->capture_default_str();
  follow->add_option("--agent", f->agent, "the agent's name (subject limbic.AGENT.events)");
  follow->add_option("--mode", f->mode, "replication mode once promoted: async or quorum")
      ->check(CLI::IsMember({"async", "quorum"}))
      ->capture_default_str();
  follow->add_option("--config", f->config_path,
                     "config file (default: the built-in one); its replication section gives what "
                     "the flags do not");
  auto* follow_state = follow->add_option("--state", ctx.state_dir, "the standby's state dir");
  follow->add_option("--port", f->port, "serve the API on this port (0: any free port)");
  follow->callback([&ctx, &rc, &app, f, follow_state] {
    auto config = f->config_path.empty() ? DefaultConfig() : LoadConfigFile(f->config_path);
    if (!config.ok()) {
      rc = Fail(config.status());
      return;
    }
    if (app.get_option("--state")->count() > 0 || follow_state->count() > 0 ||
        std::getenv("LIMBIC_STATE"))
      config->state_dir = ctx.state_dir;
    ReplicationConfig& r = config->replication;
    if (!f->nats.empty()) r.nats = SplitServers(f->nats);
    if (!f->agent.empty()) r.agent = f->agent;
    if (f->stream != "LIMBIC" || r.stream.empty()) r.stream = f->stream;
    if (f->mode == "quorum") r.mode = ReplicationConfig::Mode::kQuorum;
    std::vector<std::string> errors;
    if (r.nats.empty()) errors.push_back("--nats: give the NATS server(s) of the stream");
    for (const std::string& url : r.nats)
      if (Status s = nats::CheckServerUrl(url); !s.ok()) errors.push_back("--nats: " + s.message());
    if (r.agent.empty())
      errors.push_back("--agent: give the agent's name");
    else if (Status s = nats::CheckName("--agent", r.agent); !s.ok())
      errors.push_back(s.message());
    if (Status s = nats::CheckName("--stream", r.stream); !s.ok()) errors.push_back(s.message());
    if (!errors.empty()) {
      rc = UsageError(ConfigErrors(errors).message());
      return;
    }
    if (f->port) config->api_port = *f->port;
    ctx.logger->set_level(spdlog::level::info);
    Runtime runtime(std::move(config).value(), ctx.logger);
    runtime.set_follow(true);
    rc = runtime.Run();
  });

  auto* promote = app.add_subcommand(
      "promote",
      "make the hot standby running on --state the primary (POST /v1/promote; docs/scale.md)");
  promote->add_option("--state", ctx.state_dir, "the standby's state dir");
  promote->callback([&ctx, &rc] {
    auto answer = ForwardRequest(ctx, "POST", "/v1/promote", nlohmann::json::object(),
                                 Status::FailedPrecondition("no standby runs on " + ctx.state_dir +
                                                            " (start one with limbic follow)"));
    if (!answer.ok()) {
      rc = Fail(answer.status());
      return;
    }
    if (ctx.json) {
      PrintJson(*answer);
    } else {
      std::printf("promoted: %s is the primary from seq %llu (stream seq %llu)\n",
                  ctx.state_dir.c_str(),
                  static_cast<unsigned long long>(answer->value("seq", uint64_t{0})),
                  static_cast<unsigned long long>(answer->value("stream_seq", uint64_t{0})));
    }
    rc = 0;
  });
}

}  // namespace limbic::runtime
