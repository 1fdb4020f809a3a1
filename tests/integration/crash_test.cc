// Crash recovery through the real binary: SIGKILL a writer in the middle of
// a write storm, restart, and check that every acknowledged event survived
// and that the state still matches its log.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <signal.h>
#include <thread>

#include "process.h"

// This file's own namespace: test programs compile in unity batches.
namespace crash_test {

using nlohmann::json;
using limbic::testing::Child;
using limbic::testing::Limbic;
using limbic::testing::TempDir;

TEST_CASE("SIGKILL during a write storm loses no acknowledged event", "[crash]") {
  TempDir dir;
  const std::string state = dir / "state";
  std::set<std::string> acked;
  for (int round = 0; round < 3; ++round) {
    Child writer({limbic::testing::LimbicBinary(), "--state", state, "percept", "import", "-"});
    // Feed requests from another thread so the writer never starves.
    std::atomic<bool> stop{false};
    std::thread feeder([&] {
      for (int i = 0; !stop; ++i) {
        std::string batch;
        for (int j = 0; j < 100; ++j)
          batch += R"({"source":"storm","type":"tick","intensity":0.3,"text":"round )" +
                   std::to_string(round) + " n " + std::to_string(i * 100 + j) + "\"}\n";
        if (!writer.Write(batch)) break;
      }
    });
    // Kill after a varying number of acknowledgements.
    const size_t kill_after = 500 + 700 * round;
    std::string line;
    size_t seen = 0;
    while (seen < kill_after && writer.ReadLine(&line)) {
      json ack = json::parse(line);
      acked.insert(ack["id"].get<std::string>());
      ++seen;
    }
    REQUIRE(seen == kill_after);
    CHECK(writer.Kill(SIGKILL) == -SIGKILL);
    stop = true;
    feeder.join();

    // Restart (a read opens it, recovers, and truncates any torn tail).
    auto listed = Limbic({"--state", state, "state", "show", "percepts", "--json"});
    REQUIRE(listed.exit_code == 0);
    std::set<std::string> present;
    for (const json& p : json::parse(listed.out)) present.insert(p["id"].get<std::string>());
    for (const std::string& id : acked) {
      INFO("acknowledged percept " << id << " is missing after SIGKILL (round " << round << ")");
      REQUIRE(present.count(id) == 1);
    }
    auto verify = Limbic({"replay", "--verify", state});
    INFO(verify.out << verify.err);
    CHECK(verify.exit_code == 0);
    auto fsck = Limbic({"--state", state, "fsck"});
    INFO(fsck.out << fsck.err);
    CHECK(fsck.exit_code == 0);
  }
}

}  // namespace crash_test
