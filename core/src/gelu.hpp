// The exact GELU, x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), and its derivative
// Phi(x) + x phi(x), a vector of lanes at a time (simd.hpp): the FFN's forward pass
// and the training step's backward pass call it over whole rows.
//
// Phi comes from erfc in the form of Numerical Recipes' erfcc: for x >= 0,
//   Phi(-x) = exp(-x^2 / 2) * g,   g = t Q(t) / 2,   t = 1 / (1 + x 7/32),
// where Q is a degree-10 polynomial (scripts/fit_gelu.py fits it; its relative error
// is 1e-9, far below float's). The same exp(-x^2 / 2) is phi's, so the derivative costs
// a few products more. Phi(-x) is computed as itself, not as 1 - Phi(x), so GELU of a
// negative x keeps its relative precision down to the denormals (1 + erf(x / sqrt 2)
// in float loses it from x < -3 and is 0 by x = -7.5); tests/core/test_gelu.cpp
// checks every result against a double reference. +-inf and NaN give what the scalar
// std::erf form gave: GELU(+inf) = +inf, GELU(-inf) = NaN (-inf times 0), GELU'(+-inf)
// = NaN, NaN stays NaN.
//
// Every lane runs the same operations whatever its neighbours are, so a value's result
// does not depend on where in a row it sits, nor on how rows are cut into tasks.
#pragma once

#include "simd.hpp"

namespace mha::detail {

namespace gelu {

// Past |x| = 15, exp(-x^2 / 2) = exp(-112.5) is below float's smallest denormal.
constexpr float kMaxAbs = 15.0f;

// exp(-x^2 / 2) for 0 <= x <= kMaxAbs, about 1 ulp (Cephes' expf polynomial). x^2 is
// carried as c^2 (exact: c is x cut to 12 significant bits) plus (x - c)(x + c): one
// rounded x^2 would be off by up to 1.3e-5 near x = 15, and exp would keep that error.
MHA_INLINE simd::V ExpMinusHalfSquare(simd::V x) {
  using namespace simd;
  const V c = Cut(x);
  const V hi = Mul(Mul(c, c), Set1(-0.5f));                 // exact
  const V lo = Mul(Mul(Sub(c, x), Add(c, x)), Set1(0.5f));  // small: its rounding is harmless
  const V n = RoundInt(Mul(Add(hi, lo), Set1(1.44269504088896341f)));
  V r = Fma(n, Set1(-0.693359375f), hi);  // exact: n has <= 8 bits, the constant 9
  r = Fma(n, Set1(2.12194440e-4f), r);
  r = Add(r, lo);
  V p = Set1(1.9875691500e-4f);
  p = Fma(p, r, Set1(1.3981999507e-3f));
  p = Fma(p, r, Set1(8.3334519073e-3f));
  p = Fma(p, r, Set1(4.1665795894e-2f));
  p = Fma(p, r, Set1(1.6666665459e-1f));
  p = Fma(p, r, Set1(5.0000001201e-1f));
  p = Fma(p, r, Set1(1.0f));
  p = Fma(p, r, Set1(1.0f));
  return Pow2Scale(p, n);
}

// Phi(-|x|) = e * g: e = exp(-x^2 / 2), g = t Q(t) / 2.
struct Parts {
  simd::V e, g;
};

MHA_INLINE Parts PhiParts(simd::V x) {
  using namespace simd;
  const V a = Min(Abs(x), Set1(kMaxAbs));  // NaN becomes kMaxAbs: x carries the NaN below
  const V ka = Mul(a, Set1(0.21875f));
  const V t = Div(Set1(1.0f), Add(ka, Set1(1.0f)));
  // Q's argument from 1 - t = K a t rather than from t: small where Q is steepest
  // (near a = 0), so rounding t does not move it (that cost up to 3.5 ulp).
  const V u = Fma(Mul(ka, t), Set1(-2.609523773e+00f), Set1(1.0f));
  V q = Set1(3.010606812e-06f);
  q = Fma(q, u, Set1(7.296420538e-06f));
  q = Fma(q, u, Set1(-4.609422563e-05f));
  q = Fma(q, u, Set1(-2.240923649e-04f));
  q = Fma(q, u, Set1(1.913632206e-04f));
  q = Fma(q, u, Set1(5.156744286e-03f));
  q = Fma(q, u, Set1(2.536006070e-02f));
  q = Fma(q, u, Set1(7.793384764e-02f));
  q = Fma(q, u, Set1(1.752247039e-01f));
  q = Fma(q, u, Set1(3.037608936e-01f));
  q = Fma(q, u, Set1(4.126322667e-01f));
  return {ExpMinusHalfSquare(a), Mul(Mul(t, Set1(0.5f)), q)};
}

// GELU(x). x < 0: (x g) e, so a result in the denormals is rounded once; x >= 0:
// x (1 - g e), which keeps +inf.
MHA_INLINE simd::V Gelu(simd::V x, const Parts& p) {
  using namespace simd;
  return SelectNegative(x, Mul(Mul(x, p.g), p.e), Mul(x, Sub(Set1(1.0f), Mul(p.g, p.e))));
}

// GELU'(x) = Phi(x) + x phi(x), phi(x) = e / sqrt(2 pi). x < 0: (g + x / sqrt(2 pi)) e;
// x >= 0: 1 + (x / sqrt(2 pi) - g) e.
MHA_INLINE simd::V GeluGrad(simd::V x, const Parts& p) {
  using namespace simd;
  const V cx = Mul(x, Set1(0.398942280401432678f));
  return SelectNegative(x, Mul(Add(cx, p.g), p.e), Fma(Sub(cx, p.g), p.e, Set1(1.0f)));
}

}  // namespace gelu

// x[0, n) = GELU(x), in place.
inline void GeluRow(float* x, int n) {
  using namespace simd;
  int j = 0;
  for (; j + kWidth <= n; j += kWidth) {
    const V v = Load(x + j);
    Store(x + j, gelu::Gelu(v, gelu::PhiParts(v)));
  }
  if (j < n) {
    const V v = LoadPartial(x + j, n - j);
    StorePartial(x + j, gelu::Gelu(v, gelu::PhiParts(v)), n - j);
  }
}

// grad[0, n) = GELU'(x), then x[0, n) = GELU(x): the training forward pass keeps the
// derivative for the backward pass, which then only multiplies by it.
inline void GeluRowWithGrad(float* x, float* grad, int n) {
  using namespace simd;
  int j = 0;
  for (; j + kWidth <= n; j += kWidth) {
    const V v = Load(x + j);
    const gelu::Parts p = gelu::PhiParts(v);
    Store(grad + j, gelu::GeluGrad(v, p));
    Store(x + j, gelu::Gelu(v, p));
  }
  if (j < n) {
    const V v = LoadPartial(x + j, n - j);
    const gelu::Parts p = gelu::PhiParts(v);
    StorePartial(grad + j, gelu::GeluGrad(v, p), n - j);
    StorePartial(x + j, gelu::Gelu(v, p), n - j);
  }
}

// One value each, through the same lanes (the same bits as a row's).
inline float GeluScalar(float x) {
  GeluRow(&x, 1);
  return x;
}
inline float GeluGradScalar(float x) {
  float y = x, g;
  GeluRowWithGrad(&y, &g, 1);
  return g;
}

}  // namespace mha::detail
