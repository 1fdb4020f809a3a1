// Archive::Verify: every document's chain and links, recomputed.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "archive/archive.h"
#include "archive/comb_links.h"
#include "archive/doc_files.h"
#include "archive/links.h"
#include "base/parallel.h"

namespace limbic::archive {
namespace {

// What Verify keeps of a document: everything but its content.
struct Checked {
  Status status;  // why the file is not a document
  uint64_t bytes = 0;
  std::string date, hash, computed_hash;
  std::optional<std::string> prev_hash;
  Links links;
  Features features;
  std::string staged;  // what metadata.staged_entries gets wrong, or ""
  bool rolled_up_by_limbic = false;
};

std::string Short(const std::string& hash) { return hash.size() > 12 ? hash.substr(0, 12) + "…" : hash; }


std::string Show(const std::vector<SemanticLink>& links) {
  std::string out = "[";
  for (const SemanticLink& l : links) {
    if (out.size() > 1) out += ", ";
    out += l.target + " " + json(l.score).dump();
  }
  return out + "]";
}

std::string Show(const std::vector<SocialLink>& links) {
  std::string out = "[";
  for (const SocialLink& l : links) {
    if (out.size() > 1) out += ", ";
    out += l.target + " " + l.direction + " " + json(l.delta).dump();
  }
  return out + "]";
}

// Blocks of entries [from, to) as AppendToContent writes them into an
// empty content.
std::string Blocks(const std::vector<Entry>& entries, size_t from, size_t to) {
  std::string out;
  AppendToContent(&out, std::vector<Entry>(entries.begin() + from, entries.begin() + to));
  return out;
}

// Whether `content` ends with the first `n` staged entries: all of a
// rolled-up document's staged lines are at its end, in order, after
// whatever it held before (an imported COMB content), so a rollup appends
// exactly the lines after them.
bool Holds(std::string_view content, const std::vector<Entry>& entries, size_t n) {
  if (n == 0) return true;
  std::string tail = Blocks(entries, 0, n);
  return content == tail || content.ends_with("\n\n" + tail);
}

// What the document's metadata.staged_entries gets wrong against its day's
// staging file, or "" (see archive.h, "Rollup").
std::string CheckStaged(const Staging& staging, const std::string& date, std::string_view content,
                        const DocumentView& doc) {
  if (!doc.staged_entries_bad.empty())
    return "metadata.staged_entries is " + doc.staged_entries_bad + ", not a count";
  auto entries = staging.Read(date);
  if (!entries.ok()) return entries.status().message();
  const size_t lines = entries->size();
  const std::string file = staging.PathOf(date);
  if (!doc.staged_entries) {
    if (lines == 0) return "";  // nothing staged here: an imported document
    return "metadata.staged_entries is missing, but " + file + " has " + std::to_string(lines) +
           " entries";
  }
  const uint64_t held = *doc.staged_entries;
  if (held > lines)
    return "metadata.staged_entries is " + std::to_string(held) + ", but " + file + " has only " +
           std::to_string(lines) + " entries";
  bool ok = Holds(content, *entries, held);
  // An entry after `held` whose block already ends the content: the count
  // was lowered, and a rollup would append that entry a second time.
  for (size_t i = held; ok && i < lines; ++i)
    if (content.ends_with(Blocks(*entries, i, i + 1))) ok = false;
  if (ok) return "";
  for (size_t n = lines; n > 0; --n)
    if (n != held && Holds(content, *entries, n))
      return "metadata.staged_entries is " + std::to_string(held) +
             ", but the content holds the first " + std::to_string(n) + " entries of " + file;
  return "metadata.staged_entries is " + std::to_string(held) +
         ", but the content does not end with the first " + std::to_string(held) + " entries of " +
         file;
}

// Stored social links that are exactly the expected ones with the sign
// limbic used before it took COMB's (the delta of the target towards the
// document, not the document's towards the target).
bool OldSocialSign(const std::vector<SocialLink>& stored, const std::vector<SocialLink>& expected,
                   const std::vector<std::string>& unknown, size_t k) {
  std::vector<SocialLink> flipped = stored;
  for (SocialLink& l : flipped) {
    l.delta = -l.delta;
    l.direction = l.delta > 0 ? "inward" : "outward";
  }
  return !stored.empty() && LinksAgree(flipped, expected, unknown, k);
}

// 1. Every document read and checked on its own, in parallel.
std::vector<Checked> CheckEach(const DocFiles& files, const Staging& staging,
                               const std::vector<std::string>& dates,
                               const std::vector<std::string>& paths) {
  const size_t n = dates.size();
  std::vector<Checked> checked(n);
  std::vector<DocReader> readers;
  for (size_t w = 0; w < ParallelWorkers(n); ++w) readers.emplace_back(&files);
  ParallelForWorkers(n, [&](size_t i, size_t worker) {
    Checked& c = checked[i];
    auto doc = readers[worker].Read(paths[i], &c.bytes);
    if (!doc.ok()) {
      c.status = doc.status();
      return;
    }
    c.date = std::move(doc->date);
    c.hash = std::move(doc->hash);
    c.prev_hash = std::move(doc->prev_hash);
    c.links = std::move(doc->links);
    c.computed_hash = ChainHash(c.prev_hash, doc->content);
    c.features = ComputeFeatures(doc->content);
    if (c.date == dates[i]) c.staged = CheckStaged(staging, dates[i], doc->content, *doc);
    c.rolled_up_by_limbic = doc->rolled_up_by_limbic;
  });
  return checked;
}

// Whether the document's content is the one its hash was made from.
bool Known(const Checked& c) { return c.status.ok() && c.hash == c.computed_hash; }

// 2. The links every document should have. A content that does not match
// its hash is not the content the links were computed from: the document
// is reported for its hash, and the others' links are checked as if its
// content were unknown (`unknown`), so one changed content is one problem
// rather than one per document.
std::vector<Links> ExpectedLinks(const std::vector<Checked>& checked,
                                 const std::vector<std::string>& dates, const LinkOptions& options,
                                 std::vector<std::string>* unknown) {
  std::vector<const Features*> features(checked.size(), nullptr);
  for (size_t i = 0; i < checked.size(); ++i) {
    if (Known(checked[i]))
      features[i] = &checked[i].features;
    else
      unknown->push_back(dates[i]);
  }
  return ComputeLinks(dates, features, options);
}

// What step 3 needs of the whole archive.
struct Verifying {
  const std::vector<std::string>& dates;
  const std::vector<Checked>& checked;
  const std::vector<Links>& expected;
  const std::vector<std::string>& unknown;
  const LinkOptions& options;
  // COMB's features of every known document, read again only when some
  // document's links are not limbic's (comb_links.h).
  std::function<const std::map<std::string, CombFeatures>&()> comb_features;
};

// 3b. A known document whose links are not the expected ones: COMB's
// links on a document limbic never rolled up, or limbic's old social sign,
// are notes; anything else is a problem.
void CheckLinks(const Verifying& v, size_t i, VerifyReport* report) {
  const Checked& c = v.checked[i];
  const Links& want = v.expected[i];
  const bool semantic_ok = LinksAgree(c.links.semantic, want.semantic, v.unknown, v.options.semantic_k);
  const bool social_ok = LinksAgree(c.links.social, want.social, v.unknown, v.options.social_k);
  if (semantic_ok && social_ok) return;
  const std::string& date = v.dates[i];
  auto note = [&](std::string what) { report->notes.push_back({date, std::move(what)}); };
  if (!c.rolled_up_by_limbic) {
    const auto& others = v.comb_features();
    if (auto self = others.find(date);
        self != others.end() && CombComputed(date, self->second, c.links, others))
      return note(
          "links were computed by COMB's rules, not limbic's (`limbic archive relink` recomputes "
          "them)");
  } else if (semantic_ok &&
             OldSocialSign(c.links.social, want.social, v.unknown, v.options.social_k)) {
    return note(
        "social links have the sign of limbic before it took COMB's (`limbic archive relink` "
        "recomputes them)");
  }
  const std::string nor = c.rolled_up_by_limbic ? "" : " (nor COMB's)";
  if (!semantic_ok)
    report->problems.push_back(
        {date, "semantic links are " + Show(c.links.semantic) + ", not " + Show(want.semantic) + nor});
  if (!social_ok)
    report->problems.push_back(
        {date, "social links are " + Show(c.links.social) + ", not " + Show(want.social) + nor});
}

// 3. One document against its file name, its hash, the chain, its
// temporal links, its staging and (when its content is known) its links.
void CheckDocument(const Verifying& v, size_t i, VerifyReport* report) {
  const Checked& c = v.checked[i];
  const std::string& date = v.dates[i];
  report->bytes += c.bytes;
  auto problem = [&](std::string what) { report->problems.push_back({date, std::move(what)}); };
  if (!c.status.ok()) return problem(c.status.message());
  if (c.date != date) problem("date is \"" + c.date + "\" in file " + date + ".json");
  if (c.hash != c.computed_hash)
    problem("hash does not match content (stored " + Short(c.hash) + ", computed " +
            Short(c.computed_hash) + ")");
  if (i == 0) {
    if (c.prev_hash) problem("prev_hash is " + Short(*c.prev_hash) + " in the first document, not null");
  } else if (const Checked& before = v.checked[i - 1];
             before.status.ok() && c.prev_hash != before.hash) {
    problem("prev_hash " + Short(OrNull(c.prev_hash)) + " is not the hash of " + v.dates[i - 1] +
            " (" + Short(before.hash) + ")");
  }
  const Links& want = v.expected[i];
  if (c.links.prev != want.prev)
    problem("temporal link prev is " + OrNull(c.links.prev) + ", not " + OrNull(want.prev));
  if (c.links.next != want.next)
    problem("temporal link next is " + OrNull(c.links.next) + ", not " + OrNull(want.next));
  if (!c.staged.empty()) problem(c.staged);
  if (Known(c)) CheckLinks(v, i, report);  // an unknown content's links cannot be recomputed
}

}  // namespace

Result<VerifyReport> Archive::Verify() const {
  DocFiles files = Files();
  auto listing = files.List();
  if (!listing.ok()) return listing.status();
  VerifyReport report;
  for (const std::string& name : listing->bad_names)
    report.problems.push_back({name.substr(0, name.size() - 5), "file name " + name + " is not a date"});
  std::vector<std::string> dates, paths;
  for (const auto& [date, path] : listing->paths) {
    dates.push_back(date);
    paths.push_back(path);
  }

  const std::vector<Checked> checked = CheckEach(files, staging_, dates, paths);
  const LinkOptions options{options_.semantic_k, options_.semantic_min, options_.social_k};
  std::vector<std::string> unknown;
  const std::vector<Links> expected = ExpectedLinks(checked, dates, options, &unknown);
  std::optional<std::map<std::string, CombFeatures>> comb;
  const Verifying v{dates, checked, expected, unknown, options, [&]() -> const auto& {
                      if (comb) return *comb;
                      comb.emplace();
                      for (size_t j = 0; j < dates.size(); ++j) {
                        if (!Known(checked[j])) continue;
                        auto doc = files.Read(paths[j]);
                        if (doc.ok()) (*comb)[dates[j]] = ComputeCombFeatures(doc->content);
                      }
                      return *comb;
                    }};
  for (size_t i = 0; i < dates.size(); ++i) CheckDocument(v, i, &report);

  report.documents = dates.size();
  std::stable_sort(report.problems.begin(), report.problems.end(),
                   [](const Problem& a, const Problem& b) { return a.date < b.date; });
  return report;
}

}  // namespace limbic::archive
