// Counting the terms of a document for its term vector (links.h), fast:
// this is the inner loop of Verify, which must run at disk speed.
// Internal to limbic_archive.
//
// The terms are exactly those of text.h's ForEachTerm (a test compares
// them); the speed comes from three things it does not do per term:
// runs of word bytes are found 16 bytes at a time (SSE2, where there is
// SSE2), a term of ASCII bytes is hashed 8 bytes at a time without being
// copied, and stop words are only looked up among the most frequent terms
// at the end. Runs holding non-ASCII bytes take the byte-wise path.
//
// Thread-safety: a TermCounter belongs to one thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace limbic::archive {

class TermCounter {
 public:
  // `content` must outlive the counter.
  explicit TermCounter(std::string_view content);

  // Counts the terms of content[begin, end), which must start and end at a
  // line boundary (so no term is cut).
  void Scan(size_t begin, size_t end);
  // Occurrences of the term with this TermId (stop words included).
  uint32_t Count(uint64_t id) const;
  // The `cap` most frequent terms that are not stop words (ties: smaller
  // id first), as (TermId, count) sorted by id.
  std::vector<std::pair<uint64_t, uint32_t>> Top(size_t cap) const;

 private:
  struct Term {
    uint64_t id;
    uint32_t count;
    uint32_t first;  // offset of the first occurrence in content_
  };
  void Add(uint64_t id, size_t first);
  void Insert(size_t slot, uint64_t id, size_t first);
  // A run of word bytes [begin, end): its terms. OnRun takes the usual
  // short ASCII term itself and hands the rest to Run.
  void OnRun(size_t begin, size_t end);
  void Run(size_t begin, size_t end);
  // The index_ slot holding `id`, or the empty one where it would go.
  size_t SlotOf(uint64_t id) const;
  void Grow();

  std::string_view content_;
  std::vector<Term> terms_;     // distinct terms, in order of first occurrence
  std::vector<uint32_t> index_; // open addressing: 1 + position in terms_, 0 empty
};

}  // namespace limbic::archive
