// A safetensors file (huggingface/safetensors), read-only and memory-mapped.
//
// The format, as read here:
//   file   := N header data
//   N      := u64, little-endian: the header's byte length, 2 <= N <= kMaxHeaderBytes
//             and 8 + N <= the file's size
//   header := UTF-8 JSON object, N bytes (trailing spaces allowed):
//             { "__metadata__"?: {string: string},
//               NAME: {"dtype": DTYPE, "shape": [u64...], "data_offsets": [BEGIN, END]} ... }
//   data   := the rest of the file; a tensor's bytes are data[BEGIN, END)
//   DTYPE  := F32 | F16 | BF16 | F64 | I64 | U64 | I32 | U32 | I16 | U16 | I8 | U8
//             | BOOL | F8_E5M2 | F8_E4M3
// A header is refused (InvalidArgument naming the file, and the tensor when
// there is one) when it is not a JSON object, nests deeper than 4, holds
// a NUL byte (nlohmann would stop reading there), has a
// tensor without those three fields, a dtype not in DTYPE (named in the
// refusal), a shape whose element count overflows or whose bytes do not
// match END - BEGIN, or offsets outside the data, reversed or overlapping
// another tensor's (holes between tensors are allowed). A file shorter than
// its header says is "truncated".
// Every DTYPE is accepted in the header because HF checkpoints converted
// before transformers 4.31 carry an I64 `embeddings.position_ids` buffer
// beside the weights; only F32, F16 and BF16 are read (Floats refuses the
// others by name).
//
// F32 tensors whose bytes are 4-aligned in the mapping are served in place
// (no copy: the page cache holds the model once however many embedders use
// it); F16, BF16 and unaligned F32 are converted into memory the object owns.
//
// Thread-safety: Open on any thread; a SafeTensors is immutable after Open,
// and Floats is safe from many threads (it converts under a lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace limbic::memory::encoder {

//! The largest header Open reads: 100 MB (the safetensors crate's own limit).
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

//! One tensor as the header describes it.
struct TensorInfo {
  std::string dtype;            //!< one of DTYPE above
  std::vector<uint64_t> shape;  //!< [] is a scalar (one element)
  uint64_t begin = 0, end = 0;  //!< byte range within the data section
};

class SafeTensors {
 public:
  //! Maps `path` and checks its header (the grammar above). NotFound when
  //! the file is missing; InvalidArgument naming the file (and the tensor)
  //! for everything wrong with it.
  static Result<std::unique_ptr<SafeTensors>> Open(const std::string& path);
  //! Checks a header's JSON text alone, as Open does, against a data
  //! section of `data_bytes` (the fuzz target's entry; `path` names it in
  //! errors).
  static Result<std::map<std::string, TensorInfo>> ParseHeader(std::string_view header,
                                                               uint64_t data_bytes,
                                                               const std::string& path);
  ~SafeTensors();
  SafeTensors(const SafeTensors&) = delete;
  SafeTensors& operator=(const SafeTensors&) = delete;

  //! The tensor `name` as f32 values, checked to have exactly `shape`.
  //! NotFound naming the file and the tensor when it is absent;
  //! InvalidArgument "FILE: tensor NAME has shape [a, b], expected [c, d]",
  //! or naming its dtype when that is not F32, F16 or BF16.
  //! The span lives as long as this object.
  Result<std::span<const float>> Floats(const std::string& name,
                                        std::span<const uint64_t> shape) const;
  bool Has(const std::string& name) const { return tensors_.count(name) != 0; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  const std::string& path() const { return path_; }
  //! Whether a tensor was served from the mapping (tests, `memory stats`).
  bool Mapped(const std::string& name) const;

 private:
  SafeTensors() = default;
  std::string path_;
  const uint8_t* map_ = nullptr;  //!< the whole file
  size_t map_bytes_ = 0;
  const uint8_t* data_ = nullptr;  //!< the data section within it
  std::map<std::string, TensorInfo> tensors_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::vector<float>> converted_;
};

}  // namespace limbic::memory::encoder
