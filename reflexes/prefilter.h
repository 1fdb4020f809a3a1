// Literal prefilter for reflex patterns (internal to reflexes/engine.cc).
//
// A pattern can only match a text that contains certain literals: RE2's
// FilteredRE2 computes them ("atoms", lowercased) as an AND/OR tree per
// pattern. ExtractAtoms reduces that tree to a condition the engine checks
// with one scan of the text:
//
//   the text, folded (FoldForAtoms), contains every required atom and at
//   least one atom of the pattern.
//
// The condition is implied by the tree (it is never stricter), so a pattern
// that matches a text always passes it; a pattern that passes it is only a
// candidate, which its own regex then decides. A pattern without such a
// condition (no literal of at least kMinAtomLen bytes is required, e.g.
// `\d+`) is "unfiltered": a candidate for every text.
//
// LiteralIndex finds which of many atoms occur in a text in one pass
// (Aho-Corasick), built once, with no state built lazily while matching:
// its cost per text does not depend on what texts came before.
//
// Thread-safety: ExtractAtoms and FoldForAtoms are pure; a built
// LiteralIndex is read-only (Scan is const).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace limbic::reflexes {

// Atoms shorter than this are not used ("ab" is; "a" would make a pattern
// a candidate for nearly every text, which costs more than it saves).
inline constexpr int kMinAtomLen = 2;

// Patterns with more atoms than this keep only the "at least one atom"
// part of the condition (finding the required atoms costs one tree
// evaluation per atom).
inline constexpr size_t kMaxAtomsForRequired = 64;

struct PatternAtoms {
  bool filtered = false;           // false: a candidate for every text
  std::vector<std::string> atoms;  // folded ASCII literals, each once
  std::vector<bool> required;      // per atom: must occur for a match
  size_t required_count() const;
};

// The atoms of `pattern` (RE2 syntax, default options: UTF-8, case
// sensitive unless the pattern says (?i)). A pattern RE2 refuses is
// unfiltered.
PatternAtoms ExtractAtoms(const std::string& pattern);

// The text as the prefilter's atoms are written: RE2's prefilter lowercases
// each rune by simple case folding. ASCII letters are lowercased here, and
// the only two non-ASCII runes that fold to ASCII -- U+017F (long s) to "s",
// U+212A (Kelvin sign) to "k" -- are replaced; every other byte is kept.
// Atoms holding non-ASCII bytes are never looked up (ExtractAtoms treats
// them as present), so this is exact for every atom that is.
std::string FoldForAtoms(std::string_view text);

// Which of a fixed set of byte strings occur in a text.
class LiteralIndex {
 public:
  // Adds a non-empty string; returns its id (0, 1, ... in order of Add). A
  // string added twice gets two ids; Scan reports both.
  uint32_t Add(std::string_view literal);
  // Makes the index ready for Scan; Add must not be called after it.
  void Build();
  size_t size() const { return literal_count_; }

  // Calls `found(id)` for each occurrence of each literal in `text` (an id
  // may be reported more than once).
  template <typename F>
  void Scan(std::string_view text, F&& found) const;

 private:
  struct Edge {
    uint8_t byte;
    uint32_t to;
  };
  struct State {
    uint32_t first_edge = 0, edge_count = 0;  // into edges_, sorted by byte
    uint32_t fail = 0;                        // longest proper suffix in the trie
    uint32_t output = kNone;                  // nearest state (self or via fail) ending a literal
    uint32_t first_id = 0, id_count = 0;      // into ids_: literals ending exactly here
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  uint32_t Child(uint32_t state, uint8_t byte) const;  // kNone if no edge
  uint32_t Next(uint32_t state, uint8_t byte) const;

  // Built by Add (a plain trie), then flattened by Build.
  std::vector<std::vector<Edge>> trie_;
  std::vector<std::vector<uint32_t>> ends_;
  std::vector<State> states_;
  std::vector<Edge> edges_;
  std::vector<uint32_t> ids_;
  uint32_t root_next_[256] = {};  // the root's full transition table
  size_t literal_count_ = 0;
};

inline uint32_t LiteralIndex::Child(uint32_t state, uint8_t byte) const {
  const State& s = states_[state];
  const Edge* e = edges_.data() + s.first_edge;
  for (uint32_t i = 0; i < s.edge_count; ++i)
    if (e[i].byte == byte) return e[i].to;
  return kNone;
}

inline uint32_t LiteralIndex::Next(uint32_t state, uint8_t byte) const {
  while (state != 0) {
    uint32_t to = Child(state, byte);
    if (to != kNone) return to;
    state = states_[state].fail;
  }
  return root_next_[byte];
}

template <typename F>
void LiteralIndex::Scan(std::string_view text, F&& found) const {
  if (states_.empty()) return;
  uint32_t state = 0;
  for (char c : text) {
    state = Next(state, static_cast<uint8_t>(c));
    for (uint32_t o = states_[state].output; o != kNone; o = states_[states_[o].fail].output) {
      const State& s = states_[o];
      for (uint32_t i = 0; i < s.id_count; ++i) found(ids_[s.first_id + i]);
    }
  }
}

}  // namespace limbic::reflexes
