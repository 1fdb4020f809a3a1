#include "runtime/config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "base/chat.h"
#include "base/env.h"
#include "base/input_json.h"
#include "base/name.h"
#include "base/nats.h"
#include "runtime/config_section.h"
#include "runtime/default_config.h"  // generated: kDefaultConfigJson, kDefaultReflexesJson

namespace limbic::runtime {
namespace {

using nlohmann::json;
using config::ParseJsonText;
using config::ReadFile;
using config::ResolvedPath;
using config::Section;

// Named entries (sensors, effectors): an object of objects with a "kind".
void Entries(Section& parent, const std::string& key, json* out) {
  const json* v = parent.Get(key);
  if (!v) return;
  if (!v->is_object()) return parent.Fail(parent.Path(key), "must be an object of named entries");
  bool ok = true;
  for (auto it = v->begin(); it != v->end(); ++it) {
    std::string path = parent.Path(key) + "." + it.key();
    if (!state::IsValidId(it.key())) {
      parent.Fail(path, "names must be 1-128 characters of [A-Za-z0-9._:-]");
      ok = false;
    } else if (!it->is_object() || !it->contains("kind") || !(*it)["kind"].is_string()) {
      parent.Fail(path, "must be an object with a string \"kind\"");
      ok = false;
    }
  }
  if (ok) *out = *v;
}

// api.* limits and allow lists; the shares must nest (docs/api.md).
void ParseApiLimits(Section& a, ApiLimitsConfig* l) {
  a.Duration("read_timeout", &l->read_timeout, 100);
  a.Duration("idle_timeout", &l->idle_timeout, 100);
  a.Integer("max_connections", &l->max_connections, 2, 1 << 20);
  a.Integer("max_connections_per_client", &l->max_connections_per_client, 1, 1 << 20);
  a.Integer("max_sse_streams", &l->max_sse_streams, 0, 1 << 20);
  a.Integer("max_sse_streams_per_client", &l->max_sse_streams_per_client, 0, 1 << 20);
  a.Duration("sse_keepalive", &l->sse_keepalive, 100);
  a.Integer("sse_max_queued_bytes", &l->sse_max_queued_bytes, 4096, int64_t{1} << 32);
  a.Strings("allowed_hosts", &l->allowed_hosts, [](const std::string& h) -> std::string {
    if (h.empty() || h.find_first_of(" \t/?#@") != std::string::npos)
      return "must be a host name or address (no scheme, path or spaces), or \"*\"";
    return "";
  });
  a.Strings("allowed_origins", &l->allowed_origins, [](const std::string& o) -> std::string {
    if (o == "*" || o == "null") return "";
    size_t sep = o.find("://");
    if (sep == std::string::npos || sep == 0 || o.size() == sep + 3 ||
        o.find_first_of(" /?#", sep + 3) != std::string::npos)
      return "must be an origin such as \"http://localhost:3000\" (scheme://host[:port], no path)";
    return "";
  });
  if (l->max_connections_per_client > l->max_connections)
    a.Fail("api.max_connections_per_client",
           "must be at most api.max_connections (" + std::to_string(l->max_connections) + ")");
  if (l->max_sse_streams >= l->max_connections)
    a.Fail("api.max_sse_streams", "must be less than api.max_connections (" +
                                      std::to_string(l->max_connections) +
                                      "), so that streams leave room for other requests");
  if (l->max_sse_streams_per_client > l->max_sse_streams)
    a.Fail("api.max_sse_streams_per_client",
           "must be at most api.max_sse_streams (" + std::to_string(l->max_sse_streams) + ")");
}

// Each Parse*Section reads one top-level section (docs/config.md) into *c;
// what is wrong goes to *errors, named by its path.
void ParseDurabilitySection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section d(v, "durability", errors);
  std::string mode = "fsync";
  d.String("mode", &mode);
  auto parsed = state::ParseDurability(mode);
  if (!parsed.ok()) d.Fail("durability.mode", "must be fsync, interval or none, got \"" + mode + "\"");
  else c->durability = *parsed;
  d.Integer("interval_ms", &c->interval_ms, 1, 60000);
  d.Integer("segment_bytes", &c->segment_bytes, 4096, int64_t{1} << 40);
  d.RejectUnknown();
}

void ParseApiSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section a(v, "api", errors);
  a.String("address", &c->api_address);
  a.Integer("port", &c->api_port, 0, 65535);
  a.String("token", &c->api_token);
  a.Bool("ui", &c->ui);
  a.String("ui_dir", &c->ui_dir);
  if (!c->ui_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(std::filesystem::path(c->ui_dir) / "index.html", ec))
      a.Fail("api.ui_dir",
             "must be a directory holding the inspector's index.html, got \"" + c->ui_dir + "\"");
  }
  a.String("fork_root", &c->fork_root);
  a.Integer("body_limit", &c->body_limit, 1024, int64_t{1} << 30);
  a.Integer("batch_limit", &c->batch_limit, 1, 100000);
  a.Integer("max_json_depth", &c->max_json_depth, 1, int64_t{kMaxMaxJsonDepth});
  ParseApiLimits(a, &c->api_limits);
  a.RejectUnknown();
}

void ParseRecencySection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section r(v, "recency", errors);
  r.Duration("percept_half_life", &c->recency.percept_half_life, 1);
  r.Duration("thread_half_life", &c->recency.thread_half_life, 1);
  r.Duration("arousal_window", &c->recency.arousal_window, 1);
  r.RejectUnknown();
}

void ParseAttentionSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section a(v, "attention", errors);
  a.Number("percept_threshold", &c->attention_threshold, 0, 1);
  a.Integer("limit", &c->attention_limit, 1, 10000);
  a.RejectUnknown();
}

void ParsePerceptsSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section p(v, "percepts", errors);
  p.Duration("dedup_window", &c->percepts_dedup_window);
  p.Duration("expire_after", &c->archive.policy.expire_after);
  p.RejectUnknown();
}

void ParseOutboxSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section o(v, "outbox", errors);
  o.Integer("max_attempts", &c->outbox.max_attempts, 1, 1000);
  o.Duration("backoff", &c->outbox.backoff, 1);
  o.Duration("max_backoff", &c->outbox.max_backoff, 1);
  o.Number("jitter", &c->outbox.jitter, 0, 1);
  o.Duration("retention", &c->outbox.retention);
  o.Duration("shutdown_grace", &c->outbox.shutdown_grace);
  o.RejectUnknown();
}

void ParseReplicationSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section r(v, "replication", errors);
  ReplicationConfig& rc = c->replication;
  r.Strings("nats", &rc.nats, [](const std::string& url) {
    Status s = nats::CheckServerUrl(url);
    return s.ok() ? std::string() : s.message();
  });
  r.String("stream", &rc.stream);
  r.String("agent", &rc.agent);
  std::string mode = "async";
  r.String("mode", &mode);
  if (mode == "async")
    rc.mode = ReplicationConfig::Mode::kAsync;
  else if (mode == "quorum")
    rc.mode = ReplicationConfig::Mode::kQuorum;
  else
    r.Fail(r.Path("mode"), "must be \"async\" or \"quorum\", got \"" + mode + "\"");
  r.Integer("max_lag", &rc.max_lag, 1, int64_t{1} << 40);
  r.Duration("timeout", &rc.timeout, 100);
  r.RejectUnknown();
  const json* nats = v.is_object() && v.contains("nats") ? &v["nats"] : nullptr;
  if (nats != nullptr && nats->is_array() && nats->empty())
    r.Fail(r.Path("nats"), "must name at least one server");
  if (nats != nullptr) {
    if (Status s = nats::CheckName("stream", rc.stream); !s.ok())
      r.Fail(r.Path("stream"), s.message());
    if (rc.agent.empty())
      r.Fail(r.Path("agent"), "required: the agent's name (its subject is limbic.AGENT.events)");
    else if (Status s = nats::CheckName("agent", rc.agent); !s.ok())
      r.Fail(r.Path("agent"), s.message());
  }
}

void ParseArchiveSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section a(v, "archive", errors);
  a.Duration("consolidate_every", &c->archive.consolidate_every);
  a.Duration("threads_after", &c->archive.policy.threads_after);
  a.Duration("percepts_after", &c->archive.policy.percepts_after);
  a.Duration("actions_after", &c->archive.policy.actions_after);
  a.Integer("digest_items", &c->archive.policy.digest_items, 1, 100000);
  a.Bool("rollup", &c->archive.rollup);
  a.Integer("semantic_links", &c->archive.semantic_links, 0, 100);
  a.Integer("social_links", &c->archive.social_links, 0, 100);
  a.RejectUnknown();
}

void ParseCheckpointsSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section k(v, "checkpoints", errors);
  k.Bool("enabled", &c->checkpoints.enabled);
  k.Integer("every", &c->checkpoints.every, 0, int64_t{1} << 40);
  k.Duration("interval", &c->checkpoints.interval);
  k.Integer("keep", &c->checkpoints.keep, 1, 100000);
  // At least 1: the newest is always kept (with 0, each new one was the
  // first retention removed).
  k.Integer("dense", &c->checkpoints.dense, 1, 100000);
  k.RejectUnknown();
  if (c->checkpoints.keep < c->checkpoints.dense)
    errors->push_back("checkpoints.keep: " + std::to_string(c->checkpoints.keep) +
                      " is fewer than checkpoints.dense " + std::to_string(c->checkpoints.dense) +
                      " (the newest `dense` are always among the `keep` kept)");
  if (c->checkpoints.enabled && c->checkpoints.every == 0 && c->checkpoints.interval == 0)
    errors->push_back("checkpoints.every: 0 with checkpoints.interval 0 takes none; set "
                      "checkpoints.enabled false instead");
}

void ParseMemorySection(const json& v, const std::string& base_dir,
                        std::vector<std::string>* errors, Config* c) {
  Section m(v, "memory", errors);
  memory::MemoryOptions& o = c->memory;
  if (const json* e = m.Get("embedder")) {
    Section em(*e, "memory.embedder", errors);
    em.String("kind", &o.embedder.kind);
    if (o.embedder.kind != "hash" && o.embedder.kind != "openai" && o.embedder.kind != "local")
      em.Fail("memory.embedder.kind", "must be hash, openai or local, got \"" + o.embedder.kind + "\"");
    em.Integer("dims", &o.embedder.dims, 8, 65536);
    em.String("url", &o.embedder.url);
    em.String("model", &o.embedder.model);
    em.String("api_key", &o.embedder.api_key);
    std::string key_env;
    em.String("api_key_env", &key_env);
    if (!key_env.empty())
      if (const char* k = std::getenv(key_env.c_str())) o.embedder.api_key = k;
    TimeMs timeout = o.embedder.timeout_ms;
    em.Duration("timeout", &timeout, 1);
    o.embedder.timeout_ms = static_cast<int>(std::min<TimeMs>(timeout, 3600000));
    em.Integer("batch", &o.embedder.batch, 1, 4096);
    em.Integer("threads", &o.embedder.threads, 1, 256);
    em.Integer("max_tokens", &o.embedder.max_tokens, 0, 8192);
    if (o.embedder.max_tokens == 1)
      em.Fail("memory.embedder.max_tokens", "must be 0 (the model's limit) or at least 2 ([CLS] and [SEP])");
    em.String("query_prefix", &o.embedder.query_prefix);
    em.String("passage_prefix", &o.embedder.passage_prefix);
    if (o.embedder.kind == "local") {
      // A forward pass holds batch x tokens x intermediate floats: keep it bounded.
      if (!e->contains("batch")) o.embedder.batch = 32;
      if (o.embedder.batch > 256) em.Fail("memory.embedder.batch", "must be at most 256 for local");
      // A directory relative to the config file; a Hugging Face name as it is.
      const std::string dir = ResolvedPath(base_dir, o.embedder.model);
      std::error_code ec;
      if (!o.embedder.model.empty() && std::filesystem::is_directory(dir, ec)) o.embedder.model = dir;
    }
    em.RejectUnknown();
  }
  TimeMs half_life = static_cast<TimeMs>(o.half_life_hours * 3600000);
  m.Duration("half_life", &half_life, 1);
  o.half_life_hours = static_cast<double>(half_life) / 3600000.0;
  m.Number("min_strength", &o.min_strength, 0, 1);
  double threshold = o.vector_threshold;
  m.Number("vector_threshold", &threshold, -1, 1);
  o.vector_threshold = static_cast<float>(threshold);
  m.Number("duplicate_cosine", &o.duplicate_cosine, 0, 1);
  m.String("analyzer", &o.analyzer);
  if (auto made = archive::Analyzer::Make(o.analyzer); !made.ok())
    errors->push_back("memory.analyzer: " + made.status().message());
  c->archive.analyzer = o.analyzer;
  m.Integer("rrf_k", &o.rrf_k, 1, 100000);
  m.Number("recency_days", &o.recency_days, 0, 1e6);
  m.Integer("vector_exact_limit", &o.vectors.exact_limit, 0, int64_t{1} << 40);
  m.Integer("vector_ef_search", &o.vectors.ef_search, 1, 100000);
  m.Integer("vector_m", &o.vectors.m, 2, 256);
  m.Integer("vector_ef_construction", &o.vectors.ef_construction, 1, 100000);
  if (const json* roots = m.Get("ingest_roots")) {
    // Absolute: a relative root would depend on where limbic was started.
    if (!roots->is_array()) m.Fail("memory.ingest_roots", "must be an array of absolute directory paths, got " + roots->dump());
    else
      for (size_t i = 0; i < roots->size(); ++i) {
        const json& r = (*roots)[i];
        if (!r.is_string() || r.get_ref<const std::string&>().empty() || r.get_ref<const std::string&>()[0] != '/')
          m.Fail("memory.ingest_roots[" + std::to_string(i) + "]", "must be an absolute directory path, got " + r.dump());
        else
          o.ingest_roots.push_back(r.get<std::string>());
      }
  }
  m.Integer("ingest_max_bytes", &o.ingest_max_bytes, 1, int64_t{1} << 40);
  if (const json* b = m.Get("bm25")) {
    Section bm(*b, "memory.bm25", errors);
    bm.Number("k1", &o.bm25.k1, 0, 100);
    bm.Number("b", &o.bm25.b, 0, 1);
    bm.RejectUnknown();
  }
  if (const json* x = m.Get("context")) {
    Section cx(*x, "memory.context", errors);
    cx.Number("neighbours", &o.context.neighbours, 0, 100);
    cx.Number("episode", &o.context.episode, 0, 100);
    cx.Duration("window", &o.context.window, 0);
    cx.RejectUnknown();
  }
  if (const json* x = m.Get("fusion")) {
    Section fu(*x, "memory.fusion", errors);
    fu.Either("method", &o.fusion.method, "score", "rrf");
    fu.Number("lexical", &o.fusion.lexical, 0, 1000);
    fu.Number("vector", &o.fusion.vector, 0, 1000);
    fu.Number("archive", &o.fusion.archive, 0, 1000);
    if (o.fusion.lexical <= 0 && o.fusion.vector <= 0 && o.fusion.archive <= 0)
      fu.Fail("memory.fusion", "at least one of lexical, vector and archive must be above 0, or recall finds nothing");
    fu.RejectUnknown();
  }
  m.RejectUnknown();
}

void ParseWorldSection(const json& v, std::vector<std::string>* errors, Config* c) {
  Section w(v, "world", errors);
  world::WorldOptions& o = c->world;
  w.Bool("daily", &o.daily);
  w.String("extractor", &o.extractor.kind);
  if (o.extractor.kind != "heuristic" && o.extractor.kind != "llm")
    errors->push_back("world.extractor: must be heuristic or llm, got \"" + o.extractor.kind + "\"");
  w.String("surprise", &o.surprise.mode);
  if (o.surprise.mode != "heuristic" && o.surprise.mode != "llm")
    errors->push_back("world.surprise: must be heuristic or llm, got \"" + o.surprise.mode + "\"");
  ChatSpec llm;
  if (const json* l = w.Get("llm")) {
    Section ls(*l, "world.llm", errors);
    ls.String("url", &llm.url);
    ls.String("model", &llm.model);
    ls.String("api_key", &llm.api_key);
    std::string key_env;
    ls.String("api_key_env", &key_env);
    if (!key_env.empty())
      if (const char* k = std::getenv(key_env.c_str())) llm.api_key = k;
    TimeMs timeout = llm.timeout_ms;
    ls.Duration("timeout", &timeout, 1);
    llm.timeout_ms = static_cast<int>(std::min<TimeMs>(timeout, 3600000));
    ls.RejectUnknown();
  }
  o.extractor.llm = llm;
  o.surprise.llm = llm;
  if (o.extractor.kind == "llm" || o.surprise.mode == "llm")
    if (Status s = CheckChatSpec(llm); !s.ok()) errors->push_back("world.llm: " + s.message());
  w.Integer("max_input_chars", &o.extractor.max_input_chars, 1000, int64_t{1} << 30);
  w.Number("threshold", &o.threshold, 0, 1);
  w.Integer("decay_days", &o.decay_days, 1, 100000);
  if (const json* t = w.Get("protected_types")) {
    if (!t->is_array()) w.Fail("world.protected_types", "must be an array of entity types");
    else
      for (size_t i = 0; i < t->size(); ++i) {
        auto type = (*t)[i].is_string() ? world::ParseType((*t)[i].get<std::string>())
                                        : Result<world::EntityType>(Status::InvalidArgument(
                                              "must be an entity type, got " + (*t)[i].dump()));
        if (type.ok()) o.protected_types.insert(*type);
        else w.Fail("world.protected_types[" + std::to_string(i) + "]", type.status().message());
      }
  }
  w.Integer("max_file_bytes", &o.max_file_bytes, 1, int64_t{1} << 40);
  w.RejectUnknown();
}

// Reads the rules file "reflexes" names (relative to base_dir) into
// c->reflexes; nothing when it names none.
Status LoadReflexesFile(const std::string& base_dir, Config* c) {
  if (c->reflexes_file.empty()) return Status::OK();
  c->reflexes_file = ResolvedPath(base_dir, c->reflexes_file);
  auto text = ReadFile(c->reflexes_file);
  if (!text.ok()) return text.status().WithContext("reflexes");
  auto rules = ParseJsonText(*text, c->reflexes_file, c->max_json_depth);
  if (!rules.ok()) return rules.status();
  c->reflexes = *rules;
  return Status::OK();
}

}  // namespace

Status ConfigErrors(const std::vector<std::string>& errors) {
  if (errors.empty()) return Status::OK();
  if (errors.size() == 1) return Status::InvalidArgument(errors[0]);
  std::string all = std::to_string(errors.size()) + " problems:";
  for (const std::string& e : errors) all += "\n  " + e;
  return Status::InvalidArgument(all);
}

Result<Config> ParseConfig(const json& doc, const std::string& base_dir) {
  Config c;
  std::vector<std::string> errors;
  Section root(doc, "", &errors);
  root.String("state_dir", &c.state_dir);

  if (const json* v = root.Get("durability")) ParseDurabilitySection(*v, &errors, &c);
  if (const json* v = root.Get("api")) ParseApiSection(*v, &errors, &c);
  if (const json* v = root.Get("recency")) ParseRecencySection(*v, &errors, &c);
  if (const json* v = root.Get("attention")) ParseAttentionSection(*v, &errors, &c);
  if (const json* v = root.Get("percepts")) ParsePerceptsSection(*v, &errors, &c);
  if (const json* v = root.Get("outbox")) ParseOutboxSection(*v, &errors, &c);
  if (const json* v = root.Get("archive")) ParseArchiveSection(*v, &errors, &c);
  if (const json* v = root.Get("checkpoints")) ParseCheckpointsSection(*v, &errors, &c);
  if (const json* v = root.Get("memory")) ParseMemorySection(*v, base_dir, &errors, &c);
  if (const json* v = root.Get("world")) ParseWorldSection(*v, &errors, &c);
  if (const json* v = root.Get("replication")) ParseReplicationSection(*v, &errors, &c);
  if (const json* v = root.Get("mind")) config::ParseMindSection(*v, base_dir, &errors, &c);
  root.String("reflexes", &c.reflexes_file);
  Entries(root, "sensors", &c.sensors);
  Entries(root, "effectors", &c.effectors);
  root.RejectUnknown();
  LIMBIC_RETURN_IF_ERROR(ConfigErrors(errors));
  // Expiry drops what attention no longer shows, as attention sees it.
  c.archive.policy.expire_below = c.attention_threshold;
  c.archive.policy.recency = c.recency;

  LIMBIC_RETURN_IF_ERROR(LoadReflexesFile(base_dir, &c));
  return c;
}

void ExpandConfigDir(const std::string& dir, json* doc) {
  static const std::string kVar = "${CONFIG_DIR}";
  std::vector<json*> todo{doc};
  while (!todo.empty()) {
    json* v = todo.back();
    todo.pop_back();
    if (v->is_string()) {
      std::string& s = v->get_ref<std::string&>();
      for (size_t at = s.find(kVar); at != std::string::npos; at = s.find(kVar, at + dir.size()))
        s.replace(at, kVar.size(), dir);
    } else if (v->is_structured()) {
      for (json& child : *v) todo.push_back(&child);
    }
  }
}

Result<Config> LoadConfigFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  auto doc = ParseJsonText(*text, path);
  if (!doc.ok()) return doc.status();
  std::string base = std::filesystem::path(path).parent_path().string();
  std::string dir = std::filesystem::absolute(base.empty() ? "." : base).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();  // "/tmp/x/." normalises to "/tmp/x/"
  ExpandConfigDir(dir, &*doc);
  auto config = ParseConfig(*doc, base);
  if (!config.ok()) return config.status().WithContext(path);
  config->source = path;
  return config;
}

Result<Config> DefaultConfig() {
  auto doc = ParseJsonText(kDefaultConfigJson, "embedded config/limbic.json");
  if (!doc.ok()) return doc.status();
  json copy = *doc;
  copy.erase("reflexes");  // the embedded rules stand in for the file
  auto config = ParseConfig(copy, "");
  if (!config.ok()) return config.status().WithContext("embedded config/limbic.json");
  auto rules = ParseJsonText(kDefaultReflexesJson, "embedded config/reflexes.json");
  if (!rules.ok()) return rules.status();
  config->reflexes = *rules;
  config->reflexes_file = "<embedded config/reflexes.json>";
  config->source = "<embedded default>";
  return config;
}

std::string EffectorsFilePath(const std::string& state_dir) {
  return state_dir + "/effectors.json";
}

json EffectorsSummary(const json& effectors) {
  json out = json::object();
  if (!effectors.is_object()) return out;
  for (auto it = effectors.begin(); it != effectors.end(); ++it) {
    json e = json::object();
    for (const char* key : {"kind", "require_approval"})
      if (it->is_object() && it->contains(key)) e[key] = (*it)[key];
    out[it.key()] = std::move(e);
  }
  return out;
}

Result<json> RememberedEffectors(const std::string& state_dir) {
  const std::string path = EffectorsFilePath(state_dir);
  if (!Env::Default()->FileExists(path)) {
    auto config = DefaultConfig();
    if (!config.ok()) return config.status();
    return EffectorsSummary(config->effectors);
  }
  auto text = Env::Default()->ReadFileToString(path);
  if (!text.ok()) return text.status();
  json doc = json::parse(*text, nullptr, false);
  if (!doc.is_object())
    return Status::Corruption(path +
                              ": not a JSON object (remove it; `limbic run` writes it again)");
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (!it->is_object())
      return Status::Corruption(path + ": effector \"" + it.key() + "\" is not an object");
  return doc;
}

}  // namespace limbic::runtime
