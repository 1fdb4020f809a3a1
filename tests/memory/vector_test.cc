#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "memory/embedder.h"

// This file's own namespace: test programs compile in unity batches.
namespace vector_test {

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

TEST_CASE("Dot agrees with a double-precision sum, every length", "[memory]") {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> g;
  for (size_t n : {0, 1, 7, 8, 31, 32, 33, 100, 384, 1001}) {
    std::vector<float> a(n), b(n);
    double want = 0, mag = 0;
    for (size_t i = 0; i < n; ++i) {
      a[i] = g(rng);
      b[i] = g(rng);
      want += static_cast<double>(a[i]) * b[i];
      mag += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    INFO("n = " << n);
    CHECK(std::fabs(Dot(a.data(), b.data(), n) - want) <= 1e-5 * (mag + 1));
  }
}

TEST_CASE("quantised dot products stay within the stated error bound", "[memory]") {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> g;
  for (size_t n : {3, 16, 17, 384, 1536}) {
    for (int trial = 0; trial < 200; ++trial) {
      Vector v(n), q(n);
      for (float& x : v) x = g(rng) * (trial % 3 == 0 ? 0.001f : 1.0f);
      if (trial % 5 == 0) v[rng() % n] = 40;  // one dominant component: a coarse scale
      for (float& x : q) x = g(rng);
      if (trial % 2) Normalize(&v);
      std::vector<int8_t> codes(n);
      float error = 0;
      const float scale = QuantizeVector(v, codes.data(), &error);
      const float qnorm = std::sqrt(Dot(q.data(), q.data(), n));
      const float estimate = scale * DotCodes(codes.data(), q.data(), n);
      INFO("n = " << n << ", trial " << trial);
      CHECK(std::fabs(Dot(q.data(), v.data(), n) - estimate) <= qnorm * error);
      if (trial % 5 != 0)  // and useful, when no one component sets a coarse scale
        CHECK(error < 0.05f * std::sqrt(Dot(v.data(), v.data(), n)) + 1e-6f);
    }
  }
  Vector zero(8, 0.0f);
  std::vector<int8_t> codes(8);
  float error = -1;
  QuantizeVector(zero, codes.data(), &error);
  CHECK(error >= 0);
  CHECK(DotCodes(codes.data(), zero.data(), 8) == 0);
}

}  // namespace vector_test
