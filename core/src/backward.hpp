// The backward pass of one layer over a batch, beside the forward pass it
// differentiates (forward.cpp). Position-wise work runs on whole-batch matrices of
// N = batch * seq rows; the attention core runs per (sequence, K/V head).
//
// Determinism: every GEMM is cut into blocks whose size depends only on the shapes,
// and every sum over the batch (weight gradients, LayerNorm gains, biases) runs in one
// fixed order, so the result is bit-identical for any number of threads.
#pragma once

#include <vector>

#include "mha/model.hpp"
#include "mha/trace.hpp"
#include "pool.hpp"

namespace mha::detail {

// Runs f(task, thread) for task in [0, n) on up to `threads` threads of `pool`.
template <typename F>
void ParallelFor(Pool& pool, int threads, int n, F& f) {
  if (n <= 0) return;
  const int tasks[1] = {n};
  pool.Run(threads, tasks, 1, [](void* ctx, int, int task, int tid) { (*static_cast<F*>(ctx))(task, tid); }, &f);
}

// Rows per task of a row-wise GEMM, columns per task of a weight-gradient GEMM: fixed,
// so the blocking (and the rounding) never depends on the thread count.
constexpr int kRowsPerTask = 64;
constexpr int kColsPerTask = 64;

// out(N, n) = a(N, k) * b^T for b (n, k) row-major, in row blocks.
void RowsTimesTransposed(Pool& pool, int threads, const Mat& a, const Mat& b, Mat& out, bool accumulate);
// grad(k, n) += a(N, k)^T * d(N, n), in column blocks.
void AccumulateWeightGrad(Pool& pool, int threads, const Mat& a, const Mat& d, Mat& grad);
// grad(n) += column sums of d(N, n), rows in order.
void AccumulateColumnSums(const Mat& d, RowVec& grad);

// LayerNorm backward, row by row: given the LayerNorm's input rows `in` (N, d), its
// gain `gamma` and dL/d(out) `dout`, writes dL/d(in) into `din` (or adds it, with
// accumulate) and adds dL/d(gamma), dL/d(beta) into dgamma, dbeta. `xhat` is scratch.
void LayerNormBackward(Pool& pool, int threads, const Mat& in, const RowVec& gamma, float eps, const Mat& dout,
                       Mat& din, bool accumulate, RowVec& dgamma, RowVec& dbeta, Mat& xhat);

// Scratch for LayerBackward, kept between steps so a step allocates nothing.
struct LayerScratch {
  Mat x, src, residual, concat, out, ffn_in, ffn_residual, hidden;  // gathered activations
  Mat dres, da, dconcat, dq, dk, dv, dsrc, dh, dffn_in, xhat;       // gradients
};

// One layer's backward pass over a batch: `traces[b]` is sequence b's forward Trace of
// this layer (all of one seq length), `dy` (N, d) is dL/d(layer output). Adds the
// weight gradients into `g` and writes dL/d(layer input) into dx (N, d).
void LayerBackward(Pool& pool, int threads, const Config& cfg, const Weights& w, const std::vector<Trace>& traces,
                   int batch, const Mat& dy, Weights& g, Mat& dx, LayerScratch& s);

}  // namespace mha::detail
