// The mind's executive: when the agent's model thinks, on what, at what cost,
// and what it decided -- all of it in the events log (docs/mind.md).
//
// When it wakes (never while a session runs; one session at a time):
//   - attention: the best new percept's effective intensity reaches
//     mind.wake.threshold - arousal_gain * max(0, effective arousal - 0.5)
//     (trigger "percept"); or, with wake.focused_thread, the focused thread
//     (attention's `thread`) has assigned, unprocessed percepts ("thread").
//     Checked after each applied group that can change attention (coalesced:
//     one check per burst), and when a wait below ends. What the last
//     autonomous wake was for (the same trigger, thread and percepts) does
//     not wake it again: something must change;
//   - a reflex's `wake_mind` step ("reflex");
//   - an explicit wake: POST /v1/mind/wake, `limbic mind wake`, MCP
//     wake_mind ("explicit").
// The thinking budget refuses a wake, with the reason kept for GET /v1/mind:
//   - daily_tokens / daily_minutes: the tokens of the day's steps and the
//     awake time of the day's sessions (UTC days; a session's time counts
//     on the day it ends, a step's tokens on the day of the step);
//   - min_interval after the last autonomous wake (percept, thread or
//     reflex); an explicit wake skips it, and nothing skips the daily budget.
// The use is counted from the sessions pool (the mind's own events, reduced:
// state/reducer.h), so a restart never resets it. budget_pressure (an
// arousal factor) is set true by the executive once either daily budget is
// used past budget.pressure_at, and false again when the day turns.
//
// A session, kind openai (base/chat.h, on the loop, cancellable):
//   mind_woken is submitted (session id "m-<its seq>") while the context
//   bundle is fetched (GET /v1/context, as any client would, recalled for
//   the first woken percept's text); once both are done the model gets
//   [system prompt, the wake (with the woken percepts' records) and the
//   bundle] and, as
//   tools, the MCP tools of mind.tools (runtime/mcp/tools.h: the same
//   names, descriptions and schemas). Each answer is a step: its tool calls
//   run one after another, each as the API operation it names, through the
//   API's router (runtime/http/server.h Dispatch), with X-Limbic-Actor
//   "mind:<name>" and X-Limbic-Reason "session S step N call I", so the
//   token, approval gates and every check apply as to anyone. An
//   enqueue_action without an idempotency_key gets "mind:S:N:I": a tool
//   call is never delivered twice. Then mind_step records the answer and
//   what each call came to (name, ok, error, the seqs it wrote), and the
//   results go back to the model (the next call does not wait for the
//   step's fsync: the log keeps the order). The session ends (mind_slept) when an
//   answer has no tool calls ("answered"), or on max_steps, the daily
//   tokens ("budget"), max_session, an error of the model server
//   ("error"), or a sleep request ("slept"). A 429 or 503 with Retry-After
//   is waited out (within max_session); a tool call the model got wrong
//   (unknown tool, arguments that are not JSON or do not fit the schema) is
//   answered with the error as the tool's result.
// A session, kind exec: the program is spawned (base/subprocess.h: its own
// process group) in the config's directory with the wake (and the context
// bundle) as one JSON line on stdin, and LIMBIC_URL, LIMBIC_API_TOKEN,
// LIMBIC_ACTOR and LIMBIC_MIND_SESSION in its environment; it acts through
// the API. Each stdout line that is a JSON object ({text?, tokens_in?,
// tokens_out?, model?}) is a step; other lines, and stderr, are logged.
// Its exit ends the session ("exited", or "error" when not 0); max_session,
// or a step line beyond max_steps, SIGKILLs its group; a sleep sends
// SIGTERM, then SIGKILL after 2 s. Once it has exited, its pipes are read
// for 1 s at most (a child that left the group may hold them open).
//
// At start, a session the log leaves awake (a SIGKILL) gets mind_slept
// {outcome: "interrupted"}: it is never resumed.
//
// Thread-safety: io thread only (the exec mind's pipes are read on a thread
// of its own, which posts back).
#pragma once

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/http_client.h"
#include "base/status.h"
#include "base/time.h"
#include "runtime/config.h"
#include "runtime/executive.h"
#include "runtime/http/server.h"
#include "state/engine.h"

namespace limbic::runtime {

class Metrics;

class Mind final : public Executive {
 public:
  struct Deps {
    state::Engine& engine;
    const Config& config;
    boost::asio::io_context& ioc;
    Metrics& metrics;
    std::function<double()> effective_arousal;
    std::function<std::string()> api_url;  //!< where an exec mind reaches the API
  };

  Mind(Deps deps, std::shared_ptr<spdlog::logger> log);
  ~Mind() override;
  Mind(const Mind&) = delete;
  Mind& operator=(const Mind&) = delete;

  //! The config's problems that need the operation table: each of
  //! mind.tools must be an MCP tool ("mind.tools[2]: unknown tool ...").
  static void CheckConfig(const MindConfig& config, std::vector<std::string>* errors);

  Status Start(Router router) override;
  void OnApplied(std::span<const state::Event> events) override;
  void Wake(WakeRequest wake, Done done) override;
  void Sleep(std::string actor, Done done) override;
  nlohmann::json StatusJson() override;
  void Stop() override;

 private:
  struct Session;
  struct ExecRun;

  // The budget's use of the day `day` (UTC "YYYY-MM-DD").
  struct Use {
    std::string day;
    uint64_t tokens = 0;
    TimeMs time = 0;                 // awake time of the day's ended sessions
    TimeMs last_autonomous_at = -1;  // woken_at of the last non-explicit wake
    uint64_t sessions = 0;           // woken this day
  };

  TimeMs Now() const;
  Status Recount(TimeMs now);
  void CountEvent(const state::Event& e);
  // Why the budget refuses a wake now, or OK; *retry_at: when to look again.
  Status Refusal(bool autonomous, TimeMs now, TimeMs* retry_at);
  void Refused(const std::string& trigger, const Status& why);
  void ScheduleCheck(TimeMs at);
  void PostCheck();
  void CheckAttention();
  void UpdatePressure(TimeMs now);
  void ScheduleDayTurn();  // at 00:00 UTC: recount, budget_pressure, look again

  // A session's course.
  void Begin(WakeRequest wake, Done done);
  void Ready();  // mind_woken durable and the context fetched
  void StartOpenai();  // mind_openai.cc: the first model call
  void AskModel();
  void OnModelAnswer(uint64_t generation, TimeMs started_ms, HttpReply reply);
  void RunToolCalls(size_t index);
  void RecordStep();
  void End(std::string outcome, std::string error = {});
  void Finish(const std::string& outcome);
  void StartExec();
  void OnExecLine(const std::string& line);
  void OnExecExit(const std::string& description, int exit_code);
  void OnDeadline();
  // A request through the API's router as the mind, with `reason`.
  void CallApi(const std::string& method, const std::string& target, const std::string& body,
               const std::string& reason, std::function<void(HttpResponse)> done);
  nlohmann::json BudgetJson(TimeMs now);
  // The wake as the mind gets it: {session, mind, trigger, reason,
  // thread_id, percept_ids, percepts: the records of those still in the pool}.
  nlohmann::json WakeJson() const;
  std::vector<nlohmann::json> WokenPercepts() const;

  Deps deps_;
  const MindConfig& config_;
  std::shared_ptr<spdlog::logger> log_;
  std::optional<Router> router_;
  nlohmann::json tools_json_;  // the model's tools (OpenAI's form)
  Use use_;
  std::unique_ptr<Session> session_;
  uint64_t generation_ = 0;  // of callbacks: a stale one finds another generation
  bool started_ = false;
  bool stopping_ = false;
  bool check_posted_ = false;
  bool pressure_ = false;  // budget_pressure as we last set it
  boost::asio::steady_timer check_timer_;
  boost::asio::steady_timer day_timer_;
  std::string last_autonomous_key_;  // trigger, thread and percepts of the last autonomous wake
  TimeMs check_at_ = -1;   // when check_timer_ fires (-1: not armed)
  nlohmann::json last_refusal_;
  nlohmann::json last_session_;  // the last ended session: {id, outcome, at}
};

//! The executive of `runtime` (a MindFactory).
std::unique_ptr<Executive> MakeMind(Runtime& runtime, std::shared_ptr<spdlog::logger> log);

}  // namespace limbic::runtime
