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

#include "mha/config.hpp"
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

}  // namespace mha
