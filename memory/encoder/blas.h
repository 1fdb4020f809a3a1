// OpenBLAS, opened with dlopen on first use, not linked: loading it starts
// its thread pool and costs every command ~1.5 ms and 3.4 MB at start
// (bench/NOTES.md, "sentence encoder: BLAS"), and only a local embedder
// multiplies matrices. Debian's build picks its kernels for the CPU at run
// time (DYNAMIC_ARCH), which is why it is used at all.
//
// Thread-safety: any thread; the first call loads the library once.
#pragma once

#include <cblas.h>

#include "base/status.h"

namespace limbic::memory::encoder {

//! The functions of OpenBLAS the encoder calls.
struct Blas {
  decltype(&::cblas_sgemm) sgemm = nullptr;
  decltype(&::openblas_set_num_threads) set_num_threads = nullptr;
};

//! The library, loaded; Unavailable naming the SONAME and dlopen's error
//! when it cannot be (libopenblas0 not installed).
Result<const Blas*> LoadBlas();

}  // namespace limbic::memory::encoder
