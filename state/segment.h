// Internal to the events log: segment files and fast line inspection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "state/env.h"
#include "state/status.h"

namespace limbic::state {

struct Segment {
  uint64_t first_seq;  // from the file name
  std::string path;
};

// The segments of `dir` sorted by first seq; files not named
// "<20 digits>.jsonl" are ignored. A missing dir is an empty log.
Result<std::vector<Segment>> ListSegments(Env* env, const std::string& dir);

// The seq of a line in our own encoding ({"v":1,"seq":N,...}), without
// parsing JSON. False when the line does not start that way.
bool FastSeq(std::string_view line, uint64_t* seq);

}  // namespace limbic::state
