#include <catch2/catch.hpp>

#include "state/memory/embedder.h"

using namespace limbic::memory;

TEST_CASE("vector encoding round-trips every length and rejects bad base64", "[memory]") {
  for (size_t n : {0, 1, 2, 3, 384}) {
    Vector v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.25f - 3.5f;
    auto back = DecodeVector(EncodeVector(v));
    REQUIRE(back.ok());
    CHECK(*back == v);
  }
  CHECK(EncodeVector(std::vector<float>{1.0f}) == "AACAPw==");
  CHECK_FALSE(DecodeVector("AAC").ok());
  CHECK_FALSE(DecodeVector("AA*APw==").ok());
  CHECK_FALSE(DecodeVector("AAAA").ok());  // 3 bytes: not whole floats
}

TEST_CASE("cosine of normalised vectors", "[memory]") {
  Vector a{3, 4}, b{4, 3}, z{0, 0};
  Normalize(&a);
  Normalize(&b);
  Normalize(&z);
  CHECK(Cosine(a, a) == Approx(1.0));
  CHECK(Cosine(a, b) == Approx(24.0 / 25.0));
  CHECK(Cosine(a, z) == 0);
}
