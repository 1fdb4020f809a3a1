// Crash safety of rollups: a failure at every step, then a reopen.
#include <catch2/catch.hpp>

#include "archive/archive_fixture.h"
#include "base/fault_env.h"

// This file's own namespace: test programs compile in unity batches.
namespace archive_crash_test {

using namespace limbic;
using namespace limbic::archive;
using namespace limbic::archive::test;

// Runs the same rollup with a rename failing at every step in turn; after
// each, a crash and a reopen must leave the archive exactly as it was
// before the rollup or as a clean rollup leaves it.
TEST_CASE("a crash at any step of a rollup leaves the archive before or after it", "[archive]") {
  Fixture base;
  {
    auto a = base.Open();
    for (int n = 1; n <= 5; ++n) Fixture::StageAndRollup(*a, n);
    Fixture::Stage(*a, 2, 1);  // re-rollup of day 2: every later day is rewritten
    Fixture::Stage(*a, 6, 2);  // a new day
  }
  const std::string day = GENERATE(Day(2), Day(6));
  auto copy_of_base = [&](const Fixture& to) {
    fs::copy(base.root() + "/archive", to.root() + "/archive", fs::copy_options::recursive);
  };
  Fixture clean;
  copy_of_base(clean);
  auto before = clean.Snapshot();
  REQUIRE(clean.Open()->Rollup(day).ok());
  auto after = clean.Snapshot();
  REQUIRE(before != after);

  bool saw_before = false, saw_after = false;
  for (int renames = 0;; ++renames) {
    INFO("day " << day << ", failing after " << renames << " renames");
    Fixture f;
    copy_of_base(f);
    FaultInjectionEnv env(Env::Default());
    env.FailRenameAfter(renames);
    Result<RollupResult> r = f.Open(&env)->Rollup(day);
    if (r.ok()) break;
    REQUIRE(env.SimulateCrash().ok());

    auto reopened = f.Open();
    auto now = f.Snapshot();
    CHECK((now == before || now == after));
    saw_before |= now == before;
    saw_after |= now == after;
    auto v = reopened->Verify();
    INFO(Describe(*v));
    CHECK(v->ok());
    REQUIRE(renames < 50);
  }
  CHECK(saw_before);
  CHECK(saw_after);
}

TEST_CASE("a failed sync during a rollup leaves the archive as it was", "[archive]") {
  Fixture f;
  {
    auto a = f.Open();
    for (int n = 1; n <= 3; ++n) Fixture::StageAndRollup(*a, n);
    Fixture::Stage(*a, 1, 1);
  }
  auto before = f.Snapshot();
  FaultInjectionEnv env(Env::Default());
  auto a = f.Open(&env);
  env.SetSyncError(true);
  CHECK_FALSE(a->Rollup(Day(1)).ok());
  env.SetSyncError(false);
  REQUIRE(env.SimulateCrash().ok());
  a.reset();
  a = f.Open();
  CHECK(f.Snapshot() == before);
  // And the rollup can be done again.
  REQUIRE(a->Rollup(Day(1)).ok());
  CHECK(a->Load(Day(1))->metadata["staged_entries"] == 3);
  CHECK(a->Verify()->ok());
}

TEST_CASE("readers see a committed rollup before its renames are finished", "[archive]") {
  Fixture f;
  {
    auto a = f.Open();
    for (int n = 1; n <= 4; ++n) Fixture::StageAndRollup(*a, n);
    Fixture::Stage(*a, 1, 1);
  }
  FaultInjectionEnv env(Env::Default());
  env.FailRenameAfter(2);  // the journal and one document renamed
  REQUIRE_FALSE(f.Open(&env)->Rollup(Day(1)).ok());
  REQUIRE(fs::exists(f.root() + "/archive/archive/ROLLUP.journal"));

  auto ro = f.Open(nullptr, true);
  CHECK(ro->Load(Day(1))->metadata["staged_entries"] == 3);
  auto v = ro->Verify();
  INFO(Describe(*v));
  CHECK(v->ok());
  CHECK(fs::exists(f.root() + "/archive/archive/ROLLUP.journal"));  // read-only: untouched

  auto rw = f.Open();
  CHECK_FALSE(fs::exists(f.root() + "/archive/archive/ROLLUP.journal"));
  for (const auto& [name, bytes] : f.Snapshot()) CHECK_FALSE(name.ends_with(".tmp"));
  CHECK(rw->Load(Day(1))->metadata["staged_entries"] == 3);
  CHECK(rw->Verify()->ok());
}

}  // namespace archive_crash_test
