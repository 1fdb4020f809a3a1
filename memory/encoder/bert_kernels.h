// The elementwise steps of the BERT forward pass (memory/encoder/bert.cc):
// LayerNorm, bias + activation, softmax. Internal to memory/encoder/.
//
// Each is compiled three times (AVX-512, AVX2+FMA, baseline x86-64) and
// the CPU's best is chosen on the first call, as memory/vector.cc does: at
// the project's -O2 without -march these loops would run scalar, and with
// the matrix products in BLAS they would be a large part of the time.
//
// Accuracy (float32, with FMA): exp within 2 ulp; erf within 1e-7 absolute
// of the exact function (tests/memory/encoder/bert_test.cc checks it on a grid).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstddef>

namespace limbic::memory::encoder::kernels {

enum class Act { kGelu, kGeluTanh, kRelu };

//! x[r] = LayerNorm(x[r] + bias) * gamma + beta for each of `rows` rows of
//! `cols` contiguous floats; `bias` may be null.
void LayerNorm(float* x, size_t rows, size_t cols, const float* bias, const float* gamma,
               const float* beta, float eps);

//! x[r] = act(x[r] + bias) for each of `rows` rows of `cols` floats.
//! kGelu is 0.5x(1 + erf(x/sqrt 2)); kGeluTanh 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
void BiasAct(float* x, size_t rows, size_t cols, const float* bias, Act act);

//! Softmax in place over the first `n` floats of each of `rows` rows,
//! `ld` floats apart.
void Softmax(float* x, size_t rows, size_t n, size_t ld);

//! erf(x) for each of n values (the tests' check of the approximation).
void Erf(const float* x, float* y, size_t n);

}  // namespace limbic::memory::encoder::kernels
