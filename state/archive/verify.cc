// Archive::Verify: every document's chain and links, recomputed.
#include <algorithm>

#include "state/archive/archive.h"
#include "state/archive/doc_files.h"
#include "state/archive/links.h"
#include "state/archive/parallel.h"

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
};

std::string Short(const std::string& hash) { return hash.size() > 12 ? hash.substr(0, 12) + "…" : hash; }

std::string Show(const std::optional<std::string>& s) { return s ? *s : "null"; }

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

}  // namespace

Result<VerifyReport> Archive::Verify() const {
  DocFiles files = Files();
  auto listing = files.List();
  if (!listing.ok()) return listing.status();
  VerifyReport report;
  for (const std::string& name : listing->bad_names)
    report.problems.push_back({name.substr(0, name.size() - 5), "file name " + name + " is not a date"});

  std::vector<std::string> dates;
  std::vector<std::string> paths;
  for (const auto& [date, path] : listing->paths) {
    dates.push_back(date);
    paths.push_back(path);
  }
  const size_t n = dates.size();
  std::vector<Checked> checked(n);
  std::vector<DocReader> readers;
  for (size_t w = 0; w < Workers(n); ++w) readers.emplace_back(&files);
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
  });

  // A content that does not match its hash is not the content the links
  // were computed from: the document is reported for its hash, and the
  // others' links are checked as if its content were unknown, so one
  // changed content is one problem rather than one per document.
  std::vector<const Features*> features(n, nullptr);
  std::vector<std::string> unknown;
  auto known = [&](size_t i) {
    return checked[i].status.ok() && checked[i].hash == checked[i].computed_hash;
  };
  for (size_t i = 0; i < n; ++i) {
    if (known(i)) {
      features[i] = &checked[i].features;
    } else {
      unknown.push_back(dates[i]);
    }
  }
  std::vector<Links> expected = ComputeLinks(
      dates, features, LinkOptions{options_.semantic_k, options_.semantic_min, options_.social_k});

  for (size_t i = 0; i < n; ++i) {
    const Checked& c = checked[i];
    report.bytes += c.bytes;
    auto problem = [&](std::string what) { report.problems.push_back({dates[i], std::move(what)}); };
    if (!c.status.ok()) {
      problem(c.status.message());
      continue;
    }
    if (c.date != dates[i]) problem("date is \"" + c.date + "\" in file " + dates[i] + ".json");
    if (c.hash != c.computed_hash)
      problem("hash does not match content (stored " + Short(c.hash) + ", computed " +
              Short(c.computed_hash) + ")");
    if (i == 0) {
      if (c.prev_hash) problem("prev_hash is " + Short(*c.prev_hash) + " in the first document, not null");
    } else if (checked[i - 1].status.ok() && c.prev_hash != checked[i - 1].hash) {
      problem("prev_hash " + Short(Show(c.prev_hash)) + " is not the hash of " + dates[i - 1] +
              " (" + Short(checked[i - 1].hash) + ")");
    }
    const Links& want = expected[i];
    if (c.links.prev != want.prev)
      problem("temporal link prev is " + Show(c.links.prev) + ", not " + Show(want.prev));
    if (c.links.next != want.next)
      problem("temporal link next is " + Show(c.links.next) + ", not " + Show(want.next));
    if (!known(i)) continue;  // its own links cannot be recomputed
    if (!LinksAgree(c.links.semantic, want.semantic, unknown, options_.semantic_k))
      problem("semantic links are " + Show(c.links.semantic) + ", not " + Show(want.semantic));
    if (!LinksAgree(c.links.social, want.social, unknown, options_.social_k))
      problem("social links are " + Show(c.links.social) + ", not " + Show(want.social));
  }
  report.documents = n;
  std::stable_sort(report.problems.begin(), report.problems.end(),
                   [](const Problem& a, const Problem& b) { return a.date < b.date; });
  return report;
}

}  // namespace limbic::archive
