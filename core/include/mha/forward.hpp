// The forward pass: inputs + weights -> Trace.
#pragma once

#include <memory>
#include <string>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha {

// Runs one multi-head attention layer with residual + LayerNorm and fills `out`,
// reusing its buffers when the shapes have not changed. Validates first and throws
// mha::Error (with a teaching message) before allocating anything.
void Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in,
             Trace& out);
Trace Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in);

// Tokenize + embed a sentence (and an optional memory sentence for cross-attention).
// Throws mha::Error for an empty sentence. `notice` (if non-null) receives a line
// about truncation or replaced bytes, or "".
Inputs MakeInputs(const std::string& sentence, const std::string& memory_sentence,
                  const Config& cfg, std::string* notice = nullptr);

// Numerically stable softmax of one row, in place: subtracts the max first; a row
// that is entirely -inf (fully masked) becomes all zeros instead of NaN.
void SoftmaxRow(float* row, int n);

// LayerNorm of each row over the last axis (biased variance, like PyTorch).
void LayerNormRows(const Mat& in, const RowVec& gamma, const RowVec& beta, float eps,
                   Mat& out);

}  // namespace mha
