#include "base/kind_registry.h"

#include <catch2/catch.hpp>
#include <functional>
#include <thread>
#include <vector>

// This file's own namespace: test programs compile in unity batches.
namespace kind_registry_test {

using namespace limbic;
using nlohmann::json;

using Factory = std::function<int()>;

TEST_CASE("KindRegistry finds a config's kind and says what is wrong", "[base]") {
  KindRegistry<Factory> kinds({{"one", [] { return 1; }}});
  auto one = kinds.Find(json{{"kind", "one"}}, "one or two");
  REQUIRE(one.ok());
  CHECK((*one)() == 1);
  for (const json& no_kind : {json(nullptr), json::object(), json{{"kind", 2}}, json::array()}) {
    INFO(no_kind.dump());
    auto f = kinds.Find(no_kind, "one or two");
    REQUIRE_FALSE(f.ok());
    CHECK(f.status().IsInvalidArgument());
    CHECK(f.status().message() == "required: one or two");
  }
  auto unknown = kinds.Find(json{{"kind", "two"}}, "one or two");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message() == "unknown kind \"two\"");
}

TEST_CASE("KindRegistry takes new kinds and replaces old ones, from any thread", "[base]") {
  KindRegistry<Factory> kinds({{"one", [] { return 1; }}});
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&kinds, i] {
      kinds.Register("k" + std::to_string(i), [i] { return 10 + i; });
      kinds.Register("one", [] { return 100; });
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) CHECK((*kinds.Find(json{{"kind", "k" + std::to_string(i)}}, ""))() == 10 + i);
  CHECK((*kinds.Find(json{{"kind", "one"}}, ""))() == 100);
}

}  // namespace kind_registry_test
