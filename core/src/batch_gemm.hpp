// Whole-batch matrix products for training, on the forward pass's GEMM kernel
// (gemm.hpp) and thread pool: B is packed once into kNR-wide panels, then tasks of
// (kRowsPerTask rows x one panel) run on the pool. Each element of C is computed by
// the same kernel in the same order whichever thread takes its task, so results are
// bit-identical for any thread count; and nothing is allocated once the buffers have
// grown (Eigen's products allocate their blocking buffers on the heap past 128 KiB).
#pragma once

#include <vector>

#include "mha/config.hpp"
#include "pool.hpp"
#include "workspace.hpp"

namespace mha::detail {

// Runs f(task, thread) for task in [0, n) on up to `threads` threads of `pool`.
template <typename F>
void ParallelFor(Pool& pool, int threads, int n, F& f) {
  if (n <= 0) return;
  const int tasks[1] = {n};
  pool.Run(
      threads, tasks, 1, [](void* ctx, int, int task, int tid) { (*static_cast<F*>(ctx))(task, tid); }, &f);
}

// Rows per task: fixed, so the work split never depends on the thread count.
constexpr int kRowsPerTask = 64;

// Scratch kept between steps.
struct GemmScratch {
  Buffer packed;              // B's panels
  std::vector<Buffer> tiles;  // per thread: one task's result, for C += A B
  Buffer apack;               // a weight gradient's depth block of A^T, in strips (PackAT)
  Buffer bpack;               // the same block of B, in panels
};

// C (m x n) = A (m x k) B (k x n) + bias, or C += A B with accumulate (bias null).
// B(p, j) at b[p * ldb + j]; with b_transposed, at b[j * ldb + p].
void Gemm(Pool& pool, int threads, int m, int k, int n, const float* a, std::ptrdiff_t lda, const float* b,
          std::ptrdiff_t ldb, bool b_transposed, float* c, std::ptrdiff_t ldc, const float* bias, bool accumulate,
          GemmScratch& s);

// out (N, n) = a (N, k) b^T, b (n, k) row-major: the input gradient of y = a b^T's
// transposed use, e.g. dx = dy W^T. With accumulate, out += a b^T.
void RowsTimesTransposed(Pool& pool, int threads, const Mat& a, const Mat& b, Mat& out, bool accumulate,
                         GemmScratch& s);
// grad (k, n) = a (N, k)^T d (N, n): a weight's gradient summed over the batch rows.
// With bias_grad, also bias_grad (n) += column sums of d, in the same pass over d
// (AccumulateColumnSums's sums: each column's rows in order, so the same bits).
void WeightGrad(Pool& pool, int threads, const Mat& a, const Mat& d, Mat& grad, GemmScratch& s,
                RowVec* bias_grad = nullptr);
// grad (n) += column sums of d (N, n), rows in order, stripes of columns on the pool.
void AccumulateColumnSums(Pool& pool, int threads, const Mat& d, RowVec& grad);
// Columns per task where tasks split a matrix's columns: whole vectors, at most
// max_vectors, and one task per thread where the width allows. Only for sums whose
// columns are independent chains: then any stripe width gives the same bits.
int ColumnStripe(int n, int threads, int max_vectors);

}  // namespace mha::detail
