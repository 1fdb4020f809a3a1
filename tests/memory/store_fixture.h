// A MemoryStore over a real Engine in a scratch state dir, with an
// injected clock: the fixture of the memory store's tests.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "memory/store.h"
#include "state/engine.h"
#include "state/test_util.h"

namespace limbic::memory::fixture {

using nlohmann::json;

constexpr TimeMs kT0 = 1790000000000;  // 2026-09-21
constexpr TimeMs kHour = 3600000;

struct Fixture {
  testing::ScratchDir dir;
  ManualClock clock{kT0};
  std::unique_ptr<state::Engine> engine;
  std::unique_ptr<MemoryStore> store;

  explicit Fixture(MemoryOptions options = {}) { Reopen(std::move(options)); }
  void Reopen(MemoryOptions options = {}) {
    store.reset();
    engine.reset();
    state::EngineOptions o;
    o.state_dir = dir.path();
    o.clock = &clock;
    auto e = state::Engine::Open(o);
    REQUIRE(e.ok());
    engine = std::move(*e);
    auto s = MemoryStore::Open(*engine, std::move(options), nullptr);
    REQUIRE(s.ok());
    store = std::move(*s);
  }
  // Commits a plan; returns its answer.
  json Commit(Result<MemoryPlan> plan) {
    REQUIRE(plan.ok());
    if (!plan->events.empty()) REQUIRE(engine->Commit(std::move(plan->events)).ok());
    return plan->answer;
  }
  json Fact(const std::string& s, const std::string& r, const std::string& o,
            json extra = json::object()) {
    extra["subject"] = s;
    extra["relation"] = r;
    extra["object"] = o;
    return Commit(store->RememberFact(extra));
  }
  json Episode(const std::string& text, json extra = json::object()) {
    extra["text"] = text;
    return Commit(store->RememberEpisode(extra, clock.Now()));
  }
  json Recall(json req) {
    auto r = ParseRecallRequest(req);
    REQUIRE(r.ok());
    return Commit(store->Recall(*r, clock.Now()));
  }
  json Get(const std::string& id) {
    auto r = store->Get(id, clock.Now());
    REQUIRE(r.ok());
    return *r;
  }
  std::vector<std::string> Ids(const json& recall) {
    std::vector<std::string> ids;
    for (const json& r : recall["results"]) ids.push_back(r["id"]);
    return ids;
  }
};

}  // namespace limbic::memory::fixture
