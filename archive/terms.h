// Counting the terms of a document for its term vector (links.h), fast:
// this is the inner loop of Verify, which must run at disk speed.
// Internal to limbic_archive.
//
// The terms are exactly those of text.h's ForEachTerm (a test compares
// them); the speed comes from what it does not do per term: runs of word
// bytes are found 16 bytes at a time (SSE2, where there is SSE2), a term
// of up to 16 ASCII bytes is hashed in place, it is counted in one
// open-addressing table that holds the counts, and stop words are only
// looked up among the distinct terms at the end. Runs holding non-ASCII
// bytes take the byte-wise path. Per term, the code avoids branches that
// depend on the text (a term's length, whether it is new): mispredicted,
// they cost more than all the rest.
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
  // A slot of the table: a distinct term, or empty (count 0).
  struct Slot {
    uint64_t id;
    uint32_t count;
    uint32_t first;  // offset of the first occurrence in content_
  };
  void Add(uint64_t id, size_t first);
  // A run of word bytes [begin, end): its terms. OnRun takes the usual
  // short ASCII term itself and hands the rest to Run.
  void OnRun(size_t begin, size_t end);
  void Run(size_t begin, size_t end);
  // Whether the term that starts at content_[first] is a stop word.
  bool IsStopAt(uint32_t first) const;
  void Grow();

  std::string_view content_;
  std::vector<Slot> slots_;     // linear probing by id, at most half full
  std::vector<uint32_t> order_; // [0, used_): the slots that hold a term
  size_t used_ = 0;
};

}  // namespace limbic::archive
