#include "base/input_json.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <vector>

#include "base/json.h"

namespace limbic {
namespace {

using nlohmann::json;

std::atomic<size_t> max_depth_{kDefaultMaxJsonDepth};

// The end of the string whose opening quote is at text[i]: the index of its
// closing quote, or text.size() when it is not closed.
size_t StringEnd(std::string_view text, size_t i) {
  for (++i; i < text.size() && text[i] != '"'; ++i)
    if (text[i] == '\\') ++i;
  return std::min(i, text.size());
}

// The offset of the first bracket that opens depth `limit + 1`, or npos.
// Counts brackets outside strings, in any text.
size_t FirstTooDeep(std::string_view text, size_t limit) {
  size_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = StringEnd(text, i);
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return i;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

bool IsNumberByte(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// The first number outside strings that a double cannot hold (1e400, a
// 400-digit integer): its offset and text. Underflow (1e-400) reads as 0,
// as nlohmann reads it, and is not reported.
std::optional<std::pair<size_t, std::string_view>> FirstHugeNumber(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = StringEnd(text, i);
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) continue;
    size_t end = i;
    while (end < text.size() && IsNumberByte(text[end])) ++end;
    std::string token(text.substr(i, end - i));
    const double d = std::strtod(token.c_str(), nullptr);
    if (std::isinf(d)) return std::make_pair(i, text.substr(i, end - i));
    i = end - 1;
  }
  return std::nullopt;
}

// One open object or array on the way to an offset.
struct Frame {
  bool object;
  bool want_key = true;  // objects: the next string is a key
  std::string key;
  size_t index = 0;  // arrays
};

// Where the value at `offset` sits: "recency.half_life", "steps[2].x"; ""
// at the top. Keys are shown as written, escapes and all: it is for a message.
std::string JsonPathAt(std::string_view text, size_t offset) {
  std::vector<Frame> open;
  for (size_t i = 0; i < text.size() && i < offset; ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t end = StringEnd(text, i);
      if (!open.empty() && open.back().object && open.back().want_key)
        open.back().key = std::string(text.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == ':') {
      if (!open.empty()) open.back().want_key = false;
    } else if (c == ',') {
      if (!open.empty()) {
        open.back().want_key = true;
        ++open.back().index;
      }
    } else if (c == '{' || c == '[') {
      open.push_back(Frame{c == '{', true, {}, 0});
    } else if ((c == '}' || c == ']') && !open.empty()) {
      open.pop_back();
    }
  }
  std::string path;
  for (const Frame& f : open) {
    if (f.object)
      path += (path.empty() ? "" : ".") + f.key;
    else
      path += "[" + std::to_string(f.index) + "]";
  }
  return path;
}

}  // namespace

void SetMaxInputJsonDepth(size_t depth) {
  max_depth_.store(std::min(depth, kMaxMaxJsonDepth), std::memory_order_relaxed);
}

size_t MaxInputJsonDepth() { return max_depth_.load(std::memory_order_relaxed); }

Result<json> ParseInputJson(std::string_view text, size_t max_depth) {
  max_depth = std::min(max_depth, kMaxMaxJsonDepth);
  // 1. Depth first, by a scan: nothing is built from text nested too deep.
  if (size_t at = FirstTooDeep(text, max_depth); at != std::string_view::npos)
    return Status::InvalidArgument("JSON " + std::string(kJsonTooDeepMarker) + " " +
                                   std::to_string(max_depth) + " (api.max_json_depth) at byte " +
                                   std::to_string(at + 1));
  // 2. The value: simdjson, and nlohmann for what simdjson leaves to it.
  if (std::optional<json> j = ParseJson(text)) return std::move(*j);
  // 3. Why not, in the reference parser's order: a number it cannot hold
  // (out_of_range.406) or a syntax error, whichever comes first.
  try {
    json discarded = json::parse(text.begin(), text.end());
    (void)discarded;
  } catch (const json::parse_error&) {
    return Status::InvalidArgument("malformed JSON: " + JsonError(text));
  } catch (const json::exception& e) {
    if (auto huge = FirstHugeNumber(text)) {
      std::string path = JsonPathAt(text, huge->first);
      std::string shown(huge->second.substr(0, 40));
      if (huge->second.size() > 40)
        shown += "... (" + std::to_string(huge->second.size()) + " characters)";
      return Status::InvalidArgument((path.empty() ? "" : path + ": ") +
                                     "number out of range at byte " +
                                     std::to_string(huge->first + 1) + ": " + shown);
    }
    return Status::InvalidArgument(std::string("malformed JSON: ") + e.what());
  }
  return Status::InvalidArgument("malformed JSON");
}

bool IsJsonTooDeep(const Status& status) {
  return status.IsInvalidArgument() &&
         status.message().find(kJsonTooDeepMarker) != std::string::npos;
}

Result<TimeMs> DurationFromJson(const nlohmann::json& v) {
  if (v.is_string()) return ParseDuration(v.get<std::string>());
  if (v.is_number_unsigned()) {
    const uint64_t ms = v.get<uint64_t>();
    if (ms > static_cast<uint64_t>(kMaxDurationMs))
      return Status::InvalidArgument("duration too large: " + std::to_string(ms) + " ms (at most 100 years)");
    return static_cast<TimeMs>(ms);
  }
  if (v.is_number_integer()) return CheckDurationMs(v.get<int64_t>());
  return Status::InvalidArgument("must be a duration such as \"30s\" or an integer of milliseconds, got " +
                                 v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 80));
}

std::string AnswerRefusal(const Status& refused) {
  constexpr std::string_view kMalformed = "malformed JSON: ";
  std::string_view m = refused.message();
  if (m.starts_with(kMalformed)) return "is not JSON: " + std::string(m.substr(kMalformed.size()));
  return "is refused: " + std::string(m);
}

}  // namespace limbic
