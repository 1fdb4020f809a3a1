// Analyzer: the one way search turns text into terms, for memory recall
// (memory/recall_index.h) and the archive's search (search.h) alike, for
// documents and queries alike.
//
// A term is made in three steps:
//   1. Tokens: maximal runs of letters and digits: ASCII ones and every
//      valid non-ASCII UTF-8 sequence (so "café" and "東京" are tokens);
//      anything else, invalid UTF-8 included, separates tokens. An
//      apostrophe splits too ("maya's" -> "maya", "s"; "don't" -> "don",
//      "t"). Tokens are lower-cased: ASCII, Latin-1, Latin Extended-A,
//      Greek and Cyrillic capitals. Tokens over 64 bytes are dropped.
//   2. Stop words, dropped: for `english` and `none`, the Snowball
//      project's English list with the pieces that splitting contractions
//      leaves (s, t, ll, ve, re, don, ...), StopWords(). The other
//      languages have no list: BM25's idf makes their common words cheap.
//   3. The language's Snowball stemmer (libstemmer; "running", "runs" ->
//      "run"), unless the language is `none`.
//
// The language is a config value (memory.analyzer, docs/memory.md): `none`
// or the name of a Snowball algorithm (Languages(): english, french,
// german, spanish, ...). An index records id() and is rebuilt when it
// changes, so that documents and queries always meet the same terms.
//
// This is not text.h's Tokenize: that one stays the archive's word split
// for semantic links and snippets, which are part of what the archive
// stores and verifies.
//
// Thread-safety: an Analyzer may be shared between threads (the stemmer,
// which is not thread-safe, is held under a lock for each call).
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct sb_stemmer;

namespace limbic::archive {

class Analyzer {
 public:
  // InvalidArgument naming the value and the choices for an unknown one.
  static Result<std::shared_ptr<const Analyzer>> Make(std::string_view language);
  // The default: english. Never fails (libstemmer always has it).
  static std::shared_ptr<const Analyzer> Default();
  // "none" and the Snowball algorithms libstemmer has, sorted.
  static std::vector<std::string> Languages();
  ~Analyzer();

  const std::string& language() const { return language_; }
  // What an index records: the language and the version of these rules
  // ("english/1"). A change to the rules above bumps the version.
  const std::string& id() const { return id_; }

  // Appends the terms of `text` to `out`, in order, repeats included.
  void Terms(std::string_view text, std::vector<std::string>* out) const;
  std::vector<std::string> Terms(std::string_view text) const;

  // The English stop words (lower case, sorted).
  static std::span<const std::string_view> StopWords();

 private:
  Analyzer(std::string language, sb_stemmer* stemmer, bool stop_words);
  std::string language_, id_;
  sb_stemmer* stemmer_;  // null for none
  bool stop_words_;
  mutable std::mutex mu_;  // the stemmer's
};

}  // namespace limbic::archive
