// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "gemm.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace mha::detail {
namespace {

using simd::kWidth;
using simd::V;

// Rows of B fetched ahead of use: a weight matrix read in place is strided (one
// 128-byte row slice per k), which the hardware prefetchers follow poorly, and its
// rows come from L3. Measured best at 32 rows ahead.
constexpr int kPrefetchRows = 32;
using simd::Prefetch;

// C rows = alpha * tile rows + bias, for the first nc columns.
__attribute__((noinline)) void Epilogue(const float* tile, int mr, float* c, std::ptrdiff_t ldc, int nc,
                                        const float* bias, float alpha) {
  const V al = simd::Set1(alpha);
  V bs[kNV];
  for (int v = 0; v < kNV; ++v) {
    const int n = nc - v * kWidth;
    bs[v] = (bias && n > 0) ? simd::LoadPartial(bias + v * kWidth, n < kWidth ? n : kWidth) : simd::Zero();
  }
  for (int i = 0; i < mr; ++i) {
    float* ci = c + i * ldc;
    for (int v = 0; v < kNV; ++v) {
      const int n = nc - v * kWidth;
      const V r = simd::Fma(simd::Load(tile + i * kNR + v * kWidth), al, bs[v]);  // one rounding
      if (n >= kWidth)
        simd::Store(ci + v * kWidth, r);
      else if (n > 0)
        simd::StorePartial(ci + v * kWidth, r, n);
    }
  }
}

// The micro-kernel: an MR x kNR block of C accumulated in registers over all k.
// A(i, p) at a[i*lda + p] (AT: at a[p*lda + i], A given transposed); B(p, j) at
// b[p*ldb + j], all kNR columns readable. Only the address of A(i, p) depends on AT:
// each element of C is the same chain of FMAs either way.
// ADD: the accumulators start from C instead of zero (alpha 1, no bias), continuing
// the FMA chain of a pass over earlier values of k.
template <int MR, bool AT = false, bool ADD = false>
MHA_INLINE void Kernel(int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float* c,
                       std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  V acc[MR][kNV];
  MHA_UNROLL for (int i = 0; i < MR; ++i) {
    MHA_UNROLL for (int v = 0; v < kNV; ++v) {
      const int n = nc - v * kWidth;
      acc[i][v] = !ADD          ? simd::Zero()
                  : n >= kWidth ? simd::Load(c + i * ldc + v * kWidth)
                  : n > 0       ? simd::LoadPartial(c + i * ldc + v * kWidth, n)
                                : simd::Zero();
    }
  }
  for (int p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    Prefetch(bp + kPrefetchRows * ldb);
    Prefetch(bp + kPrefetchRows * ldb + kNR - 1);  // the row's last cache line
    // A given transposed is read down strided rows (a weight gradient's activations,
    // written by the forward pass long before and out of cache by now): fetched ahead
    // like B, or the kernel waits on every row.
    if (AT) Prefetch(a + (p + kPrefetchRows) * lda);
    V bv[kNV];
    MHA_UNROLL for (int v = 0; v < kNV; ++v) bv[v] = simd::Load(bp + v * kWidth);
    MHA_UNROLL for (int i = 0; i < MR; ++i) {
      const V av = simd::Set1(AT ? a[p * lda + i] : a[i * lda + p]);
      MHA_UNROLL for (int v = 0; v < kNV; ++v) acc[i][v] = simd::Fma(av, bv[v], acc[i][v]);
    }
  }
  if (nc == kNR) {  // a full tile: alpha * acc + bias straight from the registers
    const V al = simd::Set1(alpha);
    V bs[kNV];
    MHA_UNROLL for (int v = 0; v < kNV; ++v) bs[v] = bias ? simd::Load(bias + v * kWidth) : simd::Zero();
    MHA_UNROLL for (int i = 0; i < MR; ++i) {
      MHA_UNROLL for (int v = 0; v < kNV; ++v)
          simd::Store(c + i * ldc + v * kWidth, simd::Fma(acc[i][v], al, bs[v]));  // one rounding
    }
    return;
  }
  // A partial tile goes through a small buffer: the masked epilogue inlined here
  // made the compiler spill accumulators out of the k loop.
  alignas(64) float tile[MR][kNR];
  MHA_UNROLL for (int i = 0; i < MR; ++i) {
    MHA_UNROLL for (int v = 0; v < kNV; ++v) simd::Store(&tile[i][v * kWidth], acc[i][v]);
  }
  Epilogue(&tile[0][0], MR, c, ldc, nc, bias, alpha);
}

using KernelFn = void (*)(int, const float*, std::ptrdiff_t, const float*, std::ptrdiff_t, float*, std::ptrdiff_t, int,
                          const float*, float);

template <int MR, bool AT, bool ADD>
void KernelOutOfLine(int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float* c,
                     std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  Kernel<MR, AT, ADD>(k, a, lda, b, ldb, c, ldc, nc, bias, alpha);
}

// Kernels for the last (m % kMR) rows: entry r has r + 1 rows.
template <bool AT, bool ADD, std::size_t... I>
constexpr std::array<KernelFn, sizeof...(I)> RemainderTable(std::index_sequence<I...>) {
  return {{&KernelOutOfLine<static_cast<int>(I) + 1, AT, ADD>...}};
}
template <bool AT, bool ADD>
constexpr auto kRemainder = RemainderTable<AT, ADD>(std::make_index_sequence<kMR>());

// The kernel for a panel of at most kWidth columns (head_dim 16 in the attention
// core, 16 keys, a vocabulary of 11): one vector per row, so no FMA works on the
// empty half of a kNR-wide tile, and B needs only its nc columns readable (masked
// loads), so a row-major B of that width is read in place. The same chain of FMAs
// and the same final rounding per element as Kernel.
template <int MR, bool AT>
MHA_INLINE void NarrowKernel(int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float* c,
                             std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  const bool whole = nc == kWidth;
  V acc[MR];
  MHA_UNROLL for (int i = 0; i < MR; ++i) acc[i] = simd::Zero();
  for (int p = 0; p < k; ++p) {
    const float* bp = b + p * ldb;
    Prefetch(bp + kPrefetchRows * ldb);
    const V bv = whole ? simd::Load(bp) : simd::LoadPartial(bp, nc);
    MHA_UNROLL for (int i = 0; i < MR; ++i) acc[i] =
        simd::Fma(simd::Set1(AT ? a[p * lda + i] : a[i * lda + p]), bv, acc[i]);
  }
  const V al = simd::Set1(alpha);
  const V bs = !bias ? simd::Zero() : whole ? simd::Load(bias) : simd::LoadPartial(bias, nc);
  MHA_UNROLL for (int i = 0; i < MR; ++i) {
    const V r = simd::Fma(acc[i], al, bs);  // one rounding
    if (whole)
      simd::Store(c + i * ldc, r);
    else
      simd::StorePartial(c + i * ldc, r, nc);
  }
}

template <int MR, bool AT>
void NarrowOutOfLine(int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float* c,
                     std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  NarrowKernel<MR, AT>(k, a, lda, b, ldb, c, ldc, nc, bias, alpha);
}
template <bool AT, std::size_t... I>
constexpr std::array<KernelFn, sizeof...(I)> NarrowTable(std::index_sequence<I...>) {
  return {{&NarrowOutOfLine<static_cast<int>(I) + 1, AT>...}};
}
template <bool AT>
constexpr auto kNarrowRemainder = NarrowTable<AT>(std::make_index_sequence<kMR>());

// Panel and PanelAT: row i of A starts at a + i * lda, or at a + i (AT).
template <bool AT, bool ADD = false>
void PanelOf(int m, int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float* c,
             std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  const std::ptrdiff_t row = AT ? 1 : lda;
  if (!ADD && nc <= kWidth && kNV > 1) {
    int r0 = 0;
    for (; r0 + kMR <= m; r0 += kMR)
      NarrowKernel<kMR, AT>(k, a + r0 * row, lda, b, ldb, c + r0 * ldc, ldc, nc, bias, alpha);
    if (r0 < m) kNarrowRemainder<AT>[m - r0 - 1](k, a + r0 * row, lda, b, ldb, c + r0 * ldc, ldc, nc, bias, alpha);
    return;
  }
  int full = m / kMR;
  const int rem = m % kMR;
  // Kernels of fewer than about 5 rows run well below peak (too few independent
  // accumulators): a last tile of 2-4 rows is merged with the one before and the
  // two are split evenly instead (e.g. 8 + 4 rows become 6 + 6).
  const bool split = full >= 1 && rem >= 2 && rem <= 4 && kMR >= 8;
  if (split) --full;
  int r0 = 0;
  for (int i = 0; i < full; ++i, r0 += kMR)
    Kernel<kMR, AT, ADD>(k, a + r0 * row, lda, b, ldb, c + r0 * ldc, ldc, nc, bias, alpha);
  const int left = m - r0;
  const int first = split ? (left + 1) / 2 : left;
  if (first > 0) kRemainder<AT, ADD>[first - 1](k, a + r0 * row, lda, b, ldb, c + r0 * ldc, ldc, nc, bias, alpha);
  r0 += first;
  if (r0 < m) kRemainder<AT, ADD>[m - r0 - 1](k, a + r0 * row, lda, b, ldb, c + r0 * ldc, ldc, nc, bias, alpha);
}

}  // namespace

void PackB(const float* b, std::ptrdiff_t ldb, int k, int nc, float* panel) {
  for (int p = 0; p < k; ++p) {
    const float* src = b + p * ldb;
    Prefetch(src + kPrefetchRows * ldb);
    Prefetch(src + kPrefetchRows * ldb + kNR - 1);
    float* dst = panel + static_cast<std::ptrdiff_t>(p) * kNR;
    for (int v = 0; v < kNV; ++v) {
      const int n = nc - v * kWidth;
      if (n >= kWidth)
        simd::Store(dst + v * kWidth, simd::Load(src + v * kWidth));
      else if (n > 0)
        simd::Store(dst + v * kWidth, simd::LoadPartial(src + v * kWidth, n));
      else
        simd::Store(dst + v * kWidth, simd::Zero());
    }
  }
}

#if defined(__AVX512F__)
// r[j] (row j of a 16 x 16 block) becomes column j, in registers: unpacks within
// 128-bit lanes, then lane shuffles.
MHA_INLINE void Transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);
    t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xdd);
    t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
    t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xdd);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
    r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
    r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
    r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xdd);
  }
}
#endif

#if !defined(__AVX512F__) && defined(__AVX2__)
// r[j] (row j of an 8 x 8 block) becomes column j: unpacks, shuffles within 128-bit
// lanes, then the lanes' halves exchanged.
MHA_INLINE void Transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}
#endif

void PackBT(const float* bt, std::ptrdiff_t ldbt, int k, int nc, float* panel) {
#if defined(__AVX512F__) || defined(__AVX2__)
  // One panel row (kWidth columns of B) per gather: B(p, j0..) is a column of bt.
  // The element-wise copy wrote one cache line per element, and it ran once per
  // sequence and head in training (K^T for the scores, V^T for dattn).
  if (ldbt <= (1 << 20)) {
#if defined(__AVX512F__)
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
#else
    const __m256i lane = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
#endif
    const auto ld = static_cast<int>(ldbt);
    for (int v = 0; v < kNV; ++v) {
      const int n = nc - v * kWidth;
      if (n <= 0) {
        for (int p = 0; p < k; ++p)
          simd::Store(panel + static_cast<std::ptrdiff_t>(p) * kNR + v * kWidth, simd::Zero());
        continue;
      }
      const float* col = bt + static_cast<std::ptrdiff_t>(v) * kWidth * ldbt;
#if defined(__AVX512F__)
      // Whole 16 x 16 blocks transposed in registers (about a third of the gathers'
      // time), the rest of k gathered.
      const int rows = n < kWidth ? n : kWidth;
      int p = 0;
      for (; p + 16 <= k; p += 16) {
        __m512 r[16];
        for (int j = 0; j < 16; ++j)
          r[j] = j < rows ? _mm512_loadu_ps(col + static_cast<std::ptrdiff_t>(j) * ldbt + p) : _mm512_setzero_ps();
        Transpose16(r);
        for (int q = 0; q < 16; ++q)
          _mm512_storeu_ps(panel + static_cast<std::ptrdiff_t>(p + q) * kNR + v * kWidth, r[q]);
      }
      const __m512i idx = _mm512_mullo_epi32(lane, _mm512_set1_epi32(ld));
      const __mmask16 mask = simd::Mask(rows);
      for (; p < k; ++p)
        _mm512_storeu_ps(panel + static_cast<std::ptrdiff_t>(p) * kNR + v * kWidth,
                         _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, idx, col + p, 4));
#else
      // Whole 8 x 8 blocks transposed in registers, as the AVX-512 path does: a gather
      // of eight floats costs several times a load on Zen 3.
      const int rows = n < kWidth ? n : kWidth;
      int p = 0;
      for (; p + 8 <= k; p += 8) {
        __m256 r[8];
        for (int j = 0; j < 8; ++j)
          r[j] = j < rows ? _mm256_loadu_ps(col + static_cast<std::ptrdiff_t>(j) * ldbt + p) : _mm256_setzero_ps();
        Transpose8(r);
        for (int q = 0; q < 8; ++q)
          _mm256_storeu_ps(panel + static_cast<std::ptrdiff_t>(p + q) * kNR + v * kWidth, r[q]);
      }
      const __m256i idx = _mm256_mullo_epi32(lane, _mm256_set1_epi32(ld));
      const __m256 mask = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(rows), lane));
      for (; p < k; ++p)
        _mm256_storeu_ps(panel + static_cast<std::ptrdiff_t>(p) * kNR + v * kWidth,
                         _mm256_mask_i32gather_ps(_mm256_setzero_ps(), col + p, idx, mask, 4));
#endif
    }
    return;
  }
#endif
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

void Panel(int m, int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float* c,
           std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  PanelOf<false>(m, k, a, lda, b, ldb, c, ldc, nc, bias, alpha);
}

void PanelAT(int m, int k, const float* at, std::ptrdiff_t ldat, const float* b, std::ptrdiff_t ldb, float* c,
             std::ptrdiff_t ldc, int nc, const float* bias, float alpha) {
  PanelOf<true>(m, k, at, ldat, b, ldb, c, ldc, nc, bias, alpha);
}

void PanelATAdd(int m, int k, const float* at, std::ptrdiff_t ldat, const float* b, std::ptrdiff_t ldb, float* c,
                std::ptrdiff_t ldc, int nc) {
  PanelOf<true, true>(m, k, at, ldat, b, ldb, c, ldc, nc, nullptr, 1.0f);
}

namespace {

// The strips of a packed A^T: as many as tiles of kMR rows need, their rows shared out
// evenly (64 rows: 9 x 6 + 2 x 5 rather than 10 x 6 + 4, whose 4-row kernel has only
// 8 chains for 8 FMAs in flight). The first `wide` strips have base + 1 rows, the
// others base; each strip's k x width floats are followed by a vector of padding that
// PackAT's whole-vector stores of the last row spill into. Walked in order (no
// division per strip: PackAT visits every strip once per row).
struct Strips {
  int n, base, wide;
  explicit Strips(int m) : n(std::max(1, (m + kMR - 1) / kMR)), base(m / n), wide(m % n) {}
  int Width(int t) const { return base + (t < wide ? 1 : 0); }
};

}  // namespace

std::size_t PackedATFloats(int m, int k) {
  return static_cast<std::size_t>(m) * k + static_cast<std::size_t>(Strips(m).n) * kWidth;
}

void PackAT(const float* at, std::ptrdiff_t ldat, int m, int k, float* packed) {
  const Strips s(m);
  // Row by row of A^T (the block's rows of the activations, contiguous in memory),
  // every strip's share of it: one sequential sweep over the source. Whole vectors
  // where they stay within the block's m columns; row p's spill past its w floats is
  // overwritten by row p + 1, the last row's lands in the strip's padding.
  for (int p = 0; p < k; ++p) {
    const float* src = at + p * ldat;
    float* dst = packed;
    for (int t = 0, i0 = 0; t < s.n; ++t) {
      const int w = s.Width(t);
      simd::Store(dst + p * w, i0 + kWidth <= m ? simd::Load(src + i0) : simd::LoadPartial(src + i0, w));
      dst += static_cast<std::ptrdiff_t>(w) * k + kWidth;
      i0 += w;
    }
  }
}

void PanelPackedAT(int m, int k, const float* packed, const float* b, std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc,
                   int nc, bool add) {
  const Strips s(m);
  const float* a = packed;
  for (int t = 0; t < s.n; ++t) {
    const int w = s.Width(t);
    if (w == kMR) {
      if (add)
        Kernel<kMR, true, true>(k, a, w, b, ldb, c, ldc, nc, nullptr, 1.0f);
      else
        Kernel<kMR, true, false>(k, a, w, b, ldb, c, ldc, nc, nullptr, 1.0f);
    } else {
      (add ? kRemainder<true, true> : kRemainder<true, false>)[w - 1](k, a, w, b, ldb, c, ldc, nc, nullptr, 1.0f);
    }
    a += static_cast<std::ptrdiff_t>(w) * k + kWidth;
    c += w * ldc;
  }
}

}  // namespace mha::detail
