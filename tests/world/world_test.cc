// WorldModel end to end on files: extraction through surprise to pages,
// graph, scores and the ledger; MEMORY.md; entity decay with given dates;
// surprise in llm mode against a local chat-completions server.
#include "world/world.h"

#include <stdlib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/http_server.h"
#include "world/day_input.h"
#include "state/test_util.h"

// This file's own namespace: test programs compile in unity batches.
namespace world_test {

using namespace limbic;
using namespace limbic::world;
using nlohmann::json;
using Dir = limbic::testing::ScratchDir;
using limbic::testing::Slurp;

namespace {

size_t CountLines(const std::string& path) {
  std::string text = Slurp(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

ExtractInput Text(const std::string& date, const std::string& text, const std::string& source = "") {
  ExtractInput in;
  in.date = date;
  in.source = source.empty() ? "test:" + date : source;
  in.text = text;
  return in;
}

std::unique_ptr<WorldModel> Open(const Dir& dir, WorldOptions options = {}) {
  auto w = WorldModel::Open(dir / "memory", std::move(options), nullptr);
  REQUIRE(w.ok());
  return std::move(*w);
}

double ScoreOf(const json& scores, const std::string& needle) {
  for (const json& s : scores["scores"])
    if (s["text"].get<std::string>().find(needle) != std::string::npos) return s["score"].get<double>();
  FAIL("no score for " << needle);
  return -1;
}

}  // namespace

TEST_CASE("a novel event scores higher than a repeated one", "[world]") {
  Dir dir;
  auto w = Open(dir);
  REQUIRE(w->Extract(Text("2026-03-01", "- Met with Alice Chen about acme/billing.\n")).ok());
  auto day2 = w->Extract(Text("2026-03-02",
                              "- Met with Alice Chen about acme/billing.\n"
                              "- Zara Okonkwo joined Initech Labs to lead Kubernetes work.\n"));
  REQUIRE(day2.ok());
  auto scores = w->Surprise("2026-03-02");
  REQUIRE(scores.ok());
  double repeated = ScoreOf(*scores, "Alice Chen");
  double novel = ScoreOf(*scores, "Zara Okonkwo");
  CHECK(repeated < 0.2);
  CHECK(novel > 0.5);
  CHECK(novel > repeated);
  // The first day knew nothing: its event was wholly new.
  auto first = w->Surprise("2026-03-01");
  REQUIRE(first.ok());
  CHECK(ScoreOf(*first, "Alice Chen") > 0.9);
  // Highest first, across all dates.
  auto all = w->Surprise("");
  REQUIRE(all.ok());
  REQUIRE((*all)["scores"].size() == 3);
  CHECK((*all)["scores"][0]["score"].get<double>() >= (*all)["scores"][2]["score"].get<double>());
  CHECK_FALSE(w->Surprise("2026-02-30").ok());
}

TEST_CASE("an unchanged input is skipped and a forced one adds no duplicates", "[world]") {
  Dir dir;
  auto w = Open(dir);
  ExtractInput in = Text("2026-03-01", "- Bob Stone reviewed acme/gateway with Alice Chen.\n", "daily.md");
  auto first = w->Extract(in);
  REQUIRE(first.ok());
  CHECK_FALSE((*first)["skipped"].get<bool>());
  CHECK((*first)["pages_created"].get<size_t>() >= 3);
  std::string scores = Slurp(dir / "memory/surprise-scores.jsonl");
  std::string graph = Slurp(dir / "memory/graph.jsonl");
  auto again = w->Extract(in);
  REQUIRE(again.ok());
  CHECK((*again)["skipped"].get<bool>());
  auto forced = w->Extract(in, true);
  REQUIRE(forced.ok());
  CHECK_FALSE((*forced)["skipped"].get<bool>());
  CHECK((*forced)["lines_added"] == 0);
  CHECK((*forced)["graph_added"] == 0);
  CHECK((*forced)["scored"] == 0);
  CHECK(Slurp(dir / "memory/surprise-scores.jsonl") == scores);
  CHECK(Slurp(dir / "memory/graph.jsonl") == graph);
  CHECK(CountLines(dir / "memory/extracted.jsonl") == 2);
  // A new WorldModel reads the ledger and the scores back.
  auto reopened = Open(dir);
  auto third = reopened->Extract(in);
  REQUIRE(third.ok());
  CHECK((*third)["skipped"].get<bool>());
}

TEST_CASE("an extraction told to stop writes nothing of its input, and the next one does it all",
          "[world]") {
  Dir dir;
  auto w = Open(dir);
  std::atomic<bool> stop{true};
  w->set_stop(&stop);
  ExtractInput in = Text("2026-03-01", "- Bob Stone reviewed acme/gateway with Alice Chen.\n", "daily.md");
  auto stopped = w->Extract(in);
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.status().code() == Status::Code::kUnavailable);
  CHECK_THAT(stopped.status().message(), Catch::Contains("nothing of it written"));
  CHECK(CountLines(dir / "memory/extracted.jsonl") == 0);
  CHECK(Slurp(dir / "memory/surprise-scores.jsonl").empty());
  stop = false;
  auto done = w->Extract(in);
  REQUIRE(done.ok());
  CHECK_FALSE((*done)["skipped"].get<bool>());
  CHECK((*done)["scored"].get<size_t>() > 0);
  CHECK(CountLines(dir / "memory/extracted.jsonl") == 1);
}

TEST_CASE("consolidate files surprising events by section without duplicates and keeps hand edits", "[world]") {
  Dir dir;
  auto w = Open(dir);
  REQUIRE(w->Extract(Text("2026-03-01",
                          "- Alice Chen joined Acme Corp as CTO.\n"
                          "- Deployed acme/billing using Terraform today.\n"))
              .ok());
  auto c = w->Consolidate("2026-03-02");
  REQUIRE(c.ok());
  CHECK((*c)["added"] == 2);
  std::string md = Slurp(dir / "memory/MEMORY.md");
  CHECK_THAT(md, Catch::StartsWith("# MEMORY\n"));
  CHECK_THAT(md, Catch::Contains("## People\n\n- 2026-03-01: Alice Chen joined Acme Corp as CTO. (surprise "));
  CHECK_THAT(md, Catch::Contains("## Projects\n\n- 2026-03-01: Deployed acme/billing using Terraform today."));
  // A note of one's own, then the same again: nothing added, the note kept.
  std::ofstream(dir / "memory/MEMORY.md", std::ios::app) << "\nMy own note: ask Alice about the budget.\n";
  auto again = w->Consolidate("2026-03-02");
  REQUIRE(again.ok());
  CHECK((*again)["added"] == 0);
  CHECK_THAT(Slurp(dir / "memory/MEMORY.md"), Catch::Contains("My own note: ask Alice about the budget."));
  // Below the threshold: a repeated event stays out.
  REQUIRE(w->Extract(Text("2026-03-03", "- Alice Chen joined Acme Corp as CTO.\n- Alice Chen met Bob Stone.\n")).ok());
  auto third = w->Consolidate("2026-03-04");
  REQUIRE(third.ok());
  std::string after = Slurp(dir / "memory/MEMORY.md");
  size_t first_at = after.find("Alice Chen joined Acme Corp");
  CHECK(after.find("Alice Chen joined Acme Corp", first_at + 1) == std::string::npos);
  CHECK_THAT(after, Catch::Contains("Alice Chen met Bob Stone"));
  CHECK_THAT(after, Catch::Contains("My own note"));
}

TEST_CASE("entities not referenced for decay_days are archived and come back when referenced", "[world]") {
  Dir dir;
  WorldOptions o;
  o.decay_days = 30;
  o.protected_types = {EntityType::kCompany};
  auto w = Open(dir, o);
  REQUIRE(w->Extract(Text("2026-01-05", "- Alice Chen joined Acme Corp last week.\n")).ok());
  auto fresh = w->Entities(std::nullopt, true, "2026-01-20");
  REQUIRE(fresh.ok());
  CHECK((*fresh)["entities"].empty());
  auto stale = w->Entities(EntityType::kPerson, true, "2026-02-20");
  REQUIRE(stale.ok());
  REQUIRE((*stale)["entities"].size() == 1);
  CHECK((*stale)["entities"][0]["name"] == "Alice Chen");

  auto c = w->Consolidate("2026-02-20");
  REQUIRE(c.ok());
  CHECK((*c)["decayed"] == json::array({"Alice Chen"}));  // Acme Corp is protected
  CHECK(std::filesystem::exists(dir / "memory/entities/archive/Alice Chen.md"));
  CHECK_FALSE(std::filesystem::exists(dir / "memory/entities/Alice Chen.md"));
  CHECK(std::filesystem::exists(dir / "memory/entities/Acme Corp.md"));
  // Still known while archived: no novelty for her.
  auto listed = w->Entities(std::nullopt, false, "2026-02-20");
  REQUIRE(listed.ok());
  bool archived = false;
  for (const json& e : (*listed)["entities"])
    if (e["name"] == "Alice Chen") archived = e["archived"].get<bool>();
  CHECK(archived);

  auto back = w->Extract(Text("2026-02-21", "- Alice Chen presented the roadmap to the board.\n"));
  REQUIRE(back.ok());
  CHECK((*back)["restored"] == 1);
  CHECK(std::filesystem::exists(dir / "memory/entities/Alice Chen.md"));
  std::string page = Slurp(dir / "memory/entities/Alice Chen.md");
  CHECK_THAT(page, Catch::Contains("### [[2026-01-05]]"));
  CHECK_THAT(page, Catch::Contains("### [[2026-02-21]]"));
}

TEST_CASE("names with no safe file name are left out and said so", "[world]") {
  Dir dir;
  auto w = Open(dir);
  auto r = w->Extract(Text("2026-03-01", "- Read about [[..]] and [[../../etc/passwd]] with Alice Chen today.\n"));
  REQUIRE(r.ok());
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    std::string p = std::filesystem::weakly_canonical(entry.path()).string();
    CHECK(p.rfind(std::filesystem::weakly_canonical(dir.path()).string(), 0) == 0);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "etc"));
  CHECK(std::filesystem::exists(dir / "memory/entities/Alice Chen.md"));
}

TEST_CASE("a daily-log file takes its date from its name and bad files are named", "[world]") {
  Dir dir;
  std::ofstream(dir / "2026-04-02-notes.md") << "- Met with Alice Chen.\n";
  auto in = FileInput(dir / "2026-04-02-notes.md", "", 1 << 20);
  REQUIRE(in.ok());
  CHECK(in->date == "2026-04-02");
  CHECK(in->source == dir / "2026-04-02-notes.md");
  std::ofstream(dir / "notes.md") << "- Met with Alice Chen.\n";
  auto undated = FileInput(dir / "notes.md", "", 1 << 20);
  REQUIRE_FALSE(undated.ok());
  CHECK_THAT(undated.status().message(), Catch::Contains("--date"));
  CHECK(FileInput(dir / "notes.md", "2026-04-03", 1 << 20).ok());
  CHECK_THAT(FileInput(dir / "notes.md", "2026-13-01", 1 << 20).status().message(), Catch::Contains("2026-13-01"));
  CHECK_THAT(FileInput(dir / "missing.md", "", 1 << 20).status().message(), Catch::Contains("missing.md"));
  CHECK_THAT(FileInput(dir.path(), "2026-04-03", 1 << 20).status().message(), Catch::Contains("directory"));
  auto big = FileInput(dir / "notes.md", "2026-04-03", 4);
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Catch::Contains("over the limit"));
  std::ofstream(dir / "2026-04-04.md", std::ios::binary) << "- Met \xff\xfe with Alice Chen.\n";
  auto junk = FileInput(dir / "2026-04-04.md", "", 1 << 20);
  REQUIRE(junk.ok());
  CHECK_THAT(junk->text, Catch::Contains("\xEF\xBF\xBD"));
}

TEST_CASE("llm surprise measures events against the predicted day and falls back when it cannot", "[world]") {
  Dir dir;
  testing::TestHttpServer server([](const testing::TestRequest& req) -> std::optional<std::string> {
    json body = json::parse(req.body, nullptr, false);
    std::string content = R"({"predictions": ["Alice Chen joined Acme Corp as CTO."]})";
    json answer = {{"choices", json::array({{{"message", {{"role", "assistant"}, {"content", content}}}}})}};
    CHECK(body["model"] == "m");
    return testing::HttpAnswer(200, answer.dump());
  });
  WorldOptions o;
  o.surprise.mode = "llm";
  o.surprise.llm.url = "http://127.0.0.1:" + std::to_string(server.port());
  o.surprise.llm.model = "m";
  auto w = Open(dir, o);
  auto r = w->Extract(Text("2026-03-01", "- Alice Chen joined Acme Corp as CTO.\n- Bob Stone wrote a novel about Mars.\n"));
  REQUIRE(r.ok());
  auto scores = w->Surprise("2026-03-01");
  REQUIRE(scores.ok());
  for (const json& s : (*scores)["scores"]) {
    CHECK(s["mode"] == "llm");
    if (s["text"].get<std::string>().find("Alice") != std::string::npos) CHECK(s["text_novelty"].get<double>() < 0.01);
    else CHECK(s["text_novelty"].get<double>() > 0.5);
  }
  // The prompt carried MEMORY.md (empty yet) and the date.
  REQUIRE(server.requests().size() == 1);
  CHECK_THAT(server.requests()[0].body, Catch::Contains("2026-03-01"));

  Dir dir2;
  o.surprise.llm.url = "http://127.0.0.1:9";  // nothing listens
  auto down = Open(dir2, o);
  auto fallback = down->Extract(Text("2026-03-01", "- Alice Chen joined Acme Corp as CTO.\n"));
  REQUIRE(fallback.ok());
  CHECK_THAT((*fallback)["note"].get<std::string>(), Catch::Contains("heuristic scores used"));
  auto plain = down->Surprise("2026-03-01");
  REQUIRE(plain.ok());
  CHECK((*plain)["scores"][0]["mode"] == "heuristic");
}

TEST_CASE("two processes extracting into one memory dir score each event once", "[world]") {
  Dir dir;
  auto runtime = Open(dir);
  auto cli = Open(dir);  // opened before anything was scored, like a CLI beside limbic run
  REQUIRE(cli->Extract(Text("2026-03-01", "- Alice Chen joined Acme Corp last week.\n", "day:2026-03-01")).ok());
  // The runtime's input of the same day has one more line: a new digest.
  auto r = runtime->Extract(Text("2026-03-01",
                                 "- Alice Chen joined Acme Corp last week.\n"
                                 "- Bob Stone reviewed acme/gateway today.\n",
                                 "day:2026-03-01"));
  REQUIRE(r.ok());
  CHECK((*r)["scored"] == 1);
  CHECK(CountLines(dir / "memory/surprise-scores.jsonl") == 2);
}

TEST_CASE("an extraction that cannot be written scores again as new next time", "[world]") {
  Dir dir;
  auto w = Open(dir);
  std::filesystem::create_directories(dir / "memory/entities");
  {
    std::ofstream big(dir / "memory/entities/Alice Chen.md");
    big << "# Alice Chen\n**Type:** person\n" << std::string(17 << 20, 'x') << "\n";
  }
  auto failed = w->Extract(Text("2026-03-01", "- Alice Chen joined Acme Corp last week.\n"));
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().message(), Catch::Contains("Alice Chen.md"));
  CHECK_FALSE(std::filesystem::exists(dir / "memory/surprise-scores.jsonl"));
  std::filesystem::remove(dir / "memory/entities/Alice Chen.md");
  auto again = w->Extract(Text("2026-03-01", "- Alice Chen joined Acme Corp last week.\n"));
  REQUIRE(again.ok());
  auto scores = w->Surprise("2026-03-01");
  REQUIRE(scores.ok());
  REQUIRE((*scores)["scores"].size() == 1);
  CHECK((*scores)["scores"][0]["text_novelty"].get<double>() > 0.9);
}

TEST_CASE("an entity referenced without an event still gets a dated line", "[world]") {
  Dir dir;
  auto w = Open(dir);
  ExtractInput in = Text("2026-03-05", "- Met Bob.\n", "notes.md");
  REQUIRE(w->Extract(in).ok());
  std::string page = Slurp(dir / "memory/entities/Bob.md");
  CHECK_THAT(page, Catch::Contains("### [[2026-03-05]]\n- mentioned in notes.md"));
}

}  // namespace world_test
