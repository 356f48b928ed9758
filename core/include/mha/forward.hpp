// The forward pass: inputs + weights -> Trace.
#pragma once

#include <memory>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha {

// Runs one multi-head attention layer with residual + LayerNorm and fills `out`,
// reusing its buffers when the shapes have not changed (a repeated call with the
// same shapes allocates nothing). Validates first and throws mha::Error (with a
// teaching message) before allocating anything. Runs on cfg.threads threads; the
// result is bit-identical for any thread count.
// The Weights behind `weights` must not change while a Trace holds them: to use
// other weights, pass another object (their checks are skipped for the same one).
void Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, Trace& out);
Trace Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in);

// The same pass over `batch` independent sequences of one length at once (the
// Trainer's batches): in.x stacks them, batch * seq rows. Every tensor of `out` gains
// the batch axis in front: x_ln ... block_out are (batch * seq, d_model), q and
// context (batch * H * seq, hd) = (batch, H, seq, hd), k and v (batch, G, seq, hd),
// scores and attn (batch, H, seq, seq); out.batch = batch. The position-wise products
// run over the rows of every sequence at once. Self-attention only; the shape-flow
// table is left empty for batch > 1. Each sequence's numbers are bit for bit those of
// Forward on that sequence alone.
// for_backward (the Trainer): keep only what the backward pass reads; scores, context,
// attn_out and ffn_out are left empty, and so are residual and ffn_residual but for
// post-LN (for pre-LN and none they equal out and block_out). What is kept is the same.
void ForwardBatch(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, int batch, Trace& out,
                  bool for_backward = false);

// The attention sublayer alone: exactly the work of torch.nn.MultiheadAttention's
// forward with need_weights=True, average_attn_weights=False (Q/K/V projections of
// in.x, or of in.memory for K and V in cross-attention; every head's scores and
// weights; context; concat; W_O). Fills out.q ... out.attn_out; cfg.norm is ignored,
// and x_ln, residual, out and the shape-flow table are left empty. Same checks and
// buffer reuse as Forward. `mhaviz bench` times this, so it times what torch does.
void ForwardAttention(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, Trace& out);

// Numerically stable softmax of one row, in place: subtracts the max first; a row
// that is entirely -inf (fully masked) becomes all zeros instead of NaN.
void SoftmaxRow(float* row, int n);

// LayerNorm of each row over the last axis (biased variance, like PyTorch).
void LayerNormRows(const Mat& in, const RowVec& gamma, const RowVec& beta, float eps, Mat& out);

}  // namespace mha
