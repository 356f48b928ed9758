// The backward pass of one layer over a batch, beside the forward pass it
// differentiates (forward.cpp's ForwardBatch). Position-wise work runs on whole-batch
// matrices of N = batch * seq rows; the attention core runs per (sequence, K/V head).
//
// Determinism: every GEMM is cut into blocks whose size depends only on the shapes,
// and every sum over the batch (weight gradients, LayerNorm gains, biases) runs in one
// fixed order, so the result is bit-identical for any number of threads.
#pragma once

#include <vector>

#include "mha/model.hpp"
#include "mha/trace.hpp"
#include "batch_gemm.hpp"
#include "pool.hpp"

namespace mha::detail {

// LayerNorm backward, row by row: given the LayerNorm's input rows `in` (N, d), its
// gain `gamma` and dL/d(out) `dout`, writes dL/d(in) into `din` (or `add` plus it,
// when given: another path's gradient, or din itself to accumulate) and adds
// dL/d(gamma), dL/d(beta) into dgamma, dbeta. `xhat` is scratch.
// `stats`: the forward pass's per-row mean and 1/std (LayerNormRow's), if it kept
// them for every row of `in`; else they are recomputed, to the same bits.
void LayerNormBackward(Pool& pool, int threads, const Mat& in, const RowVec& gamma, float eps, const Mat& dout,
                       Mat& din, const Mat* add, RowVec& dgamma, RowVec& dbeta, Mat& xhat,
                       const LnStats* stats = nullptr);

// Per-thread scratch of the attention core's backward pass.
struct ThreadScratch {
  Mat ds;       // (seq, seq): dL/d(attn) then dL/d(scores)
  Mat tile;     // (seq, head_dim): a second query head's share of dK or dV
  Buffer pack;  // one packed B panel
};

// Scratch for LayerBackward, kept between steps so a step allocates nothing.
struct LayerScratch {
  Mat dres, da, dconcat, dq, dk, dv, dsrc, dh, dffn_in, xhat;  // gradients
  GemmScratch gemm;
  std::vector<ThreadScratch> per_thread;  // indexed by the pool's thread id
};

// One layer's backward pass over a batch: `t` is this layer's ForwardBatch trace of
// the batch (N = t.batch * t.seq rows), `dy` (N, d) is dL/d(layer output). Adds the
// weight gradients into `g` and writes dL/d(layer input) into dx (N, d).
void LayerBackward(Pool& pool, int threads, const Config& cfg, const Weights& w, const Trace& t, const Mat& dy,
                   Weights& g, Mat& dx, LayerScratch& s);

}  // namespace mha::detail
