#include "memory/encoder/blas.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace limbic::memory::encoder {

Result<const Blas*> LoadBlas() {
  struct Loaded {
    Blas blas;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded l;
    // Debian's OpenBLAS 0.3.21 predates Zen 4 and 5 and gives them its AVX2
    // (Haswell) kernels; its AVX-512 ones are 1.7x faster there (bench/NOTES.md,
    // "sentence encoder"). The variable is read when the library loads, so it
    // is set now, unless the user set it. Every CPU with these four
    // extensions runs the SkylakeX kernels.
    if (std::getenv("OPENBLAS_CORETYPE") == nullptr && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
      ::setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    // RTLD_LOCAL: OpenBLAS's symbols (a whole LAPACK) stay out of the
    // program's namespace.
    void* handle = dlopen(LIMBIC_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      l.error = "the local embedder needs OpenBLAS (" LIMBIC_OPENBLAS_LIBRARY
                ", Debian's libopenblas0), which did not load: " +
                std::string(why != nullptr ? why : "dlopen failed");
      return l;
    }
    l.blas.sgemm = reinterpret_cast<decltype(l.blas.sgemm)>(dlsym(handle, "cblas_sgemm"));
    l.blas.set_num_threads =
        reinterpret_cast<decltype(l.blas.set_num_threads)>(dlsym(handle, "openblas_set_num_threads"));
    if (l.blas.sgemm == nullptr || l.blas.set_num_threads == nullptr)
      l.error = LIMBIC_OPENBLAS_LIBRARY " has no cblas_sgemm or openblas_set_num_threads";
    return l;
  }();
  if (!loaded.error.empty()) return Status::Unavailable(loaded.error);
  return &loaded.blas;
}

}  // namespace limbic::memory::encoder
