#include "world/model.h"

#include <catch2/catch.hpp>

// This file's own namespace: test programs compile in unity batches.
namespace model_test {

using namespace limbic::world;

TEST_CASE("entity types round-trip and unknown types are named", "[world]") {
  for (auto t : {EntityType::kPerson, EntityType::kCompany, EntityType::kProject, EntityType::kTool,
                 EntityType::kConcept}) {
    auto back = ParseType(TypeName(t));
    REQUIRE(back.ok());
    CHECK(*back == t);
  }
  auto bad = ParseType("city");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("\"city\""));
  CHECK_FALSE(ParseType("Person").ok());
}

TEST_CASE("names are cleaned of markup and spacing and keyed without case", "[world]") {
  CHECK(CleanName("  Alice   Chen \n") == "Alice Chen");
  CHECK(CleanName("**[[Bob]]**") == "Bob");
  CHECK(CleanName("`rocksdb`") == "rocksdb");
  CHECK(CleanName("**") == "**");  // nothing inside: left alone
  CHECK(CleanName("a_b_c") == "a_b_c");
  CHECK(NameKey("Alice  CHEN") == NameKey("alice chen"));
  CHECK(NameKey("Zoë") == "zoë");  // only ASCII is folded
}

}  // namespace model_test
