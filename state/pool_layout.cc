#include "state/pool_layout.h"

#include <cstring>

#include "state/json.h"

namespace limbic::state {

std::string Dump(const json& j) {
  std::string out;
  AppendCompactJson(j, &out);
  return out;
}

std::string Dump(const Record& record) {
  if (const json* j = std::get_if<json>(&record)) return Dump(*j);
  if (const FlatRecord* f = std::get_if<FlatRecord>(&record)) return f->bytes();
  std::string out;
  std::get<PerceptRecord>(record).AppendJson(&out);
  return out;
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

IndexEntry ThreadEntry(const ThreadSummary& t) {
  return {"T|u|" + t.status + '\0' + t.id, ThreadValue(t)};
}

std::string ActionKey(const std::string& id, const std::string& status, TimeMs ts) {
  return "A|u|" + status + '\0' + Ts8(ts) + id;
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

void PerceptEntries(const std::string& id, const PerceptKeys& k, std::vector<IndexEntry>* out) {
  auto key = [out](std::string k) { out->emplace_back(std::move(k), std::string()); };
  out->reserve(out->size() + 7);  // at most seven entries: no regrowing
  std::string tail;
  tail.reserve(16 + id.size());
  tail.append(Rt8(k.ts)).append(Rseq8(k.seq)).append(id);
  auto with = [&tail](std::string_view prefix, std::string_view name) {
    std::string s;
    s.reserve(prefix.size() + name.size() + 1 + tail.size());
    s.append(prefix).append(name).push_back('\0');
    s.append(tail);
    return s;
  };
  key("P|T|" + tail);
  key(with("P|s|", k.source));
  key(with("P|y|", k.type));
  key(with("P|u|", k.status));
  if (k.status == "new") key(with("P|n|", k.source));
  if (!k.thread.empty()) {
    key(with("P|h|", k.thread));
    if (k.status == "assigned") key(with("P|a|", k.thread));
  }
}

}  // namespace

std::vector<IndexEntry> IndexEntries(Pool pool, const std::string& id, const Record& rec) {
  if (const FlatRecord* f = std::get_if<FlatRecord>(&rec)) {
    if (pool == Pool::kThreads) return {ThreadEntry(FlatSummary(id, *f))};
    if (pool == Pool::kActions)
      return {IndexEntry(ActionKey(id, f->String("status").value_or(""), FlatTime(*f, "ts")), "")};
    return IndexEntries(pool, id, f->ToJson());
  }
  const PerceptRecord* p = std::get_if<PerceptRecord>(&rec);
  if (!p) return IndexEntries(pool, id, std::get<json>(rec));
  std::vector<IndexEntry> out;
  PerceptKeys k;
  k.ts = p->ts();
  k.seq = p->seq();
  k.status = p->status();
  k.source = p->source();
  k.type = p->type();
  if (p->thread_id()) k.thread = *p->thread_id();
  PerceptEntries(id, k, &out);
  return out;
}

std::vector<IndexEntry> IndexEntries(Pool pool, const std::string& id, const json& rec) {
  std::vector<IndexEntry> out;
  auto key = [&out](std::string k) { out.emplace_back(std::move(k), std::string()); };
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
    PerceptEntries(id, k, &out);
  } else if (pool == Pool::kThreads) {
    out.push_back(ThreadEntry(SummaryOf(id, rec)));
  } else if (pool == Pool::kActions) {
    key(ActionKey(id, StrOf(rec, "status"), RecordTime(rec)));
  } else if (pool == Pool::kMemories) {
    key("M|c|" + Ts8(RecordTime(rec, "created_at")) + id);
    if (StrOf(rec, "kind") == "fact") {
      const std::string subject = StrOf(rec, "subject");
      if (!rec.contains("superseded_by"))
        key("M|f|" + StrOf(rec, "namespace") + '\0' + subject + '\0' + StrOf(rec, "relation") + '\0' + id);
      key("M|s|" + subject + '\0' + id);
      key("M|o|" + StrOf(rec, "object") + '\0' + id);
    }
  } else if (pool == Pool::kAssociations) {
    const std::string a = StrOf(rec, "entity_a"), b = StrOf(rec, "entity_b");
    out.emplace_back("S|k|" + a + '\0' + StrOf(rec, "relation") + '\0' + b, id);
    key("S|e|" + a + '\0' + id);
    if (b != a) key("S|e|" + b + '\0' + id);
  }
  return out;
}

}  // namespace limbic::state
