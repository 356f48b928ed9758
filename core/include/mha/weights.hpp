// The parameters of one attention layer (and its LayerNorm).
#pragma once

#include <cstdint>

#include "mha/config.hpp"

namespace mha {

struct Weights {
  Mat W_q, W_k, W_v, W_o;        // (d_model, d_model), (d_model, kv*hd) x2, (d_model, d_model)
  RowVec b_q, b_k, b_v, b_o;
  RowVec ln_gamma, ln_beta;      // (d_model)
  // Encoder block only (empty otherwise): FFN(x) = act(x W1 + b1) W2 + b2 and its LayerNorm.
  Mat ffn_W1, ffn_W2;            // (d_model, d_ff), (d_ff, d_model)
  RowVec ffn_b1, ffn_b2;         // (d_ff), (d_model)
  RowVec ln2_gamma, ln2_beta;    // (d_model)
};

// Xavier/Glorot uniform weights, U(-a, a) with a = sqrt(6 / (fan_in + fan_out))
// (Glorot & Bengio 2010); biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as torch.nn.Linear
// does, so the "+ b" of Q = x W_Q + b_Q is visible; LayerNorm gamma = 1, beta = 0.
// Each tensor has its own stream derived from (seed, name), so changing num_kv_heads
// does not change W_Q.
Weights InitWeights(const Config& cfg);
// The same, into w, reusing its matrices' memory where the shapes are unchanged.
void InitWeights(const Config& cfg, Weights& w);

// Throws mha::Error naming the tensor if a shape does not fit cfg or a value is
// not finite.
void CheckWeights(const Weights& w, const Config& cfg);

}  // namespace mha
