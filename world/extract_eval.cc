#include "world/extract_eval.h"

#include <map>
#include <set>
#include <unordered_map>

#include "base/json.h"
#include "base/time.h"

namespace limbic::world {
namespace {

// "sample.jsonl:12: "
std::string Where(const std::string& source, size_t line) {
  return source + ":" + std::to_string(line) + ": ";
}

// A non-empty string array of `n` strings, or an error naming `what`.
Result<std::vector<std::string>> Strings(const json& item, size_t n, const std::string& what) {
  if (!item.is_array() || item.size() != n)
    return Status::InvalidArgument(what + ": must be an array of " + std::to_string(n) +
                                   " strings");
  std::vector<std::string> out;
  for (const json& s : item) {
    if (!s.is_string() || CleanName(s.get_ref<const std::string&>()).empty())
      return Status::InvalidArgument(what + ": must be an array of " + std::to_string(n) +
                                     " non-empty strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// A day's labels as it is being read: the line that typed each name.
struct DayBuilder {
  LabelledDay day;
  std::unordered_map<std::string, std::pair<EntityType, size_t>> types;  // NameKey -> type, line
  std::set<std::string> triplet_keys;
};

std::string TripletKey(const std::string& s, const std::string& p, const std::string& o) {
  return NameKey(s) + "\x1f" + p + "\x1f" + NameKey(o);
}

// Adds one sample line's labels to `b`.
Status AddLine(const json& doc, const std::string& where, size_t line_no, DayBuilder* b) {
  for (const auto& [key, value] : doc.items())
    if (key != "date" && key != "text" && key != "entities" && key != "triplets")
      return Status::InvalidArgument(where + "unknown member \"" + key + "\"");
  const auto text = doc.find("text");
  if (text == doc.end() || !text->is_string())
    return Status::InvalidArgument(where + "text: must be a string");
  if (b->day.lines > 0) b->day.text += '\n';
  b->day.text += text->get<std::string>();
  ++b->day.lines;
  for (const char* member : {"entities", "triplets"}) {
    const auto it = doc.find(member);
    if (it != doc.end() && !it->is_array())
      return Status::InvalidArgument(where + member + ": must be an array");
  }
  size_t i = 0;
  for (const json& item : doc.value("entities", json::array())) {
    const std::string what = where + "entities[" + std::to_string(i++) + "]";
    auto pair = Strings(item, 2, what);
    if (!pair.ok()) return pair.status();
    auto type = ParseType((*pair)[1]);
    if (!type.ok()) return Status::InvalidArgument(what + ": " + type.status().message());
    const std::string name = CleanName((*pair)[0]);
    auto [at, added] = b->types.emplace(NameKey(name), std::pair{*type, line_no});
    if (added) {
      b->day.entities.emplace_back(name, *type);
    } else if (at->second.first != *type) {
      return Status::InvalidArgument(what + ": \"" + name + "\" is a " +
                                     std::string(TypeName(*type)) + " here and a " +
                                     std::string(TypeName(at->second.first)) + " on line " +
                                     std::to_string(at->second.second) + " of the same day");
    }
  }
  i = 0;
  for (const json& item : doc.value("triplets", json::array())) {
    auto t = Strings(item, 3, where + "triplets[" + std::to_string(i++) + "]");
    if (!t.ok()) return t.status();
    const auto& v = *t;
    if (b->triplet_keys.insert(TripletKey(v[0], v[1], v[2])).second)
      b->day.triplets.push_back({CleanName(v[0]), v[1], CleanName(v[2]), ""});
  }
  return Status::OK();
}

double Ratio(size_t a, size_t b) { return b == 0 ? 1.0 : static_cast<double>(a) / b; }

json ScoreToJson(const Score& s) {
  return {{"labelled", s.labelled},     {"found", s.found},     {"right", s.right},
          {"precision", s.precision()}, {"recall", s.recall()}, {"f1", s.f1()}};
}

// Counts `found` against `labelled` (both keyed) into `score`; what is on
// one side only goes to `missed` / `extra` as `prefix` + its description.
void Compare(const std::map<std::string, std::string>& labelled,
             const std::map<std::string, std::string>& found, const std::string& prefix,
             Score* score, std::vector<std::string>* missed, std::vector<std::string>* extra) {
  score->labelled += labelled.size();
  score->found += found.size();
  for (const auto& [key, desc] : labelled) {
    if (found.count(key))
      ++score->right;
    else if (missed)
      missed->push_back(prefix + desc);
  }
  if (!extra) return;
  for (const auto& [key, desc] : found)
    if (!labelled.count(key)) extra->push_back(prefix + desc);
}

std::string EntityDesc(const std::string& name, EntityType type) {
  return "entity " + name + " (" + std::string(TypeName(type)) + ")";
}

}  // namespace

double Score::precision() const { return Ratio(right, found); }
double Score::recall() const { return Ratio(right, labelled); }
double Score::f1() const {
  const double p = precision(), r = recall();
  return p + r == 0 ? 0.0 : 2 * p * r / (p + r);
}

Result<Sample> ParseSample(std::string_view text, const std::string& source) {
  std::vector<DayBuilder> days;
  std::unordered_map<std::string, size_t> by_date;
  size_t lines = 0, line_no = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = Where(source, line_no);
    auto doc = ParseJson(line);
    if (!doc || !doc->is_object()) return Status::InvalidArgument(where + "not a JSON object");
    const auto date = doc->find("date");
    if (date == doc->end() || !date->is_string() || !IsValidDate(date->get<std::string>()))
      return Status::InvalidArgument(where + "date: must be YYYY-MM-DD");
    auto [it, added] = by_date.emplace(date->get<std::string>(), days.size());
    if (added) {
      days.emplace_back();
      days.back().day.date = it->first;
    }
    LIMBIC_RETURN_IF_ERROR(AddLine(*doc, where, line_no, &days[it->second]));
    ++lines;
  }
  if (lines == 0) return Status::InvalidArgument(source + ": no labelled lines");
  Sample sample;
  sample.lines = lines;
  for (DayBuilder& b : days) sample.days.push_back(std::move(b.day));
  return sample;
}

Result<Evaluation> Evaluate(Extractor& extractor, const Sample& sample) {
  Evaluation ev;
  ev.days = sample.days.size();
  ev.lines = sample.lines;
  for (const LabelledDay& day : sample.days) {
    auto x = extractor.Extract({day.date, "sample:" + day.date, day.text, {}});
    if (!x.ok()) return x.status();
    if (ev.extractor.empty()) ev.extractor = x->extractor;
    if (!x->note.empty()) ev.notes.push_back(day.date + ": " + x->note);
    const std::string prefix = day.date + " ";

    std::map<std::string, std::string> want, got, want_names, got_names;
    for (const auto& [name, type] : day.entities) {
      want[NameKey(name) + "\x1f" + std::string(TypeName(type))] = EntityDesc(name, type);
      want_names[NameKey(name)] = name;
    }
    for (const Entity& e : x->entities) {
      got[NameKey(e.name) + "\x1f" + std::string(TypeName(e.type))] = EntityDesc(e.name, e.type);
      got_names[NameKey(e.name)] = e.name;
    }
    Compare(want, got, prefix, &ev.entities, &ev.missed, &ev.extra);
    Compare(want_names, got_names, prefix, &ev.names, nullptr, nullptr);

    want.clear();
    got.clear();
    auto desc = [](const Triplet& t) {
      return "triplet " + t.subject + " -" + t.predicate + "-> " + t.object;
    };
    for (const Triplet& t : day.triplets)
      want[TripletKey(t.subject, t.predicate, t.object)] = desc(t);
    for (const Triplet& t : x->triplets)
      got[TripletKey(t.subject, t.predicate, t.object)] = desc(t);
    Compare(want, got, prefix, &ev.triplets, &ev.missed, &ev.extra);
  }
  return ev;
}

json EvaluationToJson(const Evaluation& e) {
  return {{"extractor", e.extractor},
          {"days", e.days},
          {"lines", e.lines},
          {"entities", ScoreToJson(e.entities)},
          {"names", ScoreToJson(e.names)},
          {"triplets", ScoreToJson(e.triplets)},
          {"missed", e.missed},
          {"extra", e.extra},
          {"notes", e.notes}};
}

}  // namespace limbic::world
