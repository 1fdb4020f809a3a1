// Extractors: an ExtractInput in, entities, triplets and dated events out
// (docs/world.md "Extraction").
//
// heuristic (the default; no network, deterministic)
//   From structured events (ExtractInput::events):
//     percept_arrived: its source -> tool; data.user / data.author /
//       data.from / data.sender (a string) -> person; data.repo /
//       data.repository (a string, or an object's "full_name"/"name") ->
//       project; data.channel -> concept; data.company / data.org ->
//       company. Each percept is an event of its day: its text (data.text,
//       else "source/type") with those entities and the entities found in
//       the text. Triplets: user —<verb>→ object, where object is the issue
//       ("repo#N" from data.number / data.issue / data.pr, with the repo)
//       or else the repo, and verb is data.action when it is a word, else
//       the last word of the percept type split on '_', '.', '-', '/'
//       ("issue_opened" -> "opened"); user —mentioned→ X for every entity
//       found in the percept's text; user —posted_in→ channel.
//     thread_created: its goal -> project (the goal's first 60 characters,
//       cut at a word boundary); an event "started: <goal>".
//     thread_completed / thread_updated to complete with an outcome: an
//       event "completed: <goal or id>: <outcome>".
//   From text (ExtractInput::text and the percepts' texts), line by line
//   (Markdown list markers, heading marks and emphasis stripped; code
//   fences skipped; a heading "YYYY-MM-DD" sets the date of what follows):
//     [[wikilink]]      the link's target (before any '|'), typed by the
//                        rules for capitalised names below, else concept
//     @handle           person (the handle without '@')
//     #tag              concept (letters, digits, '-', '_'; not "#123")
//     URL               http(s): github.com/gitlab.com OWNER/REPO -> project
//                        "OWNER/REPO"; any other host -> tool named by the
//                        host without "www."
//     owner/repo        a bare "word/word" with letters, digits, '-', '_',
//                        '.' on both sides (not a date, not a path with
//                        more than one '/') -> project
//     Capitalised names runs of capitalised words (joined by single spaces,
//                        allowing "of", "de", "van", "von" inside), not a
//                        lone stop word (sentence starters, pronouns, days,
//                        months, "I", "The", ...). A lone capitalised word
//                        at the start of a sentence counts only when the
//                        same word appears capitalised mid-sentence in the
//                        input, or a context rule below types it.
//   Types of capitalised names, first rule that applies:
//     company  last word Inc, Inc., Corp, Corporation, Ltd, LLC, GmbH, AG,
//              SA, Labs, Technologies, Systems, Software, Group; or the
//              name follows "at", "works at", "joined", "for" (as in "works
//              for")
//     tool     a known tool (a built-in list: languages, databases, cloud
//              and developer services, e.g. Python, Rust, PostgreSQL,
//              Postgres, Redis, Kafka, Docker, Kubernetes, Linux, GitHub,
//              GitLab, Slack, Jira, AWS, S3, Terraform, RocksDB, ...), or
//              the name follows "uses", "using", "via", "in" + a known tool
//     project  first word Project; or the name follows "project", "repo",
//              "on" (as in "working on")
//     person   followed by "said", "says", "asked", "wrote", "thinks",
//              "wants", "replied", "mentioned", "agreed"; or follows
//              "with", "met", "told", "asked", "thanks", "by", "from",
//              "cc"; or two or three capitalised words none of which is a
//              known tool or company word
//     concept  anything else
//   Textual triplets, within one sentence: "A <verb> B" where A and B are
//   entities found in it, A before B, and the words between them are one
//   of: works at / works for / joined / founded / leads / maintains / uses /
//   created / owns / met / reviewed / fixed / released / deployed / migrated
//   / acquired / hired / mentioned / depends on / is part of (the predicate
//   is the phrase with '_' for spaces: "works_at"). "A is a|an <words>" adds
//   the fact "is a <words>" to A.
//   Events: every text line with at least one entity and three words is an
//   event of its date with those entities.
//   Every entity is named in at most one Entity; when rules disagree on a
//   type, the most specific wins (person, company, project, tool, concept
//   in that order of preference, structured fields over text).
//
// llm (any OpenAI-compatible chat-completions endpoint, chat.h)
//   Sends the input's text and a compact rendering of its events, asking
//   for JSON {"entities":[{"name","type","facts"?:[..]}],
//   "triplets":[{"subject","predicate","object","date"?}],
//   "events":[{"date"?,"text","entities"?:[..]}]}; the answer is validated
//   (ParseLlmExtraction); on any failure (transport, status, not JSON,
//   schema) it asks once more with the error appended, and after a second
//   failure returns the heuristic extraction with `note` saying why (and
//   logs a warning). Inputs longer than max_input_chars are cut (and the
//   note says so).
//
// Thread-safety: an Extractor is used by one thread at a time.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

#include "state/memory/world/chat.h"
#include "state/memory/world/model.h"

namespace limbic::world {

class Extractor {
 public:
  virtual ~Extractor() = default;
  virtual std::string_view kind() const = 0;
  // Errors only for inputs that cannot be read at all; the llm extractor
  // falls back rather than fails.
  virtual Result<Extraction> Extract(const ExtractInput& input) = 0;
};

struct ExtractorSpec {
  std::string kind = "heuristic";  // heuristic | llm
  ChatSpec llm;                    // for kind llm
  size_t max_input_chars = 200000;
};

std::unique_ptr<Extractor> MakeHeuristicExtractor();
// InvalidArgument naming the field for a bad spec.
Result<std::unique_ptr<Extractor>> MakeExtractor(const ExtractorSpec& spec,
                                                 std::shared_ptr<spdlog::logger> log);

// Validates a model's answer (a JSON object as text; a ```json fence around
// it is allowed) and turns it into an Extraction: entities need a non-empty
// name and a known type; triplets three non-empty strings; events a
// non-empty text; dates, when given, YYYY-MM-DD (else `date`). Errors name
// the offending element ("entities[2].type: must be one of person, company,
// project, tool, concept, got \"city\"").
Result<Extraction> ParseLlmExtraction(std::string_view answer, const std::string& date);

}  // namespace limbic::world
