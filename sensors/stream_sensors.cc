// stdin, jsonl and exec: sensors that read JSON lines on a thread of their
// own and hand them to the io thread through a BoundedQueue.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "sensors/sensor_config.h"
#include "state/json.h"

namespace limbic::sensors {

using nlohmann::json;

namespace {

// Reads complete lines from `fd` (waiting at most `wait_ms` for data) and
// passes each to `line`. Returns false at EOF or on error.
bool ReadLines(int fd, std::string& buf, int wait_ms,
               const std::function<void(std::string)>& line) {
  pollfd p{fd, POLLIN, 0};
  int r = poll(&p, 1, wait_ms);
  if (r == 0) return true;
  if (r < 0) return errno == EINTR;
  char chunk[65536];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  buf.append(chunk, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
    line(buf.substr(start, nl - start));
  buf.erase(0, start);
  return true;
}

class LineSensor : public SensorBase {
 public:
  LineSensor(std::string name, std::string kind, const json& cfg, boost::asio::io_context& ioc,
             PerceptSink sink, std::shared_ptr<spdlog::logger> log, QueueConfig queue)
      : SensorBase(std::move(name), std::move(kind), std::move(sink), std::move(log)),
        ioc_(ioc),
        queue_(queue.capacity, queue.overflow),
        defaults_(cfg.contains("defaults") ? cfg["defaults"] : json::object()),
        alive_(std::make_shared<bool>(true)) {}
  ~LineSensor() override { *alive_ = false; }

  Status Start() override {
    thread_ = std::thread([this] { Produce(); });
    return Status::OK();
  }
  void Stop() override {
    stop_ = true;
    queue_.Close();
    Interrupt();
    if (thread_.joinable()) thread_.join();
  }
  SensorStats stats() const override {
    SensorStats s = stats_;
    s.dropped = queue_.dropped();
    s.queue_depth = queue_.size();
    return s;
  }

 protected:
  virtual void Produce() = 0;
  virtual void Interrupt() {}

  // Producer thread: queue one line and make sure the io thread drains.
  void Offer(std::string text) {
    ++line_no_;
    if (text.empty()) return;
    if (!queue_.Push({{"line", line_no_}, {"text", std::move(text)}})) return;
    if (!drain_posted_.exchange(true)) {
      std::weak_ptr<bool> alive = alive_;
      boost::asio::post(ioc_, [this, alive] {
        if (auto a = alive.lock(); a && *a) Drain();
      });
    }
  }

  void Drain() {
    drain_posted_ = false;
    for (json& item : queue_.TakeAll()) {
      std::string where = "line " + std::to_string(item["line"].get<uint64_t>());
      const std::string& text = item["text"].get_ref<const std::string&>();
      std::optional<json> parsed = state::ParseJson(text);
      if (!parsed || !parsed->is_object()) {
        ++stats_.received;
        ++stats_.rejected;
        log_->warn("sensor {}: {} is not a JSON object: {}", name_, where, text.substr(0, 120));
        continue;
      }
      json req = std::move(*parsed);
      for (auto it = defaults_.begin(); it != defaults_.end(); ++it)
        if (!req.contains(it.key())) req[it.key()] = *it;
      (void)Deliver(std::move(req), where);
    }
  }

  bool Sleep(TimeMs ms) {  // interruptible by Stop
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!stop_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return !stop_;
  }

  boost::asio::io_context& ioc_;
  BoundedQueue<json> queue_;
  json defaults_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> drain_posted_{false};
  std::shared_ptr<bool> alive_;
  std::thread thread_;
  uint64_t line_no_ = 0;
};

class StdinSensor final : public LineSensor {
 public:
  using LineSensor::LineSensor;

 private:
  void Produce() override {
    std::string buf;
    while (!stop_ && ReadLines(0, buf, 200, [this](std::string l) { Offer(std::move(l)); })) {
    }
    if (!buf.empty()) Offer(buf);
    log_->info("sensor {}: standard input closed", name_);
  }
};

// Follows a file like `tail -F`: survives rotation (new inode) and truncation.
class JsonlSensor final : public LineSensor {
 public:
  JsonlSensor(std::string name, const json& cfg, std::string path, bool from_start,
              boost::asio::io_context& ioc, PerceptSink sink, std::shared_ptr<spdlog::logger> log,
              QueueConfig queue)
      : LineSensor(std::move(name), "jsonl", cfg, ioc, std::move(sink), std::move(log), queue),
        path_(std::move(path)),
        from_start_(from_start) {}

 private:
  void Produce() override {
    int fd = -1;
    std::string buf;
    bool first = true;
    while (!stop_) {
      if (fd < 0) {
        fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          Sleep(200);
          continue;
        }
        if (first && !from_start_) lseek(fd, 0, SEEK_END);
        first = false;
        buf.clear();
      }
      char chunk[65536];
      ssize_t n = read(fd, chunk, sizeof chunk);
      if (n > 0) {
        buf.append(chunk, static_cast<size_t>(n));
        size_t start = 0;
        for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
          Offer(buf.substr(start, nl - start));
        buf.erase(0, start);
        continue;
      }
      // At the end: has the file been rotated or truncated?
      struct stat now_st, open_st;
      bool rotated = stat(path_.c_str(), &now_st) != 0 || fstat(fd, &open_st) != 0 ||
                     now_st.st_ino != open_st.st_ino;
      off_t pos = lseek(fd, 0, SEEK_CUR);
      if (!rotated && now_st.st_size < pos) {
        lseek(fd, 0, SEEK_SET);  // truncated: start over
        buf.clear();
        continue;
      }
      if (rotated && stat(path_.c_str(), &now_st) == 0) {
        close(fd);  // the old file is finished; read the new one from its start
        fd = -1;
        continue;
      }
      Sleep(200);
    }
    if (fd >= 0) close(fd);
  }

  std::string path_;
  bool from_start_;
};

// Runs an adapter program; each JSON line on its stdout is a percept
// request, its stderr goes to the log; restarted with backoff when it exits.
class ExecSensor final : public LineSensor {
 public:
  ExecSensor(std::string name, const json& cfg, std::vector<std::string> argv,
             std::vector<std::string> env, TimeMs backoff, TimeMs max_backoff,
             boost::asio::io_context& ioc, PerceptSink sink, std::shared_ptr<spdlog::logger> log,
             QueueConfig queue)
      : LineSensor(std::move(name), "exec", cfg, ioc, std::move(sink), std::move(log), queue),
        argv_(std::move(argv)),
        env_(std::move(env)),
        backoff_(backoff),
        max_backoff_(max_backoff) {}

 private:
  void Interrupt() override {
    pid_t pid = pid_;
    if (pid > 0) kill(pid, SIGTERM);
  }

  void Produce() override {
    TimeMs delay = backoff_;
    while (!stop_) {
      auto started = std::chrono::steady_clock::now();
      RunOnce();
      if (stop_) break;
      if (std::chrono::steady_clock::now() - started > std::chrono::seconds(60)) delay = backoff_;
      log_->warn("sensor {}: {} exited; restarting in {} ms", name_, argv_[0], delay);
      if (!Sleep(delay)) break;
      delay = std::min(delay * 2, max_backoff_);
    }
  }

  void RunOnce() {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return;
    std::vector<char*> args;
    for (auto& a : argv_) args.push_back(a.data());
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e) envp.push_back(*e);
    for (auto& e : env_) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      int devnull = open("/dev/null", O_RDONLY);
      dup2(devnull, 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
      execve(args[0], args.data(), envp.data());
      dprintf(2, "exec %s: %s\n", args[0], std::strerror(errno));
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    pid_ = pid;
    std::string obuf, ebuf;
    bool out_open = pid > 0, err_open = pid > 0;
    while (out_open || err_open) {
      if (stop_) break;
      if (out_open)
        out_open = ReadLines(out[0], obuf, err_open ? 0 : 200,
                             [this](std::string l) { Offer(std::move(l)); });
      if (err_open)
        err_open = ReadLines(err[0], ebuf, 100,
                             [this](std::string l) { log_->info("sensor {}: {}", name_, l); });
    }
    close(out[0]);
    close(err[0]);
    if (pid > 0) {
      if (stop_) {  // SIGTERM was sent; give it 2 s, then SIGKILL
        for (int i = 0; i < 100 && waitpid(pid, nullptr, WNOHANG) == 0; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        kill(pid, SIGKILL);
      }
      waitpid(pid, nullptr, 0);
    }
    pid_ = 0;
  }

  std::vector<std::string> argv_;
  std::vector<std::string> env_;
  TimeMs backoff_, max_backoff_;
  std::atomic<pid_t> pid_{0};
};

}  // namespace

Result<std::unique_ptr<Sensor>> MakeStreamSensor(const std::string& name, const json& cfg,
                                                 boost::asio::io_context& ioc, PerceptSink sink,
                                                 std::shared_ptr<spdlog::logger> log) {
  std::string kind = cfg["kind"];
  if (kind == "stdin")
    LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"queue", "overflow", "defaults"}));
  if (kind == "jsonl")
    LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"queue", "overflow", "defaults", "path", "from"}));
  if (kind == "exec")
    LIMBIC_RETURN_IF_ERROR(CheckKeys(
        name, cfg,
        {"queue", "overflow", "defaults", "argv", "env", "restart_backoff", "max_backoff"}));
  auto queue = ParseQueueConfig(name, cfg, Overflow::kDropOldest, /*allow_block=*/true);
  if (!queue.ok()) return queue.status();
  if (cfg.contains("defaults")) {
    if (!cfg["defaults"].is_object())
      return KeyError(name, "defaults", "must be an object of percept fields");
    for (auto it = cfg["defaults"].begin(); it != cfg["defaults"].end(); ++it)
      LIMBIC_RETURN_IF_ERROR(CheckPerceptField(name, "defaults." + it.key(), it.key(), *it));
  }
  if (kind == "stdin")
    return std::unique_ptr<Sensor>(
        new StdinSensor(name, "stdin", cfg, ioc, std::move(sink), std::move(log), *queue));
  if (kind == "jsonl") {
    if (!cfg.contains("path") || !cfg["path"].is_string() || cfg["path"].get<std::string>().empty())
      return KeyError(name, "path", "required: the file to follow");
    auto from = ChoiceKey(name, cfg, "from", "end", {"end", "start"});
    if (!from.ok()) return from.status();
    return std::unique_ptr<Sensor>(new JsonlSensor(name, cfg, cfg["path"], *from == "start", ioc,
                                                   std::move(sink), std::move(log), *queue));
  }
  if (!cfg.contains("argv") || !cfg["argv"].is_array() || cfg["argv"].empty())
    return KeyError(name, "argv", "required: [\"/path/to/adapter\", \"arg\", ...]");
  std::vector<std::string> argv;
  for (const json& a : cfg["argv"]) {
    if (!a.is_string()) return KeyError(name, "argv", "must be an array of strings");
    argv.push_back(a);
  }
  if (argv[0].empty() || argv[0][0] != '/')
    return KeyError(name, "argv", "argv[0] must be an absolute path (no shell, no PATH lookup)");
  if (access(argv[0].c_str(), X_OK) != 0)
    return KeyError(name, "argv", argv[0] + " is not an executable file");
  std::vector<std::string> env;
  if (cfg.contains("env")) {
    if (!cfg["env"].is_object()) return KeyError(name, "env", "must be an object of strings");
    for (auto it = cfg["env"].begin(); it != cfg["env"].end(); ++it) {
      if (it.key().empty() || it.key().find('=') != std::string::npos)
        return KeyError(name, "env." + it.key(), "not a valid variable name");
      if (!it->is_string()) return KeyError(name, "env." + it.key(), "must be a string");
      env.push_back(it.key() + "=" + it->get<std::string>());
    }
  }
  auto backoff = DurationKey(name, cfg, "restart_backoff", 1000, 1);
  if (!backoff.ok()) return backoff.status();
  auto max_backoff = DurationKey(name, cfg, "max_backoff", 60000, 1);
  if (!max_backoff.ok()) return max_backoff.status();
  if (*max_backoff < *backoff)
    return KeyError(name, "max_backoff",
                    "must be at least restart_backoff (" + std::to_string(*backoff) + " ms)");
  return std::unique_ptr<Sensor>(new ExecSensor(name, cfg, std::move(argv), std::move(env),
                                                *backoff, *max_backoff, ioc, std::move(sink),
                                                std::move(log), *queue));
}

}  // namespace limbic::sensors
