// percept / thread: the offline admin path (arousal, action and attention
// are in cli_outbox.cc). Each write builds the same request object the HTTP
// API takes and goes through state::Build* and Engine::Commit, so both
// front ends validate alike.
#include "runtime/cli_pools.h"

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

void AddPercept(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("percept", "add, assign, process, drop, remove and list percepts");
  cmd->require_subcommand(1);

  struct Add {
    std::string id, source, type, text, data, thread;
    std::optional<double> intensity;
    bool has_text = false;
  };
  auto add = std::make_shared<Add>();
  auto* a = cmd->add_subcommand("add", "record a new percept");
  a->add_option("--source", add->source, "where it came from (e.g. github)")->required();
  a->add_option("--type", add->type, "what kind of thing it is (e.g. issues.opened)")->required();
  a->add_option("--intensity", add->intensity, "0..1 (default 0.5)");
  a->add_option("--text", add->text, "its text");
  a->add_option("--data", add->data, "a JSON object of structured data");
  a->add_option("--thread", add->thread, "assign it to this thread at once");
  a->add_option("--id", add->id, "use this id instead of a generated one");
  a->callback([&ctx, &rc, add, a] {
    auto data = ObjectFlag(add->data, "--data");
    if (!data.ok()) {
      rc = Fail(data.status());
      return;
    }
    json req = {{"source", add->source}, {"type", add->type}, {"data", *data}};
    PutIf(req, "intensity", add->intensity);
    if (a->count("--text")) req["text"] = add->text;
    PutIf(req, "thread_id", add->thread);
    PutIf(req, "id", add->id);
    rc = WithWriter(ctx, {"add_percept", {}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildPerceptAdd(req, e.next_seq()), "percept_id");
    });
  });

  auto import_path = std::make_shared<std::string>("-");
  auto* imp = cmd->add_subcommand(
      "import", "add percepts from JSON lines of request objects; prints an ack line per durable percept");
  imp->add_option("file", *import_path, "file to read, - for standard input")->capture_default_str();
  imp->callback([&ctx, &rc, import_path] {
    // Not forwarded: a running runtime takes lines on its stdin sensor or POST /v1/percepts.
    rc = WithWriter(ctx, Forward{}, [&](Engine& e) { return ImportPercepts(e, *import_path); });
  });

  struct Target {
    std::string id, thread, reason;
  };
  auto t = std::make_shared<Target>();
  auto* assign = cmd->add_subcommand("assign", "assign a percept to a thread");
  assign->add_option("id", t->id, "percept id")->required();
  assign->add_option("--thread", t->thread, "thread id")->required();
  assign->add_option("--reason", t->reason, "why");
  assign->callback([&ctx, &rc, t] {
    json req = {{"thread_id", t->thread}};
    PutIf(req, "reason", t->reason);
    rc = WithWriter(ctx, {"assign_percept", {{"id", t->id}}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildPerceptAssign(t->id, req), "percept_id");
    });
  });
  auto* process = cmd->add_subcommand("process", "mark a percept processed");
  process->add_option("id", t->id, "percept id")->required();
  process->add_option("--reason", t->reason, "why");
  process->callback([&ctx, &rc, t] {
    json req = json::object();
    PutIf(req, "reason", t->reason);
    rc = WithWriter(ctx, {"process_percept", {{"id", t->id}}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildPerceptProcess(t->id, req), "percept_id");
    });
  });
  auto* drop = cmd->add_subcommand("drop", "drop a percept (ignored, kept in the pool)");
  drop->add_option("id", t->id, "percept id")->required();
  drop->add_option("--reason", t->reason, "why");
  drop->callback([&ctx, &rc, t] {
    json req = json::object();
    PutIf(req, "reason", t->reason);
    rc = WithWriter(ctx, {"drop_percept", {{"id", t->id}}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildPerceptDrop(t->id, req), "percept_id");
    });
  });
  auto* remove = cmd->add_subcommand("remove", "remove a percept from the pool (the log keeps it)");
  remove->add_option("id", t->id, "percept id")->required();
  remove->add_option("--reason", t->reason, "why");
  remove->callback([&ctx, &rc, t] {
    json req = json::object();
    PutIf(req, "reason", t->reason);
    rc = WithWriter(ctx, {"remove_percept", {{"id", t->id}}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildPerceptRemove(t->id, req), "percept_id");
    });
  });

  auto* show = cmd->add_subcommand("show", "one percept, with its age and effective intensity");
  show->add_option("id", t->id, "percept id")->required();
  show->callback([&ctx, &rc, t] {
    rc = ShowRecord(ctx, state::Pool::kPercepts, "percept", t->id,
                    [&](Engine&, const json& p, TimeMs now) -> Result<json> {
                      return state::PerceptWithRecency(p, now, ctx.recency);
                    });
  });

  struct List {
    std::string thread, source, type, status, min_age, max_age;
    size_t limit = 50;
  };
  auto l = std::make_shared<List>();
  auto* list = cmd->add_subcommand("list", "query percepts, newest first");
  list->add_option("--thread", l->thread, "assigned to this thread");
  list->add_option("--source", l->source, "from this source");
  list->add_option("--type", l->type, "of this type");
  list->add_option("--status", l->status, "new, assigned, processed or dropped");
  list->add_option("--min-age", l->min_age, "at least this old (e.g. 10m)");
  list->add_option("--max-age", l->max_age, "at most this old (e.g. 1h)");
  list->add_option("--limit", l->limit, "at most this many (0 = all)")->capture_default_str();
  list->callback([&ctx, &rc, l] {
    rc = WithReader(ctx, [&](Engine& e, TimeMs now) {
      state::PerceptQuery q;
      if (!l->thread.empty()) q.thread_id = l->thread;
      if (!l->source.empty()) q.source = l->source;
      if (!l->type.empty()) q.type = l->type;
      if (!l->status.empty()) q.status = l->status;
      for (auto [text, out] : {std::pair{&l->min_age, &q.min_age}, {&l->max_age, &q.max_age}}) {
        if (text->empty()) continue;
        auto d = ParseDuration(*text);
        if (!d.ok()) return Fail(d.status());
        *out = *d;
      }
      q.limit = l->limit;
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
  });
}

void AddThread(CLI::App& app, CliContext& ctx, int& rc) {
  auto* cmd = app.add_subcommand("thread", "create, update, list and delete threads");
  cmd->require_subcommand(1);

  struct Args {
    std::string id, goal, status, state, reason, outcome, from_percept;
    std::optional<double> salience;
    std::vector<std::string> percepts;
  };
  auto args = std::make_shared<Args>();
  auto* create = cmd->add_subcommand("create", "start a thread of attention");
  create->add_option("--goal", args->goal, "what the thread is for")->required();
  create->add_option("--salience", args->salience, "0..1 (default 0.5)");
  create->add_option("--state", args->state, "initial state: JSON {phase, context, next_step}");
  create->add_option("--percept", args->percepts, "assign this percept (repeatable)");
  create->add_option("--from-percept", args->from_percept,
                     "the percept that started it (assigned to it)");
  create->add_option("--id", args->id, "use this id instead of a generated one");
  create->add_option("--reason", args->reason, "why");
  create->callback([&ctx, &rc, args] {
    auto st = ObjectFlag(args->state, "--state");
    if (!st.ok()) {
      rc = Fail(st.status());
      return;
    }
    json req = {{"goal", args->goal}};
    PutIf(req, "salience", args->salience);
    if (!st->empty()) req["state"] = *st;
    if (!args->percepts.empty()) req["percepts"] = args->percepts;
    PutIf(req, "from_percept", args->from_percept);
    PutIf(req, "id", args->id);
    PutIf(req, "reason", args->reason);
    rc = WithWriter(ctx, {"create_thread", {}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildThreadCreate(req, e.next_seq()), "thread_id");
    });
  });

  auto* update = cmd->add_subcommand("update", "change a thread's status, salience or state");
  update->add_option("id", args->id, "thread id")->required();
  update->add_option("--status", args->status, "active, paused, frozen or complete");
  update->add_option("--salience", args->salience, "0..1");
  update->add_option("--state", args->state, "JSON merge patch into {phase, context, next_step}");
  update->add_option("--add-percept", args->percepts, "assign this percept (repeatable)");
  update->add_option("--reason", args->reason, "why (kept in the events)");
  update->add_option("--outcome", args->outcome, "how it ended (with --status complete)");
  update->callback([&ctx, &rc, args] {
    auto st = ObjectFlag(args->state, "--state");
    if (!st.ok()) {
      rc = Fail(st.status());
      return;
    }
    json req = json::object();
    PutIf(req, "status", args->status);
    PutIf(req, "salience", args->salience);
    if (!args->state.empty()) req["state"] = *st;
    if (!args->percepts.empty()) req["add_percepts"] = args->percepts;
    PutIf(req, "reason", args->reason);
    PutIf(req, "outcome", args->outcome);
    rc = WithWriter(ctx, {"update_thread", {{"id", args->id}}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildThreadUpdate(args->id, req), "thread_id");
    });
  });

  auto* show = cmd->add_subcommand("show", "one thread, with its effective salience");
  show->add_option("id", args->id, "thread id")->required();
  show->callback([&ctx, &rc, args] {
    rc = ShowRecord(ctx, state::Pool::kThreads, "thread", args->id,
                    [&](Engine& e, const json& t, TimeMs now) -> Result<json> {
                      auto n = e.projection().CountUnprocessed(args->id);
                      if (!n.ok()) return n.status();
                      return state::ThreadWithRecency(t, *n, now, ctx.recency);
                    });
  });

  auto* del = cmd->add_subcommand("delete", "delete a thread (the log keeps its history)");
  del->add_option("id", args->id, "thread id")->required();
  del->add_option("--reason", args->reason, "why");
  del->callback([&ctx, &rc, args] {
    json req = json::object();
    PutIf(req, "reason", args->reason);
    rc = WithWriter(ctx, {"delete_thread", {{"id", args->id}}, req}, [&](Engine& e) {
      return CommitAndReport(ctx, e, state::BuildThreadDelete(args->id, req), "thread_id");
    });
  });

  auto list_status = std::make_shared<std::string>("active");
  auto* list = cmd->add_subcommand("list", "threads by effective salience, highest first");
  list->add_option("--status", *list_status, "active, paused, frozen, complete or all")
      ->capture_default_str();
  list->callback([&ctx, &rc, list_status] {
    rc = WithReader(ctx, [&](Engine& e, TimeMs now) {
      std::optional<std::string> status;
      if (*list_status != "all") status = *list_status;
      auto threads = state::ThreadsBySalience(e.projection(), status, now, ctx.recency);
      if (!threads.ok()) return Fail(threads.status());
      json out = std::move(*threads);
      if (ctx.json) {
        PrintJson(out);
        return 0;
      }
      std::printf("%-12s %-9s %5s %5s %6s %5s %s\n", "ID", "STATUS", "SAL", "EFF", "UNPROC",
                  "IDLE", "GOAL");
      for (const json& t : out)
        std::printf("%-12s %-9s %5.2f %5.2f %6zu %5s %s\n", Str(t["id"]).c_str(),
                    Str(t["status"]).c_str(), t["salience"].get<double>(),
                    t["effective_salience"].get<double>(), t["unprocessed"].get<size_t>(),
                    Age(t["idle_ms"].get<TimeMs>()).c_str(), Short(Str(t["goal"]), 50).c_str());
      return 0;
    });
  });
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
