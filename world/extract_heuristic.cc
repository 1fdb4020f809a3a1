// The heuristic extractor: structured events here, text in extract_text.cc
// (rules in extract.h).
#include <initializer_list>
#include <unordered_map>

#include "world/extract.h"
#include "world/extract_internal.h"
#include "base/time.h"

namespace limbic::world {
namespace internal {
namespace {

using state::Event;
using state::EventType;

const json& EmptyObject() {
  static const json* empty = new json(json::object());
  return *empty;
}

const json& ObjectField(const json& obj, const char* key) {
  if (!obj.is_object()) return EmptyObject();
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : EmptyObject();
}

std::string StringField(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The first of `fields` of `data` that names something: a string, or an
// object's string under one of `object_keys` (GitHub's {"login": ...}).
std::string FirstName(const json& data, std::initializer_list<const char*> fields,
                      std::initializer_list<const char*> object_keys) {
  for (const char* field : fields) {
    auto it = data.find(field);
    if (it == data.end()) continue;
    if (it->is_string() && !it->get_ref<const std::string&>().empty())
      return it->get<std::string>();
    for (const char* key : object_keys) {
      std::string name = StringField(*it, key);
      if (!name.empty()) return name;
    }
  }
  return {};
}

// "Alice Chen <alice@example.com>" -> "Alice Chen".
std::string WithoutAddress(std::string name) {
  const size_t lt = name.find(" <");
  if (lt != std::string::npos && lt > 0 && name.ends_with('>')) name.resize(lt);
  return name;
}

// "12" from 12, "12", {"number": 12}; empty when there is none.
std::string IssueNumber(const json& data) {
  for (const char* field : {"number", "issue", "pr"}) {
    auto it = data.find(field);
    if (it == data.end()) continue;
    const json* v = &*it;
    if (v->is_object() && v->contains("number")) v = &(*v)["number"];
    if (v->is_number_unsigned()) return std::to_string(v->get<uint64_t>());
    if (v->is_number_integer() && v->get<int64_t>() >= 0) return std::to_string(v->get<int64_t>());
    if (v->is_string()) {
      const std::string& s = v->get_ref<const std::string&>();
      if (!s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos)
        return s;
    }
  }
  return {};
}

bool IsVerbWord(std::string_view w) {
  if (w.empty() || w.size() > 32) return false;
  for (char c : w)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return false;
  return true;
}

// data.action when it is a word, else the last piece of the percept type.
std::string Verb(const json& data, std::string_view percept_type) {
  const std::string action = StringField(data, "action");
  if (IsVerbWord(action)) return AsciiLower(action);
  std::string_view rest = percept_type;
  while (!rest.empty()) {
    const size_t cut = rest.find_last_of("_.-/");
    const std::string_view last = cut == std::string_view::npos ? rest : rest.substr(cut + 1);
    if (!last.empty()) return AsciiLower(last);
    rest = rest.substr(0, cut);
  }
  return "acted_on";
}

// A percept's own text (empty when it has none).
std::string PerceptText(const Event& e) {
  std::string text = e.Str("text");
  if (text.empty()) text = StringField(ObjectField(e.fields, "data"), "text");
  return text;
}

class EventExtractor {
 public:
  EventExtractor(const ExtractInput& input, Collector* out, TextScanner* scanner)
      : input_(input), out_(out), scanner_(scanner) {}

  void Run() {
    for (const Event& e : input_.events) {
      const std::string date = e.ts > 0 ? FormatDate(e.ts) : input_.date;
      switch (e.type) {
        case EventType::kPerceptArrived:
          Percept(e, date);
          break;
        case EventType::kThreadCreated:
          ThreadCreated(e, date);
          break;
        case EventType::kThreadCompleted:
          ThreadCompleted(e, date, e.Str("outcome"));
          break;
        case EventType::kThreadUpdated:
          if (e.Str("status") == "complete") {
            std::string outcome = e.Str("outcome");
            if (outcome.empty()) outcome = StringField(ObjectField(e.fields, "state"), "outcome");
            ThreadCompleted(e, date, outcome);
          }
          break;
        default:
          break;
      }
    }
  }

 private:
  void Percept(const Event& e, const std::string& date) {
    const json& data = ObjectField(e.fields, "data");
    const std::string source = e.Str("source"), type = e.Str("percept_type");
    std::vector<std::string> names;
    auto add = [&](const std::string& name, EntityType t) {
      std::string kept = name.empty() ? std::string() : out_->Add(name, t, true);
      if (!kept.empty()) names.push_back(kept);
      return kept;
    };
    const std::string_view tool = KnownTool(AsciiLower(source));
    add(tool.empty() ? source : std::string(tool), EntityType::kTool);
    const std::string user = add(
        WithoutAddress(FirstName(data, {"user", "author", "from", "sender"}, {"login", "name"})),
        EntityType::kPerson);
    const std::string repo =
        add(FirstName(data, {"repo", "repository"}, {"full_name", "name"}), EntityType::kProject);
    std::string channel_name = FirstName(data, {"channel"}, {"name"});
    if (channel_name.starts_with('#')) channel_name.erase(0, 1);
    const std::string channel = add(channel_name, EntityType::kConcept);
    add(FirstName(data, {"company", "org"}, {"login", "name"}), EntityType::kCompany);

    std::string text = PerceptText(e);
    std::vector<std::string> found;
    if (!text.empty()) {
      found = scanner_->Scan(text, date, false);
      names.insert(names.end(), found.begin(), found.end());
    } else {
      text = source + "/" + type;
    }
    out_->AddEvent(date, text, names);

    if (user.empty()) return;
    if (!repo.empty()) {
      const std::string issue = IssueNumber(data);
      out_->AddTriplet(user, Verb(data, type), issue.empty() ? repo : repo + "#" + issue, date);
    }
    const std::string user_key = NameKey(user);
    for (const std::string& name : found)
      if (NameKey(name) != user_key) out_->AddTriplet(user, "mentioned", name, date);
    if (!channel.empty()) out_->AddTriplet(user, "posted_in", channel, date);
  }

  // A goal is a sentence about work ("Fix the crash on start"), not the
  // name of a project: what it names is read as text.
  void ThreadCreated(const Event& e, const std::string& date) {
    const std::string goal = OneLine(e.Str("goal"));
    if (goal.empty()) return;
    std::vector<std::string> names = scanner_->Scan(goal, date, false);
    out_->AddEvent(date, "started: " + goal, names);
    threads_[e.Str("thread_id")] = {goal, std::move(names)};
  }

  void ThreadCompleted(const Event& e, const std::string& date, const std::string& outcome) {
    const std::string id = e.Str("thread_id");
    auto it = threads_.find(id);
    std::string text = "completed: " + (it != threads_.end() ? it->second.goal : id);
    if (!outcome.empty()) text += ": " + outcome;
    out_->AddEvent(date, text,
                   it != threads_.end() ? it->second.names : std::vector<std::string>{});
  }

  struct Thread {
    std::string goal;
    std::vector<std::string> names;  // the entities the goal names
  };

  const ExtractInput& input_;
  Collector* out_;
  TextScanner* scanner_;
  std::unordered_map<std::string, Thread> threads_;  // created in this input, by id
};

class HeuristicExtractor final : public Extractor {
 public:
  std::string_view kind() const override { return "heuristic"; }
  Result<Extraction> Extract(const ExtractInput& input) override { return HeuristicExtract(input); }
};

}  // namespace

Status CheckInputDate(const ExtractInput& input) {
  if (IsValidDate(input.date)) return Status::OK();
  return Status::InvalidArgument("extract " + input.source + ": date must be YYYY-MM-DD, got \"" +
                                 input.date + "\"");
}

Result<Extraction> HeuristicExtract(const ExtractInput& input) {
  LIMBIC_RETURN_IF_ERROR(CheckInputDate(input));
  Collector out;
  TextScanner scanner(&out);
  scanner.Learn(input.text);
  for (const Event& e : input.events) {
    if (e.type == EventType::kPerceptArrived) scanner.Learn(PerceptText(e));
    if (e.type == EventType::kThreadCreated) scanner.Learn(e.Str("goal"));
  }
  EventExtractor(input, &out, &scanner).Run();
  scanner.Scan(input.text, input.date, true);
  return out.Finish("heuristic");
}

}  // namespace internal

std::unique_ptr<Extractor> MakeHeuristicExtractor() {
  return std::make_unique<internal::HeuristicExtractor>();
}

}  // namespace limbic::world
