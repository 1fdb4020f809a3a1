// Helpers shared by the entity store tests (entity_*_test.cc).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "world/entity_store.h"
#include "state/test_util.h"

namespace limbic::world::testing {

using limbic::testing::ScratchDir;
using limbic::testing::Slurp;
using limbic::testing::Spit;

inline std::unique_ptr<EntityStore> OpenStore(const std::string& dir) {
  auto store = EntityStore::Open(dir);
  REQUIRE(store.ok());
  return std::move(*store);
}

inline ApplyResult MustApply(EntityStore& store, const std::vector<PageUpdate>& updates) {
  auto r = store.Apply(updates);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

inline PageUpdate Update(std::string name, EntityType type = EntityType::kConcept) {
  PageUpdate u;
  u.name = std::move(name);
  u.type = type;
  return u;
}

// Every regular file under `root`, as paths relative to it.
inline std::vector<std::string> FilesUnder(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (!e.is_directory()) out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

inline size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace limbic::world::testing
