// `limbic mind status|wake|sleep|sessions|show|rerun` (docs/mind.md).
//
// status, wake and sleep ask the running runtime (its API, as every
// forwarded command does); sessions and show read the sessions pool, from
// the runtime when one runs, else from the state dir. rerun forks the state
// dir at a session's wake and runs one session there, in a runtime of its
// own in this process, with the model or prompt given.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <filesystem>

#include "base/env.h"
#include "base/json.h"
#include "runtime/api/api.h"
#include "runtime/cli/cli.h"
#include "runtime/config.h"
#include "runtime/mind/mind.h"
#include "runtime/runtime.h"
#include "runtime/sandbox.h"
#include "state/engine.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

struct MindArgs {
  std::string reason, thread, session, into, model, prompt, config;
  size_t limit = 20;
};

Status NoneRuns(const CliContext& ctx) {
  return Status::FailedPrecondition("no limbic runs on " + ctx.state_dir +
                                    ": the mind wakes in a running runtime (limbic run)");
}

// A session from the running runtime, else the state dir's pool.
Result<json> ReadSession(const CliContext& ctx, const std::string& id) {
  auto answer = ForwardRequest(ctx, "get_mind_session", json::object(), NoneRuns(ctx), 30000,
                               json{{"id", id}});
  if (answer.ok() || !answer.status().IsFailedPrecondition()) return answer;
  auto engine = ctx.OpenForRead();
  if (!engine.ok()) return engine.status();
  auto rec = (*engine)->projection().Get(state::Pool::kSessions, id);
  if (!rec.ok()) return rec.status();
  if (!rec->has_value()) return Status::NotFound("session " + id + " not found");
  return **rec;
}

// A field as the terminal shows it: outside text (a reason, a model's
// words, a tool's name) with its control characters as '?', so it cannot
// drive the terminal or forge a line.
std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "-";
  return ShownText(it->is_string() ? it->get<std::string>() : it->dump());
}

void PrintSession(const json& s) {
  std::printf("%s  %s  %s\n", Str(s, "id").c_str(), Str(s, "status").c_str(),
              s.contains("outcome") ? Str(s, "outcome").c_str() : "");
  std::printf("  woken   %s by %s (%s): %s\n", Str(s, "woken_at").c_str(), Str(s, "actor").c_str(),
              Str(s, "trigger").c_str(), Str(s, "reason").c_str());
  if (s.contains("thread_id") && !s["thread_id"].is_null())
    std::printf("  thread  %s\n", Str(s, "thread_id").c_str());
  if (s.contains("percept_ids") && !s["percept_ids"].empty())
    std::printf("  percepts %s\n", s["percept_ids"].dump().c_str());
  for (const json& st : s.value("steps", json::array())) {
    std::printf("  step %s  %s  %s in / %s out  %s ms\n", Str(st, "step").c_str(), Str(st, "model").c_str(),
                Str(st, "tokens_in").c_str(), Str(st, "tokens_out").c_str(), Str(st, "latency_ms").c_str());
    for (const json& c : st.value("tool_calls", json::array())) {
      std::printf("    %s %s", c.value("ok", false) ? "ok  " : "FAIL", Str(c, "name").c_str());
      if (c.contains("caused")) std::printf("  wrote seqs %s", c["caused"].dump().c_str());
      if (c.contains("error")) std::printf("  %s", Str(c, "error").c_str());
      std::printf("\n");
    }
    if (st.contains("text")) std::printf("    \"%s\"\n", Str(st, "text").c_str());
  }
  if (s.value("status", "") == "asleep")
    std::printf("  slept   %s: %s, %zu steps, %s tokens, %s ms%s%s\n", Str(s, "slept_at").c_str(),
                Str(s, "outcome").c_str(), s.value("steps", json::array()).size(), Str(s, "tokens").c_str(),
                Str(s, "duration_ms").c_str(), s.contains("error") ? ": " : "",
                s.contains("error") ? Str(s, "error").c_str() : "");
}

int Status_(const CliContext& ctx, const MindArgs&) {
  auto answer = ForwardRequest(ctx, "get_mind", json::object(), NoneRuns(ctx));
  if (!answer.ok()) return Fail(answer.status());
  if (ctx.json) {
    PrintJson(*answer);
    return 0;
  }
  const json& a = *answer;
  std::printf("mind %s (%s%s): %s\n", Str(a, "name").c_str(), Str(a, "kind").c_str(),
              a.contains("model") && a["model"].is_string() ? (", " + a["model"].get<std::string>()).c_str() : "",
              Str(a, "status").c_str());
  const json b = a.value("budget", json::object());
  if (!b.empty()) {
    std::printf("budget %s: tokens %s used, %s left; minutes %s used, %s left%s\n", Str(b, "day").c_str(),
                Str(b["tokens"], "used").c_str(), Str(b["tokens"], "left").c_str(),
                Str(b["minutes"], "used").c_str(), Str(b["minutes"], "left").c_str(),
                b.value("pressure", false) ? " (budget_pressure)" : "");
    if (b.contains("next_wake_at") && b["next_wake_at"].is_string())
      std::printf("next autonomous wake not before %s\n", Str(b, "next_wake_at").c_str());
  }
  if (a.contains("session") && a["session"].is_object()) PrintSession(a["session"]);
  if (a.contains("last_refusal") && a["last_refusal"].is_object())
    std::printf("last refusal %s (%s): %s\n", Str(a["last_refusal"], "at").c_str(),
                Str(a["last_refusal"], "trigger").c_str(), Str(a["last_refusal"], "reason").c_str());
  return 0;
}

int Wake(const CliContext& ctx, const MindArgs& a) {
  json body = json::object();
  if (!a.reason.empty()) body["reason"] = a.reason;
  if (!a.thread.empty()) body["thread_id"] = a.thread;
  auto answer = ForwardRequest(ctx, "wake_mind", body, NoneRuns(ctx));
  if (!answer.ok()) return Fail(answer.status());
  if (ctx.json) PrintJson(*answer);
  else std::printf("woken: session %s (seq %s)\n", Str(*answer, "session").c_str(), Str(*answer, "seq").c_str());
  return 0;
}

int Sleep(const CliContext& ctx, const MindArgs&) {
  auto answer = ForwardRequest(ctx, "sleep_mind", json::object(), NoneRuns(ctx));
  if (!answer.ok()) return Fail(answer.status());
  if (ctx.json) PrintJson(*answer);
  else std::printf("session %s: %s\n", Str(*answer, "session").c_str(), Str(*answer, "outcome").c_str());
  return 0;
}

int Sessions(const CliContext& ctx, const MindArgs& a) {
  json sessions;
  auto answer = ForwardRequest(ctx, "list_mind_sessions", json::object(), NoneRuns(ctx));
  if (answer.ok()) {
    sessions = (*answer)["sessions"];
    if (sessions.size() > a.limit) sessions.erase(sessions.begin() + static_cast<long>(a.limit), sessions.end());
  } else if (answer.status().IsFailedPrecondition()) {
    auto engine = ctx.OpenForRead();
    if (!engine.ok()) return Fail(engine.status());
    auto list = (*engine)->projection().ListSessions(0, a.limit);
    if (!list.ok()) return Fail(list.status());
    sessions = json::array();
    for (json& s : *list) {
      s["steps"] = s.value("steps", json::array()).size();
      for (const char* key : {"budget", "percept_ids", "seq", "tokens_in", "tokens_out"}) s.erase(key);
      sessions.push_back(std::move(s));
    }
  } else {
    return Fail(answer.status());
  }
  if (ctx.json) {
    PrintJson(json{{"sessions", sessions}});
    return 0;
  }
  for (const json& s : sessions)
    std::printf("%-10s %-24s %-6s %-11s %3s steps %7s tokens  %s\n", Str(s, "id").c_str(),
                Str(s, "woken_at").c_str(), Str(s, "status").c_str(),
                s.contains("outcome") ? Str(s, "outcome").c_str() : "-", Str(s, "steps").c_str(),
                Str(s, "tokens").c_str(), Str(s, "reason").c_str());
  return 0;
}

int Show(const CliContext& ctx, const MindArgs& a) {
  auto s = ReadSession(ctx, a.session);
  if (!s.ok()) return Fail(s.status());
  if (ctx.json) PrintJson(*s);
  else PrintSession(*s);
  return 0;
}

// Runs one session in the sandbox `config.state_dir` as `wake` asks, in a
// runtime of its own; returns the session's id.
Result<std::string> RunOneSession(Config config, Executive::WakeRequest wake,
                                  std::shared_ptr<spdlog::logger> log) {
  Runtime runtime(std::move(config), log, MakeApi);
  runtime.set_mind(MakeMind, Mind::CheckConfig);
  Status outcome = Status::OK();
  std::string session;
  auto timer = std::make_shared<boost::asio::steady_timer>(runtime.ioc());
  std::function<void()> poll = [&] {
    json status = runtime.mind()->StatusJson();
    if (status.value("status", "") != "awake" && status["last_session"].is_object() &&
        status["last_session"].value("id", "") == session)
      return runtime.Stop();
    timer->expires_after(std::chrono::milliseconds(50));
    timer->async_wait([&](const boost::system::error_code& ec) {
      if (!ec) poll();
    });
  };
  runtime.set_on_listening([&](const std::string&) {
    runtime.mind()->Wake(wake, [&](Status s, json answer) {
      if (!s.ok()) {
        outcome = s.WithContext("waking the mind in the sandbox");
        return runtime.Stop();
      }
      session = answer.value("session", "");
      poll();
    });
  });
  int rc = runtime.Run();
  if (!outcome.ok()) return outcome;
  if (rc != 0 || session.empty())
    return Status::Internal("the sandbox's runtime ended with " + std::to_string(rc) + " before a session ran");
  return session;
}

int Rerun(const CliContext& ctx, const MindArgs& a) {
  if (a.into.empty()) return UsageError("mind rerun: give --into DIR (a new sandbox)");
  auto config = a.config.empty() ? DefaultConfig() : LoadConfigFile(a.config);
  if (!config.ok()) return Fail(config.status());
  if (!config->mind.enabled)
    return UsageError("mind rerun: the config has no enabled mind: give --config FILE, the one "
                      "`limbic run` used");
  auto original = ReadSession(ctx, a.session);
  if (!original.ok()) return Fail(original.status());
  const uint64_t seq = original->value("seq", uint64_t{0});
  if (seq == 0) return Fail(Status::Corruption("session " + a.session + " has no seq"));
  auto now = ctx.Now();
  if (!now.ok()) return Fail(now.status());
  ForkOptions fork;
  fork.from_state = ctx.state_dir;
  fork.into = a.into;
  fork.at_seq = seq - 1;  // right before its mind_woken (0: the log's first event)
  fork.allow_empty = true;
  fork.now = *now;
  auto info = Fork(fork);
  if (!info.ok()) return Fail(info.status());
  // The sandbox's runtime: its state, a free port, no intake, the mind as
  // asked, woken once (no autonomous wakes, no daily budget: an experiment).
  Config& c = *config;
  c.state_dir = std::filesystem::absolute(a.into).lexically_normal().string();
  c.api_port = 0;
  c.sensors = json::object();
  c.archive.consolidate_every = 0;
  if (!a.model.empty()) c.mind.model = a.model;
  if (!a.prompt.empty()) {
    auto text = Env::Default()->ReadFileToString(a.prompt);
    if (!text.ok()) return Fail(text.status().WithContext("--prompt"));
    c.mind.system_prompt = *text;
    c.mind.system_prompt_file = a.prompt;
  }
  c.mind.wake_threshold = 2;  // never by attention
  c.mind.focused_thread = false;
  c.mind.budget.daily_tokens = 0;
  c.mind.budget.daily_time = 0;
  c.mind.budget.min_interval = 0;
  Executive::WakeRequest wake;
  wake.trigger = "explicit";
  wake.actor = "cli";
  wake.reason = "rerun of " + a.session + ": " + original->value("reason", "");
  wake.thread_id = original->value("thread_id", json()).is_string() ? (*original)["thread_id"].get<std::string>() : "";
  for (const json& p : original->value("percept_ids", json::array()))
    if (p.is_string()) wake.percept_ids.push_back(p.get<std::string>());
  ctx.logger->set_level(ctx.json ? spdlog::level::warn : spdlog::level::info);
  auto session = RunOneSession(c, wake, ctx.logger);
  if (!session.ok()) return Fail(session.status());
  CliContext sandbox = ctx;
  sandbox.state_dir = c.state_dir;
  auto rerun = ReadSession(sandbox, *session);
  if (!rerun.ok()) return Fail(rerun.status());
  if (ctx.json) {
    PrintJson(json{{"original", *original}, {"rerun", *rerun}, {"into", c.state_dir},
                   {"dry_run", DryRunFilePath(c.state_dir)}});
    return 0;
  }
  std::printf("original, in %s:\n", ctx.state_dir.c_str());
  PrintSession(*original);
  std::printf("\nrerun, in the sandbox %s (forked at seq %llu; effectors are dry runs: %s):\n",
              c.state_dir.c_str(), static_cast<unsigned long long>(info->at_seq),
              DryRunFilePath(c.state_dir).c_str());
  PrintSession(*rerun);
  return 0;
}

}  // namespace

void AddMindCommands(CLI::App& app, CliContext& ctx, int& rc) {
  auto a = std::make_shared<MindArgs>();
  auto* cmd = app.add_subcommand("mind", "the agent's mind: its budget, wakes and sessions (docs/mind.md)");
  cmd->require_subcommand(1);
  cmd->add_subcommand("status", "status, the budget used and left, the session running")
      ->callback(Action(ctx, rc, a, Status_));
  auto* wake = cmd->add_subcommand("wake", "wake the mind now (skips min_interval, not the daily budget)");
  wake->add_option("--reason", a->reason, "why (kept in mind_woken)");
  wake->add_option("--thread", a->thread, "a thread to think about");
  wake->callback(Action(ctx, rc, a, Wake));
  cmd->add_subcommand("sleep", "end the running session")->callback(Action(ctx, rc, a, Sleep));
  auto* sessions = cmd->add_subcommand("sessions", "the sessions, newest first");
  sessions->add_option("--limit", a->limit, "at most this many")->capture_default_str();
  sessions->callback(Action(ctx, rc, a, Sessions));
  auto* show = cmd->add_subcommand("show", "one session: its wake, each step and tool call, its end");
  show->add_option("session", a->session, "m-<seq>")->required();
  show->callback(Action(ctx, rc, a, Show));
  auto* rerun = cmd->add_subcommand(
      "rerun", "fork at a session's wake and run one session there, with another model or prompt");
  rerun->add_option("session", a->session, "m-<seq>")->required();
  rerun->add_option("--into", a->into, "the sandbox to make (must not exist, or be empty)")->required();
  rerun->add_option("--model", a->model, "the model to ask instead");
  rerun->add_option("--prompt", a->prompt, "a system prompt file to use instead");
  rerun->add_option("--config", a->config, "the config `limbic run` used (its mind section)");
  rerun->callback(Action(ctx, rc, a, Rerun));
}

}  // namespace limbic::runtime
