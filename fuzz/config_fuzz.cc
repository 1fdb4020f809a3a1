// Fuzz target `config`: a config file, as `limbic run --config FILE` reads
// it (runtime/config.h LoadConfigFile: the text path, ParseConfig), then
// what Runtime::Open checks of a config that parsed, before it touches a
// state dir: its reflex rules (ParseRuleFile with the configured
// effectors), each effector's limits and construction, each sensor's
// construction. Nothing is started.
//
// Properties: no crash, no exception, no abort; a refusal is InvalidArgument
// or NotFound (a missing reflexes file) with a message (errors name the
// key or the file); the same text parses the same way twice.
//
// The input is written to <scratch>/limbic.json; <scratch>/reflexes.json
// holds the shipped rules, so a config naming "reflexes.json" loads them.
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <spdlog/sinks/null_sink.h>

#include "effectors/effector.h"
#include "fuzz/fuzz_util.h"
#include "reflexes/rule.h"
#include "runtime/config.h"
#include "sensors/sensor.h"
#include "base/json.h"

using namespace limbic;
using limbic::fuzz::ScratchDir;

namespace {

struct Session {
  ScratchDir dir;
  std::shared_ptr<spdlog::logger> log =
      std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
  boost::asio::io_context ioc;  // never run: nothing is started
};

Session& GetSession() {
  static Session* s = [] {
    auto* s = new Session();
    auto shipped = runtime::DefaultConfig();
    FUZZ_CHECK(shipped.ok(), shipped.status().ToString());
    fuzz::WriteFileOrDie(s->dir / "reflexes.json", CompactJson(shipped->reflexes));
    return s;
  }();
  return *s;
}

void CheckRefusal(const Status& s, const std::string& what) {
  FUZZ_CHECK(s.IsInvalidArgument() || s.IsNotFound(), what + ": unexpected code: " + s.ToString());
  FUZZ_CHECK(!s.message().empty(), what + ": an error without a message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Session& s = GetSession();
  const std::string path = s.dir / "limbic.json";
  fuzz::WriteFileOrDie(path, std::string_view(reinterpret_cast<const char*>(data), size));
  auto config = runtime::LoadConfigFile(path);
  auto again = runtime::LoadConfigFile(path);
  FUZZ_CHECK(config.ok() == again.ok(), "parsed differently twice");
  if (!config.ok()) {
    CheckRefusal(config.status(), "LoadConfigFile");
    FUZZ_CHECK(config.status().message() == again.status().message(), "a different error twice");
    return 0;
  }

  // What Runtime::Open checks before it opens the state dir.
  reflexes::RuleContext ctx;
  for (auto it = config->effectors.begin(); it != config->effectors.end(); ++it) {
    ctx.effectors.insert(it.key());
    auto limits = effectors::ParseLimits(it.value());
    if (!limits.ok()) CheckRefusal(limits.status(), "effectors." + it.key() + " limits");
    auto effector = effectors::MakeEffector(it.key(), it.value(), s.ioc, s.log);
    if (!effector.ok()) CheckRefusal(effector.status(), "effectors." + it.key());
  }
  if (config->reflexes.is_object() && !config->reflexes.empty()) {
    auto rules = reflexes::ParseRuleFile(config->reflexes, ctx);
    if (!rules.ok()) CheckRefusal(rules.status(), "reflexes");
  }
  for (auto it = config->sensors.begin(); it != config->sensors.end(); ++it) {
    auto sink = [](nlohmann::json, sensors::Committed) -> Status {
      return Status::Unavailable("not started");
    };
    auto sensor = sensors::MakeSensor(it.key(), it.value(), s.ioc, sink, s.log);
    if (!sensor.ok()) CheckRefusal(sensor.status(), "sensors." + it.key());
  }
  return 0;
}
