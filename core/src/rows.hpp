// Row primitives shared by the forward pass and its public helpers (SoftmaxRow,
// LayerNormRows in mha/forward.hpp).
#pragma once

#include <cstddef>

namespace mha::detail {

// LayerNorm of one row of d values (two-pass mean/variance in double); `stats`, if
// given, receives the row's mean and 1 / sqrt(variance + eps) (LayerNormStats).
void LayerNormRow(const float* in, const float* gamma, const float* beta, int d, float eps, float* out,
                  double* stats = nullptr);
// LayerNormRow over `rows` consecutive rows of d values (out likewise; stats, if
// given, two doubles per row): the same bits, several rows at a time.
void LayerNormRows(const float* in, const float* gamma, const float* beta, int d, float eps, float* out, int rows,
                   double* stats = nullptr);
// The row's mean and 1 / sqrt(variance + eps), exactly as LayerNormRow computes them
// (the backward pass rebuilds the normalised row from them).
void LayerNormStats(const float* in, int d, float eps, double& mean, double& rstd);

// One row of one head for the trace: the softmax of the scores s[0, visible) into the
// scratch row `a` (zeros up to a_end) and both rows, n keys each, into the trace
// (s_out: scores, -inf where masked, or null: not kept; a_out: weights, 0 where
// masked). kStream: the trace rows are 64-byte aligned and written past the caches.
template <bool kStream>
void AttentionRow(const float* s, int visible, int n, float* a, int a_end, float* s_out, float* a_out);

// AttentionRow<false> for m rows of n <= simd::kWidth keys, row i of the scores at
// s + i * ld, of the scratch at a + i * ld, of the trace at s_out / a_out + i * n;
// row i sees keys [0, visible0 + i) (causal) or all n. The same bits, faster.
void AttentionRowsNarrow(const float* s, std::ptrdiff_t ld, int m, int n, bool causal, int visible0, float* a,
                         int a_end, float* s_out, float* a_out);

}  // namespace mha::detail
