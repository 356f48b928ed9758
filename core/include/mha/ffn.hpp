// The position-wise feed-forward network (FFN) and the Transformer encoder block
// around it (Vaswani et al. 2017, Section 3.3):
//
//     FFN(x) = act(x W1 + b1) W2 + b2        W1: (d_model, d_ff), W2: (d_ff, d_model)
//
// applied to every token row separately ("position-wise": no token sees another
// here; mixing between tokens happened in attention). With Config::block == Encoder
// the forward pass continues after the attention sublayer, whose result is t.out:
//
//     post-LN (Transformer, BERT):  out1 = LN1(x + MHA(x))      = t.out
//                                   block_out = LN2(out1 + FFN(out1))
//     pre-LN  (GPT, ViT):           h = x + MHA(LN1(x))         = t.out
//                                   block_out = h + FFN(LN2(h))
//     no norm:                      block_out = out + FFN(out)
//
// LN1 uses ln_gamma/ln_beta, LN2 uses ln2_gamma/ln2_beta, both with Config::ln_eps.
#pragma once

#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha {

// ReLU: max(0, x). GELU: the exact form x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)),
// the default of torch.nn.GELU() (its approximate='tanh' variant differs by up to ~1e-3).
float Activate(Activation a, float x);

// Seeded Glorot/Xavier W1, W2 and torch.nn.Linear-style biases, from the same
// (seed, name) streams as the attention weights; LN2 gamma = 1, beta = 0.
void InitFfnWeights(const Config& cfg, Weights& w);

// Throws mha::Error naming the tensor if an FFN weight's shape does not fit cfg
// (d_model, cfg.ffn_dim()) or a value is not finite.
void CheckFfnWeights(const Weights& w, const Config& cfg);

// Called at the end of Forward, after t.out is final. Runs the FFN sublayer when
// cfg.block == Encoder; otherwise empties the FFN tensors of `t`.
void ForwardFfn(const Config& cfg, const Weights& w, Trace& t);

// The encoder block's rows of the shape-flow table (none for attention only).
void AppendFfnFlow(const Config& cfg, int seq, std::vector<FlowRow>& rows);

// The encoder block's tensors under their .npz names: ffn_W1, ffn_b1, ffn_W2,
// ffn_b2, ln2_gamma, ln2_beta, then ffn_ln (pre-LN only), ffn_hidden, ffn_out,
// ffn_residual, block_out. Nothing for attention only.
void AppendFfnTensors(const Trace& t, std::vector<TensorView>& v);

}  // namespace mha
