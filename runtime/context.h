// What a prompt needs now, within a token budget: the one bundle that GET
// /v1/context, MCP `context` and `limbic memory context` answer
// (docs/api.md "Context").
//
//   {now, budget_tokens, query, arousal, thread, thread_percepts,
//    entities:  [{name, source: "entity:<file>", text, cut?}],
//    memory_md: [{section, source: "MEMORY.md#<section>", text, cut?}],
//    memories:  [{id, kind, text, score, source, subject?, via?}],
//    used_tokens, truncated}
//
// An item costs the tokens of its JSON (state::EstimateTokens: bytes / 4).
// The budget is filled in this order:
//   1. what is happening now: arousal, the focused thread, its percepts,
//      each while it fits;
//   2. of what is left, R: the pages of the entities named (up to 30% of
//      R), then MEMORY.md's sections (up to 20% of R), then the recalled
//      memories in all that remains (so at least half of R), best first,
//      each while it fits. A page or section too big for what is left of
//      its share is cut line by line (world/context.h: a page keeps its
//      head, facts and relations before its timeline, newest dates first;
//      a section its heading and newest lines) and marked cut; a cut
//      text keeps at least two lines or is left out;
//   3. what the memories leave goes back to the pages, then the sections,
//      that were cut or left out, in the same order.
// `truncated` says something was left out or cut. A memory's source is
// recall's (a chunk's "file#N", "archive:DATE") or "memory:<id>".
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace limbic::runtime {

//! What a context bundle is made of.
struct ContextInput {
  nlohmann::json attention;              //!< BuildAttention's view
  std::string query;                     //!< what the memories were recalled for
  std::vector<nlohmann::json> memories;  //!< recall's results, best first
  nlohmann::json world;                  //!< WorldModel::Context's {entities, memory_md}, or null
  size_t budget = 2000;                  //!< tokens
};

//! The bundle (above).
nlohmann::json ContextBundle(const ContextInput& in);

//! The focused thread's text that may name entities: its goal, its state's
//! context and next_step, and the strings in its percepts' data (nested up
//! to 4 levels), one per line, at most 16 KiB. "" without a thread.
std::string FocusText(const nlohmann::json& attention);

}  // namespace limbic::runtime
