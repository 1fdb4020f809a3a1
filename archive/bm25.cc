// The BM25 SearchBackend: postings, document records and corpus totals in
// RocksDB (the layout is in search.h).
//
// Value grammar. VARINT is LEB128 (7 bits a byte, low bits first); STR is
// VARINT length, then the bytes; U64 is 8 bytes little-endian.
//
//   default   "schema"       "1"
//             "analyzer"     the Analyzer's id() the terms were made by
//                            (absent: text.h's Tokenize, before analyzers)
//             "totals"       U64 documents, U64 sum of their lengths
//   docs      ID             STR date, STR version, VARINT length
//   terms     ID             STR*: the document's distinct terms
//   text      ID             the document's text
//   postings  TERM \0 ID     VARINT tf, VARINT length of the document
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>
#include <unordered_map>

#include "archive/search.h"
#include "state/rocks.h"

namespace limbic::archive {
namespace {

using state::FromRocks;
using state::Printable;

constexpr std::string_view kSchemaKey = "schema";
constexpr std::string_view kSchema = "1";
constexpr std::string_view kTotalsKey = "totals";
constexpr std::string_view kAnalyzerKey = "analyzer";
constexpr int kReadOnlyAttempts = 5;
const char* const kCfNames[] = {"default", "docs", "terms", "text", "postings"};
enum Cf : size_t { kMeta = 0, kDocs, kTerms, kText, kPostings };

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void PutStr(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Readers consume from the front of `in`; false on truncated or overlong input.
bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t r = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    auto c = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    r |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}
bool GetStr(std::string_view* in, std::string_view* s) {
  uint64_t n;
  if (!GetVarint(in, &n) || n > in->size()) return false;
  *s = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}
uint64_t GetU64(std::string_view b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return v;
}

std::string PostingKey(std::string_view term, std::string_view id) {
  std::string key;
  key.reserve(term.size() + 1 + id.size());
  key.append(term);
  key.push_back('\0');
  key.append(id);
  return key;
}

// The term of a posting key: a term's postings are one prefix, so a query
// seeks each term once and the bloom filter answers for absent terms.
class TermPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "limbic.TermPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    const void* nul = std::memchr(key.data(), '\0', key.size());
    return rocksdb::Slice(key.data(), static_cast<const char*>(nul) - key.data() + 1);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return std::memchr(key.data(), '\0', key.size()) != nullptr;
  }
};

struct Totals {
  uint64_t docs = 0, length = 0;  // documents, sum of their lengths in terms
};

struct DocRecord {
  std::string date, version;
  uint64_t length = 0;  // terms, counting repeats
};

std::string EncodeDoc(const SearchDoc& doc, uint64_t length) {
  std::string v;
  PutStr(&v, doc.date);
  PutStr(&v, doc.version);
  PutVarint(&v, length);
  return v;
}
bool DecodeDoc(std::string_view in, DocRecord* out) {
  std::string_view date, version;
  if (!GetStr(&in, &date) || !GetStr(&in, &version) || !GetVarint(&in, &out->length) || !in.empty())
    return false;
  out->date = std::string(date);
  out->version = std::string(version);
  return true;
}

class Bm25 final : public SearchBackend {
 public:
  static Result<std::unique_ptr<SearchBackend>> Open(const Bm25Options& options);
  ~Bm25() override {
    if (!db_) return;
    // Flushed at close, so the next open (often a read-only one, by a
    // command) reads tables instead of replaying the log. A failure only
    // costs that replay: the log still holds everything.
    if (!options_.read_only) (void)db_->Flush(rocksdb::FlushOptions(), cf_);
    for (auto* h : cf_) db_->DestroyColumnFamilyHandle(h);
  }

  Status Index(const SearchDoc& doc) override;
  Status Remove(std::string_view id) override;
  Result<std::vector<SearchHit>> Search(std::string_view query, size_t k) const override;
  Result<std::map<std::string, std::string>> Versions() const override;

 private:
  explicit Bm25(Bm25Options options)
      : options_(std::move(options)),
        analyzer_(options_.analyzer ? options_.analyzer : Analyzer::Default()) {}
  Status CheckWrite(std::string_view id) const;
  // Corruption: "search index PATH: <what> <key> is malformed", or the problem.
  Status Corrupt(std::string_view what, std::string_view key) const {
    return Missing(std::string(what) + " " + Printable(key) + " is malformed");
  }
  Status Missing(std::string problem) const {
    return Status::Corruption("search index " + options_.path + ": " + problem);
  }
  // The value of `key`, or nullopt.
  Result<std::optional<std::string>> Get(Cf cf, std::string_view key) const;
  // The document's record and distinct terms; false when it is not indexed.
  Result<bool> ReadDoc(std::string_view id, DocRecord* rec, std::vector<std::string>* terms) const;
  Status Write(rocksdb::WriteBatch* batch, const Totals& totals, std::string_view what);
  // Empties the index and records the analyzer: every document is indexed
  // again by the next Refresh.
  Status Reset();

  const Bm25Options options_;
  std::shared_ptr<const Analyzer> analyzer_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> cf_;
  // The "totals" value as last written (or read at open): one writer.
  Totals totals_;
};

Result<std::unique_ptr<SearchBackend>> Bm25::Open(const Bm25Options& options) {
  if (!(options.k1 >= 0) || !(options.b >= 0 && options.b <= 1))
    return Status::InvalidArgument("BM25 wants k1 >= 0 and b in [0, 1]");
  rocksdb::Options db_options;
  db_options.create_if_missing = !options.read_only;
  db_options.create_missing_column_families = !options.read_only;
  db_options.max_background_jobs = 2;
  db_options.keep_log_file_num = 4;
  db_options.info_log = state::TolerantInfoLog::Open(options.path, options.read_only);
  // A reader opening while the writer runs replays the writer's log: keep
  // it short (a day's document and postings are ~150 KB of log).
  db_options.max_total_wal_size = 4 << 20;
  // Every table is opened with the DB, so a reader keeps reading the files
  // a running writer's compactions delete afterwards.
  db_options.max_open_files = -1;
  rocksdb::ColumnFamilyOptions cf_options;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const char* name : kCfNames) cfs.emplace_back(name, cf_options);
  cfs[kPostings].options.prefix_extractor = std::make_shared<TermPrefix>();
  cfs[kText].options.compression = rocksdb::kNoCompression;

  std::unique_ptr<Bm25> b(new Bm25(options));
  rocksdb::DB* db = nullptr;
  rocksdb::Status s;
  if (!options.read_only) {
    s = rocksdb::DB::Open(db_options, options.path, cfs, &b->cf_, &db);
  } else {
    std::error_code ec;
    if (!std::filesystem::exists(options.path + "/CURRENT", ec))
      return Status::NotFound("no search index at " + options.path);
    // Before it has opened them, a running writer may delete a table or log
    // file that the manifest it read still names: try again.
    for (int attempt = 0; attempt < kReadOnlyAttempts; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10 * attempt));
      b->cf_.clear();
      s = rocksdb::DB::OpenForReadOnly(db_options, options.path, cfs, &b->cf_, &db);
      if (s.ok() || !(s.IsIOError() || s.IsCorruption() || s.IsPathNotFound())) break;
    }
  }
  if (!s.ok()) return FromRocks(s, "opening the search index " + options.path);
  b->db_.reset(db);

  auto schema = b->Get(kMeta, kSchemaKey);
  if (!schema.ok()) return schema.status();
  auto totals = b->Get(kMeta, kTotalsKey);
  if (!totals.ok()) return totals.status();
  if (!*schema) {
    if (*totals) return b->Missing("totals without a schema");
    if (options.read_only) return std::unique_ptr<SearchBackend>(std::move(b));  // empty
    LIMBIC_RETURN_IF_ERROR(b->Reset());
    return std::unique_ptr<SearchBackend>(std::move(b));
  }
  if (**schema != kSchema)
    return Status::FailedPrecondition("search index " + options.path + " has layout \"" + **schema +
                                      "\", this limbic reads \"" + std::string(kSchema) +
                                      "\": delete the directory and refresh to rebuild it");
  if (!*totals) return b->Missing("no totals");
  if ((*totals)->size() != 16) return b->Corrupt("key", kTotalsKey);
  b->totals_ = {GetU64(**totals), GetU64(std::string_view(**totals).substr(8))};
  // Terms made by another analyzer (another memory.analyzer, or an index
  // from before analyzers) would not meet the query's: the writer empties
  // the index, and its Refresh indexes every document again. A reader
  // queries with the analyzer the index was built by.
  auto built_by = b->Get(kMeta, kAnalyzerKey);
  if (!built_by.ok()) return built_by.status();
  const std::string by = built_by->value_or("");
  if (by != b->analyzer_->id()) {
    if (!options.read_only) {
      LIMBIC_RETURN_IF_ERROR(b->Reset());
    } else {
      auto made = Analyzer::Make(by.substr(0, by.find('/')));
      if (by.empty() || !made.ok() || (*made)->id() != by)
        return Status::FailedPrecondition(
            "search index " + options.path + " was built by analyzer \"" +
            (by.empty() ? std::string("none recorded") : by) + "\", not \"" + b->analyzer_->id() +
            "\": open the state dir writable (limbic run, or a limbic archive command while it is not running) to rebuild it");
      b->analyzer_ = std::move(*made);
    }
  }
  return std::unique_ptr<SearchBackend>(std::move(b));
}

Status Bm25::Reset() {
  rocksdb::WriteBatch batch;
  // Every key: terms are UTF-8 and ids have no 0xff byte.
  const std::string end(1, '\xff');
  for (size_t cf = 0; cf < cf_.size(); ++cf) batch.DeleteRange(cf_[cf], "", end);
  batch.Put(cf_[kMeta], kSchemaKey, kSchema);
  batch.Put(cf_[kMeta], kAnalyzerKey, analyzer_->id());
  return Write(&batch, Totals{}, "emptying the search index for analyzer " + analyzer_->id());
}

Result<std::optional<std::string>> Bm25::Get(Cf cf, std::string_view key) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf_[cf], key, &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok())
    return FromRocks(s, "reading " + std::string(kCfNames[cf]) + "/" + Printable(key) +
                            " in the search index " + options_.path);
  return std::optional<std::string>(std::move(value));
}

Result<bool> Bm25::ReadDoc(std::string_view id, DocRecord* rec,
                           std::vector<std::string>* terms) const {
  auto doc = Get(kDocs, id);
  if (!doc.ok()) return doc.status();
  if (!*doc) return false;
  if (!DecodeDoc(**doc, rec)) return Corrupt("document record", id);
  auto list = Get(kTerms, id);
  if (!list.ok()) return list.status();
  if (!*list) return Missing("document " + Printable(id) + " has no term list");
  std::string_view in = **list;
  while (!in.empty()) {
    std::string_view term;
    if (!GetStr(&in, &term)) return Corrupt("term list of", id);
    terms->emplace_back(term);
  }
  return true;
}

Status Bm25::CheckWrite(std::string_view id) const {
  if (options_.read_only)
    return Status::FailedPrecondition("the search index " + options_.path + " is open read-only");
  if (id.empty() || id.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("search document id \"" + Printable(id) +
                                   "\": must be non-empty, without NUL bytes");
  return Status::OK();
}

Status Bm25::Write(rocksdb::WriteBatch* batch, const Totals& totals, std::string_view what) {
  std::string value;
  PutU64(&value, totals.docs);
  PutU64(&value, totals.length);
  batch->Put(cf_[kMeta], kTotalsKey, value);
  // Not synced: the archive's files are the truth, and a batch lost to a
  // power cut leaves an older version in Versions(), which Refresh redoes.
  LIMBIC_RETURN_IF_ERROR(FromRocks(db_->Write(rocksdb::WriteOptions(), batch),
                                   std::string(what) + " in " + options_.path));
  totals_ = totals;
  return Status::OK();
}

Status Bm25::Index(const SearchDoc& doc) {
  LIMBIC_RETURN_IF_ERROR(CheckWrite(doc.id));
  std::unordered_map<std::string, uint64_t> tf;
  std::vector<std::string> all;
  analyzer_->Terms(doc.text, &all);
  for (std::string& term : all) ++tf[std::move(term)];
  const uint64_t length = all.size();

  DocRecord old;
  std::vector<std::string> old_terms;
  auto had = ReadDoc(doc.id, &old, &old_terms);
  if (!had.ok()) return had.status();
  Totals totals = totals_;
  if (*had) {
    if (totals.docs == 0 || totals.length < old.length) return Corrupt("key", kTotalsKey);
    totals.length -= old.length;
  } else {
    ++totals.docs;
  }
  totals.length += length;

  rocksdb::WriteBatch batch;
  // The old postings that the new text does not overwrite.
  for (const std::string& term : old_terms)
    if (!tf.count(term)) batch.Delete(cf_[kPostings], PostingKey(term, doc.id));
  std::string terms, posting;
  for (const auto& [term, n] : tf) {
    posting.clear();
    PutVarint(&posting, n);
    PutVarint(&posting, length);
    batch.Put(cf_[kPostings], PostingKey(term, doc.id), posting);
    PutStr(&terms, term);
  }
  batch.Put(cf_[kDocs], doc.id, EncodeDoc(doc, length));
  batch.Put(cf_[kTerms], doc.id, terms);
  batch.Put(cf_[kText], doc.id, doc.text);
  return Write(&batch, totals, "indexing " + doc.id);
}

Status Bm25::Remove(std::string_view id) {
  LIMBIC_RETURN_IF_ERROR(CheckWrite(id));
  DocRecord old;
  std::vector<std::string> old_terms;
  auto had = ReadDoc(id, &old, &old_terms);
  if (!had.ok()) return had.status();
  if (!*had) return Status::OK();
  if (totals_.docs == 0 || totals_.length < old.length) return Corrupt("key", kTotalsKey);
  rocksdb::WriteBatch batch;
  for (const std::string& term : old_terms) batch.Delete(cf_[kPostings], PostingKey(term, id));
  batch.Delete(cf_[kDocs], id);
  batch.Delete(cf_[kTerms], id);
  batch.Delete(cf_[kText], id);
  return Write(&batch, Totals{totals_.docs - 1, totals_.length - old.length},
               "removing " + std::string(id));
}

Result<std::vector<SearchHit>> Bm25::Search(std::string_view query, size_t k) const {
  std::vector<std::string> terms = analyzer_->Terms(query);
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  std::vector<SearchHit> hits;
  if (terms.empty() || k == 0 || totals_.docs == 0) return hits;

  const double n_docs = static_cast<double>(totals_.docs);
  const double avgdl = static_cast<double>(totals_.length) / n_docs;
  const Bm25Scorer scorer(options_.k1, options_.b, n_docs, avgdl);
  // Per document: its score and which terms it has (bit i: terms[i]), so
  // the snippet looks only for those; a term it lacks costs a scan of the
  // whole text.
  struct Match {
    double score = 0;
    uint64_t terms = 0;
  };
  // Keyed by id, looked up by the string_view of a posting key, so only a
  // document's first posting copies its id.
  struct IdHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, Match, IdHash, std::equal_to<>> matches;
  // A term's postings: the document and its tf part, until n gives the idf.
  std::vector<std::pair<Match*, double>> parts;
  // Terms in sorted order, so a document's sum is the same however the
  // query spelled them.
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string prefix = PostingKey(terms[t], "");
    std::string end = prefix;
    end.back() = '\1';
    rocksdb::Slice upper(end);
    rocksdb::ReadOptions ro;
    ro.iterate_upper_bound = &upper;
    ro.prefix_same_as_start = true;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf_[kPostings]));
    parts.clear();
    const uint64_t bit = t < 64 ? uint64_t{1} << t : ~uint64_t{0};
    for (it->Seek(prefix); it->Valid(); it->Next()) {
      std::string_view key = it->key().ToStringView(), in = it->value().ToStringView();
      uint64_t tf, length;
      if (!GetVarint(&in, &tf) || !GetVarint(&in, &length) || !in.empty() || tf == 0 || tf > length)
        return Corrupt("posting", key);
      std::string_view id = key.substr(prefix.size());
      auto m = matches.find(id);
      if (m == matches.end()) m = matches.emplace(std::string(id), Match{}).first;
      m->second.terms |= bit;
      parts.emplace_back(&m->second, scorer.TfPart(static_cast<double>(tf),
                                                   scorer.Norm(static_cast<double>(length))));
    }
    LIMBIC_RETURN_IF_ERROR(
        FromRocks(it->status(), "reading the postings of " + terms[t] + " in " + options_.path));
    const double n = static_cast<double>(parts.size());
    const double idf = scorer.Idf(n);
    for (auto& [m, part] : parts) m->score += idf * part;
  }

  using Entry = const std::pair<const std::string, Match>*;
  std::vector<Entry> ranked;
  ranked.reserve(matches.size());
  for (const auto& e : matches) ranked.push_back(&e);
  auto better = [](Entry x, Entry y) {
    return x->second.score != y->second.score ? x->second.score > y->second.score
                                              : x->first < y->first;
  };
  const size_t n_hits = std::min(k, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n_hits),
                    ranked.end(), better);
  std::vector<std::pair<std::string, std::vector<std::string>>> words;  // for snippets
  for (std::string& w : Tokenize(query)) {
    std::vector<std::string> wt = analyzer_->Terms(w);
    words.emplace_back(std::move(w), std::move(wt));
  }
  std::vector<std::string> found;
  for (size_t i = 0; i < n_hits; ++i) {
    const std::string& id = ranked[i]->first;
    const Match& match = ranked[i]->second;
    auto doc = Get(kDocs, id);
    if (!doc.ok()) return doc.status();
    DocRecord rec;
    if (!*doc) return Missing("postings name document " + Printable(id) + ", which has no record");
    if (!DecodeDoc(**doc, &rec)) return Corrupt("document record", id);
    rocksdb::PinnableSlice text;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf_[kText], id, &text);
    if (!s.ok()) return FromRocks(s, "reading the text of " + id + " in " + options_.path);
    found.clear();
    for (size_t t = 0; t < terms.size(); ++t)
      if (t >= 64 || (match.terms >> t & 1)) found.push_back(terms[t]);
    // A stem need not be in the text ("happi"): the query's words whose
    // terms the document holds are.
    for (const auto& [word, word_terms] : words)
      if (std::any_of(word_terms.begin(), word_terms.end(), [&](const std::string& w) {
            return std::find(found.begin(), found.end(), w) != found.end();
          }))
        found.push_back(word);
    hits.push_back(
        SearchHit{id, std::move(rec.date), match.score, Snippet(text.ToStringView(), found)});
  }
  return hits;
}

Result<std::map<std::string, std::string>> Bm25::Versions() const {
  std::map<std::string, std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf_[kDocs]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    DocRecord rec;
    if (!DecodeDoc(it->value().ToStringView(), &rec))
      return Corrupt("document record", it->key().ToStringView());
    out.emplace(it->key().ToString(), std::move(rec.version));
  }
  LIMBIC_RETURN_IF_ERROR(FromRocks(it->status(), "listing the search index " + options_.path));
  return out;
}

}  // namespace

Result<std::unique_ptr<SearchBackend>> OpenBm25(const Bm25Options& options) {
  return Bm25::Open(options);
}

}  // namespace limbic::archive
