// Fuzz target `safetensors`: a model's weights file as the local encoder
// reads it (memory/encoder/safetensors.h). The input is used twice:
//   1. as a header's JSON text: SafeTensors::ParseHeader against a data
//      section of 64 bytes;
//   2. when it has 8 bytes or more, as a whole file: SafeTensors::Open on
//      <scratch>/m.safetensors, then Floats on every tensor.
//
// Properties: no crash, no exception, no read outside the mapping (ASan);
// refusals are InvalidArgument naming the file; a header that parses has
// every tensor's bytes within the data, matching its dtype and shape, and
// no two overlapping; Open accepts exactly when the length prefix is in
// range and ParseHeader accepts its header; Floats serves every float
// tensor with its element count and refuses every other dtype by name.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "memory/encoder/safetensors.h"

using namespace limbic;
using namespace limbic::memory::encoder;

namespace {

constexpr uint64_t kDataBytes = 64;

uint64_t ElementBytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  return 1;
}

// The properties of a header ParseHeader accepted.
void CheckTensors(const std::map<std::string, TensorInfo>& tensors, uint64_t data_bytes) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, t] : tensors) {
    FUZZ_CHECK(t.begin <= t.end && t.end <= data_bytes, name + ": range outside the data");
    uint64_t bytes = ElementBytes(t.dtype);
    bool overflow = false;
    for (uint64_t d : t.shape) overflow |= __builtin_mul_overflow(bytes, d, &bytes);
    FUZZ_CHECK(!overflow && bytes == t.end - t.begin, name + ": bytes do not match the shape");
    if (t.end > t.begin) ranges.emplace_back(t.begin, t.end);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    FUZZ_CHECK(ranges[i].first >= ranges[i - 1].second, "overlapping tensors accepted");
}

void CheckRefusal(const Status& s, const std::string& path) {
  FUZZ_CHECK(s.IsInvalidArgument(), "refusal is not InvalidArgument: " + s.ToString());
  FUZZ_CHECK(s.message().rfind(path + ": ", 0) == 0, "refusal does not name the file: " + s.message());
}

void FuzzHeader(std::string_view text) {
  auto r = SafeTensors::ParseHeader(text, kDataBytes, "h.json");
  if (!r.ok()) return CheckRefusal(r.status(), "h.json");
  CheckTensors(*r, kDataBytes);
}

void FuzzFile(std::string_view bytes) {
  static fuzz::ScratchDir* dir = new fuzz::ScratchDir();  // lives as long as the process
  const std::string path = *dir / "m.safetensors";
  fuzz::WriteFileOrDie(path, bytes);
  auto st = SafeTensors::Open(path);

  // What Open must have decided, from the length prefix and ParseHeader.
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  bool expect_ok = n >= 2 && n <= kMaxHeaderBytes && n <= bytes.size() - 8 &&
                   SafeTensors::ParseHeader(bytes.substr(8, n), bytes.size() - 8 - n, path).ok();
  FUZZ_CHECK(st.ok() == expect_ok, "Open and ParseHeader disagree: " + st.status().ToString());
  if (!st.ok()) return CheckRefusal(st.status(), path);

  CheckTensors((*st)->tensors(), bytes.size() - 8 - n);
  for (const auto& [name, t] : (*st)->tensors()) {
    auto floats = (*st)->Floats(name, t.shape);
    if (t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16") {
      FUZZ_CHECK(floats.ok(), name + ": " + floats.status().ToString());
      FUZZ_CHECK(floats->size() == (t.end - t.begin) / ElementBytes(t.dtype), name + ": size");
      volatile float sink = 0;
      for (float v : *floats) sink = sink + v;  // every value readable
      FUZZ_CHECK((*st)->Mapped(name) == (t.dtype == "F32" && (8 + n + t.begin) % 4 == 0),
                 name + ": Mapped is not 'F32 and aligned'");
    } else {
      FUZZ_CHECK(!floats.ok(), name + ": a " + t.dtype + " tensor was read as floats");
      CheckRefusal(floats.status(), path);
      FUZZ_CHECK(floats.status().message().find(t.dtype) != std::string::npos,
                 name + ": refusal does not name the dtype");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  FuzzHeader(input);
  if (size >= 8) FuzzFile(input);
  return 0;
}
