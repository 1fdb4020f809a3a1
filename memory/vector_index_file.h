// The ids file of a saved VectorIndex (<path>.ids): internal to
// vector_index.cc, separate so that the format (grammar at the top of
// vector_index_file.cc) reads on its own and hnswlib, whose header defines
// non-inline functions, stays in one translation unit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace limbic::memory {

struct IdsFileEntry {
  std::string id;
  uint64_t version = 0;
  uint32_t slot = 0;  // the row in the index, and the entry's graph label
};

struct IdsFile {
  uint32_t dims = 0;
  bool has_graph = false;       // else: exact mode, vectors inline
  uint64_t slots = 0;           // rows in use or free; every slot < slots
  uint64_t graph_bytes = 0;     // with has_graph: the graph file's size
  uint64_t graph_checksum = 0;  //   and its FileChecksum
  std::vector<IdsFileEntry> entries;
  std::vector<float> vectors;   // exact mode: entries.size() * dims, in entry order
};

std::string EncodeIdsFile(const IdsFile& file);
// Corruption naming what is wrong (checksum, magic, format version, a
// truncated entry, a slot out of range or repeated, a repeated id).
Result<IdsFile> DecodeIdsFile(std::string_view bytes);

// A 64-bit checksum that runs at memory speed: it detects damage (torn or
// truncated writes, flipped bits), not tampering.
uint64_t Checksum(std::string_view bytes);

struct FileSum {
  uint64_t bytes = 0;
  uint64_t checksum = 0;  // Checksum of the whole file
};
// Reads `path` in blocks; IOError when it cannot be read.
Result<FileSum> ChecksumFile(Env* env, const std::string& path);

}  // namespace limbic::memory
