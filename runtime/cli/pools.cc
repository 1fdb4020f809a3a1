// percept / thread: the offline admin path (arousal, action and attention
// are in cli_outbox.cc). Each write builds the same request object the HTTP
// API takes and goes through state::Build* and Engine::Commit, so both
// front ends validate alike.
#include "runtime/cli/pools.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace limbic::runtime {
namespace pools {

// `percept import`: one request object per line in, one ack line out per
// percept once it is durable. Up to kWindow requests are in flight, so the
// log commits them in groups; when input pauses, pending acks are flushed
// rather than held until the next line. A bad line is reported and skipped.
int ImportPercepts(Engine& engine, const std::string& path) {
  constexpr size_t kWindow = 4096;
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Fail(Status::IOError("cannot read " + path + ": " + std::strerror(errno)));
  }
  size_t line_no = 0, acked = 0, rejected = 0;
  Status broken;
  auto handle = [&](std::string_view line) {
    ++line_no;
    if (line.empty()) return;
    auto req = ParseInputJson(line);
    Result<state::Events> events =
        !req.ok() ? Result<state::Events>(req.status())
                  : state::BuildPerceptAdd(*req, engine.next_seq());
    auto ack = [&, n = line_no](const Status& st, std::span<const state::Event> ev) {
      if (!st.ok()) {
        broken = st;
        return;
      }
      ++acked;
      std::printf("{\"line\":%zu,\"id\":\"%s\",\"seq\":%llu}\n", n,
                  ev.front().Str("percept_id").c_str(),
                  static_cast<unsigned long long>(ev.front().seq));
    };
    Status s = events.ok() ? engine.Submit(std::move(events).value(), ack) : events.status();
    if (!s.ok()) {
      ++rejected;
      std::fprintf(stderr, "limbic: %s line %zu: %s\n", path.c_str(), line_no, s.message().c_str());
    }
  };

  std::string buf;
  bool eof = false;
  while (broken.ok() && !eof) {
    if (engine.pending_batches() > 0) {
      pollfd in{fd, POLLIN, 0};
      bool idle = ::poll(&in, 1, 1) == 0;
      // Flush acks when input pauses or too much is in flight.
      (void)engine.Poll(idle || engine.pending_batches() >= kWindow);
      std::fflush(stdout);
      if (idle) continue;
    }
    char chunk[65536];
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      eof = true;
      if (!buf.empty()) handle(buf);
      break;
    }
    buf.append(chunk, static_cast<size_t>(got));
    size_t start = 0;
    for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
      handle(std::string_view(buf).substr(start, nl - start));
    buf.erase(0, start);
  }
  if (fd != 0) ::close(fd);
  Status s = engine.WaitIdle();
  std::fflush(stdout);
  if (!s.ok()) return Fail(s);
  if (!broken.ok()) return Fail(broken);
  std::fprintf(stderr, "imported %zu percepts, rejected %zu lines\n", acked, rejected);
  return rejected ? 1 : 0;
}

struct PerceptArgs {
  std::string id, source, type, text, data, thread, reason;
  std::optional<double> intensity;
  bool has_text = false;  // --text given, even empty
  std::string import_path = "-";
  // list
  std::string status, min_age, max_age;
  size_t limit = 50;
};

int AddPerceptAction(const CliContext& ctx, const PerceptArgs& a) {
  auto data = ObjectFlag(a.data, "--data");
  if (!data.ok()) return Fail(data.status());
  json req = {{"source", a.source}, {"type", a.type}, {"data", *data}};
  PutIf(req, "intensity", a.intensity);
  if (a.has_text) req["text"] = a.text;
  PutIf(req, "thread_id", a.thread);
  PutIf(req, "id", a.id);
  return WithWriter(ctx, {"add_percept", {}, req}, [&](Engine& e) {
    return CommitAndReport(ctx, e, state::BuildPerceptAdd(req, e.next_seq()), "percept_id");
  });
}

int ImportPerceptsAction(const CliContext& ctx, const PerceptArgs& a) {
  // Not forwarded: a running runtime takes lines on its stdin sensor or POST /v1/percepts.
  return WithWriter(ctx, Forward{}, [&](Engine& e) { return ImportPercepts(e, a.import_path); });
}

// A change to percept a.id: `build` makes its events from `req` with
// --reason; a running runtime gets the API operation `op` on a.id.
int ChangePercept(const CliContext& ctx, const PerceptArgs& a, json req, const char* op,
                  Result<state::Events> (*build)(std::string_view, const json&)) {
  PutIf(req, "reason", a.reason);
  return WithWriter(ctx, {op, {{"id", a.id}}, req}, [&](Engine& e) {
    return CommitAndReport(ctx, e, build(a.id, req), "percept_id");
  });
}

int AssignPercept(const CliContext& ctx, const PerceptArgs& a) {
  return ChangePercept(ctx, a, {{"thread_id", a.thread}}, "assign_percept",
                       state::BuildPerceptAssign);
}
int ProcessPercept(const CliContext& ctx, const PerceptArgs& a) {
  return ChangePercept(ctx, a, json::object(), "process_percept", state::BuildPerceptProcess);
}
int DropPercept(const CliContext& ctx, const PerceptArgs& a) {
  return ChangePercept(ctx, a, json::object(), "drop_percept", state::BuildPerceptDrop);
}
int RemovePercept(const CliContext& ctx, const PerceptArgs& a) {
  return ChangePercept(ctx, a, json::object(), "remove_percept", state::BuildPerceptRemove);
}

int ShowPercept(const CliContext& ctx, const PerceptArgs& a) {
  return ShowRecord(ctx, state::Pool::kPercepts, "percept", a.id,
                    [&](Engine&, const json& p, TimeMs now) -> Result<json> {
                      return state::PerceptWithRecency(p, now, ctx.recency);
                    });
}

int ListPercepts(const CliContext& ctx, const PerceptArgs& l) {
  return WithReader(ctx, [&](Engine& e, TimeMs now) {
    state::PerceptQuery q;
    if (!l.thread.empty()) q.thread_id = l.thread;
    if (!l.source.empty()) q.source = l.source;
    if (!l.type.empty()) q.type = l.type;
    if (!l.status.empty()) q.status = l.status;
    for (auto [text, out] : {std::pair{&l.min_age, &q.min_age}, {&l.max_age, &q.max_age}}) {
      if (text->empty()) continue;
      auto d = ParseDuration(*text);
      if (!d.ok()) return Fail(d.status());
      *out = *d;
    }
    q.limit = l.limit;
    auto percepts = e.projection().QueryPercepts(q, now);
    if (!percepts.ok()) return Fail(percepts.status());
    json out = json::array();
    for (const json& p : *percepts) out.push_back(state::PerceptWithRecency(p, now, ctx.recency));
    if (ctx.json) {
      PrintJson(out);
      return 0;
    }
    std::printf("%-12s %-9s %-12s %-18s %5s %5s %-10s %s\n", "ID", "STATUS", "SOURCE", "TYPE",
                "EFF", "AGE", "THREAD", "TEXT");
    for (const json& p : out)
      std::printf("%-12s %-9s %-12s %-18s %5.2f %5s %-10s %s\n", Str(p["id"]).c_str(),
                  Str(p["status"]).c_str(), Short(Str(p["source"]), 12).c_str(),
                  Short(Str(p["type"]), 18).c_str(), p["effective_intensity"].get<double>(),
                  Age(p["age_ms"].get<TimeMs>()).c_str(), Str(p["thread_id"]).c_str(),
                  Short(p.value("text", ""), 40).c_str());
    return 0;
  });
}

// The flags of a subcommand that names one percept: ID and --reason.
CLI::App* PerceptCommand(CLI::App* cmd, const char* name, const char* about, PerceptArgs& a) {
  auto* sub = cmd->add_subcommand(name, about);
  sub->add_option("id", a.id, "percept id")->required();
  sub->add_option("--reason", a.reason, "why");
  return sub;
}

void AddPercept(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("percept", "add, assign, process, drop, remove and list percepts");
  cmd->require_subcommand(1);
  auto a = std::make_shared<PerceptArgs>();

  auto* add = cmd->add_subcommand("add", "record a new percept");
  add->add_option("--source", a->source, "where it came from (e.g. github)")->required();
  add->add_option("--type", a->type, "what kind of thing it is (e.g. issues.opened)")->required();
  add->add_option("--intensity", a->intensity, "0..1 (default 0.5)");
  add->add_option("--text", a->text, "its text")->each([a](const std::string&) {
    a->has_text = true;
  });
  add->add_option("--data", a->data, "a JSON object of structured data");
  add->add_option("--thread", a->thread, "assign it to this thread at once");
  add->add_option("--id", a->id, "use this id instead of a generated one");
  add->callback(Action(ctx, rc, a, AddPerceptAction));

  auto* imp = cmd->add_subcommand(
      "import", "add percepts from JSON lines of request objects; prints an ack line per durable percept");
  imp->add_option("file", a->import_path, "file to read, - for standard input")
      ->capture_default_str();
  imp->callback(Action(ctx, rc, a, ImportPerceptsAction));

  auto* assign = cmd->add_subcommand("assign", "assign a percept to a thread");
  assign->add_option("id", a->id, "percept id")->required();
  assign->add_option("--thread", a->thread, "thread id")->required();
  assign->add_option("--reason", a->reason, "why");
  assign->callback(Action(ctx, rc, a, AssignPercept));
  PerceptCommand(cmd, "process", "mark a percept processed", *a)
      ->callback(Action(ctx, rc, a, ProcessPercept));
  PerceptCommand(cmd, "drop", "drop a percept (ignored, kept in the pool)", *a)
      ->callback(Action(ctx, rc, a, DropPercept));
  PerceptCommand(cmd, "remove", "remove a percept from the pool (the log keeps it)", *a)
      ->callback(Action(ctx, rc, a, RemovePercept));

  auto* show = cmd->add_subcommand("show", "one percept, with its age and effective intensity");
  show->add_option("id", a->id, "percept id")->required();
  show->callback(Action(ctx, rc, a, ShowPercept));

  auto* list = cmd->add_subcommand("list", "query percepts, newest first");
  list->add_option("--thread", a->thread, "assigned to this thread");
  list->add_option("--source", a->source, "from this source");
  list->add_option("--type", a->type, "of this type");
  list->add_option("--status", a->status, "new, assigned, processed or dropped");
  list->add_option("--min-age", a->min_age, "at least this old (e.g. 10m)");
  list->add_option("--max-age", a->max_age, "at most this old (e.g. 1h)");
  list->add_option("--limit", a->limit, "at most this many (0 = all)")->capture_default_str();
  list->callback(Action(ctx, rc, a, ListPercepts));
}

struct ThreadArgs {
  std::string id, goal, status, state, reason, outcome, from_percept;
  std::optional<double> salience;
  std::vector<std::string> percepts;
  std::string list_status = "active";
};

int CreateThread(const CliContext& ctx, const ThreadArgs& a) {
  auto st = ObjectFlag(a.state, "--state");
  if (!st.ok()) return Fail(st.status());
  json req = {{"goal", a.goal}};
  PutIf(req, "salience", a.salience);
  if (!st->empty()) req["state"] = *st;
  if (!a.percepts.empty()) req["percepts"] = a.percepts;
  PutIf(req, "from_percept", a.from_percept);
  PutIf(req, "id", a.id);
  PutIf(req, "reason", a.reason);
  return WithWriter(ctx, {"create_thread", {}, req}, [&](Engine& e) {
    return CommitAndReport(ctx, e, state::BuildThreadCreate(req, e.next_seq()), "thread_id");
  });
}

int UpdateThread(const CliContext& ctx, const ThreadArgs& a) {
  auto st = ObjectFlag(a.state, "--state");
  if (!st.ok()) return Fail(st.status());
  json req = json::object();
  PutIf(req, "status", a.status);
  PutIf(req, "salience", a.salience);
  if (!a.state.empty()) req["state"] = *st;
  if (!a.percepts.empty()) req["add_percepts"] = a.percepts;
  PutIf(req, "reason", a.reason);
  PutIf(req, "outcome", a.outcome);
  return WithWriter(ctx, {"update_thread", {{"id", a.id}}, req}, [&](Engine& e) {
    return CommitAndReport(ctx, e, state::BuildThreadUpdate(a.id, req), "thread_id");
  });
}

int ShowThread(const CliContext& ctx, const ThreadArgs& a) {
  return ShowRecord(ctx, state::Pool::kThreads, "thread", a.id,
                    [&](Engine& e, const json& t, TimeMs now) -> Result<json> {
                      auto n = e.projection().CountUnprocessed(a.id);
                      if (!n.ok()) return n.status();
                      return state::ThreadWithRecency(t, *n, now, ctx.recency);
                    });
}

int DeleteThread(const CliContext& ctx, const ThreadArgs& a) {
  json req = json::object();
  PutIf(req, "reason", a.reason);
  return WithWriter(ctx, {"delete_thread", {{"id", a.id}}, req}, [&](Engine& e) {
    return CommitAndReport(ctx, e, state::BuildThreadDelete(a.id, req), "thread_id");
  });
}

int ListThreads(const CliContext& ctx, const ThreadArgs& a) {
  return WithReader(ctx, [&](Engine& e, TimeMs now) {
    std::optional<std::string> status;
    if (a.list_status != "all") status = a.list_status;
    auto threads = state::ThreadsBySalience(e.projection(), status, now, ctx.recency);
    if (!threads.ok()) return Fail(threads.status());
    json out = std::move(*threads);
    if (ctx.json) {
      PrintJson(out);
      return 0;
    }
    std::printf("%-12s %-9s %5s %5s %6s %5s %s\n", "ID", "STATUS", "SAL", "EFF", "UNPROC", "IDLE",
                "GOAL");
    for (const json& t : out)
      std::printf("%-12s %-9s %5.2f %5.2f %6zu %5s %s\n", Str(t["id"]).c_str(),
                  Str(t["status"]).c_str(), t["salience"].get<double>(),
                  t["effective_salience"].get<double>(), t["unprocessed"].get<size_t>(),
                  Age(t["idle_ms"].get<TimeMs>()).c_str(), Short(Str(t["goal"]), 50).c_str());
    return 0;
  });
}

void AddThread(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("thread", "create, update, list and delete threads");
  cmd->require_subcommand(1);
  auto args = std::make_shared<ThreadArgs>();

  auto* create = cmd->add_subcommand("create", "start a thread of attention");
  create->add_option("--goal", args->goal, "what the thread is for")->required();
  create->add_option("--salience", args->salience, "0..1 (default 0.5)");
  create->add_option("--state", args->state, "initial state: JSON {phase, context, next_step}");
  create->add_option("--percept", args->percepts, "assign this percept (repeatable)");
  create->add_option("--from-percept", args->from_percept,
                     "the percept that started it (assigned to it)");
  create->add_option("--id", args->id, "use this id instead of a generated one");
  create->add_option("--reason", args->reason, "why");
  create->callback(Action(ctx, rc, args, CreateThread));

  auto* update = cmd->add_subcommand("update", "change a thread's status, salience or state");
  update->add_option("id", args->id, "thread id")->required();
  update->add_option("--status", args->status, "active, paused, frozen or complete");
  update->add_option("--salience", args->salience, "0..1");
  update->add_option("--state", args->state, "JSON merge patch into {phase, context, next_step}");
  update->add_option("--add-percept", args->percepts, "assign this percept (repeatable)");
  update->add_option("--reason", args->reason, "why (kept in the events)");
  update->add_option("--outcome", args->outcome, "how it ended (with --status complete)");
  update->callback(Action(ctx, rc, args, UpdateThread));

  auto* show = cmd->add_subcommand("show", "one thread, with its effective salience");
  show->add_option("id", args->id, "thread id")->required();
  show->callback(Action(ctx, rc, args, ShowThread));

  auto* del = cmd->add_subcommand("delete", "delete a thread (the log keeps its history)");
  del->add_option("id", args->id, "thread id")->required();
  del->add_option("--reason", args->reason, "why");
  del->callback(Action(ctx, rc, args, DeleteThread));

  auto* list = cmd->add_subcommand("list", "threads by effective salience, highest first");
  list->add_option("--status", args->list_status, "active, paused, frozen, complete or all")
      ->capture_default_str();
  list->callback(Action(ctx, rc, args, ListThreads));
}

}  // namespace pools

void AddPoolCommands(CLI::App& app, CliContext& ctx, int& rc) {
  using namespace pools;
  AddPercept(app, ctx, rc);
  AddThread(app, ctx, rc);
  AddArousal(app, ctx, rc);
  AddAction(app, ctx, rc);
  AddAttention(app, ctx, rc);
}

}  // namespace limbic::runtime
