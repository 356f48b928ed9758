// What many core tests build the same way: random matrices and inputs from a seeded
// generator, and a configuration of a given shape. One copy, so the tests agree on
// what "random inputs" means.
#pragma once

#include <random>

#include "mha/mha.hpp"

namespace fixtures {

// Entries drawn from N(0, scale^2), row by row.
inline mha::Mat RandomMat(std::mt19937& rng, int rows, int cols, float scale = 1.0f) {
  std::normal_distribution<float> n(0.0f, scale);
  mha::Mat m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
  return m;
}

// seq query rows "t" of width d, and with `cross` a memory of seq_kv rows "m".
inline mha::Inputs RandomInputs(std::mt19937& rng, int seq, int seq_kv, int d, bool cross) {
  mha::Inputs in;
  in.x = RandomMat(rng, seq, d);
  in.tokens.assign(seq, "t");
  if (cross) {
    in.memory = RandomMat(rng, seq_kv, d);
    in.memory_tokens.assign(seq_kv, "m");
  }
  return in;
}

// The default configuration with this shape (num_kv_heads 0: as many as num_heads).
inline mha::Config Shape(int d_model, int num_heads, int num_kv_heads = 0) {
  mha::Config c;
  c.d_model = d_model;
  c.num_heads = num_heads;
  c.num_kv_heads = num_kv_heads;
  return c;
}

// That shape with a mask, a LayerNorm placement and a block.
inline mha::Config Layer(int d_model, int num_heads, int num_kv_heads, mha::Mask mask, mha::Norm norm,
                         mha::Block block = mha::Block::Attention, mha::Activation act = mha::Activation::Relu) {
  mha::Config c = Shape(d_model, num_heads, num_kv_heads);
  c.mask = mask;
  c.norm = norm;
  c.block = block;
  c.activation = act;
  return c;
}

}  // namespace fixtures
