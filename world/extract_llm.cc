// The llm extractor, the validation of its model's answers, and
// MakeExtractor.
#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "archive/text.h"
#include "base/input_json.h"
#include "world/extract.h"
#include "world/extract_internal.h"
#include "base/time.h"

namespace limbic::world {
namespace {

using internal::OneLine;

constexpr char kSystemPrompt[] =
    R"(You build a world model from one day of an AI agent's life: its notes and the events it saw.
Answer with one JSON object and nothing else:
{"entities": [{"name": "...", "type": "person|company|project|tool|concept", "facts": ["..."]}],
 "triplets": [{"subject": "...", "predicate": "...", "object": "...", "date": "YYYY-MM-DD"}],
 "events": [{"date": "YYYY-MM-DD", "text": "...", "entities": ["..."]}]}
Rules:
- entities: the people, companies, projects, tools and concepts named, each once, by the name the text uses.
  type is exactly one of person, company, project, tool, concept. facts are permanent attributes, one short line each ("is a database").
- triplets: relations stated by the input, subject and object named as in entities, predicate a short verb in snake_case (works_at, uses, maintains, reviewed).
- events: what happened, one line each, naming the entities involved as in entities.
- date defaults to the day of the input; give it when the input says another day.
- Use empty arrays when there is nothing to say. Do not invent anything the input does not say.)";

constexpr size_t kMaxEventLine = 2000;  // bytes of one event's rendering

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The input as the model reads it: the text, then one line per event.
std::string Render(const ExtractInput& input) {
  std::string out = "Day: " + input.date + "\nSource: " + input.source + "\n";
  if (!input.text.empty()) out += "\nNotes:\n" + input.text + "\n";
  if (!input.events.empty()) {
    out += "\nEvents (time, type, fields):\n";
    for (const state::Event& e : input.events) {
      std::string line = FormatTime(e.ts) + " " + std::string(state::EventTypeName(e.type)) + " " +
                         e.fields.dump(-1, ' ', false, json::error_handler_t::replace);
      out += archive::Utf8Prefix(line, kMaxEventLine);
      out += '\n';
    }
  }
  return out;
}

Status Invalid(const std::string& where, const std::string& why) {
  return Status::InvalidArgument(where + ": " + why);
}

// The member `key` of `obj`; nullptr when absent or null (models write
// null for "nothing").
const json* Member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// A required non-empty string (after CleanName when `name`).
Status NonEmptyString(const json& obj, const char* key, const std::string& where, bool name,
                      std::string* out) {
  const json* v = Member(obj, key);
  if (v == nullptr || !v->is_string())
    return Invalid(where + "." + key, "must be a non-empty string");
  *out = name ? CleanName(v->get_ref<const std::string&>())
              : OneLine(v->get_ref<const std::string&>());
  if (out->empty()) return Invalid(where + "." + key, "must be a non-empty string");
  return Status::OK();
}

// `date` when absent, else a YYYY-MM-DD string.
Status DateOf(const json& obj, const std::string& where, const std::string& dflt,
              std::string* out) {
  const json* v = Member(obj, "date");
  if (v == nullptr) {
    *out = dflt;
    return Status::OK();
  }
  if (!v->is_string() || !IsValidDate(v->get_ref<const std::string&>()))
    return Invalid(where + ".date", "must be YYYY-MM-DD, got " +
                                        v->dump(-1, ' ', false, json::error_handler_t::replace));
  *out = v->get<std::string>();
  return Status::OK();
}

// An optional array of strings, each through `clean`; empty ones dropped.
template <typename Clean>
Status Strings(const json& obj, const char* key, const std::string& where, Clean clean,
               std::vector<std::string>* out) {
  const json* v = Member(obj, key);
  if (v == nullptr) return Status::OK();
  if (!v->is_array()) return Invalid(where + "." + key, "must be an array of strings");
  for (size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!item.is_string())
      return Invalid(where + "." + key + "[" + std::to_string(i) + "]", "must be a string");
    std::string s = clean(item.get_ref<const std::string&>());
    if (!s.empty()) out->push_back(std::move(s));
  }
  return Status::OK();
}

// "works at" -> "works_at".
std::string Predicate(std::string_view p) {
  std::string out;
  bool gap = false;
  for (char c : Trim(p)) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      gap = true;
      continue;
    }
    if (gap) out += '_';
    gap = false;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

class LlmExtractor final : public Extractor {
 public:
  LlmExtractor(ExtractorSpec spec, std::shared_ptr<spdlog::logger> log)
      : spec_(std::move(spec)), log_(std::move(log)) {}
  std::string_view kind() const override { return "llm"; }

  Result<Extraction> Extract(const ExtractInput& input) override {
    LIMBIC_RETURN_IF_ERROR(internal::CheckInputDate(input));
    std::string user = Render(input), note;
    if (user.size() > spec_.max_input_chars) {
      const size_t total = user.size();
      user = std::string(archive::Utf8Prefix(user, spec_.max_input_chars));
      note = "input cut to " + std::to_string(user.size()) + " of " + std::to_string(total) +
             " bytes for the llm";
    }
    std::string error;
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::string prompt = user;
      if (attempt > 0)
        prompt += "\n\nYour previous answer was rejected: " + error +
                  "\nAnswer again with only the JSON object described above.";
      auto answer = Complete(spec_.llm, kSystemPrompt, prompt, /*json_mode=*/true);
      Result<Extraction> parsed =
          answer.ok() ? ParseLlmExtraction(*answer, input.date) : answer.status();
      if (parsed.ok()) {
        parsed->note = note;
        return parsed;
      }
      error = parsed.status().message();
    }
    log_->warn("world extract {}: the llm extractor failed twice, using the heuristic one: {}",
               input.source, error);
    auto fallback = internal::HeuristicExtract(input);
    if (fallback.ok()) fallback->note = "llm failed twice, used heuristic: " + error;
    return fallback;
  }

 private:
  ExtractorSpec spec_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace

Result<Extraction> ParseLlmExtraction(std::string_view answer, const std::string& date) {
  std::string_view s = Trim(answer);
  if (s.starts_with("```")) {  // ```json ... ```
    const size_t nl = s.find('\n');
    s = nl == std::string_view::npos ? std::string_view() : Trim(s.substr(nl + 1));
    if (s.ends_with("```")) s = Trim(s.substr(0, s.size() - 3));
  }
  auto parsed = ParseInputJson(s);
  if (!parsed.ok()) return Status::InvalidArgument("the answer " + AnswerRefusal(parsed.status()));
  const json j = std::move(*parsed);
  if (!j.is_object()) return Status::InvalidArgument("the answer is not a JSON object");
  auto array = [&](const char* key, const json** out) {
    *out = Member(j, key);
    if (*out != nullptr && !(*out)->is_array()) return Invalid(key, "must be an array");
    return Status::OK();
  };
  const json *entities, *triplets, *events;
  LIMBIC_RETURN_IF_ERROR(array("entities", &entities));
  LIMBIC_RETURN_IF_ERROR(array("triplets", &triplets));
  LIMBIC_RETURN_IF_ERROR(array("events", &events));

  Extraction out;
  out.extractor = "llm";
  std::unordered_map<std::string, size_t> by_key;
  for (size_t i = 0; entities != nullptr && i < entities->size(); ++i) {
    const json& e = (*entities)[i];
    const std::string where = "entities[" + std::to_string(i) + "]";
    if (!e.is_object()) return Invalid(where, "must be an object");
    Entity entity;
    LIMBIC_RETURN_IF_ERROR(NonEmptyString(e, "name", where, true, &entity.name));
    const json* type = Member(e, "type");
    if (type == nullptr || !type->is_string()) return Invalid(where + ".type", "must be a string");
    auto parsed = ParseType(type->get_ref<const std::string&>());
    if (!parsed.ok())
      return Invalid(where + ".type",
                     "must be one of person, company, project, tool, concept, got " +
                         type->dump(-1, ' ', false, json::error_handler_t::replace));
    entity.type = *parsed;
    LIMBIC_RETURN_IF_ERROR(Strings(
        e, "facts", where, [](const std::string& f) { return OneLine(f, 300); }, &entity.facts));
    // The same entity twice: one Entity, the most specific type, all facts.
    auto [it, added] = by_key.emplace(NameKey(entity.name), out.entities.size());
    if (added) {
      out.entities.push_back(std::move(entity));
      continue;
    }
    Entity& kept = out.entities[it->second];
    kept.type = std::min(kept.type, entity.type);
    for (std::string& f : entity.facts)
      if (std::find(kept.facts.begin(), kept.facts.end(), f) == kept.facts.end())
        kept.facts.push_back(std::move(f));
  }
  std::unordered_set<std::string> seen;
  for (size_t i = 0; triplets != nullptr && i < triplets->size(); ++i) {
    const json& t = (*triplets)[i];
    const std::string where = "triplets[" + std::to_string(i) + "]";
    if (!t.is_object()) return Invalid(where, "must be an object");
    Triplet triplet;
    std::string predicate;
    LIMBIC_RETURN_IF_ERROR(NonEmptyString(t, "subject", where, true, &triplet.subject));
    LIMBIC_RETURN_IF_ERROR(NonEmptyString(t, "predicate", where, false, &predicate));
    LIMBIC_RETURN_IF_ERROR(NonEmptyString(t, "object", where, true, &triplet.object));
    LIMBIC_RETURN_IF_ERROR(DateOf(t, where, date, &triplet.date));
    triplet.predicate = Predicate(predicate);
    std::string key = NameKey(triplet.subject) + '\x1f' + triplet.predicate + '\x1f' +
                      NameKey(triplet.object) + '\x1f' + triplet.date;
    if (seen.insert(std::move(key)).second) out.triplets.push_back(std::move(triplet));
  }
  for (size_t i = 0; events != nullptr && i < events->size(); ++i) {
    const json& e = (*events)[i];
    const std::string where = "events[" + std::to_string(i) + "]";
    if (!e.is_object()) return Invalid(where, "must be an object");
    WorldEvent event;
    LIMBIC_RETURN_IF_ERROR(NonEmptyString(e, "text", where, false, &event.text));
    LIMBIC_RETURN_IF_ERROR(DateOf(e, where, date, &event.date));
    LIMBIC_RETURN_IF_ERROR(Strings(
        e, "entities", where, [](const std::string& n) { return CleanName(n); }, &event.entities));
    out.events.push_back(std::move(event));
  }
  return out;
}

Result<std::unique_ptr<Extractor>> MakeExtractor(const ExtractorSpec& spec,
                                                 std::shared_ptr<spdlog::logger> log) {
  if (spec.kind == "heuristic") return MakeHeuristicExtractor();
  if (spec.kind != "llm")
    return Status::InvalidArgument("extractor kind \"" + spec.kind +
                                   "\": must be heuristic or llm");
  if (spec.max_input_chars == 0)
    return Status::InvalidArgument("extractor max_input_chars: must be > 0");
  if (Status s = CheckChatSpec(spec.llm); !s.ok())
    return s.WithMessage("extractor llm." + s.message());
  if (log == nullptr)
    log =
        std::make_shared<spdlog::logger>("world", std::make_shared<spdlog::sinks::null_sink_mt>());
  return std::unique_ptr<Extractor>(new LlmExtractor(spec, std::move(log)));
}

}  // namespace limbic::world
