// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "batch_gemm.hpp"

#include <algorithm>

#include "gemm.hpp"
#include "simd.hpp"

namespace mha::detail {

namespace {

constexpr int kDepthBlock = 128;  // k per block of a weight gradient (measured: 3-5% faster than 64 at teaching size)

// sums[0, nc) += rows [0, rows) of b (row stride ldb), row by row in order, nc <= kNR:
// each column's chain of additions as AccumulateColumnSums makes it.
void AddRows(const float* b, std::ptrdiff_t ldb, int rows, int nc, float* sums) {
  using simd::kWidth;
  int width[kNV];
  simd::V acc[kNV];
  for (int v = 0; v < kNV; ++v) {
    width[v] = std::clamp(nc - v * kWidth, 0, kWidth);
    acc[v] = simd::LoadPartial(sums + v * kWidth, width[v]);
  }
  for (int p = 0; p < rows; ++p)
    for (int v = 0; v < kNV; ++v)
      if (width[v] > 0) acc[v] = simd::Add(acc[v], simd::LoadPartial(b + p * ldb + v * kWidth, width[v]));
  for (int v = 0; v < kNV; ++v)
    if (width[v] > 0) simd::StorePartial(sums + v * kWidth, acc[v], width[v]);
}

// The AVX-512 build keeps the in-place weight gradients it was measured with (Sapphire
// Rapids, docs/performance.md); the packed form below was measured on 256-bit Zen 3.
#if defined(__AVX512F__)
constexpr bool kPackGradients = false;
#else
constexpr bool kPackGradients = true;
#endif
// Depth (batch rows) per packed block, and the widest gradient packed: a block of A^T or
// of B is then at most 4 MiB of scratch (wider ones, a large vocabulary's, go in place).
constexpr int kGradDepth = 256;
constexpr int kGradMaxWidth = 4096;

// sums[0, nc) += rows [0, rows) of a packed panel (kNR floats a row, zeros past nc):
// AddRows's chain per column, on whole vectors.
void AddPanelRows(const float* panel, int rows, int nc, float* sums) {
  using simd::kWidth;
  simd::V acc[kNV];
  for (int v = 0; v < kNV; ++v) acc[v] = simd::LoadPartial(sums + v * kWidth, std::clamp(nc - v * kWidth, 0, kWidth));
  for (int p = 0; p < rows; ++p)
    for (int v = 0; v < kNV; ++v) acc[v] = simd::Add(acc[v], simd::Load(panel + p * kNR + v * kWidth));
  for (int v = 0; v < kNV; ++v) {
    const int w = std::clamp(nc - v * kWidth, 0, kWidth);
    if (w == kWidth)
      simd::Store(sums + v * kWidth, acc[v]);
    else if (w > 0)
      simd::StorePartial(sums + v * kWidth, acc[v], w);
  }
}

// Panels [j_begin, j_end) of rows [0, k) of B (row stride ldb, n columns), packed
// side by side (panel j at out + (j - j_begin) * PanelFloats(k)), row by row: one
// sweep over each row's stretch of B rather than a strided pass per panel.
void PackPanels(const float* b, std::ptrdiff_t ldb, int k, int n, int j_begin, int j_end, float* out) {
  using simd::kWidth;
  const std::size_t panel = PanelFloats(k);
  for (int p = 0; p < k; ++p) {
    const float* src = b + p * ldb;
    for (int j = j_begin; j < j_end; ++j) {
      float* dst = out + (j - j_begin) * panel + static_cast<std::size_t>(p) * kNR;
      for (int v = 0; v < kNV; ++v) {
        const int c = j * kNR + v * kWidth, w = std::clamp(n - c, 0, kWidth);
        simd::Store(dst + v * kWidth, w == kWidth ? simd::Load(src + c)
                                      : w > 0     ? simd::LoadPartial(src + c, w)
                                                  : simd::Zero());
      }
    }
  }
}

// A weight gradient C (m x n) = A^T B, a depth block of the batch's rows at a time:
// that block of A^T is packed into strips (PackAT) and of B into panels, then every
// tile of C takes the block, continuing its chain (PanelPackedAT with add). Read in
// place, A^T touched a new cache line per k, and A's and B's rows a power-of-two apart
// (d_model or d_ff floats) fell into the same few cache sets: the kernel's operands did
// not stay in L1 between tiles (256-bit weight gradients ran at 30-55% of peak). The
// block is packed once for every tile, and while it is its few hundred rows' pages stay
// in the TLB (packing a task's own columns over the whole batch walked the page table
// for each row of a 4 KiB-wide activation). Tasks are blocks of kRowsPerTask rows of C
// by groups of panels; every element gets the depth blocks in k order: the same bits
// as PanelAT over all of k, on any thread count.
void GradPacked(Pool& pool, int threads, int m, int k, int n, const float* a, std::ptrdiff_t lda, const float* b,
                std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc, GemmScratch& s, float* col_sums) {
  constexpr int kMost = 8;
  const int panels = (n + kNR - 1) / kNR, row_blocks = (m + kRowsPerTask - 1) / kRowsPerTask;
  const int group = threads == 1 ? std::min(panels, kMost)
                                 : std::clamp(row_blocks * panels / (4 * threads), 1, std::min(panels, kMost));
  const int groups = (panels + group - 1) / group;
  const std::size_t a_block = PackedATFloats(kRowsPerTask, kGradDepth);
  float* ap = s.apack.Get(a_block * row_blocks);
  float* bp = s.bpack.Get(PanelFloats(kGradDepth) * panels);
  for (int k0 = 0; k0 < k; k0 += kGradDepth) {
    const int kk = std::min(kGradDepth, k - k0);
    const float* ak = a + static_cast<std::ptrdiff_t>(k0) * lda;
    const float* bk = b + static_cast<std::ptrdiff_t>(k0) * ldb;
    auto pack = [&](int t, int) {
      if (t < row_blocks) {
        const int r0 = t * kRowsPerTask;
        PackAT(ak + r0, lda, std::min(kRowsPerTask, m - r0), kk, ap + t * a_block);
      } else {
        const int j0 = (t - row_blocks) * group;
        PackPanels(bk, ldb, kk, n, j0, std::min(panels, j0 + group), bp + j0 * PanelFloats(kk));
      }
    };
    ParallelFor(pool, threads, row_blocks + groups, pack);
    auto task = [&](int i, int) {
      const int rb = i / groups, r0 = rb * kRowsPerTask, rows = std::min(kRowsPerTask, m - r0);
      const int j_begin = (i % groups) * group, j_end = std::min(panels, j_begin + group);
      for (int j = j_begin; j < j_end; ++j) {
        const int j0 = j * kNR, nc = std::min(kNR, n - j0);
        const float* panel = bp + j * PanelFloats(kk);
        PanelPackedAT(rows, kk, ap + rb * a_block, panel, kNR, c + static_cast<std::ptrdiff_t>(r0) * ldc + j0, ldc, nc,
                      k0 > 0);
        if (col_sums && rb == 0) AddPanelRows(panel, kk, nc, col_sums + j0);
      }
    };
    ParallelFor(pool, threads, row_blocks * groups, task);
  }
}

// Starts loading share j of `parts` of rows [r0, r0 + kRowsPerTask) of a row-major A
// (k floats a row, stride lda), the row block the tasks after this one read. A block
// of an input gradient's A (d hidden: 64 x d_ff floats) comes from memory, and the
// first panel's tiles waited on it row after row (its products ran at 70-75% of
// peak, 95% with A in cache); fetched a task ahead, a share in each of the block's
// panels, it is in cache when its turn comes.
void FetchNextRows(const float* a, std::ptrdiff_t lda, int m, int k, int r0, int j, int parts) {
  if (r0 >= m) return;
  const int rows = std::min(kRowsPerTask, m - r0), begin = r0 + rows * j / parts, end = r0 + rows * (j + 1) / parts;
  constexpr int kLine = 64 / sizeof(float);
  for (int r = begin; r < end; ++r) {
    const float* row = a + static_cast<std::ptrdiff_t>(r) * lda;
    for (int p = 0; p < k; p += kLine) simd::Prefetch(row + p);
    simd::Prefetch(row + k - 1);
  }
}

// Gemm, with A given transposed or not (a_transposed: A(i, p) at a[p * lda + i]).
void GemmOf(Pool& pool, int threads, int m, int k, int n, const float* a, std::ptrdiff_t lda, bool a_transposed,
            const float* b, std::ptrdiff_t ldb, bool b_transposed, float* c, std::ptrdiff_t ldc, const float* bias,
            bool accumulate, GemmScratch& s, float* col_sums = nullptr) {
  if (m <= 0 || n <= 0) return;
  if (kPackGradients && a_transposed && !accumulate && !bias && !b_transposed && m <= kGradMaxWidth &&
      n <= kGradMaxWidth) {
    GradPacked(pool, threads, m, k, n, a, lda, b, ldb, c, ldc, s, col_sums);
    return;
  }
  const int panels = (n + kNR - 1) / kNR;
  const std::size_t panel_floats = PanelFloats(k);
  // A weight gradient's B (the output gradient, as many rows as the batch) in whole
  // panels is read in place: packing it cost a copy as large as the product's input.
  const bool in_place = a_transposed && !accumulate && !bias && !b_transposed && n % kNR == 0;
  float* packed = in_place ? nullptr : s.packed.Get(panel_floats * panels);
  auto pack = [&](int j, int) {
    const int j0 = j * kNR, nc = std::min(kNR, n - j0);
    if (b_transposed)
      PackBT(b + static_cast<std::ptrdiff_t>(j0) * ldb, ldb, k, nc, packed + j * panel_floats);
    else
      PackB(b + j0, ldb, k, nc, packed + j * panel_floats);
  };
  if (!in_place) ParallelFor(pool, threads, panels, pack);
  if (accumulate) {
    if (static_cast<int>(s.tiles.size()) < threads) s.tiles.resize(threads);
    for (int t = 0; t < threads; ++t) s.tiles[t].Get(static_cast<std::size_t>(kRowsPerTask) * kNR);
  }
  const int row_blocks = (m + kRowsPerTask - 1) / kRowsPerTask;
  if (a_transposed && !accumulate && !bias) {
    // A weight gradient: k is the batch's rows, thousands deep, and A^T is read down
    // strided rows of A. In blocks of k the slice of A and of the panels that a
    // block's tiles share stay in cache (W2's gradient ran at 60% of peak unblocked).
    // A task takes several panels, the depth blocks outside them: each block's slice
    // of A is read once for all of them instead of once per panel (it came from
    // memory for each: 32% of mhaviz-small's step, at half the other products' speed).
    // Every element of C still gets the same chain, block after block in k order, so
    // the panels per task may follow the thread count: results stay bit-identical.
    const int group = std::clamp(row_blocks * panels / (4 * threads), 1, std::min(panels, 8));
    const int groups = (panels + group - 1) / group;
    // The column sums of B (a bias's gradient), where asked: the tasks of the first
    // rows of C read every row of their panels, in order, block after block; each adds
    // a block's rows of B to the sums while they are in cache, instead of a pass of
    // its own over B (as large as the product's input) from memory.
    auto grad_task = [&](int i, int) {
      const int r0 = (i / groups) * kRowsPerTask, rows = std::min(kRowsPerTask, m - r0);
      const int j_begin = (i % groups) * group, j_end = std::min(panels, j_begin + group);
      const float* ar = a + r0;
      for (int k0 = 0; k0 < k; k0 += kDepthBlock) {
        const int kk = std::min(kDepthBlock, k - k0);
        const float* ak = ar + static_cast<std::ptrdiff_t>(k0) * lda;
        for (int j = j_begin; j < j_end; ++j) {
          const int j0 = j * kNR, nc = std::min(kNR, n - j0);
          float* cr = c + static_cast<std::ptrdiff_t>(r0) * ldc + j0;
          const float* bj = in_place ? b + j0 : packed + j * panel_floats;
          const std::ptrdiff_t ldbj = in_place ? ldb : kNR;
          if (k0 == 0)
            PanelAT(rows, kk, ak, lda, bj, ldbj, cr, ldc, nc, nullptr, 1.0f);
          else
            PanelATAdd(rows, kk, ak, lda, bj + k0 * ldbj, ldbj, cr, ldc, nc);
          if (col_sums && r0 == 0) AddRows(bj + k0 * ldbj, ldbj, kk, nc, col_sums + j0);
        }
      }
    };
    ParallelFor(pool, threads, row_blocks * groups, grad_task);
    return;
  }
  auto task = [&](int i, int tid) {
    const int r0 = (i / panels) * kRowsPerTask, rows = std::min(kRowsPerTask, m - r0);
    const int j = i % panels, j0 = j * kNR, nc = std::min(kNR, n - j0);
    const float* ar = a + static_cast<std::ptrdiff_t>(r0) * (a_transposed ? 1 : lda);
    float* cr = c + static_cast<std::ptrdiff_t>(r0) * ldc + j0;
    const float* bj = packed + j * panel_floats;
    auto panel = a_transposed ? &PanelAT : &Panel;
    if (!a_transposed) FetchNextRows(a, lda, m, k, r0 + kRowsPerTask, j, panels);
    if (!accumulate) {
      panel(rows, k, ar, lda, bj, kNR, cr, ldc, nc, bias ? bias + j0 : nullptr, 1.0f);
      return;
    }
    float* tile = s.tiles[tid].Get(0);
    panel(rows, k, ar, lda, bj, kNR, tile, kNR, nc, nullptr, 1.0f);
    for (int r = 0; r < rows; ++r)
      for (int q = 0; q < nc; ++q) cr[static_cast<std::ptrdiff_t>(r) * ldc + q] += tile[r * kNR + q];
  };
  ParallelFor(pool, threads, row_blocks * panels, task);
}

}  // namespace

void Gemm(Pool& pool, int threads, int m, int k, int n, const float* a, std::ptrdiff_t lda, const float* b,
          std::ptrdiff_t ldb, bool b_transposed, float* c, std::ptrdiff_t ldc, const float* bias, bool accumulate,
          GemmScratch& s) {
  GemmOf(pool, threads, m, k, n, a, lda, false, b, ldb, b_transposed, c, ldc, bias, accumulate, s);
}

void RowsTimesTransposed(Pool& pool, int threads, const Mat& a, const Mat& b, Mat& out, bool accumulate,
                         GemmScratch& s) {
  if (!accumulate) SafeResize(out, a.rows(), b.rows());
  Gemm(pool, threads, static_cast<int>(a.rows()), static_cast<int>(a.cols()), static_cast<int>(b.rows()), a.data(),
       a.cols(), b.data(), b.cols(), /*b_transposed=*/true, out.data(), out.cols(), nullptr, accumulate, s);
}

// a^T is read in place (the kernel's transposed-A form): no transposed copy of a.
void WeightGrad(Pool& pool, int threads, const Mat& a, const Mat& d, Mat& grad, GemmScratch& s, RowVec* bias_grad) {
  const int rows = static_cast<int>(a.rows()), cols = static_cast<int>(a.cols());
  if (bias_grad && bias_grad->size() != d.cols())
    throw Error("internal: a bias gradient of another width than the output gradient's");
  if (bias_grad && cols <= 0) {  // no product to ride on
    AccumulateColumnSums(pool, threads, d, *bias_grad);
    return;
  }
  GemmOf(pool, threads, cols, rows, static_cast<int>(d.cols()), a.data(), cols, true, d.data(), d.cols(), false,
         grad.data(), grad.cols(), nullptr, false, s, bias_grad ? bias_grad->data() : nullptr);
}

int ColumnStripe(int n, int threads, int max_vectors) {
  const int vectors = (n + simd::kWidth - 1) / simd::kWidth;
  return std::clamp(vectors / std::max(threads, 1), 1, max_vectors) * simd::kWidth;
}

// A stripe of up to four vectors of columns per task, its sums held in registers
// over every row: the same additions, in the same order, as g[c] += row[c] row by
// row, but not waiting on a store and a reload of g for each row. A column's chain
// does not depend on which stripe holds it, so the stripes follow the thread count
// (a serial pass over the logits' gradient was a tenth of a 16-thread step at
// mhaviz-small's shape) and the bits stay those of one thread.
void AccumulateColumnSums(Pool& pool, int threads, const Mat& d, RowVec& grad) {
  using simd::kWidth;
  constexpr int kStripe = 4;
  const int n = static_cast<int>(d.cols());
  const Eigen::Index rows = d.rows();
  float* g = grad.data();
  const int stripe = ColumnStripe(n, threads, kStripe);
  auto task = [&](int t, int) {
    const int c0 = t * stripe;
    int width[kStripe];
    simd::V acc[kStripe];
    for (int v = 0; v < kStripe; ++v) {
      width[v] = std::clamp(std::min(n, c0 + stripe) - c0 - v * kWidth, 0, kWidth);
      acc[v] = simd::LoadPartial(g + c0 + v * kWidth, width[v]);
    }
    for (Eigen::Index i = 0; i < rows; ++i) {
      const float* row = d.data() + i * n + c0;
      for (int v = 0; v < kStripe; ++v)
        if (width[v] > 0) acc[v] = simd::Add(acc[v], simd::LoadPartial(row + v * kWidth, width[v]));
    }
    for (int v = 0; v < kStripe; ++v)
      if (width[v] > 0) simd::StorePartial(g + c0 + v * kWidth, acc[v], width[v]);
  };
  ParallelFor(pool, threads, (n + stripe - 1) / stripe, task);
}

}  // namespace mha::detail
