// Measuring recall: `limbic memory evaluate FILE` (docs/memory.md,
// "Measuring recall").
//
// A labelled set is JSONL, one object per line:
//   {"memory": KEY, "text": TEXT, "episode_id"?: ID}         an episode
//   {"memory": KEY, "fact": [SUBJECT, RELATION, OBJECT]}     a fact
//   {"query": TEXT, "relevant": [KEY, ...], "category"?: C}  a question
// Keys are unique; every relevant key names a memory of the file; no
// other fields. Blank lines are skipped.
//
// EvaluateRecall stores the memories, in file order, one second apart,
// through MemoryStore in a scratch state dir (removed after), and asks
// each query with k = 10 and reinforce false one second after the last;
// the same queries go to two Okapi BM25 baselines over the same texts
// (k1 1.2, b 0.75): `bm25` on lower-cased words (runs of ASCII letters and
// digits and of non-ASCII bytes), `bm25_stemmed` on the terms of the
// `english` analyzer (stop words removed, Snowball's stemmer). So each
// figure of limbic comes with the baselines' of the same run.
//
// Metrics, averaged over queries, overall and per category (rank from 1,
// R = the query's relevant keys, a hit = a result whose memory has a
// relevant key):
//   R@k      |R in the best k| / |R|
//   MRR      1 / the rank of the first hit (0 without one in the best 10)
//   nDCG@10  sum of 1/log2(rank + 1) over hits, over the same for a
//            perfect ranking of min(|R|, 10) hits
// A memory that MemoryStore merged into an earlier one (a near-duplicate
// episode, the same fact again) answers for both keys; `merged` counts
// them.
//
// Thread-safety: pure functions; EvaluateRecall uses its own state dir.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "memory/store.h"

namespace limbic::memory {

struct EvalSet {
  struct Memory {
    std::string key;
    std::string text;        // an episode's; a fact's is "subject relation object"
    std::string episode_id;  // episodes, optional
    std::optional<std::array<std::string, 3>> fact;
  };
  struct Query {
    std::string text;
    std::vector<std::string> relevant;
    std::string category;  // "" when not given
    size_t line = 0;
  };
  std::vector<Memory> memories;
  std::vector<Query> queries;
};

// InvalidArgument "NAME:LINE: <what>" for a line that is not one of the
// three shapes, a duplicate key, a relevant key no memory has; also for a
// set without queries.
Result<EvalSet> ParseEvalSet(std::string_view text, const std::string& name);
// Adds `more` (parsed from file `name`) to `set`: InvalidArgument naming
// the file and the key when a memory key is already in `set`.
Status AppendEvalSet(EvalSet* set, EvalSet more, const std::string& name);

struct EvalOptions {
  bool per_query = false;   // add each query's ranked keys to the answer
};

// {memories, queries, merged, systems: {limbic|bm25|bm25_stemmed:
// {overall: METRICS, categories: {C: METRICS}}}, ratio: {limbic over
// bm25_stemmed, per metric, overall}, latency_ms: {p50, p99, max} of
// limbic's recall, queries?: [...]} with METRICS = {n, r1, r5, r10, mrr,
// ndcg10}. `options` are limbic's (from the config).
Result<nlohmann::json> EvaluateRecall(const EvalSet& set, const MemoryOptions& options,
                                      const EvalOptions& eval = {});

}  // namespace limbic::memory
