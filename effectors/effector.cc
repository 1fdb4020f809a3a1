// The registry, limits, templates, and the `log` and `file` kinds.
#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "base/input_json.h"
#include "base/kind_registry.h"
#include "base/template.h"
#include "effectors/builtin.h"

namespace limbic::effectors {

using nlohmann::json;

Status ConfigError(const std::string& name, const std::string& key, const std::string& why) {
  return Status::InvalidArgument("effectors." + name + "." + key + ": " + why);
}

Status CheckKeys(const std::string& name, const json& config, std::initializer_list<const char*> known) {
  for (auto it = config.begin(); it != config.end(); ++it) {
    bool ok = false;
    for (const char* k : kCommonKeys) ok = ok || it.key() == k;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) return ConfigError(name, it.key(), "unknown key (see docs/effectors.md)");
  }
  return Status::OK();
}

Result<TimeMs> DurationKey(const std::string& name, const json& config, const std::string& key,
                           TimeMs dflt) {
  auto it = config.find(key);
  if (it == config.end()) return dflt;
  auto d = DurationFromJson(*it);
  if (d.ok() && *d > 0) return *d;
  return ConfigError(name, key,
                     "must be a positive duration such as \"10s\" (at most 100 years)" +
                         (d.ok() ? std::string() : ": " + d.status().message()));
}

Result<EffectorLimits> ParseLimits(const json& config) {
  EffectorLimits l;
  auto num = [&](const char* key, double lo, double* out) -> Status {
    auto it = config.find(key);
    if (it == config.end()) return Status::OK();
    if (!it->is_number() || it->get<double>() < lo)
      return Status::InvalidArgument(std::string(key) + ": must be a number >= " + std::to_string(static_cast<int>(lo)));
    *out = it->get<double>();
    return Status::OK();
  };
  double concurrency = l.concurrency, attempts = 0;
  LIMBIC_RETURN_IF_ERROR(num("concurrency", 1, &concurrency));
  LIMBIC_RETURN_IF_ERROR(num("rate", 0, &l.rate));
  LIMBIC_RETURN_IF_ERROR(num("burst", 0, &l.burst));
  LIMBIC_RETURN_IF_ERROR(num("max_attempts", 1, &attempts));
  l.concurrency = static_cast<int>(concurrency);
  l.max_attempts = static_cast<int>(attempts);
  if (config.contains("backoff")) {
    auto d = DurationKey("", config, "backoff", 0);
    if (!d.ok()) return Status::InvalidArgument("backoff: must be a positive duration such as \"1s\"");
    l.backoff = *d;
  }
  if (auto it = config.find("require_approval"); it != config.end()) {
    if (!it->is_boolean())
      return Status::InvalidArgument("require_approval: must be true or false");
    l.require_approval = it->get<bool>();
  }
  return l;
}

Status PrepareEnqueued(const json& effectors, std::vector<state::Event>* events) {
  for (state::Event& e : *events) {
    if (e.type != state::EventType::kActionEnqueued) continue;
    const std::string name = e.Str("effector");
    auto config = effectors.is_object() ? effectors.find(name) : effectors.end();
    if (!effectors.is_object() || config == effectors.end()) {
      std::string known;
      if (effectors.is_object())
        for (auto it = effectors.begin(); it != effectors.end(); ++it)
          known += (known.empty() ? "" : ", ") + it.key();
      return Status::InvalidArgument("field \"effector\": unknown effector \"" + name +
                                     "\" (configured: " + (known.empty() ? "none" : known) + ")");
    }
    auto limits = ParseLimits(*config);
    if (!limits.ok())
      return Status::InvalidArgument("effectors." + name + "." + limits.status().message());
    if (limits->require_approval) e.fields["require_approval"] = true;
  }
  return Status::OK();
}

namespace {

// The value at a dotted path ("a.b.0.c") inside `root`, or nullptr.
const json* Lookup(const json& root, std::string_view path) {
  const json* cur = &root;
  size_t start = 0;
  while (start < path.size()) {
    size_t dot = path.find('.', start);
    std::string part(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (cur->is_object()) {
      auto it = cur->find(part);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      size_t i = std::stoul(part);
      if (i >= cur->size()) return nullptr;
      cur = &(*cur)[i];
    } else {
      return nullptr;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return cur;
}

constexpr const char* kActionFields[] = {"action.id", "action.type", "action.idempotency_key",
                                         "action.attempt", "action.thread_id"};

bool KnownPlaceholder(std::string_view name) {
  for (const char* f : kActionFields)
    if (name == f) return true;
  return name == "payload" || (name.rfind("payload.", 0) == 0 && name.size() > 8);
}

Result<json> Placeholder(std::string_view name, const Delivery& d) {
  if (name == "action.id") return json(d.action_id);
  if (name == "action.type") return json(d.type);
  if (name == "action.idempotency_key") return json(d.idempotency_key);
  if (name == "action.attempt") return json(d.attempt);
  if (name == "action.thread_id") return json(d.thread_id);
  if (name == "payload") return d.payload;
  if (name.rfind("payload.", 0) == 0) {
    const json* v = Lookup(d.payload, name.substr(8));
    if (!v) return Status::InvalidArgument("template {{" + std::string(name) + "}}: no such field in the payload");
    return *v;
  }
  return Status::InvalidArgument("template {{" + std::string(name) + "}}: unknown placeholder");
}

}  // namespace

Status CheckTemplate(const std::string& name, const std::string& key, const json& tmpl) {
  return limbic::CheckTemplate(tmpl, "effectors." + name + "." + key, [](std::string_view p) {
    if (KnownPlaceholder(p)) return std::string();
    return "unknown placeholder {{" + std::string(p) +
           "}} (use action.id, action.type, action.idempotency_key, action.attempt, "
           "action.thread_id, payload or payload.PATH)";
  });
}

Result<json> RenderTemplate(const json& tmpl, const Delivery& d) {
  return limbic::RenderTemplate(tmpl, [&d](std::string_view name) { return Placeholder(name, d); });
}

namespace {

class LogEffector final : public Effector {
 public:
  LogEffector(std::string name, boost::asio::io_context& ioc, std::shared_ptr<spdlog::logger> log)
      : name_(std::move(name)), ioc_(ioc), log_(std::move(log)) {}
  const std::string& name() const override { return name_; }
  void Deliver(const Delivery& d, std::function<void(Outcome)> done) override {
    log_->info("effector {}: action {} {} (attempt {}, key {}): {}", name_, d.action_id, d.type,
               d.attempt, d.idempotency_key,
               d.payload.dump(-1, ' ', false, json::error_handler_t::replace));
    boost::asio::post(ioc_, [done = std::move(done)] { done(Outcome::Complete()); });
  }

 private:
  std::string name_;
  boost::asio::io_context& ioc_;
  std::shared_ptr<spdlog::logger> log_;
};

// Appends one JSON line per delivery. Writes are small and go to the page
// cache; with "fsync": true each is synced (on the io thread: keep it for
// low-rate audit files).
// Appends each delivery as a JSON line; a dry run (`extra` not empty) adds
// `extra` to the line and completes with result {"dry_run": true}.
class FileEffector final : public Effector {
 public:
  FileEffector(std::string name, int fd, bool fsync, boost::asio::io_context& ioc,
               json extra = json::object())
      : name_(std::move(name)), fd_(fd), fsync_(fsync), ioc_(ioc), extra_(std::move(extra)) {}
  ~FileEffector() override { ::close(fd_); }
  const std::string& name() const override { return name_; }
  void Deliver(const Delivery& d, std::function<void(Outcome)> done) override {
    json line = {{"action_id", d.action_id}, {"type", d.type}, {"idempotency_key", d.idempotency_key},
                 {"attempt", d.attempt}, {"thread_id", d.thread_id}, {"payload", d.payload},
                 {"ts", FormatTime(SystemClock::Default()->Now())}};
    line.update(extra_);
    std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    Outcome o = Outcome::Complete();
    if (!extra_.empty()) o.result = {{"dry_run", true}};
    ssize_t n = ::write(fd_, text.data(), text.size());
    if (n != static_cast<ssize_t>(text.size())) o = Outcome::Retry("write failed: " + std::string(std::strerror(errno)));
    else if (fsync_ && ::fdatasync(fd_) != 0) o = Outcome::Retry("fdatasync failed: " + std::string(std::strerror(errno)));
    boost::asio::post(ioc_, [done = std::move(done), o = std::move(o)] { done(o); });
  }

 private:
  std::string name_;
  int fd_;
  bool fsync_;
  boost::asio::io_context& ioc_;
  json extra_;
};

KindRegistry<EffectorFactory>& Registry() {
  static KindRegistry<EffectorFactory> registry({
      {"log",
       [](const std::string& name, const json& cfg, boost::asio::io_context& ioc,
          std::shared_ptr<spdlog::logger> log) -> Result<std::unique_ptr<Effector>> {
         LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {}));
         return std::unique_ptr<Effector>(new LogEffector(name, ioc, std::move(log)));
       }},
      {"file",
       [](const std::string& name, const json& cfg, boost::asio::io_context& ioc,
          std::shared_ptr<spdlog::logger>) -> Result<std::unique_ptr<Effector>> {
         LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"path", "fsync"}));
         if (!cfg.contains("path") || !cfg["path"].is_string() || cfg["path"].get<std::string>().empty())
           return ConfigError(name, "path", "required: the file to append to");
         bool fsync = cfg.value("fsync", false);
         std::string path = cfg["path"];
         int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
         if (fd < 0)
           return ConfigError(name, "path", "cannot open " + path + ": " + std::strerror(errno));
         return std::unique_ptr<Effector>(new FileEffector(name, fd, fsync, ioc));
       }},
      {"http", MakeHttpEffector},
      {"exec", MakeExecEffector},
      {"jetstream", MakeJetStreamEffector},
  });
  return registry;
}

}  // namespace

void RegisterEffectorKind(const std::string& kind, EffectorFactory factory) {
  Registry().Register(kind, std::move(factory));
}

Result<std::unique_ptr<Effector>> MakeEffector(const std::string& name, const json& config,
                                               boost::asio::io_context& ioc,
                                               std::shared_ptr<spdlog::logger> log) {
  auto factory = Registry().Find(config, "one of log, file, http, exec, jetstream");
  if (!factory.ok()) return ConfigError(name, "kind", factory.status().message());
  auto limits = ParseLimits(config);
  if (!limits.ok()) return Status::InvalidArgument("effectors." + name + "." + limits.status().message());
  return (*factory)(name, config, ioc, std::move(log));
}

Result<std::unique_ptr<Effector>> MakeDryRunEffector(const std::string& name,
                                                     const std::string& kind,
                                                     const std::string& path,
                                                     boost::asio::io_context& ioc) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::IOError("dry run of effector " + name + ": cannot open " + path + ": " +
                           std::strerror(errno));
  json extra = {{"effector", name}, {"kind", kind}, {"dry_run", true}};
  return std::unique_ptr<Effector>(new FileEffector(name, fd, false, ioc, std::move(extra)));
}

}  // namespace limbic::effectors
