// stdin, jsonl and exec: sensors that read JSON lines on a thread of their
// own and hand them to the io thread through a BoundedQueue.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "sensors/sensor_config.h"
#include "base/env.h"
#include "base/input_json.h"
#include "base/json.h"
#include "base/subprocess.h"

namespace limbic::sensors {

using nlohmann::json;

namespace {

// A line longer than this is not kept in memory: it is skipped (reported
// as too long) up to its newline, so a program that never prints one
// cannot make limbic grow without bound.
constexpr size_t kMaxLineBytes = 1 << 20;

// Splits a byte stream into lines. `line` gets each complete line; a line
// over kMaxLineBytes arrives as std::nullopt, once, when its end is seen.
class LineSplitter {
 public:
  using Sink = std::function<void(std::optional<std::string>)>;
  void Feed(std::string_view data, const Sink& line) {
    buf_.append(data);
    size_t start = 0;
    for (size_t nl; (nl = buf_.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (overlong_) {
        overlong_ = false;
        line(std::nullopt);
      } else {
        line(buf_.substr(start, nl - start));
      }
    }
    buf_.erase(0, start);
    if (buf_.size() > kMaxLineBytes) {
      overlong_ = true;
      buf_.clear();
    }
  }
  void Clear() {
    buf_.clear();
    overlong_ = false;
  }
  // At the end of the stream: a last line without its newline.
  void Finish(const Sink& line) {
    if (overlong_) line(std::nullopt);
    else if (!buf_.empty()) line(std::move(buf_));
    Clear();
  }

 private:
  std::string buf_;
  bool overlong_ = false;
};

// Reads what `fd` has (it is readable) into `lines`. Returns false at EOF
// or on error.
bool ReadLines(int fd, LineSplitter& lines, const LineSplitter::Sink& line) {
  char chunk[65536];
  ssize_t n = read(fd, chunk, sizeof chunk);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  lines.Feed(std::string_view(chunk, static_cast<size_t>(n)), line);
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
  struct Line {
    std::string where;  // "line 3 of /var/log/x.jsonl"
    std::string text;
    bool too_long = false;  // over kMaxLineBytes: text is empty
  };

  virtual void Produce() = 0;
  virtual void Interrupt() {}

  // Producer thread: a new file or child process; its lines count from 1.
  // `label` says which ("of /var/log/x.jsonl", "from pid 4242").
  void NewStream(std::string label, uint64_t lines_before = 0) {
    stream_ = std::move(label);
    line_no_ = lines_before;
  }

  // Producer thread: queue one line and make sure the io thread drains.
  // `text` is nullopt for a line too long to keep (LineSplitter).
  void Offer(std::optional<std::string> text) {
    ++line_no_;
    if (text && text->empty()) return;
    std::string where = "line " + std::to_string(line_no_);
    if (!stream_.empty()) where += " " + stream_;
    if (!queue_.Push(Line{std::move(where), text ? std::move(*text) : std::string(), !text})) return;
    if (!drain_posted_.exchange(true)) {
      std::weak_ptr<bool> alive = alive_;
      boost::asio::post(ioc_, [this, alive] {
        if (auto a = alive.lock(); a && *a) Drain();
      });
    }
  }

  void Drain() {
    drain_posted_ = false;
    for (Line& line : queue_.TakeAll()) {
      if (line.too_long) {
        ++stats_.received;
        ++stats_.rejected;
        log_->warn("sensor {}: {} is longer than {} bytes; skipped", name_, line.where,
                   kMaxLineBytes);
        continue;
      }
      auto parsed = ParseInputJson(line.text);
      if (!parsed.ok() || !parsed->is_object()) {
        ++stats_.received;
        ++stats_.rejected;
        // The reason (too deep, a number beyond a double, where the syntax
        // breaks) and the line's start; the sensor goes on with the next.
        log_->warn("sensor {}: {} is not a JSON object: {} ({})", name_, line.where,
                   line.text.substr(0, 120),
                   parsed.ok() ? "a " + std::string(parsed->type_name()) : parsed.status().message());
        continue;
      }
      json req = std::move(*parsed);
      for (auto it = defaults_.begin(); it != defaults_.end(); ++it)
        if (!req.contains(it.key())) req[it.key()] = *it;
      (void)Deliver(std::move(req), line.where);
    }
  }

  bool Sleep(TimeMs ms) {  // interruptible by Stop
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!stop_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return !stop_;
  }

  boost::asio::io_context& ioc_;
  BoundedQueue<Line> queue_;
  json defaults_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> drain_posted_{false};
  std::shared_ptr<bool> alive_;
  std::thread thread_;

 private:
  std::string stream_;    // producer thread only
  uint64_t line_no_ = 0;  // producer thread only
};

class StdinSensor final : public LineSensor {
 public:
  using LineSensor::LineSensor;

 private:
  void Produce() override {
    LineSplitter lines;
    auto offer = [this](std::optional<std::string> l) { Offer(std::move(l)); };
    while (!stop_) {
      pollfd p{0, POLLIN, 0};
      int r = poll(&p, 1, 200);
      if (r < 0 && errno != EINTR) break;
      if (r > 0 && !ReadLines(0, lines, offer)) break;
    }
    lines.Finish(offer);
    log_->info("sensor {}: standard input closed", name_);
  }
};

// Follows a file like `tail -F`: survives rotation (new inode) and
// truncation. Line numbers are the file's own: with from "end" the lines
// skipped at start are counted; a new or truncated file starts at 1.
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
    LineSplitter lines;
    auto offer = [this](std::optional<std::string> l) { Offer(std::move(l)); };
    bool first = true;
    char chunk[65536];
    while (!stop_) {
      if (fd < 0) {
        fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          Sleep(200);
          continue;
        }
        uint64_t skipped = 0;
        if (first && !from_start_) {  // skip to the end, counting lines
          for (ssize_t n; (n = read(fd, chunk, sizeof chunk)) > 0;)
            skipped += static_cast<uint64_t>(std::count(chunk, chunk + n, '\n'));
        }
        log_->info("sensor {}: following {} from line {}", name_, path_, skipped + 1);
        first = false;
        lines.Clear();
        NewStream("of " + path_, skipped);
      }
      ssize_t n = read(fd, chunk, sizeof chunk);
      if (n > 0) {
        lines.Feed(std::string_view(chunk, static_cast<size_t>(n)), offer);
        continue;
      }
      // At the end: has the file been rotated or truncated?
      struct stat now_st, open_st;
      bool rotated = stat(path_.c_str(), &now_st) != 0 || fstat(fd, &open_st) != 0 ||
                     now_st.st_ino != open_st.st_ino;
      off_t pos = lseek(fd, 0, SEEK_CUR);
      if (!rotated && now_st.st_size < pos) {
        lseek(fd, 0, SEEK_SET);  // truncated: start over
        log_->info("sensor {}: {} was truncated; reading it from line 1", name_, path_);
        lines.Clear();
        NewStream("of " + path_);
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
  // A child that ran this long is healthy: the next restart waits only backoff_.
  static constexpr auto kHealthyRun = std::chrono::seconds(60);
  // On stop: SIGTERM to the program's group, this long to exit, then SIGKILL.
  static constexpr TimeMs kStopGraceMs = 2000;

  void Produce() override {
    TimeMs delay = backoff_;
    while (!stop_) {
      auto started = std::chrono::steady_clock::now();
      std::string how = RunOnce();
      if (stop_) break;
      if (std::chrono::steady_clock::now() - started >= kHealthyRun) delay = backoff_;
      log_->warn("sensor {}: {} {}; restarting in {} ms", name_, argv_[0], how, delay);
      if (!Sleep(delay)) break;
      delay = std::min(delay * 2, max_backoff_);
    }
  }

  // Runs the program to its end; says how it ended ("exited with status 1").
  // The program leads a process group of its own (base/subprocess.h): when
  // it exits, or the sensor stops, what it started in that group goes too.
  std::string RunOnce() {
    SpawnOptions spawn;
    spawn.argv = argv_;
    spawn.env = env_;
    auto started = Subprocess::Spawn(spawn);
    if (!started.ok()) return "could not start: " + started.status().message();
    Subprocess& proc = **started;
    NewStream("from pid " + std::to_string(proc.pid()));
    LineSplitter out_lines, err_lines;
    auto offer = [this](std::optional<std::string> l) { Offer(std::move(l)); };
    auto log_err = [this](std::optional<std::string> l) {
      log_->info("sensor {}: {}", name_, l ? *l : "(a stderr line over 1 MiB, skipped)");
    };
    bool out_open = true, err_open = true, group_killed = false;
    while ((out_open || err_open) && !stop_) {
      pollfd fds[2] = {{out_open ? proc.stdout_fd() : -1, POLLIN, 0},
                       {err_open ? proc.stderr_fd() : -1, POLLIN, 0}};
      if (poll(fds, 2, 200) > 0) {
        if (fds[0].revents) out_open = ReadLines(proc.stdout_fd(), out_lines, offer);
        if (fds[1].revents) err_open = ReadLines(proc.stderr_fd(), err_lines, log_err);
      }
      if (!group_killed && proc.Exited()) {
        // The program is gone; what it started dies with its group (it may
        // hold the pipes open). What is already in the pipes is still read.
        proc.Kill(SIGKILL);
        group_killed = true;
      }
    }
    if (!stop_) {  // a last line without '\n'
      out_lines.Finish(offer);
      err_lines.Finish(log_err);
    }
    proc.CloseStdout();
    proc.CloseStderr();
    if (stop_) return proc.Terminate(kStopGraceMs).Describe();
    return proc.Wait().Describe();
  }

  std::vector<std::string> argv_;
  std::vector<std::string> env_;
  TimeMs backoff_, max_backoff_;
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
