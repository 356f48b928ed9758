// The vectorised GELU and its derivative (core/src/gelu.hpp) against a double-precision
// reference, over the whole float range: a stride through every bit pattern (normals,
// denormals, both signs), a dense sweep of [-16, 16] where the function bends, and the
// special values.
//
// The tolerances claimed (GELU measured at most 4.4 ulp off on AVX-512 and AVX2, whose
// results are bit for bit the same, and 5.3 on SSE2 without FMA):
//   GELU(x):  within 6 ulp of x Phi(x), ulp of the result (2^-149 in the denormals);
//   GELU'(x): within 8 * 2^-24 * (Phi(x) + |x phi(x)|) + (1 + 0.4 |x|) 2^-149 of
//             Phi(x) + x phi(x). The two terms cancel near x = -0.75, where no float
//             formula keeps relative precision; below x = -13.2, exp(-x^2 / 2) is a
//             denormal, and its last step is multiplied by up to 0.4 |x|.
// The scalar form it replaced, 0.5 x (1 + erf(x / sqrt 2)) in float, fails the first
// from x < -3 (20 ulp there, 4% off at x = -5, and 0 at x = -7.5).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "mha/ffn.hpp"
#include "../../core/src/gelu.hpp"

namespace {

constexpr double kDenormMin = 1.40129846432481707e-45;  // 2^-149

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double PhiDensity(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * 3.14159265358979323846); }

// The spacing of floats at the float nearest r.
double UlpAt(double r) {
  const float f = std::fabs(static_cast<float>(r));
  if (std::isinf(f)) return std::ldexp(1.0, 104);
  return std::max(static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()) - f), kDenormMin);
}

float FromBits(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

struct Worst {
  double gelu = 0, grad = 0;
  float gelu_x = 0, grad_x = 0;
};

// Checks every finite x, through GeluRowWithGrad and GeluRow (one long row each, so
// the vector lanes and the tail both run), and returns the worst errors in the units
// of the claims above (GELU' as a share of its tolerance).
Worst Check(const std::vector<float>& xs) {
  std::vector<float> y = xs, g(xs.size()), y2 = xs;
  mha::detail::GeluRowWithGrad(y.data(), g.data(), static_cast<int>(xs.size()));
  mha::detail::GeluRow(y2.data(), static_cast<int>(xs.size()));
  Worst w;
  int mismatches = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    if (std::memcmp(&y[i], &y2[i], sizeof(float)) != 0) ++mismatches;
    const double ref = x * Phi(x);
    const double e = std::fabs(y[i] - ref) / UlpAt(ref);
    if (!(e <= w.gelu)) w.gelu = e, w.gelu_x = xs[i];
    const double terms = Phi(x) + std::fabs(x * PhiDensity(x));
    const double ref_grad = Phi(x) + x * PhiDensity(x);
    const double eg =
        std::fabs(g[i] - ref_grad) / (8.0 * std::ldexp(terms, -24) + (1.0 + 0.4 * std::fabs(x)) * kDenormMin);
    if (!(eg <= w.grad)) w.grad = eg, w.grad_x = xs[i];
  }
  CHECK(mismatches == 0);  // GeluRow and GeluRowWithGrad give the same GELU
  return w;
}

void CheckWithin(const Worst& w) {
  INFO("worst GELU error " << w.gelu << " ulp at x = " << w.gelu_x);
  CHECK(w.gelu <= 6.0);
  INFO("worst GELU' error " << w.grad << " of its tolerance at x = " << w.grad_x);
  CHECK(w.grad <= 1.0);
}

}  // namespace

TEST_CASE("GELU and GELU' match a double reference across every float's magnitude", "[gelu]") {
  std::vector<float> xs;
  // Every 4099th bit pattern: all exponents, both signs, denormals included.
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 4099) {
    const float x = FromBits(static_cast<std::uint32_t>(b));
    if (std::isfinite(x)) xs.push_back(x);
  }
  for (float x :
       {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
        std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(), 1e-30f, -1e-30f, 14.9f, -14.9f, 15.0f,
        -15.0f, 15.1f, -15.1f, 1e30f, -1e30f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()})
    xs.push_back(x);
  CheckWithin(Check(xs));
}

TEST_CASE("GELU and GELU' match a double reference densely where they bend", "[gelu]") {
  std::vector<float> xs;
  for (float x = -16.0f; x <= 16.0f; x += 1.0f / 4096.0f) xs.push_back(x);
  for (float x = 1e-6f; x < 16.0f; x *= 1.0001f) xs.push_back(x), xs.push_back(-x);
  CheckWithin(Check(xs));
}

TEST_CASE("GELU keeps relative precision where the float erf form cancels to nothing", "[gelu]") {
  // x Phi(x) at x = -5 is -1.43e-6 and at -10 is -7.62e-23; 0.5 x (1 + erf(x / sqrt 2))
  // in float is 4% off at -5 and exactly 0 at -10.
  for (double x : {-3.0, -5.0, -7.5, -10.0, -13.0, -14.0}) {
    const double ref = x * Phi(x);
    INFO("x = " << x << ": " << mha::Activate(mha::Activation::Gelu, static_cast<float>(x)) << " against " << ref);
    CHECK(std::fabs(mha::Activate(mha::Activation::Gelu, static_cast<float>(x)) - ref) <= 6.0 * UlpAt(ref));
    CHECK(mha::detail::GeluGradScalar(static_cast<float>(x)) < 0.0f);  // Phi + x phi < 0 for x < -0.75
  }
}

TEST_CASE("GELU's infinities, NaN and zeros behave as the scalar erf form did", "[gelu]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  using mha::detail::GeluGradScalar;
  using mha::detail::GeluScalar;
  CHECK(GeluScalar(inf) == inf);
  CHECK(std::isnan(GeluScalar(-inf)));  // -inf * Phi(-inf) = -inf * 0
  CHECK(std::isnan(GeluScalar(nan)));
  CHECK(std::isnan(GeluGradScalar(inf)));  // Phi + x phi: inf * 0
  CHECK(std::isnan(GeluGradScalar(-inf)));
  CHECK(std::isnan(GeluGradScalar(nan)));
  CHECK(GeluScalar(0.0f) == 0.0f);
  CHECK_FALSE(std::signbit(GeluScalar(0.0f)));
  CHECK(std::signbit(GeluScalar(-0.0f)));
  CHECK(GeluGradScalar(0.0f) == Approx(0.5).epsilon(1e-7));
}

TEST_CASE("a value's GELU does not depend on where in a row it sits", "[gelu]") {
  // The forward pass cuts rows into panels and tasks by shape and thread count: a value
  // must come out the same in a vector's lanes, in a short tail, or alone.
  std::vector<float> base;
  for (int i = 0; i < 53; ++i) base.push_back(-7.0f + 0.2731f * static_cast<float>(i));
  for (int start = 0; start < 19; ++start) {
    std::vector<float> row(base.begin() + start, base.end()), grad(row.size());
    mha::detail::GeluRowWithGrad(row.data(), grad.data(), static_cast<int>(row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) {
      const float x = base[start + i];
      REQUIRE(row[i] == mha::detail::GeluScalar(x));
      REQUIRE(grad[i] == mha::detail::GeluGradScalar(x));
    }
  }
}
