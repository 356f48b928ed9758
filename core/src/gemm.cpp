// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "gemm.hpp"

#include <array>
#include <utility>

namespace mha::detail {
namespace {

using simd::kWidth;
using simd::V;

// C rows = alpha * tile rows + bias, for the first nc columns.
__attribute__((noinline)) void Epilogue(const float* tile, int mr, float* c, std::ptrdiff_t ldc,
                                        int nc, const float* bias, float alpha) {
  const V al = simd::Set1(alpha);
  V bs[kNV];
  for (int v = 0; v < kNV; ++v) {
    const int n = nc - v * kWidth;
    bs[v] = (bias && n > 0) ? simd::LoadPartial(bias + v * kWidth, n < kWidth ? n : kWidth)
                            : simd::Zero();
  }
  for (int i = 0; i < mr; ++i) {
    float* ci = c + i * ldc;
    for (int v = 0; v < kNV; ++v) {
      const int n = nc - v * kWidth;
      const V r = simd::Fma(simd::Load(tile + i * kNR + v * kWidth), al, bs[v]);  // one rounding
      if (n >= kWidth) simd::Store(ci + v * kWidth, r);
      else if (n > 0) simd::StorePartial(ci + v * kWidth, r, n);
    }
  }
}

// The micro-kernel: an MR x kNR block of C accumulated in registers over all k.
// A(i, p) at a[i*lda + p]; B(p, j) at b[p*ldb + j], all kNR columns readable.
template <int MR>
MHA_INLINE void Kernel(int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                       float* c, std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  V acc[MR][kNV];
  MHA_UNROLL for (int i = 0; i < MR; ++i) {
    MHA_UNROLL for (int v = 0; v < kNV; ++v) acc[i][v] = simd::Zero();
  }
  for (int p = 0; p < k; ++p) {
    V bv[kNV];
    MHA_UNROLL for (int v = 0; v < kNV; ++v) bv[v] = simd::Load(b + p * ldb + v * kWidth);
    MHA_UNROLL for (int i = 0; i < MR; ++i) {
      const V av = simd::Set1(a[i * lda + p]);
      MHA_UNROLL for (int v = 0; v < kNV; ++v) acc[i][v] = simd::Fma(av, bv[v], acc[i][v]);
    }
  }
  // The epilogue goes through a small buffer: keeping it out of the register-blocked
  // loop lets the compiler keep all accumulators and both B vectors in registers.
  alignas(64) float tile[MR][kNR];
  MHA_UNROLL for (int i = 0; i < MR; ++i) {
    MHA_UNROLL for (int v = 0; v < kNV; ++v) simd::Store(&tile[i][v * kWidth], acc[i][v]);
  }
  Epilogue(&tile[0][0], MR, c, ldc, nc, bias, alpha);
}

using KernelFn = void (*)(int, const float*, std::ptrdiff_t, const float*, std::ptrdiff_t, float*,
                          std::ptrdiff_t, int, const float*, float);

template <int MR>
void KernelOutOfLine(int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                     float* c, std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  Kernel<MR>(k, a, lda, b, ldb, c, ldc, nc, bias, alpha);
}

// Kernels for the last (m % kMR) rows: entry r has r + 1 rows.
template <std::size_t... I>
constexpr std::array<KernelFn, sizeof...(I)> RemainderTable(std::index_sequence<I...>) {
  return {{&KernelOutOfLine<static_cast<int>(I) + 1>...}};
}
constexpr auto kRemainder = RemainderTable(std::make_index_sequence<kMR>());

}  // namespace

void PackB(const float* b, std::ptrdiff_t ldb, int k, int nc, float* panel) {
  for (int p = 0; p < k; ++p) {
    const float* src = b + p * ldb;
    float* dst = panel + static_cast<std::ptrdiff_t>(p) * kNR;
    for (int v = 0; v < kNV; ++v) {
      const int n = nc - v * kWidth;
      if (n >= kWidth) simd::Store(dst + v * kWidth, simd::Load(src + v * kWidth));
      else if (n > 0) simd::Store(dst + v * kWidth, simd::LoadPartial(src + v * kWidth, n));
      else simd::Store(dst + v * kWidth, simd::Zero());
    }
  }
}

void PackBT(const float* bt, std::ptrdiff_t ldbt, int k, int nc, float* panel) {
  for (int j = 0; j < kNR; ++j) {
    float* dst = panel + j;
    if (j < nc) {
      const float* src = bt + j * ldbt;
      for (int p = 0; p < k; ++p) dst[static_cast<std::ptrdiff_t>(p) * kNR] = src[p];
    } else {
      for (int p = 0; p < k; ++p) dst[static_cast<std::ptrdiff_t>(p) * kNR] = 0.0f;
    }
  }
}

void Panel(int m, int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
           float* c, std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  int r0 = 0;
  for (; r0 + kMR <= m; r0 += kMR)
    Kernel<kMR>(k, a + r0 * lda, lda, b, ldb, c + r0 * ldc, ldc, nc, bias, alpha);
  if (r0 < m) kRemainder[m - r0 - 1](k, a + r0 * lda, lda, b, ldb, c + r0 * ldc, ldc, nc, bias, alpha);
}

}  // namespace mha::detail
