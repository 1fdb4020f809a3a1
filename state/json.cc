#include "state/json.h"

#include <simdjson.h>

#include <charconv>
#include <cmath>

namespace limbic::state {
namespace {

using nlohmann::json;
namespace dom = simdjson::dom;

json Convert(dom::element e) {
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      json out = json::object();
      auto& members = out.get_ref<json::object_t&>();
      // Keys usually come in order (limbic writes them sorted): hinted at
      // the end, each lands there with one comparison instead of a walk
      // down the tree. Out of order they land where they belong all the same.
      for (dom::key_value_pair kv : dom::object(e))
        members.insert_or_assign(members.end(), std::string(kv.key), Convert(kv.value));
      return out;
    }
    case dom::element_type::ARRAY: {
      json out = json::array();
      auto& items = out.get_ref<json::array_t&>();
      for (dom::element item : dom::array(e)) items.push_back(Convert(item));
      return out;
    }
    case dom::element_type::STRING:
      return json(std::string(std::string_view(e)));
    case dom::element_type::INT64: {
      int64_t i = int64_t(e);
      // nlohmann reads every non-negative integer as unsigned.
      return i >= 0 ? json(static_cast<uint64_t>(i)) : json(i);
    }
    case dom::element_type::UINT64:
      return json(uint64_t(e));
    case dom::element_type::DOUBLE:
      return json(double(e));
    case dom::element_type::BOOL:
      return json(bool(e));
    case dom::element_type::NULL_VALUE:
      return json(nullptr);
  }
  return json();
}

dom::parser& ThreadParser() {
  thread_local dom::parser parser;
  return parser;
}

}  // namespace

std::optional<json> ParseJson(std::string_view text) {
  dom::element root;
  simdjson::error_code err = ThreadParser().parse(text.data(), text.size(), true).get(root);
  if (!err) return Convert(root);
  if (err == simdjson::NUMBER_ERROR ||
      err == simdjson::CAPACITY || err == simdjson::DEPTH_ERROR) {
    // Integers beyond 64 bits (nlohmann makes them doubles), or documents
    // beyond simdjson's limits: the reference parser decides.
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (!j.is_discarded()) return j;
  }
  return std::nullopt;
}

std::optional<json> ParseJsonTaking(std::string_view text, std::span<const std::string_view> names,
                                    std::span<std::optional<json>> taken) {
  auto slot = [&](std::string_view key) -> std::optional<json>* {
    for (size_t i = 0; i < names.size() && i < taken.size(); ++i)
      if (names[i] == key) return &taken[i];
    return nullptr;
  };
  dom::element root;
  simdjson::error_code err = ThreadParser().parse(text.data(), text.size(), true).get(root);
  if (!err && root.type() == dom::element_type::OBJECT) {
    json out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    for (dom::key_value_pair kv : dom::object(root)) {
      if (std::optional<json>* s = slot(kv.key)) {
        // The last of a repeated key wins, as in ParseJson.
        *s = Convert(kv.value);
      } else {
        members.insert_or_assign(members.end(), std::string(kv.key), Convert(kv.value));
      }
    }
    return out;
  }
  // Not an object, or text simdjson leaves to nlohmann: parsed whole, then
  // the named members moved out.
  std::optional<json> whole = ParseJson(text);
  if (whole && whole->is_object()) {
    for (size_t i = 0; i < names.size() && i < taken.size(); ++i) {
      auto it = whole->find(names[i]);
      if (it == whole->end()) continue;
      taken[i] = std::move(*it);
      whole->erase(it);
    }
  }
  return whole;
}

bool ValidJson(std::string_view text) {
  dom::element root;
  simdjson::error_code err = ThreadParser().parse(text.data(), text.size(), true).get(root);
  if (!err) return true;
  if (err == simdjson::NUMBER_ERROR || err == simdjson::CAPACITY || err == simdjson::DEPTH_ERROR)
    return json::accept(text.begin(), text.end());
  return false;
}

// The bytes as they are when they are valid UTF-8 with nothing to escape,
// which is almost always; anything else is left to nlohmann.
void AppendJsonString(const std::string& s, std::string* out) {
  bool plain = true, ascii = true;
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
    ascii &= c < 0x80;
  }
  // Short ASCII strings (ids, names, times) are most of them: no UTF-8 to check.
  if (plain && !ascii) plain = simdjson::validate_utf8(s.data(), s.size());
  if (!plain) {
    out->append(json(s).dump(-1, ' ', false, json::error_handler_t::replace));
    return;
  }
  out->push_back('"');
  out->append(s);
  out->push_back('"');
}

void AppendCompactJson(const json& j, std::string* out) {
  char buf[64];
  switch (j.type()) {
    case json::value_t::null:
      out->append("null");
      return;
    case json::value_t::boolean:
      out->append(j.get<bool>() ? "true" : "false");
      return;
    case json::value_t::number_integer: {
      auto r = std::to_chars(buf, buf + sizeof buf, j.get<int64_t>());
      out->append(buf, r.ptr);
      return;
    }
    case json::value_t::number_unsigned: {
      auto r = std::to_chars(buf, buf + sizeof buf, j.get<uint64_t>());
      out->append(buf, r.ptr);
      return;
    }
    case json::value_t::number_float: {
      const double d = j.get<double>();
      if (!std::isfinite(d)) {
        out->append("null");
        return;
      }
      // The shortest text that reads back as d, formatted as nlohmann does:
      // its own routine, so the bytes are the same.
      char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
      out->append(buf, end);
      return;
    }
    case json::value_t::string:
      AppendJsonString(j.get_ref<const std::string&>(), out);
      return;
    case json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, value] : j.get_ref<const json::object_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(key, out);
        out->push_back(':');
        AppendCompactJson(value, out);
      }
      out->push_back('}');
      return;
    }
    case json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const json& item : j.get_ref<const json::array_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendCompactJson(item, out);
      }
      out->push_back(']');
      return;
    }
    default:  // binary, discarded: never in limbic's records
      out->append(j.dump(-1, ' ', false, json::error_handler_t::replace));
      return;
  }
}

std::string JsonError(std::string_view text) {
  try {
    json discarded = json::parse(text.begin(), text.end());
    (void)discarded;
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    auto at = what.find("] ");
    std::string detail = at == std::string::npos ? what : what.substr(at + 2);
    return "syntax error at byte " + std::to_string(e.byte) + ": " + detail;
  }
  return "invalid JSON";
}

}  // namespace limbic::state
