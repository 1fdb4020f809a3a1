#include "state/percept_record.h"

#include <charconv>
#include <string_view>

#include "base/json.h"

namespace limbic::state {

// The fields fixed at arrival. `bytes` holds them serialised, in four
// pieces around the keys that change (each piece `"key":value` pairs joined
// by commas, possibly empty):
//   A: keys before "drop_reason" (data)
//   B: keys between "drop_reason" and "status" (id, intensity, seq, source)
//   C: keys between "status" and "thread_id" (text)
//   D: keys after "thread_id" (ts, type)
struct PerceptRecord::Fixed {
  std::string source;
  std::string type;
  TimeMs ts = 0;
  uint64_t seq = 0;
  double intensity = 0;
  std::string bytes;
  uint32_t b_at = 0, c_at = 0, d_at = 0;  // where pieces B, C and D start

  std::string_view Piece(uint32_t from, uint32_t to) const {
    return std::string_view(bytes).substr(from, to - from);
  }
};

namespace {

constexpr std::string_view kDropReason = "drop_reason";
constexpr std::string_view kStatus = "status";
constexpr std::string_view kThreadId = "thread_id";

// Writes the record's pairs between '{' and '}', in key order.
class PairWriter {
 public:
  explicit PairWriter(std::string* out) : out_(out) {}
  void Piece(std::string_view piece) {
    if (piece.empty()) return;
    Comma();
    out_->append(piece);
  }
  std::string* Key(std::string_view key) {
    Comma();
    out_->push_back('"');
    out_->append(key);
    out_->append("\":");
    return out_;
  }

 private:
  void Comma() {
    if (!first_) out_->push_back(',');
    first_ = false;
  }
  std::string* out_;
  bool first_ = true;
};

// A stored number that JSON reads as an unsigned integer (digits only,
// within 64 bits), else 0.
uint64_t UnsignedOf(std::string_view raw) {
  uint64_t v = 0;
  if (raw.empty() || raw.front() < '0' || raw.front() > '9') return 0;
  auto r = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  return r.ec == std::errc() && r.ptr == raw.data() + raw.size() ? v : 0;
}

// A JSON number as nlohmann reads it into a double (strtod's rounding,
// which from_chars shares); 0 for anything else.
double NumberOf(std::string_view raw) {
  if (raw.empty() || !(raw.front() == '-' || (raw.front() >= '0' && raw.front() <= '9'))) return 0;
  double v = 0;
  auto r = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  return r.ec == std::errc() && r.ptr == raw.data() + raw.size() ? v : 0;
}

}  // namespace

PerceptRecord PerceptRecord::Arrived(const std::string& id, const json& fields,
                                     const std::string& ts_text, uint64_t seq) {
  auto field = [&fields](const char* key) -> const json* {
    auto it = fields.find(key);
    return it == fields.end() ? nullptr : &*it;
  };
  static const json kNull;
  auto value = [&](const char* key) -> const json& {
    const json* v = field(key);
    return v ? *v : kNull;
  };
  auto fixed = std::make_shared<Fixed>();
  std::string& b = fixed->bytes;
  b.reserve(192);
  // A
  b.append("\"data\":");
  if (const json* data = field("data")) AppendCompactJson(*data, &b);
  else b.append("{}");
  // B
  fixed->b_at = static_cast<uint32_t>(b.size());
  b.append("\"id\":");
  AppendJsonString(id, &b);
  b.append(",\"intensity\":");
  AppendCompactJson(value("intensity"), &b);
  b.append(",\"seq\":");
  char digits[24];
  b.append(digits, std::to_chars(digits, digits + sizeof digits, seq).ptr);
  b.append(",\"source\":");
  AppendCompactJson(value("source"), &b);
  // C
  fixed->c_at = static_cast<uint32_t>(b.size());
  if (const json* text = field("text")) {
    b.append("\"text\":");
    AppendCompactJson(*text, &b);
  }
  // D
  fixed->d_at = static_cast<uint32_t>(b.size());
  b.append("\"ts\":");
  AppendJsonString(ts_text, &b);
  b.append(",\"type\":");
  AppendCompactJson(value("percept_type"), &b);

  const json& source = value("source");
  const json& type = value("percept_type");
  if (source.is_string()) fixed->source = source.get<std::string>();
  if (type.is_string()) fixed->type = type.get<std::string>();
  fixed->ts = TimeOrZero(ts_text);
  fixed->seq = seq;
  if (const json& intensity = value("intensity"); intensity.is_number())
    fixed->intensity = intensity.get<double>();

  PerceptRecord rec;
  rec.fixed_ = std::move(fixed);
  rec.status_ = "new";
  return rec;
}

Result<PerceptRecord> PerceptRecord::FromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a percept record must be an object");
  return FromFlat(FlatRecord::FromJson(j));
}

Result<PerceptRecord> PerceptRecord::FromStored(std::string_view stored) {
  auto flat = FlatRecord::FromStored(stored);
  if (!flat.ok()) return flat.status();
  return FromFlat(*flat);
}

Result<PerceptRecord> PerceptRecord::FromFlat(const FlatRecord& flat) {
  PerceptRecord rec;
  auto fixed = std::make_shared<Fixed>();
  std::string& b = fixed->bytes;
  b.reserve(flat.bytes().size());
  bool has_status = false, has_thread = false;
  Status error;
  // The piece being written, 0..3 for A..D; entering a later one marks
  // where it (and any skipped, empty one) starts.
  int piece = 0;
  size_t piece_start = 0;
  uint32_t* const starts[] = {nullptr, &fixed->b_at, &fixed->c_at, &fixed->d_at};
  auto enter = [&](int p) {
    while (piece < p) {
      piece_start = b.size();
      *starts[++piece] = static_cast<uint32_t>(piece_start);
    }
  };
  // Keys come in order; an escaped key (a quote, a backslash or a control
  // character in it) falls on the same side of the three keys below as it
  // reads, since those are letters and '_'.
  flat.ForEachMember([&](std::string_view k, std::string_view value) {
    if (!error.ok()) return;
    if (k == kDropReason) {
      enter(1);
      rec.drop_reason_.assign(value);
      return;
    }
    if (k == kStatus) {
      auto status = FlatRecord::StringOf(value);
      if (!status) {
        error = Status::InvalidArgument("percept record: status must be a string");
        return;
      }
      enter(2);
      rec.status_ = std::move(*status);
      has_status = true;
      return;
    }
    if (k == kThreadId) {
      if (auto thread = FlatRecord::StringOf(value)) rec.thread_id_ = std::move(*thread);
      else if (value != "null") {
        error = Status::InvalidArgument("percept record: thread_id must be null or a string");
        return;
      }
      enter(3);
      has_thread = true;
      return;
    }
    enter(k < kDropReason ? 0 : k < kStatus ? 1 : k < kThreadId ? 2 : 3);
    if (b.size() > piece_start) b.push_back(',');
    b.push_back('"');
    b.append(k);
    b.append("\":");
    b.append(value);
    if (k == "source") fixed->source = FlatRecord::StringOf(value).value_or("");
    else if (k == "type") fixed->type = FlatRecord::StringOf(value).value_or("");
    else if (k == "ts") fixed->ts = TimeOrZero(FlatRecord::StringOf(value).value_or(""));
    else if (k == "seq") fixed->seq = UnsignedOf(value);
    else if (k == "intensity")
      fixed->intensity = NumberOf(value);
  });
  if (!error.ok()) return error;
  if (!has_status) return Status::InvalidArgument("percept record: no status");
  if (!has_thread) return Status::InvalidArgument("percept record: no thread_id");
  enter(3);
  rec.fixed_ = std::move(fixed);
  return rec;
}

const std::string& PerceptRecord::source() const { return fixed_->source; }
const std::string& PerceptRecord::type() const { return fixed_->type; }
TimeMs PerceptRecord::ts() const { return fixed_->ts; }
uint64_t PerceptRecord::seq() const { return fixed_->seq; }
double PerceptRecord::intensity() const { return fixed_->intensity; }

void PerceptRecord::set_drop_reason(const json& reason) {
  drop_reason_.clear();
  AppendCompactJson(reason, &drop_reason_);
}

void PerceptRecord::AppendJson(std::string* out) const {
  const Fixed& f = *fixed_;
  const uint32_t end = static_cast<uint32_t>(f.bytes.size());
  // Sized once: the fixed members, the changing ones and their keys.
  out->reserve(out->size() + f.bytes.size() + drop_reason_.size() + status_.size() +
               (thread_id_ ? thread_id_->size() : 4) + 64);
  out->push_back('{');
  PairWriter w(out);
  w.Piece(f.Piece(0, f.b_at));
  if (!drop_reason_.empty()) w.Key(kDropReason)->append(drop_reason_);
  w.Piece(f.Piece(f.b_at, f.c_at));
  AppendJsonString(status_, w.Key(kStatus));
  w.Piece(f.Piece(f.c_at, f.d_at));
  std::string* t = w.Key(kThreadId);
  if (thread_id_) AppendJsonString(*thread_id_, t);
  else t->append("null");
  w.Piece(f.Piece(f.d_at, end));
  out->push_back('}');
}

json PerceptRecord::ToJson() const {
  std::string text;
  AppendJson(&text);
  auto j = ParseJson(text);
  return j ? std::move(*j) : json();
}

}  // namespace limbic::state
