#include "mha/isa.hpp"

#include "gemm.hpp"
#include "simd.hpp"

namespace mha {

KernelIsa BuildKernelIsa() {
  using detail::kMR;
  using detail::kNR;
#if defined(__AVX512F__)
  return {"avx512", "AVX-512F, 16 floats a vector", simd::kWidth, kMR, kNR};
#elif defined(__AVX2__) && defined(__FMA__)
  return {"avx2", "AVX2 + FMA, 8 floats a vector", simd::kWidth, kMR, kNR};
#elif defined(__GNUC__) || defined(__clang__)
  return {"portable", "portable vector extensions (SSE2 on x86-64), 4 floats a vector, no FMA", simd::kWidth, kMR, kNR};
#else
  return {"scalar", "plain C++ arrays of 4 floats", simd::kWidth, kMR, kNR};
#endif
}

bool CpuHasAvx512() {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

}  // namespace mha
