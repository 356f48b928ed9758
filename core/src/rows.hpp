// Row primitives shared by the forward pass and its public helpers (SoftmaxRow,
// LayerNormRows in mha/forward.hpp).
#pragma once

namespace mha::detail {

// LayerNorm of one row of d values (two-pass mean/variance in double).
void LayerNormRow(const float* in, const float* gamma, const float* beta, int d, float eps,
                  float* out);

}  // namespace mha::detail
