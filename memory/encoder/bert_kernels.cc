#include "memory/encoder/bert_kernels.h"

#include <bit>
#include <cmath>
#include <cstdint>

// Compiled with -O3 (memory/CMakeLists.txt): GCC's -O2 cost model does not
// vectorise loops whose trip count is unknown. The bodies are written so
// that -O3 vectorises them without -ffast-math: sums in 16 independent
// lanes, clamps as conditionals, rounding by the 1.5 * 2^23 trick.
#define LIMBIC_INLINE inline __attribute__((always_inline))

namespace limbic::memory::encoder::kernels {
namespace {

constexpr size_t kLanes = 16;

LIMBIC_INLINE float Sum(const float* x, size_t n) {
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) acc[j] += x[i + j];
  float s = 0;
  for (; i < n; ++i) s += x[i];
  for (size_t j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

LIMBIC_INLINE float SumSquaredDeviation(const float* x, size_t n, float mean) {
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) acc[j] += (x[i + j] - mean) * (x[i + j] - mean);
  float s = 0;
  for (; i < n; ++i) s += (x[i] - mean) * (x[i] - mean);
  for (size_t j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

LIMBIC_INLINE float Max(const float* x, size_t n) {
  float acc[kLanes];
  for (size_t j = 0; j < kLanes; ++j) acc[j] = x[0];
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; ++j) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
  float m = x[0];
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (size_t j = 0; j < kLanes; ++j) m = acc[j] > m ? acc[j] : m;
  return m;
}

// Cephes' expf: x = n ln2 + r, |r| <= ln2/2, exp(r) by a degree-7
// polynomial, 2^n put into the exponent bits. Inputs clamped to where the
// result is a normal float.
LIMBIC_INLINE float ExpOne(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  return y * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

// erf within about 1 ulp, in two pieces as in Norbert Juffa's published
// single-precision erff: an odd polynomial below |x| = 0.9277, and
// 1 - exp(-poly(|x|)) above it. Both are computed and one is selected, so
// the loop stays branch-free and vectorises.
LIMBIC_INLINE float ErfOne(float x) {
  const float t = x < 0.0f ? -x : x, s = x * x;
  float r = -1.72853470e-5f * t + 3.83197126e-4f;
  const float u = -3.88396438e-3f * t + 2.42546219e-2f;
  r = r * s + u;
  r = r * t + -1.06777877e-1f;
  r = r * t + -6.34846687e-1f;
  r = r * t + -1.28717512e-1f;
  r = r * t - t;
  float large = 1.0f - ExpOne(r);
  large = x < 0.0f ? -large : large;
  float p = -5.96761703e-4f;
  p = p * s + 4.99119423e-3f;
  p = p * s + -2.67681349e-2f;
  p = p * s + 1.12819925e-1f;
  p = p * s + -3.76125336e-1f;
  p = p * s + 1.28379166e-1f;
  const float small = p * x + x;
  return t > 0.927734375f ? large : small;
}

LIMBIC_INLINE void LayerNormBody(float* x, size_t rows, size_t cols, const float* bias,
                                 const float* gamma, const float* beta, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    float* __restrict row = x + r * cols;
    if (bias)
      for (size_t c = 0; c < cols; ++c) row[c] += bias[c];
    const float mean = Sum(row, cols) / static_cast<float>(cols);
    const float var = SumSquaredDeviation(row, cols, mean) / static_cast<float>(cols);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (size_t c = 0; c < cols; ++c) row[c] = (row[c] - mean) * inv * gamma[c] + beta[c];
  }
}

LIMBIC_INLINE void BiasActBody(float* x, size_t rows, size_t cols, const float* bias, Act act) {
  for (size_t r = 0; r < rows; ++r) {
    float* __restrict row = x + r * cols;
    switch (act) {
      case Act::kGelu:
        for (size_t c = 0; c < cols; ++c) {
          const float v = row[c] + bias[c];
          row[c] = 0.5f * v * (1.0f + ErfOne(v * 0.70710678118654752f));
        }
        break;
      case Act::kGeluTanh:  // 0.5(1 + tanh(u)) = 1 / (1 + exp(-2u))
        for (size_t c = 0; c < cols; ++c) {
          const float v = row[c] + bias[c];
          const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
          row[c] = v / (1.0f + ExpOne(-2.0f * u));
        }
        break;
      case Act::kRelu:
        for (size_t c = 0; c < cols; ++c) {
          const float v = row[c] + bias[c];
          row[c] = v > 0.0f ? v : 0.0f;
        }
        break;
    }
  }
}

LIMBIC_INLINE void SoftmaxBody(float* x, size_t rows, size_t n, size_t ld) {
  for (size_t r = 0; r < rows; ++r) {
    float* __restrict row = x + r * ld;
    const float m = Max(row, n);
    for (size_t c = 0; c < n; ++c) row[c] = ExpOne(row[c] - m);
    const float scale = 1.0f / Sum(row, n);
    for (size_t c = 0; c < n; ++c) row[c] *= scale;
  }
}

LIMBIC_INLINE void ErfBody(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = ErfOne(x[i]);
}

struct Table {
  void (*layer_norm)(float*, size_t, size_t, const float*, const float*, const float*, float);
  void (*bias_act)(float*, size_t, size_t, const float*, Act);
  void (*softmax)(float*, size_t, size_t, size_t);
  void (*erf)(const float*, float*, size_t);
};

// One set of entry points per instruction set, each the bodies above
// compiled for it.
#define LIMBIC_KERNEL_SET(NAME, ATTR)                                                         \
  ATTR void LayerNorm##NAME(float* x, size_t rows, size_t cols, const float* bias,            \
                            const float* gamma, const float* beta, float eps) {               \
    LayerNormBody(x, rows, cols, bias, gamma, beta, eps);                                     \
  }                                                                                           \
  ATTR void BiasAct##NAME(float* x, size_t rows, size_t cols, const float* bias, Act act) {   \
    BiasActBody(x, rows, cols, bias, act);                                                    \
  }                                                                                           \
  ATTR void Softmax##NAME(float* x, size_t rows, size_t n, size_t ld) {                       \
    SoftmaxBody(x, rows, n, ld);                                                              \
  }                                                                                           \
  ATTR void Erf##NAME(const float* x, float* y, size_t n) { ErfBody(x, y, n); }               \
  constexpr Table k##NAME = {LayerNorm##NAME, BiasAct##NAME, Softmax##NAME, Erf##NAME};

LIMBIC_KERNEL_SET(Baseline, )
#if defined(__x86_64__)
LIMBIC_KERNEL_SET(Avx2, __attribute__((target("avx2,fma"))))
LIMBIC_KERNEL_SET(Avx512, __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))))
#endif

const Table& Choose() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
    return kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return kAvx2;
#endif
  return kBaseline;
}

const Table& Kernels() {
  static const Table& table = Choose();
  return table;
}

}  // namespace

void LayerNorm(float* x, size_t rows, size_t cols, const float* bias, const float* gamma,
               const float* beta, float eps) {
  Kernels().layer_norm(x, rows, cols, bias, gamma, beta, eps);
}

void BiasAct(float* x, size_t rows, size_t cols, const float* bias, Act act) {
  Kernels().bias_act(x, rows, cols, bias, act);
}

void Softmax(float* x, size_t rows, size_t n, size_t ld) { Kernels().softmax(x, rows, n, ld); }

void Erf(const float* x, float* y, size_t n) { Kernels().erf(x, y, n); }

}  // namespace limbic::memory::encoder::kernels
