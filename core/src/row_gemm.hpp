// C = A B + bias for a few rows of A against a weight matrix B, on the forward pass's
// GEMM kernel (gemm.hpp), single-threaded. Each element of C is the same chain of
// operations however many rows A has, so the model's unembedding of a whole sequence
// (RunModel) and of one new row (a decode step, mha/decode.hpp) give the same bits.
#pragma once

#include "mha/config.hpp"

namespace mha::detail {

// out (m, n) = a (m, k) B + bias, B (k, n) row-major, out with row stride n. Each panel
// of kNR columns of B is read in place for up to 64 rows, else (and where it is
// narrower than kNR) packed into `pack` first (PanelFloats(k) floats), as the
// forward pass does (GemmPanel).
void RowsTimes(const float* a, int m, int k, const Mat& B, const RowVec& bias, float* out, float* pack);

}  // namespace mha::detail
