#include "state/pool_layout.h"

#include <cstring>

#include "base/json.h"

namespace limbic::state {

std::string Dump(const json& j) {
  std::string out;
  AppendCompactJson(j, &out);
  return out;
}

std::string Dump(const Record& record) {
  std::string out;
  AppendStored(record, &out);
  return out;
}

void AppendStored(const Record& record, std::string* out) {
  if (const json* j = std::get_if<json>(&record))
    AppendCompactJson(*j, out);
  else if (const FlatRecord* f = std::get_if<FlatRecord>(&record))
    out->append(f->bytes());
  else
    std::get<PerceptRecord>(record).AppendJson(out);
}

std::string Ts8(TimeMs t) {
  uint64_t u = static_cast<uint64_t>(t) ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return out;
}

TimeMs FromTs8(std::string_view b) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i) u = (u << 8) | static_cast<unsigned char>(b[i]);
  return static_cast<TimeMs>(u ^ (uint64_t{1} << 63));
}

// RT8: the complement of TS8, so byte order is newest first and queries
// read forward (a memtable skiplist has no back links: each step back is a
// search from the top).
std::string Rt8(TimeMs t) {
  std::string out = Ts8(t);
  for (char& c : out) c = static_cast<char>(~c);
  return out;
}

// The big-endian complement of a seq: newest first, like RT8.
std::string Rseq8(uint64_t seq) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(~(seq & 0xff));
    seq >>= 8;
  }
  return out;
}

TimeMs FromRt8(std::string_view b) {
  char buf[8];
  for (size_t i = 0; i < 8; ++i) buf[i] = static_cast<char>(~b[i]);
  return FromTs8(std::string_view(buf, 8));
}

TimeMs RecordTime(const json& rec, const char* field) {
  auto it = rec.find(field);
  return it == rec.end() || !it->is_string() ? 0 : TimeOrZero(it->get_ref<const std::string&>());
}

std::string StrOf(const json& rec, const char* key) {
  auto it = rec.find(key);
  return it != rec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void PutLE64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetLE64(std::string_view b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[static_cast<size_t>(i)]);
  return v;
}

namespace {

// A flat record's time field in ms; 0 when absent or malformed (RecordTime).
TimeMs FlatTime(const FlatRecord& rec, std::string_view field) {
  return TimeOrZero(rec.String(field).value_or(""));
}

// What a thread's index entry and summary are made of, from its flat form
// (SummaryOf for the JSON one).
ThreadSummary FlatSummary(const std::string& id, const FlatRecord& rec) {
  ThreadSummary t;
  t.id = id;
  t.status = rec.String("status").value_or("");
  t.salience = rec.Number("salience").value_or(0);
  t.last_active = FlatTime(rec, "last_active");
  return t;
}

// SAL8 LAST8 (see the grammar above).
std::string ThreadValue(const ThreadSummary& t) {
  uint64_t bits;
  std::memcpy(&bits, &t.salience, sizeof bits);
  std::string v;
  PutLE64(&v, bits);
  PutLE64(&v, static_cast<uint64_t>(t.last_active));
  return v;
}

constexpr std::string_view kNul("\0", 1);

void AddThreadEntry(const ThreadSummary& t, IndexEntryList* out) {
  out->Add({"T|u|", t.status, kNul, t.id}, ThreadValue(t));
}

void AddActionEntry(std::string_view id, std::string_view status, TimeMs ts, IndexEntryList* out) {
  out->Add({"A|u|", status, kNul, Ts8(ts), id});
}

}  // namespace

ThreadSummary SummaryOf(const std::string& id, const json& rec) {
  ThreadSummary t;
  t.id = id;
  t.status = StrOf(rec, "status");
  auto it = rec.find("salience");
  if (it != rec.end() && it->is_number()) t.salience = it->get<double>();
  t.last_active = RecordTime(rec, "last_active");
  return t;
}

ThreadSummary SummaryOf(const std::string& id, const Record& rec) {
  if (const FlatRecord* f = std::get_if<FlatRecord>(&rec)) return FlatSummary(id, *f);
  return SummaryOf(id, RecordJson(rec));
}

// The thread an assigned, unprocessed percept counts for ("" if none).
std::string UnprocessedFor(const json& percept) {
  return StrOf(percept, "status") == "assigned" ? StrOf(percept, "thread_id") : std::string();
}

std::optional<FreshPercept> FreshOf(const json& percept) {
  if (StrOf(percept, "status") != "new") return std::nullopt;
  FreshPercept f;
  f.ts = RecordTime(percept);
  auto seq = percept.find("seq");
  f.seq = seq != percept.end() && seq->is_number_unsigned() ? seq->get<uint64_t>() : 0;
  auto intensity = percept.find("intensity");
  f.intensity = intensity != percept.end() && intensity->is_number() ? intensity->get<double>() : 0;
  return f;
}

std::optional<FreshPercept> FreshOf(const Record& percept) {
  const PerceptRecord* typed = std::get_if<PerceptRecord>(&percept);
  if (!typed) return FreshOf(RecordJson(percept));
  if (typed->status() != "new") return std::nullopt;
  return FreshPercept{typed->ts(), typed->seq(), typed->intensity()};
}

std::optional<size_t> ActionStatusIndex(std::string_view status) {
  for (size_t i = 0; i < kActionStatuses.size(); ++i)
    if (kActionStatuses[i] == status) return i;
  return std::nullopt;
}

std::optional<size_t> ActionStatusIndexOf(const Record& action) {
  if (const FlatRecord* flat = std::get_if<FlatRecord>(&action))
    return ActionStatusIndex(std::string_view(flat->String("status").value_or("")));
  if (const json* j = std::get_if<json>(&action))
    return ActionStatusIndex(std::string_view(StrOf(*j, "status")));
  return std::nullopt;
}

std::string UnprocessedFor(const Record& percept) {
  const PerceptRecord* typed = std::get_if<PerceptRecord>(&percept);
  if (!typed) return UnprocessedFor(RecordJson(percept));
  const PerceptRecord& p = *typed;
  return p.status() == "assigned" && p.thread_id() ? *p.thread_id() : std::string();
}

namespace {

// What a percept's index entries are made of.
struct PerceptKeys {
  TimeMs ts = 0;
  uint64_t seq = 0;
  std::string_view status, source, type, thread;  // "" when absent
};

void AddPerceptEntries(std::string_view id, const PerceptKeys& k, IndexEntryList* out) {
  const std::string at = Rt8(k.ts) + Rseq8(k.seq);
  out->Add({"P|T|", at, id});
  out->Add({"P|s|", k.source, kNul, at, id});
  out->Add({"P|y|", k.type, kNul, at, id});
  out->Add({"P|u|", k.status, kNul, at, id});
  if (k.status == "new") out->Add({"P|n|", k.source, kNul, at, id});
  if (!k.thread.empty()) {
    out->Add({"P|h|", k.thread, kNul, at, id});
    if (k.status == "assigned") out->Add({"P|a|", k.thread, kNul, at, id});
  }
}

}  // namespace

bool IndexEntryList::HasKey(std::string_view key) const {
  for (size_t i = 0; i < size(); ++i)
    if (this->key(i) == key) return true;
  return false;
}

bool IndexEntryList::Has(std::string_view key, std::string_view value) const {
  for (size_t i = 0; i < size(); ++i)
    if (this->key(i) == key && this->value(i) == value) return true;
  return false;
}

void IndexEntryList::Add(std::initializer_list<std::string_view> key_pieces,
                         std::string_view value) {
  Entry e{bytes_.size(), 0, value.size()};
  for (std::string_view piece : key_pieces) bytes_.append(piece);
  e.key_size = bytes_.size() - e.at;
  bytes_.append(value);
  entries_.push_back(e);
}

void AppendIndexEntries(Pool pool, std::string_view id, const Record& rec, IndexEntryList* out) {
  if (const FlatRecord* f = std::get_if<FlatRecord>(&rec)) {
    if (pool == Pool::kThreads) return AddThreadEntry(FlatSummary(std::string(id), *f), out);
    if (pool == Pool::kActions)
      return AddActionEntry(id, f->String("status").value_or(""), FlatTime(*f, "ts"), out);
    return AppendIndexEntries(pool, id, f->ToJson(), out);
  }
  const PerceptRecord* p = std::get_if<PerceptRecord>(&rec);
  if (!p) return AppendIndexEntries(pool, id, std::get<json>(rec), out);
  PerceptKeys k;
  k.ts = p->ts();
  k.seq = p->seq();
  k.status = p->status();
  k.source = p->source();
  k.type = p->type();
  if (p->thread_id()) k.thread = *p->thread_id();
  AddPerceptEntries(id, k, out);
}

void AppendIndexEntries(Pool pool, std::string_view id, const json& rec, IndexEntryList* out) {
  if (pool == Pool::kPercepts) {
    auto seq = rec.find("seq");
    const std::string status = StrOf(rec, "status"), source = StrOf(rec, "source"),
                      type = StrOf(rec, "type"), thread = StrOf(rec, "thread_id");
    PerceptKeys k;
    k.ts = RecordTime(rec);
    k.seq = seq != rec.end() && seq->is_number_unsigned() ? seq->get<uint64_t>() : 0;
    k.status = status;
    k.source = source;
    k.type = type;
    k.thread = thread;
    AddPerceptEntries(id, k, out);
  } else if (pool == Pool::kThreads) {
    AddThreadEntry(SummaryOf(std::string(id), rec), out);
  } else if (pool == Pool::kActions) {
    AddActionEntry(id, StrOf(rec, "status"), RecordTime(rec), out);
  } else if (pool == Pool::kMemories) {
    out->Add({"M|c|", Ts8(RecordTime(rec, "created_at")), id});
    if (StrOf(rec, "kind") == "fact") {
      const std::string subject = StrOf(rec, "subject");
      if (!rec.contains("superseded_by"))
        out->Add({"M|f|", StrOf(rec, "namespace"), kNul, subject, kNul, StrOf(rec, "relation"),
                  kNul, id});
      out->Add({"M|s|", subject, kNul, id});
      out->Add({"M|o|", StrOf(rec, "object"), kNul, id});
    }
  } else if (pool == Pool::kSessions) {
    auto seq = rec.find("seq");
    out->Add({"N|w|", Rt8(RecordTime(rec, "woken_at")),
              Rseq8(seq != rec.end() && seq->is_number_unsigned() ? seq->get<uint64_t>() : 0), id});
    if (StrOf(rec, "status") == "awake") out->Add({"N|a|", id});
  } else if (pool == Pool::kAssociations) {
    const std::string a = StrOf(rec, "entity_a"), b = StrOf(rec, "entity_b");
    out->Add({"S|k|", a, kNul, StrOf(rec, "relation"), kNul, b, kNul, id});
    out->Add({"S|e|", a, kNul, id});
    if (b != a) out->Add({"S|e|", b, kNul, id});
  }
}

namespace {

template <typename R>
std::vector<IndexEntry> EntriesOf(Pool pool, std::string_view id, const R& rec) {
  IndexEntryList list;
  AppendIndexEntries(pool, id, rec, &list);
  std::vector<IndexEntry> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) out.emplace_back(list.key(i), list.value(i));
  return out;
}

}  // namespace

std::vector<IndexEntry> IndexEntries(Pool pool, std::string_view id, const json& rec) {
  return EntriesOf(pool, id, rec);
}

std::vector<IndexEntry> IndexEntries(Pool pool, std::string_view id, const Record& rec) {
  return EntriesOf(pool, id, rec);
}

}  // namespace limbic::state
