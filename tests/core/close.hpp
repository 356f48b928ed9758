// Tolerance-aware comparison that prints both sides on failure: where the largest
// difference is, what each side holds there, and the tolerance used.
#pragma once

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace testutil {

struct Diff {
  bool ok = true;
  std::string report;
};

// |got - want| <= atol + rtol * |want| everywhere; -inf must match -inf exactly.
inline Diff Compare(const std::string& name, const float* got, const std::vector<double>& want, double atol,
                    double rtol) {
  Diff d;
  double worst = -1;
  std::size_t at = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = got[i], w = want[i];
    double err;
    if (std::isinf(w) || std::isinf(g))
      err = (g == w) ? 0.0 : INFINITY;
    else if (std::isnan(g) || std::isnan(w))
      err = INFINITY;
    else
      err = std::abs(g - w) - rtol * std::abs(w);
    if (err > worst) {
      worst = err;
      at = i;
    }
  }
  if (worst > atol) {
    std::ostringstream os;
    os.precision(9);
    os << name << ": element " << at << " of " << want.size() << " differs: got " << got[at] << ", oracle " << want[at]
       << " (atol " << atol << ", rtol " << rtol << ")";
    d.ok = false;
    d.report = os.str();
  }
  return d;
}

// float32's unit roundoff: a float32 result carries errors of a few of these times the
// size of what it sums, in whichever order (AVX2's 8 lanes or AVX-512's 16) it sums.
constexpr double kEps32 = std::numeric_limits<float>::epsilon();

// The tolerance for a float32 result against a double oracle `want`, the rule of
// tests/cli/checks.py's float32_tol: `ulps` roundoffs of the oracle's scale (its largest
// finite magnitude) times the square root of the terms summed on the way (the
// reductions' combined length). It holds on any x86-64 CPU, while a wrong weight, head
// or position, whose errors are of the values' own size, fails it.
inline double Float32Tol(const std::vector<double>& want, double terms, double ulps = 16) {
  double scale = 0;
  for (double w : want)
    if (std::isfinite(w)) scale = std::max(scale, std::abs(w));
  return ulps * kEps32 * std::max(scale, double(std::numeric_limits<float>::min())) * std::sqrt(std::max(terms, 1.0));
}

// Float32Tol of any matrix with data() and size() (an Eigen matrix, float or double).
template <typename M>
double Float32Tol(const M& want, double terms, double ulps = 16) {
  return Float32Tol(std::vector<double>(want.data(), want.data() + want.size()), terms, ulps);
}

template <typename M>
std::vector<double> Flatten(const M& m) {  // [a][b] -> a*B + b
  std::vector<double> out;
  for (const auto& row : m) out.insert(out.end(), row.begin(), row.end());
  return out;
}
template <typename M>
std::vector<double> Flatten3(const std::vector<M>& m) {
  std::vector<double> out;
  for (const auto& x : m) {
    auto f = Flatten(x);
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

}  // namespace testutil

#define CHECK_CLOSE(name, got, want, atol, rtol)                         \
  do {                                                                   \
    const auto diff_ = ::testutil::Compare(name, got, want, atol, rtol); \
    INFO(diff_.report);                                                  \
    CHECK(diff_.ok);                                                     \
  } while (0)

// CHECK_CLOSE with Float32Tol(want, terms, ulps) as the tolerance (absolute at the
// oracle's scale); CHECK_F32_CLOSE_ULPS(..., 32) for two float32 results (each within the
// bound of the exact one).
#define CHECK_F32_CLOSE_ULPS(name, got, want, terms, ulps)                                                   \
  do {                                                                                                       \
    const std::vector<double> want_ = (want);                                                                \
    const auto diff_ = ::testutil::Compare(name, got, want_, ::testutil::Float32Tol(want_, terms, ulps), 0); \
    INFO(diff_.report);                                                                                      \
    CHECK(diff_.ok);                                                                                         \
  } while (0)
#define CHECK_F32_CLOSE(name, got, want, terms) CHECK_F32_CLOSE_ULPS(name, got, want, terms, 16)
