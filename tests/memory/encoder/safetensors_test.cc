// Tests of memory/encoder/safetensors.h: files written here byte by byte.
#include "memory/encoder/safetensors.h"
#include "state/test_util.h"

#include <stdlib.h>

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

// This file's own namespace: test programs compile in unity batches.
namespace safetensors_test {

using namespace limbic;
using namespace limbic::memory::encoder;

namespace {

using TempDir = limbic::testing::ScratchDir;

void WriteRaw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string U64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(n >> (8 * i));
  return s;
}

// A safetensors file: the length, `header` padded with spaces to a
// multiple of `pad`, then `data`.
std::string File(std::string header, const std::string& data, size_t pad = 8) {
  while (header.size() % pad) header += ' ';
  return U64(header.size()) + header + data;
}

std::string Floats(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s.append(reinterpret_cast<const char*>(&v), 4);
  return s;
}

std::string Halves(std::initializer_list<uint16_t> values) {
  std::string s;
  for (uint16_t v : values) s.append(reinterpret_cast<const char*>(&v), 2);
  return s;
}

// Open's refusal of `bytes` as a file; its message.
std::string OpenError(const TempDir& dir, const std::string& bytes) {
  WriteRaw(dir / "m.safetensors", bytes);
  auto st = SafeTensors::Open(dir / "m.safetensors");
  REQUIRE_FALSE(st.ok());
  CHECK(st.status().IsInvalidArgument());
  CHECK_THAT(st.status().message(), Catch::Contains(dir / "m.safetensors"));
  return st.status().message();
}

std::string HeaderError(const std::string& header, uint64_t data_bytes = 64) {
  auto r = SafeTensors::ParseHeader(header, data_bytes, "x.safetensors");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK_THAT(r.status().message(), Catch::StartsWith("x.safetensors: "));
  return r.status().message();
}

const std::vector<uint64_t> k2x2 = {2, 2};

}  // namespace

TEST_CASE("safetensors: an aligned F32 tensor is served from the mapping") {
  TempDir dir;
  WriteRaw(dir / "m.safetensors",
           File(R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                R"("b":{"dtype":"F32","shape":[],"data_offsets":[16,20]}})",
                Floats({1, 2, 3, 4, -0.5f})));
  auto st = SafeTensors::Open(dir / "m.safetensors");
  REQUIRE(st.ok());
  auto w = (*st)->Floats("w", k2x2);
  REQUIRE(w.ok());
  CHECK(std::vector<float>(w->begin(), w->end()) == std::vector<float>{1, 2, 3, 4});
  CHECK((*st)->Mapped("w"));
  auto b = (*st)->Floats("b", {});
  REQUIRE(b.ok());
  CHECK(std::vector<float>(b->begin(), b->end()) == std::vector<float>{-0.5f});
  CHECK((*st)->tensors().size() == 2);
  CHECK((*st)->Has("w"));
  CHECK_FALSE((*st)->Has("__metadata__"));
}

TEST_CASE("safetensors: an unaligned F32 tensor is copied") {
  TempDir dir;
  // A header of 8k+1 bytes puts the data at an odd address.
  std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  while ((header.size() + 8) % 4 != 1) header += ' ';
  WriteRaw(dir / "m.safetensors", U64(header.size()) + header + Floats({7, -8}));
  auto st = SafeTensors::Open(dir / "m.safetensors");
  REQUIRE(st.ok());
  const std::vector<uint64_t> shape = {2};
  auto w = (*st)->Floats("w", shape);
  REQUIRE(w.ok());
  CHECK(std::vector<float>(w->begin(), w->end()) == std::vector<float>{7, -8});
  CHECK_FALSE((*st)->Mapped("w"));
  // A second call serves the same conversion.
  CHECK((*st)->Floats("w", shape)->data() == w->data());
}

TEST_CASE("safetensors: F16 and BF16 become f32") {
  TempDir dir;
  // F16: 1, -2.5, the smallest subnormal 2^-24, 65504, inf.
  // BF16: 1, -2.5, 2^-128 (subnormal in f32 too), 3.0e38-ish.
  WriteRaw(dir / "m.safetensors",
           File(R"({"h":{"dtype":"F16","shape":[5],"data_offsets":[0,10]},)"
                R"("b":{"dtype":"BF16","shape":[4],"data_offsets":[10,18]}})",
                Halves({0x3c00, 0xc100, 0x0001, 0x7bff, 0x7c00}) +
                    Halves({0x3f80, 0xc020, 0x0020, 0x7f61})));
  auto st = SafeTensors::Open(dir / "m.safetensors");
  REQUIRE(st.ok());
  auto h = (*st)->Floats("h", std::vector<uint64_t>{5});
  REQUIRE(h.ok());
  CHECK((*h)[0] == 1.0f);
  CHECK((*h)[1] == -2.5f);
  CHECK((*h)[2] == std::ldexp(1.0f, -24));
  CHECK((*h)[3] == 65504.0f);
  CHECK(std::isinf((*h)[4]));
  auto b = (*st)->Floats("b", std::vector<uint64_t>{4});
  REQUIRE(b.ok());
  CHECK((*b)[0] == 1.0f);
  CHECK((*b)[1] == -2.5f);
  CHECK((*b)[2] == std::ldexp(1.0f, -128));
  uint32_t bits = 0x7f610000;
  float big;
  std::memcpy(&big, &bits, 4);
  CHECK((*b)[3] == big);
  CHECK_FALSE((*st)->Mapped("h"));
}

TEST_CASE("safetensors: an I64 tensor is accepted in the header but not read") {
  TempDir dir;
  WriteRaw(dir / "m.safetensors",
           File(R"({"embeddings.position_ids":{"dtype":"I64","shape":[1,2],"data_offsets":[0,16]},)"
                R"("w":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})",
                std::string(16, '\0') + Floats({3})));
  auto st = SafeTensors::Open(dir / "m.safetensors");
  REQUIRE(st.ok());
  CHECK((*st)->Floats("w", std::vector<uint64_t>{1}).ok());
  auto ids = (*st)->Floats("embeddings.position_ids", std::vector<uint64_t>{1, 2});
  REQUIRE_FALSE(ids.ok());
  CHECK(ids.status().IsInvalidArgument());
  CHECK_THAT(ids.status().message(), Catch::Contains(dir / "m.safetensors") &&
                                         Catch::Contains("embeddings.position_ids") &&
                                         Catch::Contains("I64"));
}

TEST_CASE("safetensors: Floats names the file and tensor when absent or misshapen") {
  TempDir dir;
  WriteRaw(dir / "m.safetensors",
           File(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", Floats({1, 2, 3, 4})));
  auto st = SafeTensors::Open(dir / "m.safetensors");
  REQUIRE(st.ok());
  auto missing = (*st)->Floats("v", k2x2);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().IsNotFound());
  CHECK_THAT(missing.status().message(), Catch::Contains(dir / "m.safetensors") && Catch::Contains("v"));
  auto shape = (*st)->Floats("w", std::vector<uint64_t>{4});
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.status().IsInvalidArgument());
  CHECK(shape.status().message() ==
        dir / "m.safetensors" + ": tensor w has shape [2, 2], expected [4]");
}

TEST_CASE("safetensors: a missing file is NotFound naming it") {
  TempDir dir;
  auto st = SafeTensors::Open(dir / "absent.safetensors");
  REQUIRE_FALSE(st.ok());
  CHECK(st.status().IsNotFound());
  CHECK_THAT(st.status().message(), Catch::Contains(dir / "absent.safetensors"));
}

TEST_CASE("safetensors: a FIFO or a directory is refused at once, naming it") {
  TempDir dir;
  REQUIRE(::mkfifo((dir / "fifo.safetensors").c_str(), 0600) == 0);
  auto fifo = SafeTensors::Open(dir / "fifo.safetensors");  // no writer: must not wait for one
  REQUIRE_FALSE(fifo.ok());
  CHECK(fifo.status().IsInvalidArgument());
  CHECK_THAT(fifo.status().message(), Catch::Contains(dir / "fifo.safetensors") &&
                                          Catch::Contains("not a regular file"));
  std::filesystem::create_directory(dir / "dir.safetensors");
  auto directory = SafeTensors::Open(dir / "dir.safetensors");
  REQUIRE_FALSE(directory.ok());
  CHECK_THAT(directory.status().message(), Catch::Contains("not a regular file"));
}

TEST_CASE("safetensors: a file shorter than 8 bytes is refused") {
  TempDir dir;
  CHECK_THAT(OpenError(dir, ""), Catch::Contains("shorter than"));
  CHECK_THAT(OpenError(dir, "1234567"), Catch::Contains("7 bytes"));
}

TEST_CASE("safetensors: a header length past the limit or the file is refused") {
  TempDir dir;
  CHECK_THAT(OpenError(dir, U64(kMaxHeaderBytes + 1) + "{}"), Catch::Contains("header length"));
  CHECK_THAT(OpenError(dir, U64(~uint64_t{0}) + "{}"), Catch::Contains("header length"));
  CHECK_THAT(OpenError(dir, U64(1) + "{"), Catch::Contains("header length"));
  CHECK_THAT(OpenError(dir, U64(100) + "{}      "), Catch::Contains("truncated"));
}

TEST_CASE("safetensors: an empty header object is an empty file") {
  TempDir dir;
  WriteRaw(dir / "m.safetensors", File("{}", ""));
  auto st = SafeTensors::Open(dir / "m.safetensors");
  REQUIRE(st.ok());
  CHECK((*st)->tensors().empty());
}

TEST_CASE("safetensors: headers that are not JSON objects are refused") {
  TempDir dir;
  CHECK_THAT(OpenError(dir, File("{\"w\":", "")), Catch::Contains("not JSON"));
  CHECK_THAT(HeaderError("[1, 2]"), Catch::Contains("not a JSON object"));
  CHECK_THAT(HeaderError("\"w\""), Catch::Contains("not a JSON object"));
  CHECK_THAT(HeaderError(std::string("{}\0", 3)), Catch::Contains("NUL byte at 2"));
  CHECK_THAT(HeaderError(std::string("{\"a\0\": 1}", 9)), Catch::Contains("NUL byte at 3"));
  CHECK_THAT(HeaderError("{\"w\": \"\xff\"}"), Catch::Contains("not JSON"));
}

TEST_CASE("safetensors: headers nested deeper than 4 are refused before parsing") {
  TempDir dir;
  CHECK_THAT(OpenError(dir, File(R"({"w":{"shape":[[[1]]]}})", "")), Catch::Contains("deeper than 4"));
  CHECK_THAT(HeaderError(std::string(100000, '[')), Catch::Contains("deeper than 4"));
  // Brackets inside strings do not count.
  auto ok = SafeTensors::ParseHeader(R"({"[[[[[{{{{": {"dtype":"F32","shape":[],"data_offsets":[0,4]}})",
                                     4, "x.safetensors");
  CHECK(ok.ok());
}

TEST_CASE("safetensors: a tensor's fields are checked, naming it") {
  auto tensor = [](const std::string& body) { return HeaderError("{\"t.w\":" + body + "}"); };
  CHECK_THAT(tensor("1"), Catch::Contains("tensor t.w") && Catch::Contains("not an object"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":[1]})"), Catch::Contains("tensor t.w"));
  CHECK_THAT(tensor(R"({"dtype":7,"shape":[1],"data_offsets":[0,4]})"), Catch::Contains("dtype"));
  CHECK_THAT(tensor(R"({"dtype":"Q4","shape":[1],"data_offsets":[0,4]})"),
             Catch::Contains("tensor t.w") && Catch::Contains("Q4"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), Catch::Contains("shape"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})"), Catch::Contains("shape"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":1,"data_offsets":[0,4]})"), Catch::Contains("shape"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,0]})"),
             Catch::Contains("overflows"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]})"),
             Catch::Contains("overflows"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})"), Catch::Contains("data_offsets"));
  CHECK_THAT(tensor(R"({"dtype":"F32","shape":[1],"data_offsets":[0,-4]})"), Catch::Contains("data_offsets"));
  CHECK_THAT(HeaderError(R"({"__metadata__":{"format":1}})"), Catch::Contains("__metadata__"));
  CHECK_THAT(HeaderError(R"({"__metadata__":[]})"), Catch::Contains("__metadata__"));
}

TEST_CASE("safetensors: a shape that disagrees with its byte range is refused") {
  CHECK_THAT(HeaderError(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})"),
             Catch::Contains("tensor w") && Catch::Contains("12 bytes") && Catch::Contains("16"));
  CHECK_THAT(HeaderError(R"({"w":{"dtype":"F16","shape":[3],"data_offsets":[0,12]}})"),
             Catch::Contains("tensor w"));
}

TEST_CASE("safetensors: offsets out of range, reversed or overlapping are refused") {
  TempDir dir;
  CHECK_THAT(OpenError(dir, File(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", Floats({1}))),
             Catch::Contains("tensor w") && Catch::Contains("past the data"));
  CHECK_THAT(HeaderError(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,18446744073709551616]}})"),
             Catch::Contains("tensor w"));
  CHECK_THAT(HeaderError(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})"),
             Catch::Contains("tensor w") && Catch::Contains("reversed"));
  CHECK_THAT(HeaderError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})"),
             Catch::Contains("tensor b overlaps tensor a"));
  // Touching ranges, a hole and an empty tensor inside another are fine.
  auto ok = SafeTensors::ParseHeader(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                     R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                                     R"("c":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},)"
                                     R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]}})",
                                     20, "x.safetensors");
  CHECK(ok.ok());
}

}  // namespace safetensors_test
