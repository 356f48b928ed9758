// A small single-precision GEMM for the shapes of one attention layer, built around
// one register-blocked micro-kernel (Goto/BLIS style): a kMR x kNR block of C lives
// in registers while k runs; B is read from a packed kNR-wide panel (contiguous, so
// no cache-set aliasing however wide the weight matrix is) or, where that does not
// pay, in place; A is read straight from its row-major rows (measured as fast as a
// packed A here, and no copy).
//
// Every element of C is produced by the same sequence of operations whichever
// thread or tile computes it, so results are bit-identical for any thread count.
#pragma once

#include <cstddef>

#include "simd.hpp"

namespace mha::detail {

#if defined(__AVX512F__)
constexpr int kMR = 8;  // 8 x 2 zmm accumulators: measured 98-99% of peak on Zen 4 (12 rows: 95%)
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kMR = 6;  // 6 x 2 ymm accumulators + 2 B vectors + broadcast <= 16 registers
#else
constexpr int kMR = 4;
#endif
constexpr int kNV = 2;                   // vectors per row of a B panel
constexpr int kNR = kNV * simd::kWidth;  // columns of a B panel

// Floats a packed B panel of depth k needs.
inline std::size_t PanelFloats(int k) { return static_cast<std::size_t>(k) * kNR; }
// Packs columns [0, nc) (nc <= kNR) of the k x nc matrix B, element (p, j) at
// b[p * ldb + j], into a k x kNR panel; columns >= nc are zero.
void PackB(const float* b, std::ptrdiff_t ldb, int k, int nc, float* panel);
// The same for B given transposed: element (p, j) of B at bt[j * ldbt + p].
void PackBT(const float* bt, std::ptrdiff_t ldbt, int k, int nc, float* panel);
// C(i, j) = alpha * sum_p A(i, p) B(p, j) + bias[j]   for i < m, j < nc (nc <= kNR),
// A row-major (element (i, p) at a[i*lda + p]), C row-major (ldc), bias may be null.
// B(p, j) at b[p*ldb + j] with all kNR columns readable: a packed panel (ldb = kNR),
// or a full-width slice of a row-major matrix read in place; only nc columns need be
// readable when nc <= simd::kWidth.
void Panel(int m, int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, float* c,
           std::ptrdiff_t ldc, int nc, const float* bias, float alpha);
// The same with A given transposed: A(i, p) at at[p * ldat + i]. Saves transposing
// A first (a weight gradient X^T dY, the attention core's dS^T Q); the same values.
void PanelAT(int m, int k, const float* at, std::ptrdiff_t ldat, const float* b, std::ptrdiff_t ldb, float* c,
             std::ptrdiff_t ldc, int nc, const float* bias, float alpha);
// C += A B for a further stretch of k after PanelAT with alpha 1 and no bias: the
// accumulators resume from C, so a long k cut into blocks gives the bits of one
// pass (the chain starts at +0 and so never holds -0, which a store would not keep).
void PanelATAdd(int m, int k, const float* at, std::ptrdiff_t ldat, const float* b, std::ptrdiff_t ldb, float* c,
                std::ptrdiff_t ldc, int nc);

// A given transposed, packed: the k x m block A^T (element (p, i) at at[p * ldat + i])
// copied into strips of consecutive rows of A, one micro-tile's rows each, every strip
// k rows of its own width, contiguous. Read down strided rows in place, a strip touched
// a new cache line per k, and rows a power-of-two apart (a weight gradient's d_model
// or d_ff columns) fell into the same few cache sets: 256-bit weight gradients ran at
// 35-55% of peak. PackedATFloats: the floats PackAT writes (padding included).
std::size_t PackedATFloats(int m, int k);
void PackAT(const float* at, std::ptrdiff_t ldat, int m, int k, float* packed);
// C (m x nc) = A B, or C += A B with add (continuing the chains, as PanelATAdd), A
// packed by PackAT, B as for Panel (all kNR columns readable). The same chain of
// operations per element as PanelAT and PanelATAdd on the unpacked A: the same bits.
void PanelPackedAT(int m, int k, const float* packed, const float* b, std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc,
                   int nc, bool add);

}  // namespace mha::detail
