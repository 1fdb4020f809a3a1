#include "state/json.h"

#include <simdjson.h>

namespace limbic::state {
namespace {

using nlohmann::json;
namespace dom = simdjson::dom;

json Convert(dom::element e) {
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      json out = json::object();
      auto& members = out.get_ref<json::object_t&>();
      for (dom::key_value_pair kv : dom::object(e))
        members.insert_or_assign(std::string(kv.key), Convert(kv.value));
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
