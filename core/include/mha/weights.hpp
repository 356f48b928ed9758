// The parameters of one attention layer (and its LayerNorm).
#pragma once

#include <cstdint>

#include "mha/config.hpp"

namespace mha {

struct Weights {
  Mat W_q, W_k, W_v, W_o;  // (d_model, d_model), (d_model, kv*hd) x2, (d_model, d_model)
  RowVec b_q, b_k, b_v, b_o;
  RowVec ln_gamma, ln_beta;  // (d_model)
  // Encoder block only (empty otherwise): FFN(x) = act(x W1 + b1) W2 + b2 and its LayerNorm.
  Mat ffn_W1, ffn_W2;          // (d_model, d_ff), (d_ff, d_model)
  RowVec ffn_b1, ffn_b2;       // (d_ff), (d_model)
  RowVec ln2_gamma, ln2_beta;  // (d_model)
};

// One parameter tensor of a layer, as the .npz files, the trace and a checkpoint
// (with its "layers.{i}." prefix) name it, and the shape cfg gives it.
struct WeightSpec {
  const char* name;   // "W_q", "b_q", ..., "ffn_W1", ..., "ln2_beta"
  Eigen::Index rows;  // 1 for a vector
  Eigen::Index cols;
  bool vector;    // a RowVec of shape (cols,), else a Mat (rows, cols)
  bool required;  // a weights file must hold it (biases and LayerNorm have defaults)
  bool ffn;       // the encoder block's feed-forward sublayer (and its LayerNorm)
  float fill;     // an optional tensor's value where a file leaves it out (gamma 1, else 0)
};

// The one list of a layer's parameters: calls f(spec, tensor) for each tensor cfg
// uses, in the .npz order W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o, ln_gamma, ln_beta,
// then with the encoder block ffn_W1, ffn_b1, ffn_W2, ffn_b2, ln2_gamma, ln2_beta.
// `tensor` is the Mat& or RowVec& member (const for a const Weights).
template <typename W, typename F>
void ForEachWeight(W& w, const Config& cfg, F&& f) {
  const Eigen::Index d = cfg.d_model, kvd = Eigen::Index(cfg.kv_heads()) * cfg.head_dim();
  f(WeightSpec{"W_q", d, d, false, true, false, 0}, w.W_q);
  f(WeightSpec{"b_q", 1, d, true, false, false, 0}, w.b_q);
  f(WeightSpec{"W_k", d, kvd, false, true, false, 0}, w.W_k);
  f(WeightSpec{"b_k", 1, kvd, true, false, false, 0}, w.b_k);
  f(WeightSpec{"W_v", d, kvd, false, true, false, 0}, w.W_v);
  f(WeightSpec{"b_v", 1, kvd, true, false, false, 0}, w.b_v);
  f(WeightSpec{"W_o", d, d, false, true, false, 0}, w.W_o);
  f(WeightSpec{"b_o", 1, d, true, false, false, 0}, w.b_o);
  f(WeightSpec{"ln_gamma", 1, d, true, false, false, 1}, w.ln_gamma);
  f(WeightSpec{"ln_beta", 1, d, true, false, false, 0}, w.ln_beta);
  if (cfg.block != Block::Encoder) return;
  const Eigen::Index ff = cfg.ffn_dim();
  f(WeightSpec{"ffn_W1", d, ff, false, true, true, 0}, w.ffn_W1);
  f(WeightSpec{"ffn_b1", 1, ff, true, false, true, 0}, w.ffn_b1);
  f(WeightSpec{"ffn_W2", ff, d, false, true, true, 0}, w.ffn_W2);
  f(WeightSpec{"ffn_b2", 1, d, true, false, true, 0}, w.ffn_b2);
  f(WeightSpec{"ln2_gamma", 1, d, true, false, true, 1}, w.ln2_gamma);
  f(WeightSpec{"ln2_beta", 1, d, true, false, true, 0}, w.ln2_beta);
}

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
