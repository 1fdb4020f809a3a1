// Extractors: an ExtractInput in, entities, triplets and dated events out
// (docs/world.md "Extraction").
//
// heuristic (the default; no network, deterministic)
//   The input's date must be YYYY-MM-DD (else InvalidArgument naming the
//   source). Events come out in input order: the structured events' first
//   (in seq order), then the text's (in line order).
//   From structured events (ExtractInput::events), each dated by its ts:
//     percept_arrived: its source -> tool (spelled as the known tool when
//       it is one: "github" -> "GitHub"); data.user / data.author /
//       data.from / data.sender (a string, or an object's "login"/"name";
//       "Name <address>" loses the address) -> person; data.repo /
//       data.repository (a string, or an object's "full_name"/"name") ->
//       project; data.channel (without a leading '#') -> concept;
//       data.company / data.org -> company. Each percept is an event of
//       its day: its text (the event's `text`, else data.text, else
//       "source/percept_type") with those entities and the entities found
//       in the text (a percept's text gives no line events of its own).
//       Triplets: user —<verb>→ object, where object is the issue
//       ("repo#N" from data.number / data.issue / data.pr, a number, a
//       string of digits or an object's "number", with the repo; not an
//       entity itself) or else the repo, and verb is data.action when it
//       is a word (letters and '_', lower-cased), else the last word of
//       the percept type split on '_', '.', '-', '/' ("issue_opened" ->
//       "opened"); user —mentioned→ X for every entity found in the
//       percept's text; user —posted_in→ channel. No user, no triplets.
//     thread_created: an event "started: <goal>" naming the entities
//       found in the goal's text (a goal is a sentence about work, not a
//       project's name).
//     thread_completed, and thread_updated to status "complete": an event
//       "completed: <goal or id>: <outcome>" (": <outcome>" only when there
//       is one: `outcome`, or state.outcome of a thread_updated), naming
//       the goal's entities when the thread was created in the same input.
//   From text (ExtractInput::text and the percepts' texts), line by line
//   (blockquote marks, Markdown list and task markers, heading marks,
//   emphasis and backticks stripped; code fences skipped, an unclosed one
//   to the end; a heading with a YYYY-MM-DD word in it sets the date of
//   what follows; a sentence ends at a word ending in . ! ? : or ;):
//     [[wikilink]]      the link's target (before any '|'), typed by the
//                        rules for capitalised names below, else concept;
//                        an unclosed "[[" is punctuation
//     @handle           person (the handle without '@')
//     #tag              concept (letters, digits, '-', '_'; not "#123")
//     URL               http(s): github.com/gitlab.com OWNER/REPO -> project
//                        "OWNER/REPO" (not the forges' own pages such as
//                        github.com/orgs/...); any other host -> tool named
//                        by the host without "www." (not localhost or an
//                        IP address)
//     owner/repo        a bare "word/word" with letters, digits, '-', '_',
//                        '.' on both sides (not a date, not a path with
//                        more than one '/') -> project. Each side needs a
//                        letter and two characters; prose and paths are
//                        not repos: a side that is a stop word or a word
//                        like read/write, client/server, src/, docs/;
//                        both sides in capitals (CI/CD); a repo side with
//                        a file extension (src/main.py; ".js" is allowed:
//                        vercel/next.js)
//     Capitalised names runs of capitalised words (joined by single spaces,
//                        allowing "of", "de", "van", "von" inside; no
//                        punctuation between them), not a lone stop word
//                        (sentence starters, pronouns, days, months, "I",
//                        "The", "Q3", ...); stop words and roles (CTO, VP,
//                        director, ...: extract_names.cc) at either end of
//                        a run are dropped ("Met Alice Chen" -> "Alice
//                        Chen"), and a run that starts with roles and "of"
//                        is a title, not a name ("VP of Engineering"); a
//                        run that is a known tool is kept whole ("GitHub
//                        Actions"). Runs of more than six words (titles)
//                        and of several words in capitals are not names.
//                        A lone capitalised word at the start of a
//                        sentence, or a lone acronym (SRE, TLS), counts
//                        only when a rule below other than concept types
//                        it; a sentence's first word also counts when the
//                        same word appears capitalised mid-sentence in the
//                        input.
//   Types of capitalised names (and wikilinks): first the name's own form,
//   then its context (so "good at Python" is a tool, not a company;
//   "follows" skips articles: "at the Globex office"), then its shape; the
//   first rule that applies:
//     form     company: two words or more, the last Inc, Inc., Corp,
//              Corporation, Ltd, LLC, GmbH, AG, SA, Labs, Technologies,
//              Systems, Software, Group. tool: a known tool (a built-in
//              list: languages, databases, cloud and developer services,
//              e.g. Python, Rust, PostgreSQL, Postgres, Redis, Kafka,
//              Docker, Kubernetes, Linux, GitHub, GitLab, Slack, Jira, AWS,
//              S3, Terraform, RocksDB, ...; not words that are everyday
//              English, like Go). project: two words or more, the first
//              Project.
//     person   the name follows a title: Mr, Mrs, Ms, Dr, Prof, Sir
//     project  the name is followed by project, migration, launch, rollout,
//              roadmap, release, workstream, design, work, ... ("the Orion
//              launch"), or is X of a "Project X" seen in the input
//     company  the name follows "at" (so "works at"), "joined", or "for"
//              after works/work/worked/working ("works for"; a bare "for"
//              is too common: "a fix for Atlas")
//     tool     the name follows "uses", "using", "via"
//     project  the name follows "project", "repo", "on" (as in "working on")
//     person   followed by "said", "says", "asked", "wrote", "thinks",
//              "wants", "replied", "mentioned", "agreed"; or follows
//              "with", "met", "told", "asked", "thanks" (or "thanks to"),
//              "by", "from", "cc", "ping", "email", "send", "remind",
//              "invite"
//     person   (shape) a common given name alone (a built-in list of
//              given names from many languages: Priya, Tomás, Kofi, ...),
//              or two or three name words (a capital, then lower case)
//              none of which is a known tool or company word and, unless
//              the first is a given name, none an everyday word ("Weekly
//              Review" is not someone)
//     concept  anything else
//   Links: the words between two neighbouring entities of a sentence
//   (lower-cased; at most 48 bytes) may type them and state a triplet.
//   A rule retypes an entity only when it is surer than what typed it:
//   form (company words, Project, handles, URLs, repos, tags) > a link
//   below > the list of known tools > context > shape > nothing.
//     "A from B", A a person: B is a company (even a known tool's name:
//       "Carlos from Stripe") and A works_at B.
//     "A, the new PM at B, ...": B is a company, A works_at B, and a verb
//       after the aside's closing comma has A for subject ("..., owns C").
//     "A <verb> B": the verbs works at / work at / worked at / works for
//       / joined / founded / co-founded / leads / led / maintains / uses /
//       used / is using / created / owns / met / met with / reviewed /
//       fixed / released / deployed / migrated / acquired / hired /
//       mentioned / depends on / is part of, after ", who" or adverbs
//       (now, also, still, ...) and before an article or possessive
//       ("leads the Atlas project"); the predicate is the verb's base,
//       '_' for spaces: works_at, works_for, joined, founded, leads,
//       maintains, uses, created, owns, met, reviewed, fixed, released,
//       deployed, migrated, acquired, hired, mentioned, depends_on,
//       is_part_of. Verbs type their ends: works at / works for / joined
//       / founded make B a company and an untyped A a person (as
//       context); acquired makes both companies (as a link), hired A a
//       company and B a person; met two people; leads / maintains / owns
//       make an untyped A a person and an untyped B a project, uses an
//       untyped B a tool.
//     "A moved from B to C" (or switched from): A works_at C when A is a
//       person and C a company.
//     "from A to B": one kind of thing; the one typed by its form, a
//       link or the list of tools gives its type to the other.
//     "A and B", "A, B and C", "A or B": names written with a capital
//       that nothing typed take the type the others agree on; a triplet
//       of A (as subject or object) is also one of each entity of the
//       same type coordinated with A ("uses Rust and ClickHouse").
//   "A is a|an <words>" adds the fact "is a|an <words>" to A (the words up
//   to the end of the clause, at most 12).
//   Events: every text line with at least one entity and three words is an
//   event of its date with those entities (the line as cleaned above,
//   white space collapsed, cut to 500 bytes).
//   Every entity is named in at most one Entity, by the first spelling
//   seen; when its mentions in different places of the input disagree on
//   its type, the most specific wins (person, company, project, tool,
//   concept in that order of preference, structured fields over text). Names longer than 100 bytes,
//   not UTF-8 or holding control characters are not names. Triplets are kept once (by the names'
//   NameKey, predicate and date).
//
// llm (any OpenAI-compatible chat-completions endpoint, base/chat.h)
//   Sends the input's text and a compact rendering of its events, asking
//   for JSON {"entities":[{"name","type","facts"?:[..]}],
//   "triplets":[{"subject","predicate","object","date"?}],
//   "events":[{"date"?,"text","entities"?:[..]}]}; the answer is validated
//   (ParseLlmExtraction); on any failure (transport, status, not JSON,
//   schema) it asks once more with the error appended, and after a second
//   failure returns the heuristic extraction with `note` saying why (and
//   logs a warning). The rendered input (text, then one line per event)
//   is cut at max_input_chars bytes on a UTF-8 boundary, and the note of a
//   successful extraction says so; the fallback reads the whole input.
//
// Thread-safety: an Extractor is used by one thread at a time.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

#include "base/chat.h"
#include "world/model.h"

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
  std::string kind = "heuristic";   // heuristic | llm
  ChatSpec llm;                     // for kind llm
  size_t max_input_chars = 200000;  // bytes of the rendered input sent to the model; > 0
};

std::unique_ptr<Extractor> MakeHeuristicExtractor();
// InvalidArgument naming the field for a bad spec.
Result<std::unique_ptr<Extractor>> MakeExtractor(const ExtractorSpec& spec,
                                                 std::shared_ptr<spdlog::logger> log);

// Validates a model's answer (a JSON object as text; a ```json fence around
// it is allowed) and turns it into an Extraction: entities need a non-empty
// name and a known type; triplets three non-empty strings; events a
// non-empty text; dates, when given, YYYY-MM-DD (else `date`). Errors are
// InvalidArgument and name the offending element ("entities[2].type: must
// be one of person, company, project, tool, concept, got \"city\"").
// A missing or null member is absent (an empty list, the default date).
// Names go through CleanName, texts and facts onto one line, predicates to
// lower-case snake_case ("Works At" -> "works_at"); an entity named twice
// (by NameKey) is kept once with the most specific type and all facts;
// repeated triplets are dropped.
Result<Extraction> ParseLlmExtraction(std::string_view answer, const std::string& date);

}  // namespace limbic::world
