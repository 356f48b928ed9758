// Seeded initialisation shared by the attention and FFN weights: each tensor draws from
// its own stream derived from (seed, name).
#pragma once

#include <cmath>
#include <cstdint>

#include "mha/config.hpp"
#include "rng.hpp"

namespace mha::detail {

// Glorot/Xavier uniform, U(-a, a) with a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010).
inline Mat Glorot(std::uint64_t seed, const char* name, int fan_in, int fan_out) {
  SplitMix64 rng(StreamSeed(seed, name));
  const double a = std::sqrt(6.0 / (fan_in + fan_out));
  Mat w(fan_in, fan_out);
  for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = rng.Symmetric(a);
  return w;
}

// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch.nn.Linear initialises its bias.
inline RowVec Bias(std::uint64_t seed, const char* name, int fan_in, int n) {
  SplitMix64 rng(StreamSeed(seed, name));
  const double a = 1.0 / std::sqrt(static_cast<double>(fan_in));
  RowVec b(n);
  for (int i = 0; i < n; ++i) b[i] = rng.Symmetric(a);
  return b;
}

}  // namespace mha::detail
