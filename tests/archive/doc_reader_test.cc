#include <catch2/catch.hpp>

#include "archive/archive_fixture.h"
#include "archive/doc_files.h"

// This file's own namespace: test programs compile in unity batches.
namespace doc_reader_test {

using namespace limbic;
using namespace limbic::archive;
using namespace limbic::archive::test;

namespace {

// Every double of the links as JSON prints it, so -0.0 and 0.0 differ.
std::string Numbers(const Links& links) {
  std::string out;
  for (const SemanticLink& s : links.semantic) out += json(s.score).dump() + " ";
  for (const SocialLink& s : links.social) out += json(s.delta).dump() + " ";
  return out;
}

}  // namespace

TEST_CASE("DocReader reads what DocFiles::Read reads, and fails with its errors", "[archive]") {
  ScratchDir dir;
  DocFiles files(dir.path(), Env::Default());
  const std::string good = R"({"date":"2026-01-02","content":"## 2026-01-02T01:00:00.000Z\n[user] caf\u00e9 \"q\"",)"
                           R"("hash":"abc","prev_hash":null,"metadata":{"staged_entries":1},)"
                           R"("links":{"temporal":{"prev":"2026-01-01","next":null},)"
                           R"("semantic":[{"target":"2026-01-05","score":0.5123},{"target":"2026-01-07","score":1}],)"
                           R"("social":[{"target":"2026-01-01","direction":"outward","delta":-0.25}]}})";
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  const std::vector<std::string> texts = {
      good,
      "  " + good + "\n",
      edit(R"("prev_hash":null)", R"("prev_hash":"0123")"),
      edit(R"("score":1})", R"("score":-0})"),
      edit(R"("score":1})", R"("score":1e-2})"),
      edit(R"("score":1})", R"("score":123456789012345678901234567890})"),  // past 64 bits
      edit(R"("score":1})", R"("score":18446744073709551615})"),
      edit(R"("delta":-0.25)", R"("delta":-0.0)"),
      edit(R"("hash":"abc",)", R"("hash":"abc","extra":[1,2,{"x":null}],)"),
      edit(R"({"target":"2026-01-05",)", R"({"why":"x","target":"2026-01-05",)"),
      // A key given twice: the last one counts.
      edit(R"("hash":"abc",)", R"("hash":"abc","content":"second",)"),
      edit(R"("hash":"abc",)", R"("hash":"abc","hash":"def",)"),
      edit(R"("next":null)", R"("next":null,"prev":null)"),
      edit(R"("score":0.5123)", R"("score":0.5123,"score":0.7)"),
      edit(R"("semantic":[)", R"("semantic":[],"semantic":[)"),
      // Missing, of the wrong type, not a date, not a direction.
      edit(R"("date":"2026-01-02",)", ""),
      edit(R"("prev_hash":null,)", ""),
      edit(R"("metadata":{"staged_entries":1},)", ""),
      edit(R"("metadata":{"staged_entries":1})", R"("metadata":[])"),
      edit(R"("date":"2026-01-02")", R"("date":"2026-02-30")"),
      edit(R"("date":"2026-01-02")", R"("date":20260102)"),
      edit(R"("hash":"abc")", R"("hash":null)"),
      edit(R"("content":"## 2026)", R"("content":7,"x":"## 2026)"),
      edit(R"("prev":"2026-01-01")", R"("prev":"yesterday")"),
      edit(R"("prev":"2026-01-01",)", ""),
      edit(R"("temporal":{"prev":"2026-01-01","next":null},)", ""),
      edit(R"("score":0.5123)", R"("score":"high")"),
      edit(R"(,"score":0.5123)", ""),
      edit(R"("direction":"outward")", R"("direction":"sideways")"),
      edit(R"("target":"2026-01-01")", R"("target":"2026-13-01")"),
      edit(R"([{"target":"2026-01-05","score":0.5123},)", "[7,"),
      edit(R"("social":[)", R"("social":{"a":[)") + "}",
      // Not JSON, or not an object.
      "",
      "[]",
      "\"text\"",
      good.substr(0, good.size() / 2),
      edit(R"(caf\u00e9)", "caf\xff"),
      edit(R"("score":1})", R"("score":01})"),
      good + "{}",
  };
  for (size_t i = 0; i < texts.size(); ++i) Spit(dir.path() + "/" + std::to_string(i) + ".json", texts[i]);

  // One reader for all of them in turn, as Verify's threads read: its
  // buffers carry over from each file to the next.
  DocReader reader(&files);
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string path = dir.path() + "/" + std::to_string(i) + ".json";
      INFO("text " << i << ": " << texts[i]);
      uint64_t want_bytes = 0, got_bytes = 0;
      auto want = files.Read(path, &want_bytes);
      auto got = reader.Read(path, &got_bytes);
      CHECK(got_bytes == want_bytes);
      CHECK(got.ok() == want.ok());
      if (!want.ok() || !got.ok()) {
        CHECK(got.status().ToString() == want.status().ToString());
        continue;
      }
      CHECK(got->date == want->date);
      CHECK(got->content == want->content);
      CHECK(got->hash == want->hash);
      CHECK(got->prev_hash == want->prev_hash);
      CHECK(got->links == want->links);
      CHECK(Numbers(got->links) == Numbers(want->links));
    }
  }
  CHECK(reader.Read(dir.path() + "/missing.json", nullptr).status().ToString() ==
        files.Read(dir.path() + "/missing.json").status().ToString());
}

}  // namespace doc_reader_test
