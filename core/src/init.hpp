// Seeded initialisation shared by the attention and FFN weights: each tensor draws from
// its own stream derived from (seed, name).
#pragma once

#include <cmath>
#include <cstdint>

#include "mha/config.hpp"
#include "mha/weights.hpp"
#include "rng.hpp"

namespace mha::detail {

// n values U(-a, a) from the stream seeded `state`: value i is SplitMix64's (i+1)-th
// draw, rng.Symmetric(a), written with the counter explicit so the loop vectorises
// (64-bit multiplies; 3-4x faster than drawing one by one, same bits).
inline void FillSymmetric(std::uint64_t state, double a, float* out, std::size_t n) {
  constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ull;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t z = Mix64(state + (i + 1) * kGamma);
    const double u = static_cast<double>(static_cast<std::int64_t>(z >> 40)) * (1.0 / 16777216.0);
    out[i] = static_cast<float>((2.0 * u - 1.0) * a);
  }
}

// Glorot/Xavier uniform, U(-a, a) with a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010),
// into w (its memory is reused when the shape is unchanged).
inline void Glorot(std::uint64_t seed, const char* name, int fan_in, int fan_out, Mat& w) {
  w.resize(fan_in, fan_out);
  FillSymmetric(StreamSeed(seed, name), std::sqrt(6.0 / (fan_in + fan_out)), w.data(),
                static_cast<std::size_t>(w.size()));
}

// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch.nn.Linear initialises its bias.
inline void Bias(std::uint64_t seed, const char* name, int fan_in, int n, RowVec& b) {
  b.resize(n);
  FillSymmetric(StreamSeed(seed, name), 1.0 / std::sqrt(static_cast<double>(fan_in)), b.data(),
                static_cast<std::size_t>(n));
}

// The K/V half of InitWeights (W_k, W_v, b_k, b_v): each tensor has its own stream, so
// weights of another num_kv_heads with the same seed and d_model need only these.
void InitKvWeights(const Config& cfg, Weights& w);

}  // namespace mha::detail
