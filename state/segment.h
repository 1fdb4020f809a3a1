// Internal to the events log: segment files and fast line inspection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "base/time.h"

namespace limbic::state {

struct Segment {
  uint64_t first_seq;  // from the file name
  std::string path;
};

// The segments of `dir` sorted by first seq; files not named
// "<20 digits>.jsonl" are ignored. A missing dir is an empty log.
Result<std::vector<Segment>> ListSegments(Env* env, const std::string& dir);

// The seal of a segment, in a file beside it, covering its first B bytes:
//
//   <first-seq, 20 digits>.seal
//   {"v":1,"first_seq":N,"last_seq":M,"bytes":B,"last_ts":TS,"sha256":HEX}
//
// The log's writer seals a segment when it starts the next one (after the
// closed one's fdatasync: B is the whole file), and seals the open segment
// at every clean close (B is what it held then; more may be appended later).
// Recovery checks a sealed prefix by hashing it instead of decoding its
// lines again, and decodes what follows. A closed segment without a usable
// seal (a crash right after rotation, or an older log) is decoded in full
// and then sealed.
struct SegmentSeal {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t bytes = 0;
  TimeMs last_ts = 0;
  std::string sha256;
};
// "<dir>/00000000000000000042.seal" for ".../00000000000000000042.jsonl".
std::string SealFileName(const std::string& segment_path);
// Written atomically (temporary file, fsync, rename, fsync of the dir).
Status WriteSeal(Env* env, const std::string& segment_path, const SegmentSeal& seal);
// NotFound when there is no seal; Corruption when it is unreadable.
Result<SegmentSeal> ReadSeal(Env* env, const std::string& segment_path);
// SHA-256 (hex) of the first `limit` bytes of a file (all of it when
// larger than the file), and how many bytes that was.
Status HashFile(Env* env, const std::string& path, uint64_t limit, std::string* sha256,
                uint64_t* bytes);

// The seq of a line in our own encoding ({"v":1,"seq":N,...}), without
// parsing JSON. False when the line does not start that way.
bool FastSeq(std::string_view line, uint64_t* seq);

}  // namespace limbic::state
