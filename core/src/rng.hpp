// A tiny deterministic generator (SplitMix64) so results do not depend on the
// standard library's distributions, which differ between implementations.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace mha::detail {

inline std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a of the bytes, then mixed with the seed: one stream per (seed, name).
inline std::uint64_t StreamSeed(std::uint64_t seed, std::string_view name) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return Mix64(h ^ Mix64(seed + 0x9E3779B97F4A7C15ull));
}

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t s) : state_(s) {}
  std::uint64_t Next() { return Mix64(state_ += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, 1) with 24 random bits, exactly representable as float.
  double Uniform() { return static_cast<double>(Next() >> 40) * (1.0 / 16777216.0); }
  // Uniform in [-a, a).
  float Symmetric(double a) { return static_cast<float>((2.0 * Uniform() - 1.0) * a); }
  // Standard normal by Box-Muller (uses both values of each pair).
  float Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = Uniform(), u2 = Uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    const double r = std::sqrt(-2.0 * std::log(u1)), t = 6.283185307179586 * u2;
    spare_ = static_cast<float>(r * std::sin(t));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(t));
  }

 private:
  std::uint64_t state_;
  float spare_ = 0.0f;
  bool has_spare_ = false;
};

}  // namespace mha::detail
