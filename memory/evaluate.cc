#include "memory/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <unordered_map>

#include "archive/analyzer.h"
#include "archive/search.h"
#include "base/input_json.h"
#include "base/time.h"
#include "state/engine.h"
#include "state/replay.h"

namespace limbic::memory {
namespace {

using json = nlohmann::json;

constexpr TimeMs kStart = 1790000000000;  // 2026-09-21: any fixed time
constexpr TimeMs kSecond = 1000;
constexpr size_t kAsked = 10;  // results per query: what R@10 and nDCG@10 need

bool GoodKey(const std::string& k) {
  if (k.empty() || k.size() > 200) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == ':';
  });
}

std::string NonEmptyString(const json& v) {
  return v.is_string() ? v.get<std::string>() : std::string();
}

// ---- the baselines: Okapi BM25 as a user would write it ----

// Lower-cased runs of ASCII letters and digits and of non-ASCII bytes.
std::vector<std::string> BaselineWords(std::string_view text) {
  std::vector<std::string> out;
  std::string w;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c >= 0x80) {
      w.push_back(static_cast<char>(std::tolower(c)));
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

class Okapi {
 public:
  explicit Okapi(std::vector<std::vector<std::string>> docs) : docs_(std::move(docs)) {
    double total = 0;
    for (size_t d = 0; d < docs_.size(); ++d) {
      std::unordered_map<std::string, uint32_t> tf;
      for (const std::string& t : docs_[d]) ++tf[t];
      for (const auto& [t, n] : tf) postings_[t].emplace_back(d, n);
      total += static_cast<double>(docs_[d].size());
    }
    avgdl_ = docs_.empty() ? 1 : std::max(1.0, total / static_cast<double>(docs_.size()));
  }
  // Documents by score, best first (ties by position), at most n.
  std::vector<size_t> Search(const std::vector<std::string>& query, size_t n) const {
    const archive::Bm25Scorer s(1.2, 0.75, static_cast<double>(docs_.size()), avgdl_);
    std::unordered_map<size_t, double> score;
    for (const std::string& t : std::set<std::string>(query.begin(), query.end())) {
      auto it = postings_.find(t);
      if (it == postings_.end()) continue;
      const double idf = s.Idf(static_cast<double>(it->second.size()));
      for (auto [d, tf] : it->second)
        score[d] += idf * s.TfPart(tf, s.Norm(static_cast<double>(docs_[d].size())));
    }
    std::vector<std::pair<double, size_t>> ranked;
    for (auto [d, v] : score) ranked.emplace_back(-v, d);
    const size_t m = std::min(n, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(m), ranked.end());
    std::vector<size_t> out;
    for (size_t i = 0; i < m; ++i) out.push_back(ranked[i].second);
    return out;
  }

 private:
  std::vector<std::vector<std::string>> docs_;
  std::unordered_map<std::string, std::vector<std::pair<size_t, uint32_t>>> postings_;
  double avgdl_ = 1;
};

// ---- metrics ----

struct Sums {
  size_t n = 0;
  double r1 = 0, r5 = 0, r10 = 0, mrr = 0, ndcg = 0;
  void Add(const std::vector<std::vector<std::string>>& ranked_keys,
           const std::vector<std::string>& relevant) {
    const std::set<std::string> want(relevant.begin(), relevant.end());
    std::set<std::string> found;
    double dcg = 0, first = 0;
    size_t found_at_1 = 0, found_at_5 = 0;
    for (size_t i = 0; i < ranked_keys.size() && i < 10; ++i) {
      bool hit = false;
      for (const std::string& k : ranked_keys[i])
        if (want.count(k) && found.insert(k).second) hit = true;
      if (hit) {
        dcg += 1 / std::log2(static_cast<double>(i) + 2);
        if (first == 0) first = 1 / static_cast<double>(i + 1);
      }
      if (i == 0) found_at_1 = found.size();
      if (i == 4) found_at_5 = found.size();
    }
    if (ranked_keys.size() < 5) found_at_5 = found.size();
    if (ranked_keys.empty()) found_at_1 = 0;
    double ideal = 0;
    for (size_t i = 0; i < std::min<size_t>(want.size(), 10); ++i)
      ideal += 1 / std::log2(static_cast<double>(i) + 2);
    const double r = static_cast<double>(want.size());
    ++n;
    r1 += static_cast<double>(found_at_1) / r;
    r5 += static_cast<double>(found_at_5) / r;
    r10 += static_cast<double>(found.size()) / r;
    mrr += first;
    ndcg += ideal > 0 ? dcg / ideal : 0;
  }
  json Json() const {
    const double d = n ? static_cast<double>(n) : 1;
    auto r = [](double v) { return std::round(v * 10000) / 10000; };
    return {{"n", n},          {"r1", r(r1 / d)},   {"r5", r(r5 / d)},
            {"r10", r(r10 / d)}, {"mrr", r(mrr / d)}, {"ndcg10", r(ndcg / d)}};
  }
};

struct System {
  Sums overall;
  std::map<std::string, Sums> categories;
  void Add(const EvalSet::Query& q, const std::vector<std::vector<std::string>>& ranked) {
    overall.Add(ranked, q.relevant);
    if (!q.category.empty()) categories[q.category].Add(ranked, q.relevant);
  }
  json Json() const {
    json c = json::object();
    for (const auto& [name, s] : categories) c[name] = s.Json();
    return {{"overall", overall.Json()}, {"categories", c}};
  }
};

}  // namespace

Result<EvalSet> ParseEvalSet(std::string_view text, const std::string& name) {
  EvalSet set;
  std::set<std::string> keys;
  size_t line_no = 0;
  auto fail = [&](const std::string& what) {
    return Status::InvalidArgument(name + ":" + std::to_string(line_no) + ": " + what);
  };
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto parsed = ParseInputJson(line);  // bounded: the file is outside input
    if (!parsed.ok()) return fail("not JSON: " + parsed.status().message());
    json v = std::move(*parsed);
    if (!v.is_object()) return fail("must be a JSON object");
    auto only = [&](std::initializer_list<const char*> allowed) -> Status {
      for (const auto& [k, _] : v.items())
        if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; }))
          return fail("unknown field \"" + k + "\"");
      return Status::OK();
    };
    if (v.contains("memory")) {
      EvalSet::Memory m;
      m.key = NonEmptyString(v["memory"]);
      if (!GoodKey(m.key))
        return fail("\"memory\": must be a key of 1..200 letters, digits, '-', '_', '.' or ':'");
      if (!keys.insert(m.key).second) return fail("duplicate key \"" + m.key + "\"");
      if (v.contains("fact")) {
        LIMBIC_RETURN_IF_ERROR(only({"memory", "fact"}));
        const json& f = v["fact"];
        if (!f.is_array() || f.size() != 3 ||
            !std::all_of(f.begin(), f.end(), [](const json& x) { return !NonEmptyString(x).empty(); }))
          return fail("\"fact\": must be [subject, relation, object], three non-empty strings");
        m.fact = std::array<std::string, 3>{f[0], f[1], f[2]};
        m.text = f[0].get<std::string>() + " " + f[1].get<std::string>() + " " +
                 f[2].get<std::string>();
      } else {
        LIMBIC_RETURN_IF_ERROR(only({"memory", "text", "episode_id"}));
        m.text = v.contains("text") ? NonEmptyString(v["text"]) : "";
        if (m.text.empty()) return fail("\"text\": must be a non-empty string (or give \"fact\")");
        if (v.contains("episode_id")) {
          m.episode_id = NonEmptyString(v["episode_id"]);
          if (m.episode_id.empty()) return fail("\"episode_id\": must be a non-empty string");
        }
      }
      set.memories.push_back(std::move(m));
    } else if (v.contains("query")) {
      LIMBIC_RETURN_IF_ERROR(only({"query", "relevant", "category"}));
      EvalSet::Query q;
      q.line = line_no;
      q.text = NonEmptyString(v["query"]);
      if (q.text.empty()) return fail("\"query\": must be a non-empty string");
      const json* r = v.contains("relevant") ? &v["relevant"] : nullptr;
      if (!r || !r->is_array() || r->empty())
        return fail("\"relevant\": must be a non-empty array of memory keys");
      for (const json& k : *r) {
        if (!GoodKey(NonEmptyString(k))) return fail("\"relevant\": " + k.dump() + " is not a key");
        q.relevant.push_back(k.get<std::string>());
      }
      if (v.contains("category")) {
        q.category = NonEmptyString(v["category"]);
        if (q.category.empty()) return fail("\"category\": must be a non-empty string");
      }
      set.queries.push_back(std::move(q));
    } else {
      return fail("must have \"memory\" (a memory) or \"query\" (a question)");
    }
  }
  for (const EvalSet::Query& q : set.queries)
    for (const std::string& k : q.relevant)
      if (!keys.count(k)) {
        line_no = q.line;
        return fail("\"relevant\": no memory has key \"" + k + "\"");
      }
  if (set.queries.empty()) return Status::InvalidArgument(name + ": no queries");
  return set;
}

Status AppendEvalSet(EvalSet* set, EvalSet more, const std::string& name) {
  std::set<std::string> keys;
  for (const EvalSet::Memory& m : set->memories) keys.insert(m.key);
  for (const EvalSet::Memory& m : more.memories)
    if (keys.count(m.key))
      return Status::InvalidArgument(name + ": key \"" + m.key + "\" is in an earlier file too");
  for (EvalSet::Memory& m : more.memories) set->memories.push_back(std::move(m));
  for (EvalSet::Query& q : more.queries) set->queries.push_back(std::move(q));
  return Status::OK();
}

Result<json> EvaluateRecall(const EvalSet& set, const MemoryOptions& options,
                            const EvalOptions& eval) {
  // Removed when done (declared first: the engine closes before).
  auto scratch = state::ScratchStateDir::Make("evaluate");
  if (!scratch.ok()) return scratch.status();
  ManualClock clock(kStart);
  state::EngineOptions eo;
  eo.state_dir = scratch->path();
  eo.clock = &clock;
  eo.durability = state::Durability::kNone;  // scratch: nothing to keep
  eo.short_lived = true;
  auto engine = state::Engine::Open(eo);
  if (!engine.ok()) return engine.status().WithContext("the scratch state " + scratch->path());
  auto store = MemoryStore::Open(**engine, options, nullptr);
  if (!store.ok()) return store.status();

  // Store, one second apart; a merged memory's id answers for its key too.
  std::unordered_map<std::string, std::vector<std::string>> keys_of;  // id -> keys
  size_t merged = 0;
  for (const EvalSet::Memory& m : set.memories) {
    clock.Advance(kSecond);
    json req;
    Result<MemoryPlan> plan = Status::OK();
    if (m.fact) {
      req = {{"subject", (*m.fact)[0]}, {"relation", (*m.fact)[1]}, {"object", (*m.fact)[2]}};
      plan = (*store)->RememberFact(req);
    } else {
      req = {{"text", m.text}};
      if (!m.episode_id.empty()) req["episode_id"] = m.episode_id;
      plan = (*store)->RememberEpisode(req, clock.Now());
    }
    if (!plan.ok()) return plan.status().WithContext("memory " + m.key);
    if (!plan->events.empty()) LIMBIC_RETURN_IF_ERROR((*engine)->Commit(std::move(plan->events)));
    const std::string id = plan->answer.value("id", "");
    auto& ks = keys_of[id];
    if (!ks.empty()) ++merged;
    ks.push_back(m.key);
  }
  clock.Advance(kSecond);

  // The baselines over the same texts, in the same order.
  auto english = archive::Analyzer::Make("english");
  if (!english.ok()) return english.status();
  std::vector<std::vector<std::string>> words, stems;
  for (const EvalSet::Memory& m : set.memories) {
    words.push_back(BaselineWords(m.text));
    stems.push_back((*english)->Terms(m.text));
  }
  const Okapi bm25(std::move(words)), stemmed(std::move(stems));

  System limbic, plain, stem;
  std::vector<double> millis;
  json per_query = json::array();
  for (const EvalSet::Query& q : set.queries) {
    RecallRequest r;
    r.query = q.text;
    r.k = kAsked;
    r.reinforce = false;
    const auto t0 = std::chrono::steady_clock::now();
    auto plan = (*store)->Recall(r, clock.Now());
    millis.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!plan.ok()) return plan.status().WithContext("query at line " + std::to_string(q.line));
    std::vector<std::vector<std::string>> ranked;
    for (const json& hit : plan->answer["results"]) {
      auto it = keys_of.find(hit.value("id", ""));
      ranked.push_back(it == keys_of.end() ? std::vector<std::string>{} : it->second);
    }
    limbic.Add(q, ranked);
    auto keys_at = [&](const std::vector<size_t>& docs) {
      std::vector<std::vector<std::string>> out;
      for (size_t d : docs) out.push_back({set.memories[d].key});
      return out;
    };
    const auto p = keys_at(bm25.Search(BaselineWords(q.text), kAsked));
    const auto s = keys_at(stemmed.Search((*english)->Terms(q.text), kAsked));
    plain.Add(q, p);
    stem.Add(q, s);
    if (eval.per_query) {
      auto flat = [](const std::vector<std::vector<std::string>>& r) {
        json a = json::array();
        for (const auto& ks : r) a.push_back(ks.empty() ? json(nullptr) : json(ks.front()));
        return a;
      };
      per_query.push_back({{"line", q.line},
                           {"query", q.text},
                           {"category", q.category},
                           {"relevant", q.relevant},
                           {"limbic", flat(ranked)},
                           {"bm25_stemmed", flat(s)}});
    }
  }

  std::sort(millis.begin(), millis.end());
  auto pct = [&](double p) {
    return millis[std::min(millis.size() - 1, static_cast<size_t>(p * static_cast<double>(millis.size())))];
  };
  json out = {{"memories", set.memories.size()},
              {"queries", set.queries.size()},
              {"merged", merged},
              {"systems",
               {{"limbic", limbic.Json()}, {"bm25", plain.Json()}, {"bm25_stemmed", stem.Json()}}},
              {"latency_ms", {{"p50", pct(0.5)}, {"p99", pct(0.99)}, {"max", millis.back()}}}};
  json ratio = json::object();
  const json& l = out["systems"]["limbic"]["overall"];
  const json& b = out["systems"]["bm25_stemmed"]["overall"];
  for (const char* m : {"r1", "r5", "r10", "mrr", "ndcg10"}) {
    const double base = b[m].get<double>();
    ratio[m] = base > 0 ? std::round(l[m].get<double>() / base * 1000) / 1000 : 0.0;
  }
  out["ratio"] = ratio;
  if (eval.per_query) out["per_query"] = per_query;
  return out;
}

}  // namespace limbic::memory
