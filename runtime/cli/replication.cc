// follow / promote, and the stream reader of `replay --from nats://`:
// the command line of replication (runtime/replication/replicator.h, docs/scale.md).
#include <cstdio>
#include <fstream>

#include "base/env.h"
#include "base/nats.h"
#include "runtime/api/api.h"
#include "runtime/cli/cli.h"
#include "runtime/config.h"
#include "runtime/mind/mind.h"
#include "runtime/replication/agent_stream.h"
#include "runtime/replication/follower.h"
#include "runtime/replication/replicator.h"
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
  auto last = ReadStreamEnd(**conn, stream, agent);
  if (!last.ok()) return last.status();
  if (last->event_seq == 0) {
    // A stream that once held messages and holds none now was purged.
    auto info = (*conn)->GetStream(stream);
    const std::string removed = info.ok() && info->messages == 0 && info->last_seq > 0
                                    ? ": its messages through stream seq " +
                                          std::to_string(info->last_seq) + " were removed"
                                    : "";
    return Status::NotFound("stream " + stream + " holds no events of agent " + agent +
                            " (subject limbic." + agent + ".events)" + removed);
  }
  const uint64_t end = last->event_seq;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError("cannot write " + path);
  uint64_t taken = 0;  // the stream seq of the last message written out
  LIMBIC_RETURN_IF_ERROR(
      ReadStream(**conn, stream, agent, 1, 1, end, [&](const nats::Message& m, uint64_t) {
        out << m.data << '\n';
        taken = m.stream_seq;
        return Status::OK();
      }));
  // The last message must end the history: one that repeats an earlier
  // seq was written after it by someone else, and the events between
  // would be left out.
  if (taken != last->stream_seq)
    return Status::Corruption(
        "stream " + stream + ": its last message of agent " + agent + " (stream seq " +
        std::to_string(last->stream_seq) + ") holds event seq " + std::to_string(end) +
        ", which the stream already held at stream seq " + std::to_string(taken) +
        ": that message was not written by a primary of the agent, and a rebuild through it "
        "would leave out the events after stream seq " +
        std::to_string(taken) + " (remove it from the stream)");
  out.close();
  if (!out) return Status::IOError("writing " + path);
  return end;
}

namespace {

// `limbic promote` on a standby's state dir no process holds, as a
// running standby does it (runtime/replication/follower.h): its whole log is checked
// against its stream (standby.json), the rest of the stream is applied,
// primary_promoted is published after the stream's last message (which
// fences the old primary) and only then recorded here, and standby.json
// goes. A refusal writes nothing but the stream's own events: the dir is
// still a standby.
Result<nlohmann::json> PromoteOffline(const CliContext& ctx) {
  if (!Env::Default()->FileExists(StandbyFilePath(ctx.state_dir)))
    return Status::FailedPrecondition("no standby runs on " + ctx.state_dir + ", and " +
                                      StandbyFilePath(ctx.state_dir) +
                                      " does not say it was one (start one with limbic follow)");
  auto text = ReadSmallFile(StandbyFilePath(ctx.state_dir), 64 << 10);
  if (!text.ok()) return text.status();
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc["nats"].is_array() || !doc["stream"].is_string() ||
      !doc["agent"].is_string())
    return Status::Corruption(StandbyFilePath(ctx.state_dir) +
                              " is not {nats, stream, agent, mode}");
  ReplicationConfig r;
  for (const auto& u : doc["nats"])
    if (u.is_string()) r.nats.push_back(u.get<std::string>());
  r.stream = doc["stream"].get<std::string>();
  r.agent = doc["agent"].get<std::string>();

  auto engine = ctx.OpenLocked();
  if (!engine.ok()) return engine.status();
  state::Engine& e = **engine;
  nats::ConnectOptions co;
  co.servers = r.nats;
  co.name = "limbic promote " + r.agent;
  co.request_timeout_ms = static_cast<int>(r.timeout);
  auto conn = nats::Connection::Connect(co);
  if (!conn.ok()) return conn.status();
  auto end = ReadStreamEnd(**conn, r.stream, r.agent);
  if (!end.ok()) return end.status().WithContext("learning where the stream ends");
  const uint64_t local = e.applied_seq();
  LIMBIC_RETURN_IF_ERROR(CheckLogIsStream(**conn, r.stream, r.agent, *end, e.events_dir(), 1, local)
                             .WithContext("not promoted"));
  // The rest of the stream, through its last message, as the standby would.
  auto apply = [&](const nats::Message& m, uint64_t) {
    auto event = state::DecodeEvent(m.data);
    if (!event.ok())
      return event.status().WithContext("stream seq " + std::to_string(m.stream_seq));
    return e.SubmitReplicated({std::move(event).value()}, nullptr);
  };
  if (end->event_seq > local) {
    auto start = StreamSeqOf(**conn, r.stream, r.agent, *end, local + 1);
    if (!start.ok()) return start.status();
    LIMBIC_RETURN_IF_ERROR(
        ReadStream(**conn, r.stream, r.agent, *start, local + 1, end->event_seq, apply));
    LIMBIC_RETURN_IF_ERROR(e.WaitIdle());
  }
  auto promoted = PublishPromotion(**conn, r.stream, r.agent, *end, SystemClock::Default()->Now(),
                                   static_cast<int>(r.timeout));
  if (!promoted.ok()) return promoted.status().WithContext("not promoted, still a standby");
  // What the stream now holds, this log takes.
  LIMBIC_RETURN_IF_ERROR(e.SubmitReplicated({*promoted}, nullptr)
                             .WithContext("the stream took primary_promoted but this state dir "
                                          "could not record it; run limbic promote again"));
  LIMBIC_RETURN_IF_ERROR(e.WaitIdle());
  (void)Env::Default()->RemoveFile(StandbyFilePath(ctx.state_dir));
  return nlohmann::json{{"promoted", true},
                        {"seq", promoted->seq},
                        {"stream_seq", end->stream_seq},
                        {"offline", true}};
}

struct FollowArgs {
  std::string config_path;
  std::vector<std::string> nats;
  std::string stream = "LIMBIC";
  std::string agent;
  std::string mode = "async";
  std::optional<uint16_t> port;
};

// `limbic follow`: the config's replication section with the flags over it;
// `state_given`: --state or $LIMBIC_STATE overrides the config's state_dir.
int Follow(const CliContext& ctx, const FollowArgs& f, bool state_given) {
  auto config = f.config_path.empty() ? DefaultConfig() : LoadConfigFile(f.config_path);
  if (!config.ok()) return Fail(config.status());
  if (state_given) config->state_dir = ctx.state_dir;
  ReplicationConfig& r = config->replication;
  if (!f.nats.empty()) r.nats = SplitServers(f.nats);
  if (!f.agent.empty()) r.agent = f.agent;
  if (f.stream != "LIMBIC" || r.stream.empty()) r.stream = f.stream;
  if (f.mode == "quorum") r.mode = ReplicationConfig::Mode::kQuorum;
  std::vector<std::string> errors;
  if (r.nats.empty()) errors.push_back("--nats: give the NATS server(s) of the stream");
  for (const std::string& url : r.nats)
    if (Status s = nats::CheckServerUrl(url); !s.ok()) errors.push_back("--nats: " + s.message());
  if (r.agent.empty())
    errors.push_back("--agent: give the agent's name");
  else if (Status s = nats::CheckName("--agent", r.agent); !s.ok())
    errors.push_back(s.message());
  if (Status s = nats::CheckName("--stream", r.stream); !s.ok()) errors.push_back(s.message());
  if (!errors.empty()) return UsageError(ConfigErrors(errors).message());
  if (f.port) config->api_port = *f.port;
  ctx.logger->set_level(spdlog::level::info);
  Runtime runtime(std::move(config).value(), ctx.logger, MakeApi);
  runtime.set_follow(true);
  runtime.set_mind(MakeMind, Mind::CheckConfig);
  return runtime.Run();
}

// `limbic promote`: the running standby promotes itself; with none
// running, the state dir is promoted here.
int Promote(const CliContext& ctx) {
  const Status none_running = Status::NotFound("no limbic serves " + ctx.state_dir);
  auto answer = ForwardRequest(ctx, "promote", nlohmann::json::object(), none_running);
  if (!answer.ok() && answer.status().IsNotFound() &&
      answer.status().message() == none_running.message())
    answer = PromoteOffline(ctx);
  if (!answer.ok()) return Fail(answer.status());
  if (ctx.json) {
    PrintJson(*answer);
  } else {
    std::printf(
        "promoted: %s is the primary from seq %llu (stream seq %llu)%s\n", ctx.state_dir.c_str(),
        static_cast<unsigned long long>(answer->value("seq", uint64_t{0})),
        static_cast<unsigned long long>(answer->value("stream_seq", uint64_t{0})),
        answer->value("offline", false)
            ? "; start it with limbic run and a replication section naming its agent and stream"
            : "");
  }
  return 0;
}

}  // namespace

void AddReplicationCommands(CLI::App& app, CliContext& ctx, int& rc) {
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
    rc = Follow(ctx, *f,
                app.get_option("--state")->count() > 0 || follow_state->count() > 0 ||
                    std::getenv("LIMBIC_STATE"));
  });

  auto* promote = app.add_subcommand(
      "promote",
      "make the hot standby running on --state the primary (POST /v1/promote; docs/scale.md)");
  promote->add_option("--state", ctx.state_dir, "the standby's state dir");
  promote->callback([&ctx, &rc] { rc = Promote(ctx); });
}

}  // namespace limbic::runtime
