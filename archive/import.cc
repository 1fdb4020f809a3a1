// Archive::Import: a COMB archive brought in (archive.h, docs/archive.md).
#include <algorithm>
#include <map>

#include "archive/archive.h"
#include "archive/comb_links.h"
#include "archive/doc_files.h"
#include "archive/links.h"
#include "base/json.h"

namespace limbic::archive {
namespace {


// 1. Every DATE.json of the COMB archive in `src`, parsed, in date order.
Result<std::vector<Document>> ReadCombDocuments(Env* env, const std::string& src) {
  auto names = env->GetChildren(src);
  if (!names.ok()) return names.status();
  std::vector<std::string> dates;
  for (const std::string& name : *names) {
    if (!name.ends_with(".json")) continue;
    std::string stem = name.substr(0, name.size() - 5);
    if (!IsValidDate(stem))
      return Status::InvalidArgument(src + "/" + name +
                                     ": not a COMB document name (YYYY-MM-DD.json)");
    dates.push_back(stem);
  }
  if (dates.empty())
    return Status::InvalidArgument("no COMB documents (YYYY-MM-DD.json) in " + src);
  std::sort(dates.begin(), dates.end());
  std::vector<Document> docs;
  for (const std::string& date : dates) {
    const std::string path = src + "/" + date + ".json";
    auto text = env->ReadFileToString(path);
    if (!text.ok()) return text.status();
    std::optional<json> j = ParseJson(*text);
    if (!j) return Status::Corruption(path + ": not JSON (" + JsonError(*text) + ")");
    auto doc = DocumentFromJson(std::move(*j), path);
    if (!doc.ok()) return doc.status();
    if (doc->date != date) return Status::Corruption(path + ": date is \"" + doc->date + "\"");
    docs.push_back(std::move(doc).value());
  }
  return docs;
}

// 2. COMB's chain rule (comb/archive.py verify_chain), which is ours.
Status CheckCombChain(const std::vector<Document>& docs, const std::string& src) {
  std::optional<std::string> prev;
  for (size_t i = 0; i < docs.size(); ++i) {
    const Document& d = docs[i];
    const std::string path = src + "/" + d.date + ".json";
    if (d.prev_hash != prev)
      return Status::Corruption(path + ": prev_hash " + OrNull(d.prev_hash) + " is not " +
                                (i == 0 ? std::string("null in the first document")
                                        : "the hash of " + docs[i - 1].date + " (" + *prev + ")"));
    if (std::string h = ChainHash(d.prev_hash, d.content); h != d.hash)
      return Status::Corruption(path + ": hash " + d.hash + " does not match its content (" + h +
                                ")");
    prev = d.hash;
  }
  return Status::OK();
}

// 3. Links: ours, COMB's, or (without `relink`) refused; with `relink`,
// ours. Counts COMB's into result->comb_links.
Status CheckCombLinks(std::vector<Document>& docs, const std::string& src,
                      const LinkOptions& options, bool relink, ImportResult* result) {
  std::vector<std::string> dates;
  std::vector<Features> features;
  features.reserve(docs.size());
  std::map<std::string, CombFeatures> comb;
  for (const Document& d : docs) {
    dates.push_back(d.date);
    features.push_back(ComputeFeatures(d.content));
    comb[d.date] = ComputeCombFeatures(d.content);
  }
  std::vector<const Features*> feature_of;
  for (const Features& f : features) feature_of.push_back(&f);
  const std::vector<Links> expected = ComputeLinks(dates, feature_of, options);
  for (size_t i = 0; i < docs.size(); ++i) {
    Document& d = docs[i];
    const std::string path = src + "/" + d.date + ".json";
    const bool ours =
        d.links.semantic == expected[i].semantic && d.links.social == expected[i].social;
    const bool combs = !ours && !d.metadata.contains("rolled_up_at") &&
                       CombComputed(d.date, comb.at(d.date), d.links, comb);
    if (combs) ++result->comb_links;
    if (!relink) {
      if (d.links.prev != expected[i].prev || d.links.next != expected[i].next)
        return Status::Corruption(path + ": temporal links are " + OrNull(d.links.prev) + " / " +
                                  OrNull(d.links.next) + ", not " + OrNull(expected[i].prev) + " / " +
                                  OrNull(expected[i].next) + " (--relink recomputes them)");
      if (!ours && !combs)
        return Status::Corruption(path +
                                  ": semantic or social links are neither COMB's nor limbic's "
                                  "(--relink recomputes them)");
    } else {
      d.links = expected[i];
    }
    d.metadata["staged_entries"] = 0;
  }
  return Status::OK();
}

}  // namespace

Result<ImportResult> Archive::Import(const std::string& comb_dir, bool relink) {
  if (options_.read_only) return Status::FailedPrecondition("the archive is open read-only");
  Env* env = options_.env;
  std::string src = comb_dir + "/archive";
  if (!env->FileExists(src)) src = comb_dir;
  if (!env->FileExists(src)) return Status::InvalidArgument(comb_dir + ": no such directory");
  auto mine = Dates();
  if (!mine.ok()) return mine.status();
  if (!mine->empty())
    return Status::FailedPrecondition("this archive already has " + std::to_string(mine->size()) +
                                      " documents (" + mine->front() + " .. " + mine->back() +
                                      "): a COMB archive can only be imported into an empty one");

  auto docs = ReadCombDocuments(env, src);
  if (!docs.ok()) return docs.status();
  LIMBIC_RETURN_IF_ERROR(CheckCombChain(*docs, src));
  ImportResult result;
  LIMBIC_RETURN_IF_ERROR(CheckCombLinks(
      *docs, src, LinkOptions{options_.semantic_k, options_.semantic_min, options_.social_k},
      relink, &result));
  result.relinked = relink;
  result.documents = docs->size();

  // 4. Written at once; COMB's staging (entries it never rolled up) stays.
  DocFiles files = Files();
  DocFiles::Batch batch(&files);
  for (const Document& d : *docs) {
    std::string data;
    try {
      data = DocumentToJson(d).dump(1) + "\n";
    } catch (const json::exception& e) {
      return Status::Corruption(src + "/" + d.date + ".json: " + e.what());
    }
    LIMBIC_RETURN_IF_ERROR(batch.Add(d.date, data));
  }
  LIMBIC_RETURN_IF_ERROR(batch.Commit());
  const std::string staging = comb_dir + "/staging";
  if (src != comb_dir && env->FileExists(staging)) {
    auto staged = env->GetChildren(staging);
    if (!staged.ok()) return staged.status();
    for (const std::string& name : *staged)
      if (name.ends_with(".jsonl")) result.staged_days.push_back(name.substr(0, name.size() - 6));
    std::sort(result.staged_days.begin(), result.staged_days.end());
  }
  return result;
}

}  // namespace limbic::archive
