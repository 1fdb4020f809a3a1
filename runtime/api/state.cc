// Time travel and forks over HTTP: the pools as they were at a seq, and a
// sandbox made from that point, with the same replay code as
// `limbic state show --at-seq` and `limbic fork` (state/replay.h,
// runtime/sandbox.h). Both replay the log from its start, which takes
// seconds on a long one: they run on a worker of their own, a few at a
// time, never on the io thread.
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "runtime/api/api.h"
#include "runtime/attention.h"
#include "runtime/config.h"
#include "state/engine.h"
#include "runtime/sandbox.h"
#include "state/recency.h"
#include "state/replay.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

// Replays waiting or running at once; more get 503 (a slider dragged fast
// asks for many: the page waits for one answer before it asks again).
constexpr size_t kMaxReplays = 4;

Result<uint64_t> SeqParam(const std::string& key, const json& v) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() == 0)
    return Status::InvalidArgument("field \"" + key + "\": must be a seq (1 or more), got " +
                                   v.dump());
  return v.get<uint64_t>();
}

// {count, items}: the first `limit` of a pool's listing.
json Listing(size_t count, std::vector<json> items) {
  return {{"count", count}, {"items", std::move(items)}};
}

// What GET /v1/state/at answers, from a rebuilt projection.
Result<json> PoolsAt(const state::TimeTravel& past, const state::RecencyParams& recency,
                     size_t limit) {
  const state::Projection& p = past.projection();
  const TimeMs now = past.replay().last_ts;  // effective values as they were then
  json pools = json::object();
  auto count = [&](state::Pool pool) { return p.Count(pool); };

  auto n_percepts = count(state::Pool::kPercepts);
  if (!n_percepts.ok()) return n_percepts.status();
  state::PerceptQuery q;
  q.limit = limit;
  auto percepts = p.QueryPercepts(q, now);
  if (!percepts.ok()) return percepts.status();
  std::vector<json> items;
  for (const json& x : *percepts) items.push_back(state::PerceptWithRecency(x, now, recency));
  pools["percepts"] = Listing(*n_percepts, std::move(items));

  auto n_threads = count(state::Pool::kThreads);
  if (!n_threads.ok()) return n_threads.status();
  auto threads = state::ThreadsBySalience(p, std::nullopt, now, recency, limit);
  if (!threads.ok()) return threads.status();
  pools["threads"] = Listing(*n_threads, std::move(*threads));

  auto n_actions = count(state::Pool::kActions);
  if (!n_actions.ok()) return n_actions.status();
  auto actions = p.ListActions(std::nullopt, limit);
  if (!actions.ok()) return actions.status();
  pools["actions"] = Listing(*n_actions, std::move(*actions));

  for (state::Pool pool : {state::Pool::kReflexes, state::Pool::kMemories}) {
    auto n = count(pool);
    if (!n.ok()) return n.status();
    std::vector<json> recs;
    Status s = p.ForEach(pool, [&](std::string_view, const json& rec) {
      recs.push_back(rec);
      return recs.size() < limit;
    });
    if (!s.ok()) return s;
    pools[std::string(state::PoolName(pool))] = Listing(*n, std::move(recs));
  }
  auto arousal = p.GetArousal();
  if (!arousal.ok()) return arousal.status();
  auto effective = EffectiveArousalNow(p, now, recency);
  if (!effective.ok()) return effective.status();
  (*arousal)["effective"] = *effective;
  json out{{"seq", past.replay().last_seq},    {"ts", FormatTime(past.replay().last_ts)},
           {"events", past.replay().events - past.replay().from_checkpoint},   {"seconds", past.replay().seconds},
           {"from_checkpoint", past.replay().from_checkpoint},
           {"arousal", *arousal},
           {"pools", std::move(pools)}};
  if (!past.replay().digest.empty()) out["digest"] = past.replay().digest;
  return out;
}

// `path` as one shell word.
std::string ShellWord(const std::string& path) {
  if (!path.empty() && path.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                              "0123456789/._-+=:,@") == std::string::npos)
    return path;
  std::string out = "'";
  for (char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "fork-<seq>", or "fork-<seq>-2", -3, ... when taken under `root`.
std::string DefaultForkName(const std::string& root, uint64_t seq) {
  namespace fs = std::filesystem;
  const std::string base = "fork-" + std::to_string(seq);
  std::error_code ec;
  for (int n = 1; n < 1000; ++n) {
    std::string name = n == 1 ? base : base + "-" + std::to_string(n);
    auto there = fs::symlink_status(fs::path(root) / name, ec);
    if (!fs::exists(there) || (fs::is_directory(there) && fs::is_empty(fs::path(root) / name, ec)))
      return name;
  }
  return base;  // MakeForkDir names what is wrong with it
}

}  // namespace

void Api::Replay(std::function<Result<json>()> job, std::function<void(Result<json>)> reply) {
  if (replays_ >= kMaxReplays)
    return reply(Status::Unavailable("already " + std::to_string(kMaxReplays) +
                                     " replays running or waiting: ask again when one answers"));
  ++replays_;
  replay_worker_.Post([this, job = std::move(job), reply = std::move(reply)]() mutable {
    Result<json> out = replay_worker_.Guarded<json>(job);
    boost::asio::post(svc_.ioc, [this, out = std::move(out), reply = std::move(reply)]() mutable {
      --replays_;
      reply(std::move(out));
    });
  });
}

std::span<const Api::Binding> Api::StateBindings() {
  static const Binding kBindings[] = {
      {"state_at", &Api::StateAt},
      {"fork", &Api::ForkState},
      // The inspector's files (ui.cc): one pattern per depth.
      {"ui", &Api::ServeUi},
      {"ui_file_1", &Api::ServeUi},
      {"ui_file_2", &Api::ServeUi},
      {"ui_file_3", &Api::ServeUi},
      {"ui_file_4", &Api::ServeUi},
  };
  return kBindings;
}

void Api::StateAt(HttpRequest& req, Responder respond) {
  auto text = Query(req, "seq");
  uint64_t seq = 0;
  if (text) {
    auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), seq);
    if (ec != std::errc() || ptr != text->data() + text->size()) seq = 0;
  }
  if (!text)
    return respond(ErrorResponse(Status::InvalidArgument(
        "query seq: required: the seq to look at, a whole number from 1 to the applied seq")));
  if (seq == 0)
    return respond(ErrorResponse(Status::InvalidArgument(
        "query seq: must be a seq, a whole number from 1 (the first event's) to the applied seq, "
        "got \"" + *text + "\"")));
  auto limit = QueryCount(req, "limit", 100, 1000);
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  // 0 would list every item (the pools' listings read 0 as "all").
  if (*limit == 0)
    return respond(ErrorResponse(Status::InvalidArgument("query limit: 1 to 1000 items per pool, got 0")));
  // The digest reads every record: the cost of the length of history, so
  // only when asked.
  const bool digest = QueryFlag(req, "digest");
  if (seq > svc_.engine.applied_seq())
    return respond(ErrorResponse(Status::InvalidArgument(
        "query seq: " + std::to_string(seq) + " is past the last applied seq " +
        std::to_string(svc_.engine.applied_seq()))));
  Replay(
      [dir = svc_.config.state_dir, seq, recency = svc_.config.recency, n = *limit,
       digest, log = log_] {
        auto past = state::TimeTravel::Open(dir, seq, nullptr, digest);
        if (!past.ok()) return Result<json>(past.status());
        for (const std::string& w : (*past)->replay().warnings) log->warn("state at: {}", w);
        return PoolsAt(**past, recency, n);
      },
      [respond](Result<json> out) {
        if (!out.ok()) return respond(ErrorResponse(out.status()));
        respond(HttpResponse::Json(200, *out));
      });
}

void Api::ForkState(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  for (const auto& [key, v] : body->items())
    if (key != "at_seq" && key != "at_time" && key != "into")
      return respond(ErrorResponse(
          Status::InvalidArgument("field \"" + key + "\": unknown (at_seq, at_time or into)")));
  ForkOptions options;
  options.from_state = svc_.config.state_dir;
  options.now = svc_.engine.clock().Now();
  if (body->contains("at_seq")) {
    auto seq = SeqParam("at_seq", (*body)["at_seq"]);
    if (!seq.ok()) return respond(ErrorResponse(seq.status()));
    options.at_seq = *seq;
  }
  if (body->contains("at_time")) {
    const json& t = (*body)["at_time"];
    // A time, or a duration before now ("10m"), as `limbic fork --at-time`.
    auto at = t.is_string()
                  ? ParseTimeOrAgo("field \"at_time\"", t.get<std::string>(), svc_.engine.clock().Now())
                  : Result<TimeMs>(Status::InvalidArgument(
                        "field \"at_time\": must be a time string (RFC 3339) or a duration such as 10m"));
    if (!at.ok()) return respond(ErrorResponse(at.status()));
    options.at_time = *at;
  }
  if (options.at_seq.has_value() == options.at_time.has_value())
    return respond(ErrorResponse(Status::InvalidArgument("give one of at_seq and at_time")));
  if (options.at_seq && *options.at_seq > svc_.engine.applied_seq())
    return respond(ErrorResponse(Status::InvalidArgument(
        "field \"at_seq\": " + std::to_string(*options.at_seq) +
        " is past the last applied seq " + std::to_string(svc_.engine.applied_seq()))));
  // Over the API a fork is a name under api.fork_root, never a path.
  std::string name;
  if (body->contains("into")) {
    const json& into = (*body)["into"];
    if (!into.is_string())
      return respond(ErrorResponse(Status::InvalidArgument(
          "field \"into\": must be a name (one path segment under api.fork_root), got " +
          into.dump())));
    name = into.get<std::string>();
    if (Status s = CheckForkName(name); !s.ok()) return respond(ErrorResponse(s));
  }
  Replay(
      [options, root = svc_.config.fork_root, name, log = log_]() mutable {
        // Unnamed, it is fork-<seq>: at a time, the seq is known once it
        // is built, under a name of its own, then renamed. Named here, on
        // the one replay thread, so two forks never pick one name.
        const bool by_time = name.empty() && !options.at_seq;
        if (name.empty())
          name = by_time ? ".building-fork-" + std::to_string(::getpid())
                         : DefaultForkName(root, *options.at_seq);
        auto dir = MakeForkDir(root, name);
        if (!dir.ok()) return Result<json>(dir.status());
        options.into = *dir;
        std::vector<std::string> warnings;
        auto info = Fork(options, &warnings);
        for (const std::string& w : warnings) log->warn("fork: {}", w);
        if (!info.ok()) {
          ::rmdir(options.into.c_str());  // only when the fork left it empty
          return Result<json>(info.status());
        }
        if (by_time) {
          const std::string named = root + "/" + DefaultForkName(root, info->at_seq);
          if (::rename(options.into.c_str(), named.c_str()) != 0) {
            Status s = Status::IOError("renaming " + options.into + " to " + named + ": " +
                                       std::strerror(errno));
            (void)state::RemoveTree(options.into);
            return Result<json>(s);
          }
          options.into = named;
        }
        json out = info->ToJson();
        out["into"] = options.into;
        out["command"] = "limbic run --state " + ShellWord(options.into) + " --port 0";
        return Result<json>(std::move(out));
      },
      [respond](Result<json> out) {
        if (!out.ok()) return respond(ErrorResponse(out.status()));
        respond(HttpResponse::Json(201, *out));
      });
}

}  // namespace limbic::runtime
