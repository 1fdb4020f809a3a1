// The `exec` kind: run a program per delivery, payload on stdin.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "effectors/builtin.h"
#include "base/env.h"
#include "base/subprocess.h"

namespace limbic::effectors {

using nlohmann::json;

namespace {

struct ProcessResult {
  int exit_code = -1;  // -1: killed
  bool timed_out = false;
  std::string out, err;
  std::string spawn_error;
};

// On a timeout: SIGTERM to the program's group, this long to exit, then SIGKILL.
constexpr TimeMs kKillGraceMs = 2000;

// Runs `argv` (no shell) in a process group of its own (base/subprocess.h),
// with `input` on stdin, collecting stdout and stderr (4 KiB each). After
// `timeout` the group is terminated (SIGTERM, kKillGraceMs, SIGKILL); on
// `cancel` it is killed at once.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env, const std::string& input,
                         TimeMs timeout, CancelFlag& cancel) {
  ProcessResult r;
  SpawnOptions spawn;
  spawn.argv = argv;
  spawn.env = env;
  spawn.pipe_stdin = true;
  auto started = Subprocess::Spawn(spawn);
  if (!started.ok()) {
    r.spawn_error = started.status().message();
    return r;
  }
  Subprocess& proc = **started;
  // Until Disarm, the leader stays unreaped: the group id is still ours.
  cancel.Arm([&proc] { proc.Kill(SIGKILL); });
  fcntl(proc.stdin_fd(), F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (input.empty()) proc.CloseStdin();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  auto time_left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
        .count();
  };
  bool out_open = true, err_open = true;
  while ((out_open || err_open) && !r.timed_out) {
    pollfd fds[3];
    int n = 0;
    if (out_open) fds[n++] = {proc.stdout_fd(), POLLIN, 0};
    if (err_open) fds[n++] = {proc.stderr_fd(), POLLIN, 0};
    if (proc.stdin_fd() >= 0) fds[n++] = {proc.stdin_fd(), POLLOUT, 0};
    auto left = time_left();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    if (poll(fds, static_cast<nfds_t>(n), static_cast<int>(left)) <= 0) continue;
    for (int i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == proc.stdin_fd()) {
        ssize_t w = write(proc.stdin_fd(), input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == input.size()) proc.CloseStdin();
        continue;
      }
      char buf[4096];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      const bool is_out = fds[i].fd == proc.stdout_fd();
      std::string& dst = is_out ? r.out : r.err;
      if (got <= 0) {
        (is_out ? out_open : err_open) = false;
      } else if (dst.size() < 4096) {
        dst.append(buf, std::min<size_t>(static_cast<size_t>(got), 4096 - dst.size()));
      }
    }
  }
  proc.CloseStdin();
  proc.CloseStdout();
  proc.CloseStderr();
  // A program that closed its output may still run: the deadline holds
  // until it exits.
  while (!r.timed_out && !proc.Exited()) {
    if (time_left() <= 0) r.timed_out = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  cancel.Disarm();
  ExitStatus done = r.timed_out ? proc.Terminate(kKillGraceMs) : proc.Wait();
  r.exit_code = done.exit_code;
  return r;
}

class ExecEffector final : public Effector {
 public:
  ExecEffector(std::string name, std::vector<std::string> argv, std::vector<std::string> env,
               TimeMs timeout, boost::asio::io_context& ioc)
      : name_(std::move(name)), argv_(std::move(argv)), env_(std::move(env)), timeout_(timeout),
        runner_(ioc) {}
  const std::string& name() const override { return name_; }

  void Deliver(const Delivery& d, std::function<void(Outcome)> done) override {
    std::vector<std::string> env = env_;
    env.push_back("LIMBIC_IDEMPOTENCY_KEY=" + d.idempotency_key);
    env.push_back("LIMBIC_ACTION_ID=" + d.action_id);
    env.push_back("LIMBIC_ACTION_TYPE=" + d.type);
    env.push_back("LIMBIC_ATTEMPT=" + std::to_string(d.attempt));
    env.push_back("LIMBIC_THREAD_ID=" + d.thread_id);
    std::string input = d.payload.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    runner_.Run(
        [this, env = std::move(env), input = std::move(input)](CancelFlag& cancel) {
          ProcessResult r = RunProcess(argv_, env, input, timeout_, cancel);
          if (!r.spawn_error.empty()) return Outcome::Retry(r.spawn_error);
          if (r.timed_out) return Outcome::Retry("timed out after " + std::to_string(timeout_) + " ms");
          if (r.exit_code == 0) return Outcome::Complete({{"stdout", r.out}});
          std::string why = "exit " + std::to_string(r.exit_code) + (r.err.empty() ? "" : ": " + r.err.substr(0, 300));
          if (r.exit_code == 75 || r.exit_code == -1) return Outcome::Retry(why);  // EX_TEMPFAIL, signal
          return Outcome::Permanent(why);
        },
        std::move(done));
  }

  void Cancel() override { runner_.CancelAll(); }

 private:
  std::string name_;
  std::vector<std::string> argv_;
  std::vector<std::string> env_;
  TimeMs timeout_;
  BlockingRunner runner_;  // last: destroyed (cancelled, joined) first
};

}  // namespace

Result<std::unique_ptr<Effector>> MakeExecEffector(const std::string& name, const json& cfg,
                                                   boost::asio::io_context& ioc,
                                                   std::shared_ptr<spdlog::logger>) {
  LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"argv", "timeout", "env"}));
  auto argv_it = cfg.find("argv");
  if (argv_it == cfg.end() || !argv_it->is_array() || argv_it->empty())
    return ConfigError(name, "argv", "required: [\"/path/to/program\", \"arg\", ...]");
  std::vector<std::string> argv;
  for (const json& a : *argv_it) {
    if (!a.is_string()) return ConfigError(name, "argv", "must be an array of strings");
    argv.push_back(a.get<std::string>());
  }
  if (argv[0].empty() || argv[0][0] != '/')
    return ConfigError(name, "argv", "argv[0] must be an absolute path (no shell, no PATH lookup)");
  if (access(argv[0].c_str(), X_OK) != 0)
    return ConfigError(name, "argv", argv[0] + " is not an executable file");
  std::vector<std::string> env;
  if (cfg.contains("env")) {
    if (!cfg["env"].is_object()) return ConfigError(name, "env", "must be an object of strings");
    for (auto it = cfg["env"].begin(); it != cfg["env"].end(); ++it) {
      if (!it->is_string()) return ConfigError(name, "env." + it.key(), "must be a string");
      env.push_back(it.key() + "=" + it->get<std::string>());
    }
  }
  auto timeout = DurationKey(name, cfg, "timeout", 30000);
  if (!timeout.ok()) return timeout.status();
  return std::unique_ptr<Effector>(new ExecEffector(name, std::move(argv), std::move(env), *timeout, ioc));
}

}  // namespace limbic::effectors
