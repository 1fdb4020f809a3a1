// The config's `mind` section (docs/config.md, docs/mind.md): parsed into
// MindConfig, every problem named by its key.
#include <algorithm>
#include <cstdlib>

#include "base/chat.h"
#include "base/name.h"
#include "runtime/config_section.h"

namespace limbic::runtime::config {

void ParseMindSection(const json& v, const std::string& base_dir, std::vector<std::string>* errors,
                      Config* c) {
  Section m(v, "mind", errors);
  MindConfig& o = c->mind;
  m.Bool("enabled", &o.enabled);
  m.String("name", &o.name);
  if (std::string fault = NameFault(o.name); !fault.empty() || o.name.size() > 64)
    m.Fail("mind.name", "must be a name of at most 64 bytes" + (fault.empty() ? "" : "; " + fault));
  m.Either("kind", &o.kind, "openai", "exec");
  m.String("url", &o.url);
  m.String("model", &o.model);
  m.String("api_key_env", &o.api_key_env);
  if (m.Get("api_key"))
    m.Fail("mind.api_key", "the key is read from the environment only: name its variable in mind.api_key_env");
  if (!o.api_key_env.empty())
    if (const char* k = std::getenv(o.api_key_env.c_str())) o.api_key = k;
  m.Duration("timeout", &o.timeout, 1);
  o.timeout = std::min<TimeMs>(o.timeout, 3600000);
  m.String("system_prompt", &o.system_prompt_file);
  if (!o.system_prompt_file.empty()) {
    o.system_prompt_file = ResolvedPath(base_dir, o.system_prompt_file);
    auto text = ReadFile(o.system_prompt_file);
    if (!text.ok()) m.Fail("mind.system_prompt", text.status().message());
    else o.system_prompt = *text;
  }
  if (const json* cmd = m.Get("command")) {
    if (!cmd->is_array() || cmd->empty() ||
        !std::all_of(cmd->begin(), cmd->end(), [](const json& a) { return a.is_string(); }))
      m.Fail("mind.command", "must be a non-empty array of strings (the program and its arguments)");
    else
      for (const json& a : *cmd) o.command.push_back(a.get<std::string>());
  }
  m.Strings("tools", &o.tools, [](const std::string& t) -> std::string {
    if (t == "approve_action" || t == "reject_action")
      return "a mind may not decide approvals: they are the gate on what it does";
    return "";
  });
  m.Bool("record_text", &o.record_text);
  m.Integer("max_text", &o.max_text, 0, 1 << 20);
  m.Integer("context_tokens", &o.context_tokens, 100, 1000000);
  if (const json* w = m.Get("wake")) {
    Section ws(*w, "mind.wake", errors);
    ws.Number("threshold", &o.wake_threshold, 0, 1);
    ws.Number("arousal_gain", &o.arousal_gain, 0, 2);
    ws.Bool("focused_thread", &o.focused_thread);
    ws.RejectUnknown();
  }
  if (const json* b = m.Get("budget")) {
    Section bs(*b, "mind.budget", errors);
    bs.Integer("daily_tokens", &o.budget.daily_tokens, 0, int64_t{1} << 50);
    int64_t minutes = o.budget.daily_time / 60000;
    bs.Integer("daily_minutes", &minutes, 0, 24 * 60);
    o.budget.daily_time = minutes * 60000;
    bs.Duration("max_session", &o.budget.max_session, 1000);
    bs.Integer("max_steps", &o.budget.max_steps, 1, 1000);
    bs.Duration("min_interval", &o.budget.min_interval, 0);
    bs.Number("pressure_at", &o.budget.pressure_at, 0, 1);
    bs.RejectUnknown();
  }
  m.RejectUnknown();
  o.dir = std::filesystem::absolute(base_dir.empty() ? "." : base_dir).lexically_normal().string();
  while (o.dir.size() > 1 && o.dir.back() == '/') o.dir.pop_back();
  if (!o.enabled) return;
  if (o.kind == "openai") {
    ChatSpec spec{o.url, o.model, o.api_key, static_cast<int>(o.timeout)};
    if (Status s = CheckChatSpec(spec); !s.ok()) errors->push_back("mind." + s.message());
    if (!o.command.empty()) errors->push_back("mind.command: only for kind exec");
  } else {
    if (o.command.empty()) errors->push_back("mind.command: required for kind exec");
    else if (o.command[0].empty() || o.command[0][0] != '/')
      errors->push_back("mind.command: argv[0] must be an absolute path (no shell, no PATH lookup)");
  }
}

}  // namespace limbic::runtime::config
