// DocReader: documents read for Verify without nlohmann trees or copies of
// their content. The fast path takes a document only when it has exactly
// the shape DocumentFromJson accepts; anything else (including every
// error) goes to DocFiles::Parse, whose messages are the contract.
#include "archive/doc_files.h"

#include <simdjson.h>

#include <array>

namespace limbic::archive {
namespace {

namespace dom = simdjson::dom;

// The members `names` of `object` into `out` (same order; absent ones
// stay null). False when one of them is given twice: nlohmann keeps the
// last, and the slow path is the one that knows.
template <size_t N>
bool Members(dom::object object, const std::array<std::string_view, N>& names,
             std::array<dom::element, N>* out, std::array<bool, N>* found) {
  for (dom::key_value_pair kv : object) {
    for (size_t i = 0; i < N; ++i) {
      if (kv.key != names[i]) continue;
      if ((*found)[i]) return false;
      (*found)[i] = true;
      (*out)[i] = kv.value;
    }
  }
  return true;
}

bool String(dom::element e, std::string* out) {
  std::string_view s;
  if (e.get(s) != simdjson::SUCCESS) return false;
  out->assign(s);
  return true;
}

bool Date(dom::element e, std::string* out) { return String(e, out) && IsValidDate(*out); }

bool Nullable(dom::element e, std::optional<std::string>* out, bool date) {
  if (e.is_null()) {
    out->reset();
    return true;
  }
  std::string s;
  if (!(date ? Date(e, &s) : String(e, &s))) return false;
  *out = std::move(s);
  return true;
}

// A number as a double, as DocumentFromJson takes it from ParseJson's tree
// (integers converted, -0 as 0).
bool Number(dom::element e, double* out) {
  return e.get_double().get(*out) == simdjson::SUCCESS;
}

// Each element of the array `e`, an object, read by `read(members, &item)`.
template <size_t N, typename T, typename Read>
bool Items(dom::element e, const std::array<std::string_view, N>& names, std::vector<T>* out,
           Read read) {
  dom::array array;
  if (e.get(array) != simdjson::SUCCESS) return false;
  for (dom::element item : array) {
    dom::object object;
    std::array<dom::element, N> m;
    std::array<bool, N> found{};
    if (item.get(object) != simdjson::SUCCESS || !Members(object, names, &m, &found)) return false;
    for (bool f : found)
      if (!f) return false;
    T t;
    if (!read(m, &t)) return false;
    out->push_back(std::move(t));
  }
  return true;
}

bool ReadLinks(dom::element e, Links* links) {
  static constexpr std::array<std::string_view, 3> kLinks = {"temporal", "semantic", "social"};
  static constexpr std::array<std::string_view, 2> kTemporal = {"prev", "next"};
  static constexpr std::array<std::string_view, 2> kSemantic = {"target", "score"};
  static constexpr std::array<std::string_view, 3> kSocial = {"target", "direction", "delta"};
  dom::object object, temporal;
  std::array<dom::element, 3> l;
  std::array<bool, 3> has_l{};
  std::array<dom::element, 2> t;
  std::array<bool, 2> has_t{};
  if (e.get(object) != simdjson::SUCCESS || !Members(object, kLinks, &l, &has_l) ||
      !has_l[0] || !has_l[1] || !has_l[2] || l[0].get(temporal) != simdjson::SUCCESS ||
      !Members(temporal, kTemporal, &t, &has_t) || !has_t[0] || !has_t[1] ||
      !Nullable(t[0], &links->prev, true) || !Nullable(t[1], &links->next, true))
    return false;
  return Items(l[1], kSemantic, &links->semantic,
               [](const std::array<dom::element, 2>& m, SemanticLink* s) {
                 return Date(m[0], &s->target) && Number(m[1], &s->score);
               }) &&
         Items(l[2], kSocial, &links->social,
               [](const std::array<dom::element, 3>& m, SocialLink* s) {
                 return Date(m[0], &s->target) && String(m[1], &s->direction) &&
                        (s->direction == "inward" || s->direction == "outward") &&
                        Number(m[2], &s->delta);
               });
}

// metadata.staged_entries and whether rolled_up_at is there into `doc`;
// false (take the slow path) when a key is given twice or staged_entries
// is not a count, so the slow path words it.
bool StagedEntries(dom::element metadata, DocumentView* doc) {
  static constexpr std::array<std::string_view, 2> kNames = {"staged_entries", "rolled_up_at"};
  std::array<dom::element, 2> m;
  std::array<bool, 2> found{};
  dom::object object;
  if (metadata.get(object) != simdjson::SUCCESS || !Members(object, kNames, &m, &found))
    return false;
  doc->rolled_up_by_limbic = found[1];
  if (!found[0]) return true;
  uint64_t n = 0;
  if (m[0].get_uint64().get(n) != simdjson::SUCCESS) return false;
  doc->staged_entries = n;
  return true;
}

}  // namespace

struct DocReader::Impl {
  std::string text;   // the file, with room for simdjson's padding after it
  dom::parser parser;
  std::string slow_content;  // the content when DocFiles::Parse read the file
};

DocReader::DocReader(const DocFiles* files) : files_(files), impl_(std::make_unique<Impl>()) {}
DocReader::~DocReader() = default;
DocReader::DocReader(DocReader&&) noexcept = default;

Result<DocumentView> DocReader::Read(const std::string& path, uint64_t* bytes) {
  std::string& text = impl_->text;
  LIMBIC_RETURN_IF_ERROR(files_->ReadAll(path, &text));
  if (bytes) *bytes = text.size();
  if (text.capacity() < text.size() + simdjson::SIMDJSON_PADDING)
    text.reserve(text.size() + text.size() / 4 + simdjson::SIMDJSON_PADDING);

  static constexpr std::array<std::string_view, 6> kFields = {"date", "content", "hash",
                                                               "prev_hash", "metadata", "links"};
  DocumentView doc;
  dom::element root;
  dom::object object;
  std::array<dom::element, 6> f;
  std::array<bool, 6> has{};
  if (impl_->parser.parse(text.data(), text.size(), false).get(root) == simdjson::SUCCESS &&
      root.get(object) == simdjson::SUCCESS && Members(object, kFields, &f, &has) &&
      has == std::array<bool, 6>{true, true, true, true, true, true} && Date(f[0], &doc.date) &&
      f[1].get(doc.content) == simdjson::SUCCESS && String(f[2], &doc.hash) &&
      Nullable(f[3], &doc.prev_hash, false) && f[4].is_object() && ReadLinks(f[5], &doc.links) &&
      StagedEntries(f[4], &doc))
    return doc;

  auto slow = DocFiles::Parse(text, path);
  if (!slow.ok()) return slow.status();
  impl_->slow_content = std::move(slow->content);
  DocumentView view;
  view.date = std::move(slow->date);
  view.content = impl_->slow_content;
  view.hash = std::move(slow->hash);
  view.prev_hash = std::move(slow->prev_hash);
  view.links = std::move(slow->links);
  view.rolled_up_by_limbic = slow->metadata.contains("rolled_up_at");
  if (auto it = slow->metadata.find("staged_entries"); it != slow->metadata.end()) {
    if (it->is_number_unsigned())
      view.staged_entries = it->get<uint64_t>();
    else
      view.staged_entries_bad = it->dump();
  }
  return view;
}

}  // namespace limbic::archive
