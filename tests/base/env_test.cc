// Env: the state dir's lock and a shared file's turn (LockFile), atomic
// replacement at both durabilities (WriteFileAtomic), and the fault env
// that turns crashes and I/O errors into unit tests.
#include "base/env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "base/fault_env.h"
#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace env_test {

using namespace limbic;
using limbic::testing::ScratchDir;
using limbic::testing::Slurp;

TEST_CASE("the state dir lock names the holder's pid", "[env]") {
  ScratchDir dir;
  auto first = Env::Default()->LockFile(dir / "limbic.lock", LockWait::kNo);
  REQUIRE(first.ok());
  CHECK(Slurp(dir / "limbic.lock") == std::to_string(getpid()) + "\n");
  auto second = Env::Default()->LockFile(dir / "limbic.lock", LockWait::kNo);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().IsBusy());
  CHECK_THAT(second.status().message(), Catch::Contains("pid " + std::to_string(getpid())));
  first->reset();
  CHECK(Env::Default()->LockFile(dir / "limbic.lock", LockWait::kNo).ok());
}

TEST_CASE("a waiting lock waits for the holder and leaves the file's contents alone", "[env]") {
  ScratchDir dir;
  const std::string path = dir / "shared.lock";
  auto held = Env::Default()->LockFile(path, LockWait::kYes);
  REQUIRE(held.ok());
  REQUIRE((*held)->Rewrite("00000000000000000007\n").ok());
  // Another holder in this process excludes it too (flock is per open file).
  CHECK(Env::Default()->LockFile(path, LockWait::kNo).status().IsBusy());

  auto waiter = std::async(std::launch::async, [&] { return Env::Default()->LockFile(path, LockWait::kYes); });
  CHECK(waiter.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
  held->reset();
  REQUIRE(waiter.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  auto second = waiter.get();
  REQUIRE(second.ok());
  CHECK(Slurp(path) == "00000000000000000007\n");  // no pid written over it
  REQUIRE((*second)->Rewrite("8\n").ok());          // shorter: the rest is gone
  CHECK(Slurp(path) == "8\n");
}

TEST_CASE("a lock knows when another file was renamed over its path", "[env]") {
  ScratchDir dir;
  const std::string path = dir / "graph.jsonl";
  auto lock = Env::Default()->LockFile(path, LockWait::kYes);
  REQUIRE(lock.ok());
  CHECK(*(*lock)->Names(path));
  REQUIRE(Env::Default()->WriteFileAtomic(path, "rebuilt\n", FileDurability::kDerived).ok());
  CHECK_FALSE(*(*lock)->Names(path));  // the lock guards the old file now
  REQUIRE(Env::Default()->RemoveFile(path).ok());
  CHECK_FALSE(*(*lock)->Names(path));
}

TEST_CASE("a waiting lock on a path that cannot be opened names it", "[env]") {
  ScratchDir dir;
  auto lock = Env::Default()->LockFile(dir / "missing/dir/x.lock", LockWait::kYes);
  REQUIRE_FALSE(lock.ok());
  CHECK_THAT(lock.status().message(), Catch::Contains("missing/dir/x.lock"));
}

TEST_CASE("ReadSmallFile reads a small regular file, and refuses whatever else is in its place",
          "[env]") {
  ScratchDir dir;
  const std::string file = dir / "small.json";
  { std::ofstream(file) << "{\"a\":1}\n"; }
  auto read = ReadSmallFile(file, 64);
  REQUIRE(read.ok());
  CHECK(*read == "{\"a\":1}\n");
  // A symlink to a regular file is read through.
  std::filesystem::create_symlink(file, dir / "link.json");
  REQUIRE(ReadSmallFile(dir / "link.json", 64).ok());
  // Exactly at the bound, and one byte past it.
  CHECK(ReadSmallFile(file, 8).ok());
  auto big = ReadSmallFile(file, 7);
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Catch::Contains(file + ": 8 bytes, more than 7"));
  // Never read: it would never end, or block forever, or is not a file.
  std::filesystem::create_symlink("/dev/zero", dir / "zero.json");
  REQUIRE(::mkfifo((dir / "fifo.json").c_str(), 0644) == 0);
  for (const auto& [path, what] :
       std::vector<std::pair<std::string, std::string>>{{dir / "zero.json", "a character device"},
                                                        {dir / "fifo.json", "a FIFO"},
                                                        {dir.path(), "a directory"}}) {
    auto r = ReadSmallFile(path, 1 << 20);
    INFO(path);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains(path + ": " + what + ", not a regular file"));
  }
  auto missing = ReadSmallFile(dir / "missing.json", 64);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains(dir / "missing.json"));
}

TEST_CASE("WriteFileAtomic replaces a file through a hidden temp file at both durabilities",
          "[env]") {
  ScratchDir dir;
  CHECK(TempPathFor(dir / "page.md") == dir / ".page.md.tmp");
  CHECK(TempPathFor("page.md") == ".page.md.tmp");
  for (FileDurability d : {FileDurability::kSynced, FileDurability::kDerived}) {
    const std::string path = dir / (d == FileDurability::kSynced ? "synced" : "derived");
    REQUIRE(Env::Default()->WriteFileAtomic(path, "first\n", d).ok());  // no old file
    CHECK(Slurp(path) == "first\n");
    REQUIRE(Env::Default()->WriteFileAtomic(path, "second, longer\n", d).ok());
    CHECK(Slurp(path) == "second, longer\n");
    CHECK_FALSE(Env::Default()->FileExists(TempPathFor(path)));
  }
  // Into a directory that does not exist: an error naming the temp file.
  Status s = Env::Default()->WriteFileAtomic(dir / "no/such", "x", FileDurability::kDerived);
  CHECK(s.IsIOError());
  CHECK_THAT(s.message(), Catch::Contains("no/.such.tmp"));
}

TEST_CASE("injected faults reach WriteFileAtomic and leave the old file whole", "[env]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  const std::string path = dir / "page.md";
  REQUIRE(env.WriteFileAtomic(path, "old\n", FileDurability::kDerived).ok());

  env.SetWriteError(true);
  CHECK(env.WriteFileAtomic(path, "new\n", FileDurability::kDerived).IsIOError());
  env.SetWriteError(false);
  env.SetSyncError(true);
  CHECK(env.WriteFileAtomic(path, "new\n", FileDurability::kSynced).IsIOError());
  CHECK(env.WriteFileAtomic(path, "derived: no sync to fail\n", FileDurability::kDerived).ok());
  env.SetSyncError(false);
  env.FailRenameAfter(0);
  Status s = env.WriteFileAtomic(path, "new\n", FileDurability::kDerived);
  CHECK(s.IsIOError());
  CHECK_THAT(s.message(), Catch::Contains(".page.md.tmp"));
  CHECK(Slurp(path) == "derived: no sync to fail\n");
  CHECK_FALSE(env.FileExists(TempPathFor(path)));
}

TEST_CASE("a crash may empty a derived file, never a synced one", "[env]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  REQUIRE(env.WriteFileAtomic(dir / "synced", "kept\n", FileDurability::kSynced).ok());
  REQUIRE(env.WriteFileAtomic(dir / "derived", "maybe\n", FileDurability::kDerived).ok());
  REQUIRE(env.SimulateCrash().ok());
  CHECK(Slurp(dir / "synced") == "kept\n");
  CHECK(Slurp(dir / "derived").empty());
}

TEST_CASE("the fault env loses exactly the unsynced bytes", "[env]") {
  ScratchDir dir;
  FaultInjectionEnv env(Env::Default());
  auto f = env.NewAppendableFile(dir / "f");
  REQUIRE(f.ok());
  REQUIRE((*f)->Append("durable.").ok());
  REQUIRE((*f)->Sync().ok());
  REQUIRE((*f)->Append("volatile").ok());
  REQUIRE(env.SimulateCrash(3).ok());
  CHECK(*Env::Default()->ReadFileToString(dir / "f") == "durable.vol");
  env.SetWriteError(true);
  CHECK((*f)->Append("x").IsIOError());
  CHECK(env.append_calls() == 3);
}

}  // namespace env_test
