// The exec kind of mind (runtime/mind/mind.h): a program of the user's in a
// process group of its own, the wake on its stdin, its steps on its stdout.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>

#include "base/input_json.h"
#include "runtime/mind/session.h"
#include "state/event.h"

namespace limbic::runtime {

using nlohmann::json;
using state::Event;
using state::EventType;

void Mind::StartExec() {
  Session& s = *session_;
  SpawnOptions so;
  so.argv = config_.command;
  so.pipe_stdin = true;
  so.env = {"LIMBIC_URL=" + deps_.api_url(), "LIMBIC_ACTOR=mind:" + config_.name,
            "LIMBIC_MIND_SESSION=" + s.id};
  if (!deps_.config.api_token.empty()) so.env.push_back("LIMBIC_API_TOKEN=" + deps_.config.api_token);
  // The program runs in the config's directory: "mind.py" is the file beside it.
  std::string cwd = config_.dir.empty() ? deps_.config.state_dir : config_.dir;
  so.cwd = cwd;
  auto proc = Subprocess::Spawn(so);
  if (!proc.ok()) {
    s.ending.clear();
    return End("error_exit", proc.status().message());
  }
  auto run = std::make_shared<ExecRun>();
  run->proc = std::move(*proc);
  s.exec = run;
  json wake = WakeJson();
  wake["budget"] = BudgetJson(Now());
  wake["context"] = s.context;
  std::string input = CompactJson(wake) + "\n";
  const uint64_t gen = generation_;
  boost::asio::io_context& ioc = deps_.ioc;
  ExecRun* raw = run.get();
  run->reader = std::thread([this, raw, input = std::move(input), gen, &ioc] {
    Subprocess& p = *raw->proc;
    // The wake, then EOF, written as the program reads it, between reads of
    // its output: a program (or a child of it that left its group) that
    // never reads its input must not hold this thread in write().
    int in = p.stdin_fd();
    size_t at = 0;
    if (in >= 0) ::fcntl(in, F_SETFL, ::fcntl(in, F_GETFL) | O_NONBLOCK);
    auto close_input = [&] {
      if (in < 0) return;
      p.CloseStdin();
      in = -1;
    };
    std::string bufs[2];
    int fds[2] = {p.stdout_fd(), p.stderr_fd()};
    int open = 2;
    std::chrono::steady_clock::time_point exited_at{};
    auto last_look = std::chrono::steady_clock::now();
    while (open > 0) {
      pollfd pfd[3];
      int n = 0;
      int which[3];
      for (int i = 0; i < 2; ++i)
        if (fds[i] >= 0) {
          pfd[n] = {fds[i], POLLIN, 0};
          which[n++] = i;
        }
      if (in >= 0) {
        pfd[n] = {in, POLLOUT, 0};
        which[n++] = 2;
      }
      const int ready = ::poll(pfd, n, 200);
      if (ready < 0) {
        if (errno == EINTR) continue;
        break;
      }
      const auto now = std::chrono::steady_clock::now();
      if (ready == 0 || now - last_look > std::chrono::milliseconds(200)) {
        last_look = now;
        // Once the program has exited, nothing more goes in, and its output
        // is not waited for past 1 s: a process that left the group
        // (setsid) may hold the pipes open.
        if (p.Exited()) {
          close_input();
          if (exited_at.time_since_epoch().count() == 0) exited_at = now;
          else if (now - exited_at > std::chrono::seconds(1)) break;
        }
        if (ready == 0) continue;
      }
      for (int k = 0; k < n; ++k) {
        if (which[k] != 2 || !(pfd[k].revents & (POLLOUT | POLLERR | POLLHUP))) continue;
        ssize_t wrote = ::write(in, input.data() + at, input.size() - at);
        if (wrote > 0) at += static_cast<size_t>(wrote);
        else if (!(wrote < 0 && (errno == EINTR || errno == EAGAIN))) at = input.size();  // EPIPE: it is gone
        if (at >= input.size()) close_input();
      }
      for (int k = 0; k < n; ++k) {
        if (which[k] == 2 || !(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const int i = which[k];
        char chunk[4096];
        ssize_t got = ::read(fds[i], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
          fds[i] = -1;
          --open;
          if (!bufs[i].empty()) bufs[i] += '\n';
        } else {
          bufs[i].append(chunk, static_cast<size_t>(got));
          if (bufs[i].size() > (1 << 20) && bufs[i].find('\n') == std::string::npos) bufs[i] += '\n';
        }
        for (size_t nl; (nl = bufs[i].find('\n')) != std::string::npos;) {
          std::string line = bufs[i].substr(0, nl);
          bufs[i].erase(0, nl + 1);
          if (line.empty()) continue;
          if (i == 0) {
            boost::asio::post(ioc, [this, gen, line = std::move(line)] {
              if (session_ && generation_ == gen) OnExecLine(line);
            });
          } else {
            log_->info("mind {}: {}", config_.name, ForLog(line));
          }
        }
      }
    }
    close_input();
    while (!p.Exited()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ExitStatus st;
    {
      std::lock_guard<std::mutex> lock(raw->mu);
      st = p.Wait();
      raw->reaped = true;
    }
    boost::asio::post(ioc, [this, gen, d = st.Describe(), code = st.exit_code] {
      if (session_ && generation_ == gen) OnExecExit(d, code);
    });
  });
}

void Mind::OnExecLine(const std::string& line) {
  Session& s = *session_;
  auto parsed = ParseInputJson(line);
  if (!parsed.ok() || !parsed->is_object()) {
    log_->info("mind {}: {}", config_.name, ForLog(line));
    return;
  }
  if (s.ended || !s.ending.empty()) return;
  if (s.steps >= static_cast<uint64_t>(config_.budget.max_steps)) {
    // A step beyond max_steps: the program is stopped, this step not recorded.
    return End("max_steps", "a step beyond max_steps (" + std::to_string(config_.budget.max_steps) + ")");
  }
  const json& j = *parsed;
  auto count = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_unsigned() ? std::min(it->get<uint64_t>(), kMaxTokenCount)
                                                    : uint64_t{0};
  };
  json fields = {{"session", s.id},
                 {"step", ++s.steps},
                 {"model", j.contains("model") && j["model"].is_string() ? Bounded(j["model"].get<std::string>(), 128)
                                                                       : std::string("exec")},
                 {"tokens_in", count("tokens_in")},
                 {"tokens_out", count("tokens_out")},
                 {"tool_calls", json::array()}};
  if (config_.record_text && j.contains("text") && j["text"].is_string())
    fields["text"] = Bounded(j["text"].get<std::string>(), config_.max_text);
  s.tokens += count("tokens_in") + count("tokens_out");
  s.uncounted += count("tokens_in") + count("tokens_out");
  Status st = deps_.engine.Submit({Event{0, 0, EventType::kMindStep, std::move(fields)}}, nullptr);
  if (!st.ok()) log_->warn("mind: {}: step not recorded: {}", s.id, st.message());
  if (config_.budget.daily_tokens > 0 && use_.tokens + s.uncounted >= config_.budget.daily_tokens)
    End("budget", "daily_tokens used");
}

void Mind::OnExecExit(const std::string& description, int exit_code) {
  Session& s = *session_;
  s.exec.reset();  // joins the reader, which posted its last line before this
  std::string outcome = std::move(s.ending), error = std::move(s.ending_error);
  s.ending.clear();
  s.ending_error.clear();
  if (!outcome.empty()) return End(outcome, error);  // max_session, sleep, max_steps, budget
  if (exit_code == 0) return End("exited");
  End("error_exit", "the program " + description);
}

}  // namespace limbic::runtime
