// A thin SIMD layer for the hot loops (GEMM micro-kernel, softmax, LayerNorm).
// One code path, three widths: AVX-512 (16 floats) when the build targets it
// (-march=native on this machine), AVX2+FMA (8), and portable 4-lane vectors
// otherwise, so a non-native build is still correct everywhere.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MHA_INLINE inline __attribute__((always_inline))
#else
#define MHA_INLINE inline
#endif

#if defined(__clang__)
#define MHA_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define MHA_UNROLL _Pragma("GCC unroll 32")
#else
#define MHA_UNROLL
#endif

namespace mha::simd {

#if defined(__AVX512F__)

constexpr int kWidth = 16;
using V = __m512;
MHA_INLINE V Zero() { return _mm512_setzero_ps(); }
MHA_INLINE V Set1(float x) { return _mm512_set1_ps(x); }
MHA_INLINE V Load(const float* p) { return _mm512_loadu_ps(p); }
MHA_INLINE void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
MHA_INLINE __mmask16 Mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
// Lanes >= n read as `fill` and are never touched in memory (no fault past the end).
MHA_INLINE V LoadPartial(const float* p, int n, float fill = 0.0f) {
  return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), Mask(n), p);
}
MHA_INLINE void StorePartial(float* p, V v, int n) { _mm512_mask_storeu_ps(p, Mask(n), v); }
// A store that bypasses the caches (p 64-byte aligned); StoreFence() orders them.
MHA_INLINE void StreamStore(float* p, V v) { _mm512_stream_ps(p, v); }
MHA_INLINE void StoreFence() { _mm_sfence(); }
MHA_INLINE V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
MHA_INLINE V Add(V a, V b) { return _mm512_add_ps(a, b); }
MHA_INLINE V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
MHA_INLINE V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
MHA_INLINE V Max(V a, V b) { return _mm512_max_ps(a, b); }
// Horizontal reductions by halving (GCC 12's _mm512_reduce_* trip -Wuninitialized).
MHA_INLINE float ReduceAdd(V v) {
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E));
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1));
  __m128 s = _mm512_castps512_ps128(v);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
MHA_INLINE float ReduceMax(V v) {
  v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E));
  v = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1));
  __m128 s = _mm512_castps512_ps128(v);
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x), about 1 ulp (Cephes' expf: x = n ln2 + r, |r| <= ln2/2, a degree-7
// polynomial in Horner form). Inputs at or below -104 (including -inf, i.e. masked
// scores, and NaN) give exactly 0, so a masked score contributes exactly nothing.
// Those lanes are set to 0 by a mask rather than computed: 2^-150 times the
// polynomial did round to 0, but an underflowing result costs a microcode assist of
// about a hundred cycles per instruction (FTZ is off); a causal mask or a padded
// vector hit it in every row, which made a softmax row of 16 keys 4x slower.
// 15 vector operations.
MHA_INLINE V Exp(V x) {
  const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-104.0f), _CMP_GT_OQ);  // false for NaN
  x = _mm512_maskz_mov_ps(live, x);
  const V n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  V p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(live, p, n);  // p * 2^n, exact scaling
}

// For GELU's Phi (gelu.hpp). Div is IEEE division (correctly rounded).
MHA_INLINE V Div(V a, V b) { return _mm512_div_ps(a, b); }
MHA_INLINE V Min(V a, V b) { return _mm512_min_ps(a, b); }  // b where a is NaN
MHA_INLINE V Abs(V x) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
}
// x cut to its 12 leading significant bits, so that Cut(x) * Cut(x) is exact.
MHA_INLINE V Cut(V x) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(~0xfff)));
}
MHA_INLINE V RoundInt(V x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// p * 2^n, n integral in [-252, 0], p in [0.5, 2]: rounded once, into the denormals too.
MHA_INLINE V Pow2Scale(V p, V n) { return _mm512_scalef_ps(p, n); }
// Lanes whose x has its sign bit set (negatives, -0) take a, the others b.
MHA_INLINE V SelectNegative(V x, V a, V b) {
  return _mm512_mask_blend_ps(_mm512_cmplt_epi32_mask(_mm512_castps_si512(x), _mm512_setzero_si512()), b, a);
}
// 1 where x > 0, else 0 (NaN: 0): a ReLU's derivative, without a branch per element.
MHA_INLINE V Step(V x) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), _mm512_set1_ps(1.0f));
}

#elif defined(__AVX2__) && defined(__FMA__)

constexpr int kWidth = 8;
using V = __m256;
MHA_INLINE V Zero() { return _mm256_setzero_ps(); }
MHA_INLINE V Set1(float x) { return _mm256_set1_ps(x); }
MHA_INLINE V Load(const float* p) { return _mm256_loadu_ps(p); }
MHA_INLINE void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
MHA_INLINE __m256i Mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
MHA_INLINE V LoadPartial(const float* p, int n, float fill = 0.0f) {
  if (n >= kWidth) return Load(p);  // the same lanes; the mask and blend cost 3 more operations
  const __m256i m = Mask(n);
  return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
MHA_INLINE void StorePartial(float* p, V v, int n) { _mm256_maskstore_ps(p, Mask(n), v); }
MHA_INLINE void StreamStore(float* p, V v) { _mm256_stream_ps(p, v); }
MHA_INLINE void StoreFence() { _mm_sfence(); }
MHA_INLINE V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
MHA_INLINE V Add(V a, V b) { return _mm256_add_ps(a, b); }
MHA_INLINE V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
MHA_INLINE V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
MHA_INLINE V Max(V a, V b) { return _mm256_max_ps(a, b); }
MHA_INLINE float ReduceAdd(V v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
MHA_INLINE float ReduceMax(V v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
MHA_INLINE V Exp(V x) {
  const V lo = _mm256_set1_ps(-87.33654f);
  const V keep = _mm256_cmp_ps(x, lo, _CMP_GE_OQ);
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.37626f)), lo);
  const V n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  V p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n through the exponent bits; n >= -126 after the clamp, so this stays normal.
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)), keep);
}

MHA_INLINE V Div(V a, V b) { return _mm256_div_ps(a, b); }
MHA_INLINE V Min(V a, V b) { return _mm256_min_ps(a, b); }
MHA_INLINE V Abs(V x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
MHA_INLINE V Cut(V x) { return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0xfff))); }
MHA_INLINE V RoundInt(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
// Two steps of 2^(n/2), each a normal float: the first product is exact (p stays
// normal), the second rounds once, as AVX-512's scalef does.
MHA_INLINE V Pow2Scale(V p, V n) {
  const __m256i ni = _mm256_cvtps_epi32(n), n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  return _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23))),
                       _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23)));
}
MHA_INLINE V SelectNegative(V x, V a, V b) { return _mm256_blendv_ps(b, a, x); }
MHA_INLINE V Step(V x) {
  return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ), _mm256_set1_ps(1.0f));
}

#elif defined(__GNUC__) || defined(__clang__)

// Portable: GCC/Clang vector extensions, which become SSE2 on any x86-64 (or NEON on
// ARM) without -march: a non-native build stays vectorised. Multiply and add stay
// separate (no FMA instruction to rely on; std::fma would be a slow library call).
constexpr int kWidth = 4;
typedef float V __attribute__((vector_size(16)));
typedef std::int32_t VI __attribute__((vector_size(16)));
MHA_INLINE V Zero() { return V{0.0f, 0.0f, 0.0f, 0.0f}; }
MHA_INLINE V Set1(float x) { return V{x, x, x, x}; }
MHA_INLINE V Load(const float* p) {
  V r;
  std::memcpy(&r, p, sizeof r);
  return r;
}
MHA_INLINE void Store(float* p, V v) { std::memcpy(p, &v, sizeof v); }
MHA_INLINE V LoadPartial(const float* p, int n, float fill = 0.0f) {
  V r = Set1(fill);
  for (int i = 0; i < n; ++i) r[i] = p[i];
  return r;
}
MHA_INLINE void StorePartial(float* p, V v, int n) {
  for (int i = 0; i < n; ++i) p[i] = v[i];
}
MHA_INLINE void StreamStore(float* p, V v) { Store(p, v); }
MHA_INLINE void StoreFence() {}
MHA_INLINE V Fma(V a, V b, V c) { return a * b + c; }
MHA_INLINE V Add(V a, V b) { return a + b; }
MHA_INLINE V Sub(V a, V b) { return a - b; }
MHA_INLINE V Mul(V a, V b) { return a * b; }
MHA_INLINE V Select(VI mask, V a, V b) {  // mask lanes are all ones or all zeros
  return reinterpret_cast<V>((reinterpret_cast<VI>(a) & mask) | (reinterpret_cast<VI>(b) & ~mask));
}
MHA_INLINE V Max(V a, V b) { return Select(a > b, a, b); }
MHA_INLINE float ReduceAdd(V v) { return (v[0] + v[1]) + (v[2] + v[3]); }
MHA_INLINE float ReduceMax(V v) {
  const float a = v[0] > v[1] ? v[0] : v[1], b = v[2] > v[3] ? v[2] : v[3];
  return a > b ? a : b;
}
// The same Cephes expf as the other widths; exp(x) = 0 exactly for x < -87.33.
MHA_INLINE V Exp(V x) {
  const V lo = Set1(-87.33654f);
  const VI keep = x >= lo;
  x = Select(x < lo, lo, x);
  x = Select(x > Set1(88.37626f), Set1(88.37626f), x);
  const V t = x * Set1(1.44269504088896341f);
  // Round to nearest (half away from zero): convertvector truncates toward zero.
  const VI ni = __builtin_convertvector(t + Select(t >= Zero(), Set1(0.5f), Set1(-0.5f)), VI);
  const V n = __builtin_convertvector(ni, V);
  V r = x - n * Set1(0.693359375f);
  r = r - n * Set1(-2.12194440e-4f);
  V p = Set1(1.9875691500e-4f);
  p = p * r + Set1(1.3981999507e-3f);
  p = p * r + Set1(8.3334519073e-3f);
  p = p * r + Set1(4.1665795894e-2f);
  p = p * r + Set1(1.6666665459e-1f);
  p = p * r + Set1(5.0000001201e-1f);
  p = p * r + Set1(1.0f);
  p = p * r + Set1(1.0f);
  const VI e = (ni + 127) << 23;  // 2^n; n >= -126 after the clamp, so it stays normal
  return reinterpret_cast<V>(reinterpret_cast<VI>(p * reinterpret_cast<V>(e)) & keep);
}

MHA_INLINE V Div(V a, V b) { return a / b; }
MHA_INLINE V Min(V a, V b) { return Select(a < b, a, b); }
MHA_INLINE V Abs(V x) { return reinterpret_cast<V>(reinterpret_cast<VI>(x) & 0x7fffffff); }
MHA_INLINE V Cut(V x) { return reinterpret_cast<V>(reinterpret_cast<VI>(x) & ~0xfff); }
MHA_INLINE V RoundInt(V x) {  // half away from zero, as Exp above (|x| < 2^22 here)
  return __builtin_convertvector(__builtin_convertvector(x + Select(x >= Zero(), Set1(0.5f), Set1(-0.5f)), VI), V);
}
MHA_INLINE V Pow2Scale(V p, V n) {  // as the AVX2 one: two normal factors, one rounding
  const VI ni = __builtin_convertvector(n, VI), n1 = ni >> 1, n2 = ni - n1;
  return p * reinterpret_cast<V>((n1 + 127) << 23) * reinterpret_cast<V>((n2 + 127) << 23);
}
MHA_INLINE V SelectNegative(V x, V a, V b) { return Select(reinterpret_cast<VI>(x) < 0, a, b); }
MHA_INLINE V Step(V x) { return Select(x > V{0.0f, 0.0f, 0.0f, 0.0f}, Set1(1.0f), Zero()); }

#else

// Any other compiler: plain arrays (correct, not fast); same algorithms.
constexpr int kWidth = 4;
struct V {
  float v[4];
};
MHA_INLINE V Zero() { return V{{0, 0, 0, 0}}; }
MHA_INLINE V Set1(float x) { return V{{x, x, x, x}}; }
MHA_INLINE V Load(const float* p) {
  V r;
  std::memcpy(r.v, p, sizeof r.v);
  return r;
}
MHA_INLINE void Store(float* p, V v) { std::memcpy(p, v.v, sizeof v.v); }
MHA_INLINE V LoadPartial(const float* p, int n, float fill = 0.0f) {
  V r = Set1(fill);
  for (int i = 0; i < n; ++i) r.v[i] = p[i];
  return r;
}
MHA_INLINE void StorePartial(float* p, V v, int n) {
  for (int i = 0; i < n; ++i) p[i] = v.v[i];
}
MHA_INLINE void StreamStore(float* p, V v) { Store(p, v); }
MHA_INLINE void StoreFence() {}
#define MHA_SIMD_MAP2(name, expr)                \
  MHA_INLINE V name(V a, V b) {                  \
    V r;                                         \
    for (int i = 0; i < 4; ++i) r.v[i] = (expr); \
    return r;                                    \
  }
MHA_SIMD_MAP2(Add, a.v[i] + b.v[i])
MHA_SIMD_MAP2(Sub, a.v[i] - b.v[i])
MHA_SIMD_MAP2(Mul, a.v[i] * b.v[i])
MHA_SIMD_MAP2(Max, a.v[i] > b.v[i] ? a.v[i] : b.v[i])
#undef MHA_SIMD_MAP2
MHA_INLINE V Fma(V a, V b, V c) {
  V r;
  for (int i = 0; i < 4; ++i) r.v[i] = a.v[i] * b.v[i] + c.v[i];
  return r;
}
MHA_INLINE float ReduceAdd(V v) { return (v.v[0] + v.v[1]) + (v.v[2] + v.v[3]); }
MHA_INLINE float ReduceMax(V v) {
  const float a = v.v[0] > v.v[1] ? v.v[0] : v.v[1], b = v.v[2] > v.v[3] ? v.v[2] : v.v[3];
  return a > b ? a : b;
}
MHA_INLINE V Exp(V x) {
  V r;
  for (int i = 0; i < 4; ++i) r.v[i] = x.v[i] < -87.33654f ? 0.0f : std::exp(x.v[i]);
  return r;
}
#define MHA_SIMD_MAP1(name, expr)                \
  MHA_INLINE V name(V a) {                       \
    V r;                                         \
    for (int i = 0; i < 4; ++i) r.v[i] = (expr); \
    return r;                                    \
  }
MHA_SIMD_MAP1(Abs, std::fabs(a.v[i]))
MHA_SIMD_MAP1(RoundInt, std::nearbyint(a.v[i]))
#undef MHA_SIMD_MAP1
MHA_INLINE V Div(V a, V b) {
  V r;
  for (int i = 0; i < 4; ++i) r.v[i] = a.v[i] / b.v[i];
  return r;
}
MHA_INLINE V Min(V a, V b) {
  V r;
  for (int i = 0; i < 4; ++i) r.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
  return r;
}
MHA_INLINE V Cut(V x) {
  V r;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &x.v[i], 4);
    u &= ~0xfffu;
    std::memcpy(&r.v[i], &u, 4);
  }
  return r;
}
MHA_INLINE V Pow2Scale(V p, V n) {
  V r;
  for (int i = 0; i < 4; ++i) r.v[i] = std::ldexp(p.v[i], static_cast<int>(n.v[i]));
  return r;
}
MHA_INLINE V SelectNegative(V x, V a, V b) {
  V r;
  for (int i = 0; i < 4; ++i) r.v[i] = std::signbit(x.v[i]) ? a.v[i] : b.v[i];
  return r;
}
MHA_INLINE V Step(V x) {
  V r;
  for (int i = 0; i < 4; ++i) r.v[i] = x.v[i] > 0.0f ? 1.0f : 0.0f;
  return r;
}

#endif

// Starts loading the cache line holding p (a hint: nothing if the compiler has none).
MHA_INLINE void Prefetch(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 0, 3);
#else
  (void)p;
#endif
}

// dst[0, n) = src[0, n), inline: for short rows (a head's head_dim floats), where a
// call to memcpy cost more than the copy.
MHA_INLINE void CopyRow(float* dst, const float* src, int n) {
  int j = 0;
  for (; j + kWidth <= n; j += kWidth) Store(dst + j, Load(src + j));
  if (j < n) StorePartial(dst + j, LoadPartial(src + j, n - j), n - j);
}

}  // namespace mha::simd
