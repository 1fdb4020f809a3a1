// Internal to runtime/config*.cc: how a config document is walked --
// Section collects every error with its JSON path -- and how its files
// are read (outside input, within the depth limit).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/input_json.h"
#include "base/status.h"
#include "base/time.h"
#include "runtime/config.h"

namespace limbic::runtime::config {

using nlohmann::json;

// Walks one object of the config, collecting every error with its path.
class Section {
 public:
  Section(const json& obj, std::string path, std::vector<std::string>* errors)
      : obj_(obj), path_(std::move(path)), errors_(errors) {
    if (!obj_.is_object()) Fail(path_.empty() ? "config" : path_, "must be an object");
  }

  // Call after reading every key: any key not read is unknown.
  void RejectUnknown() {
    if (!obj_.is_object()) return;
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!seen_.count(it.key()))
        Fail(Path(it.key()), "unknown key (see docs/config.md)");
  }

  const json* Get(const std::string& key) {
    seen_.insert(key);
    if (!obj_.is_object()) return nullptr;
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }

  void String(const std::string& key, std::string* out) {
    if (const json* v = Get(key)) {
      if (v->is_string()) *out = v->get<std::string>();
      else Fail(Path(key), "must be a string, got " + v->dump());
    }
  }

  // A string that must be `a` or `b`.
  void Either(const std::string& key, std::string* out, const char* a, const char* b) {
    String(key, out);
    if (*out != a && *out != b)
      Fail(Path(key), std::string("must be ") + a + " or " + b + ", got \"" + *out + "\"");
  }

  void Bool(const std::string& key, bool* out) {
    if (const json* v = Get(key)) {
      if (v->is_boolean()) *out = v->get<bool>();
      else Fail(Path(key), "must be true or false, got " + v->dump());
    }
  }

  template <typename Int>
  void Integer(const std::string& key, Int* out, int64_t lo, int64_t hi) {
    if (const json* v = Get(key)) {
      if (v->is_number_integer() && v->get<int64_t>() >= lo && v->get<int64_t>() <= hi)
        *out = static_cast<Int>(v->get<int64_t>());
      else
        Fail(Path(key), "must be an integer in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "], got " + v->dump());
    }
  }

  void Number(const std::string& key, double* out, double lo, double hi) {
    if (const json* v = Get(key)) {
      if (v->is_number() && v->get<double>() >= lo && v->get<double>() <= hi)
        *out = v->get<double>();
      else
        Fail(Path(key), "must be a number in [" + Trim(lo) + ", " + Trim(hi) + "], got " + v->dump());
    }
  }

  // An array of strings, each checked by `bad` ("" = fine, else why not).
  void Strings(const std::string& key, std::vector<std::string>* out,
               const std::function<std::string(const std::string&)>& bad) {
    const json* v = Get(key);
    if (!v) return;
    if (!v->is_array()) return Fail(Path(key), "must be an array of strings, got " + v->dump());
    std::vector<std::string> items;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& item = (*v)[i];
      std::string why = item.is_string() ? bad(item.get<std::string>()) : "must be a string";
      if (!why.empty()) {
        // A reason that quotes the value already says what was given.
        if (why.find(item.dump()) == std::string::npos) why += ", got " + item.dump();
        Fail(Path(key) + "[" + std::to_string(i) + "]", why);
        return;
      }
      items.push_back(item.get<std::string>());
    }
    *out = std::move(items);
  }

  // "30s", "5m", ... or a number of milliseconds.
  void Duration(const std::string& key, TimeMs* out, TimeMs min = 0) {
    if (const json* v = Get(key)) {
      Result<TimeMs> d = DurationFromJson(*v);
      if (!d.ok()) Fail(Path(key), d.status().message());
      else if (*d < min) Fail(Path(key), "must be at least " + std::to_string(min) + " ms");
      else *out = *d;
    }
  }

  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  void Fail(const std::string& path, const std::string& why) { errors_->push_back(path + ": " + why); }

 private:
  static std::string Trim(double d) {
    std::ostringstream os;
    os << d;
    return os.str();
  }

  const json& obj_;
  std::string path_;
  std::vector<std::string>* errors_;
  std::set<std::string> seen_;
};

inline Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// A config or rules file is outside input: parsed with the depth limit, and
// a number beyond a double is named by its key ("path: recency.x: number out
// of range at byte 40: 1e400").
inline Result<json> ParseJsonText(const std::string& text, const std::string& where,
                           size_t max_depth = kDefaultMaxJsonDepth) {
  auto doc = ParseInputJson(text, max_depth);
  if (!doc.ok()) return doc.status().WithContext(where);
  return doc;
}

// A path relative to base_dir (the config file's directory), normalised.
inline std::string ResolvedPath(const std::string& base_dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

// The `mind` section (config_mind.cc; docs/config.md, docs/mind.md).
void ParseMindSection(const json& v, const std::string& base_dir, std::vector<std::string>* errors,
                      Config* c);

}  // namespace limbic::runtime::config
