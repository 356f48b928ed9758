// Tolerance-aware comparison that prints both sides on failure: where the largest
// difference is, what each side holds there, and the tolerance used.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
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
