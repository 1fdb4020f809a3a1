// Vector helpers declared in embedder.h: cosine, normalisation, and the
// stored encoding (little-endian f32, base64).
#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "base/base64.h"
#include "memory/embedder.h"

namespace limbic::memory {

namespace {

// Four partial sums let the compiler vectorise (4 lanes) without
// -ffast-math; the portable build has no wider registers to give it.
float DotPortable(const float* a, const float* b, size_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

#if defined(__x86_64__)
// 8-lane fused multiply-adds into four independent sums (32 floats a
// step), for CPUs with AVX2 and FMA; chosen at run time.
__attribute__((target("avx2,fma"))) float DotAvx2(const float* a, const float* b, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  const __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float sum = _mm_cvtss_f32(h);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}
#endif

float DotCodesPortable(const int8_t* c, const float* q, size_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += static_cast<float>(c[i]) * q[i];
    s1 += static_cast<float>(c[i + 1]) * q[i + 1];
    s2 += static_cast<float>(c[i + 2]) * q[i + 2];
    s3 += static_cast<float>(c[i + 3]) * q[i + 3];
  }
  for (; i < n; ++i) s0 += static_cast<float>(c[i]) * q[i];
  return (s0 + s1) + (s2 + s3);
}

#if defined(__x86_64__)
// 16 codes a step, widened to floats and multiplied into two sums.
__attribute__((target("avx2,fma"))) float DotCodesAvx2(const int8_t* c, const float* q, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + i));
    const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(x));
    const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(x, 8)));
    s0 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(q + i), s0);
    s1 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(q + i + 8), s1);
  }
  const __m256 s = _mm256_add_ps(s0, s1);
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float sum = _mm_cvtss_f32(h);
  for (; i < n; ++i) sum += static_cast<float>(c[i]) * q[i];
  return sum;
}
#endif

bool HasAvx2() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

using DotFn = float (*)(const float*, const float*, size_t);
using DotCodesFn = float (*)(const int8_t*, const float*, size_t);

DotFn ChooseDot() {
#if defined(__x86_64__)
  if (HasAvx2()) return DotAvx2;
#endif
  return DotPortable;
}

DotCodesFn ChooseDotCodes() {
#if defined(__x86_64__)
  if (HasAvx2()) return DotCodesAvx2;
#endif
  return DotCodesPortable;
}

}  // namespace

float Dot(const float* a, const float* b, size_t n) {
  static const DotFn dot = ChooseDot();  // not a global: static initialisers may call Dot
  return dot(a, b, n);
}

float DotCodes(const int8_t* codes, const float* q, size_t n) {
  static const DotCodesFn dot = ChooseDotCodes();
  return dot(codes, q, n);
}

float QuantizeVector(std::span<const float> v, int8_t* codes, float* error) {
  float top = 0;
  for (float x : v) top = std::max(top, std::fabs(x));
  float scale = top / 127.0f;
  if (!(scale > 0) || !std::isfinite(scale)) scale = 1;  // zero, subnormal: all codes 0
  double err2 = 0, norm2 = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const float c = std::clamp(std::nearbyint(v[i] / scale), -127.0f, 127.0f);
    codes[i] = static_cast<int8_t>(c);
    const double d = static_cast<double>(v[i]) - static_cast<double>(c) * scale;
    err2 += d * d;
    norm2 += static_cast<double>(v[i]) * v[i];
  }
  // The rounding of two float dot products of n terms is at most
  // 2 n u (|q| |v| + |q| |v'|), u = 2^-24, |v'| <= |v| + error: allowed for
  // twice over, and the sum rounded up, so that the bound is never tight.
  const double quant = std::sqrt(err2);
  const double rounding = 8.0 * static_cast<double>(v.size()) * 0x1p-24 * (std::sqrt(norm2) + quant);
  *error = static_cast<float>((quant + rounding) * (1 + 1e-6)) + 1e-9f;
  return scale;
}

float Cosine(std::span<const float> a, std::span<const float> b) {
  return Dot(a.data(), b.data(), std::min(a.size(), b.size()));
}

void Normalize(Vector* v) {
  double sum = 0;
  for (float x : *v) sum += static_cast<double>(x) * x;
  if (sum <= 0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : *v) x *= inv;
}

std::string EncodeVector(std::span<const float> v) {
  std::string bytes(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &v[i], 4);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  return Base64Encode(bytes);
}

Result<Vector> DecodeVector(std::string_view text) {
  auto bytes = Base64Decode(text);
  if (!bytes.ok()) return bytes.status().WithContext("vector");
  if (bytes->size() % 4 != 0) return Status::InvalidArgument("vector: byte count is not a multiple of 4");
  Vector out(bytes->size() / 4);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t u = 0;
    for (int b = 0; b < 4; ++b) u |= uint32_t(uint8_t((*bytes)[i * 4 + b])) << (8 * b);
    std::memcpy(&out[i], &u, 4);
  }
  return out;
}

}  // namespace limbic::memory
