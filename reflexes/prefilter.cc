#include "reflexes/prefilter.h"

#include <re2/filtered_re2.h>
#include <re2/re2.h>

#include <algorithm>
#include <deque>

namespace limbic::reflexes {

size_t PatternAtoms::required_count() const {
  return static_cast<size_t>(std::count(required.begin(), required.end(), true));
}

PatternAtoms ExtractAtoms(const std::string& pattern) {
  PatternAtoms out;
  RE2::Options opts;  // those ParseRule compiles the rule's regex with
  opts.set_log_errors(false);
  re2::FilteredRE2 filter(kMinAtomLen);
  int id = 0;
  if (filter.Add(pattern, opts, &id) != RE2::NoError) return out;
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  // The tree, asked whether the pattern may match a text holding `present`.
  auto passes = [&filter](const std::vector<int>& present) {
    std::vector<int> potential;
    filter.AllPotentials(present, &potential);
    return !potential.empty();
  };
  // Atoms with non-ASCII bytes count as present in every text
  // (FoldForAtoms does not fold them). If that alone passes, no scan can
  // rule the pattern out: it is unfiltered (so is a pattern with no atoms).
  std::vector<int> non_ascii, all;
  std::vector<size_t> ascii;
  for (size_t i = 0; i < atoms.size(); ++i) {
    all.push_back(static_cast<int>(i));
    bool is_ascii = std::all_of(atoms[i].begin(), atoms[i].end(),
                                [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (is_ascii)
      ascii.push_back(i);
    else
      non_ascii.push_back(static_cast<int>(i));
  }
  if (passes(non_ascii)) return out;
  // The tree is monotone (ANDs and ORs of atoms), so: some ASCII atom must
  // occur (the non-ASCII ones alone do not pass), and an atom must occur
  // if every other atom together does not pass.
  out.filtered = true;
  for (size_t i : ascii) {
    bool required = false;
    if (atoms.size() <= kMaxAtomsForRequired) {
      std::vector<int> others;
      for (int j : all)
        if (static_cast<size_t>(j) != i) others.push_back(j);
      required = !passes(others);
    }
    out.atoms.push_back(atoms[i]);
    out.required.push_back(required);
  }
  return out;
}

std::string FoldForAtoms(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 'A' && c <= 'Z') {
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else if (c == 0xC5 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0xBF) {
      out.push_back('s');  // U+017F
      i += 1;
    } else if (c == 0xE2 && i + 2 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) == 0x84 &&
               static_cast<unsigned char>(text[i + 2]) == 0xAA) {
      out.push_back('k');  // U+212A
      i += 2;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

uint32_t LiteralIndex::Add(std::string_view literal) {
  if (trie_.empty()) {
    trie_.emplace_back();
    ends_.emplace_back();
  }
  uint32_t state = 0;
  for (char ch : literal) {
    uint8_t b = static_cast<uint8_t>(ch);
    auto& edges = trie_[state];
    auto it = std::find_if(edges.begin(), edges.end(), [b](const Edge& e) { return e.byte == b; });
    if (it != edges.end()) {
      state = it->to;
      continue;
    }
    uint32_t to = static_cast<uint32_t>(trie_.size());
    edges.push_back(Edge{b, to});
    trie_.emplace_back();
    ends_.emplace_back();
    state = to;
  }
  uint32_t id = static_cast<uint32_t>(literal_count_++);
  ends_[state].push_back(id);
  return id;
}

void LiteralIndex::Build() {
  if (trie_.empty()) return;
  states_.assign(trie_.size(), State{});
  for (size_t s = 0; s < trie_.size(); ++s) {
    std::sort(trie_[s].begin(), trie_[s].end(),
              [](const Edge& a, const Edge& b) { return a.byte < b.byte; });
    states_[s].first_edge = static_cast<uint32_t>(edges_.size());
    states_[s].edge_count = static_cast<uint32_t>(trie_[s].size());
    edges_.insert(edges_.end(), trie_[s].begin(), trie_[s].end());
    states_[s].first_id = static_cast<uint32_t>(ids_.size());
    states_[s].id_count = static_cast<uint32_t>(ends_[s].size());
    ids_.insert(ids_.end(), ends_[s].begin(), ends_[s].end());
  }
  // Failure and output links, breadth first (a state's fail is shallower).
  std::fill(std::begin(root_next_), std::end(root_next_), 0u);
  std::deque<uint32_t> queue;
  for (const Edge& e : trie_[0]) {
    root_next_[e.byte] = e.to;
    states_[e.to].fail = 0;
    queue.push_back(e.to);
  }
  while (!queue.empty()) {
    uint32_t s = queue.front();
    queue.pop_front();
    State& st = states_[s];
    st.output = st.id_count > 0 ? s : states_[st.fail].output;
    for (const Edge& e : trie_[s]) {
      states_[e.to].fail = Next(st.fail, e.byte);
      queue.push_back(e.to);
    }
  }
  trie_.clear();
  trie_.shrink_to_fit();
  ends_.clear();
  ends_.shrink_to_fit();
}

}  // namespace limbic::reflexes
