// One row at a time: the softmax and LayerNorm every pass (and the tests) share.
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "mha/forward.hpp"
#include "simd.hpp"

namespace mha {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// softmax of in[0, n) into out[0, n) (out may equal in): max-subtraction, then
// exp, then one division. An all -inf row becomes zeros: nothing to attend to.
void Softmax(const float* in, float* out, int n) {
  using namespace simd;
  constexpr int W = kWidth;
  V vm = Set1(kNegInf);
  int j = 0;
  for (; j + W <= n; j += W) vm = Max(vm, Load(in + j));
  if (j < n) vm = Max(vm, LoadPartial(in + j, n - j, kNegInf));
  const float m = ReduceMax(vm);
  if (m == kNegInf) {
    std::fill(out, out + n, 0.0f);  // fully masked: zeros, not 0/0 = NaN
    return;
  }
  const V vmax = Set1(m);
  V sum = Zero();
  for (j = 0; j + W <= n; j += W) {
    const V e = Exp(Sub(Load(in + j), vmax));  // the largest term is exp(0) = 1
    Store(out + j, e);
    sum = Add(sum, e);
  }
  if (j < n) {
    const V e = Exp(Sub(LoadPartial(in + j, n - j, kNegInf), vmax));  // padding: exp(-inf) = 0
    StorePartial(out + j, e, n - j);
    sum = Add(sum, e);
  }
  const V inv = Set1(1.0f / ReduceAdd(sum));
  for (j = 0; j + W <= n; j += W) Store(out + j, Mul(Load(out + j), inv));
  if (j < n) StorePartial(out + j, Mul(LoadPartial(out + j, n - j), inv), n - j);
}

}  // namespace

namespace detail {

// The mean and inverse deviation of one row. Two-pass mean/variance in double:
// cancellation-free for any input scale.
void LayerNormStats(const float* in, int d, float eps, double& mean_out, double& rstd) {
  // Eight independent partial sums, lane l taking columns l, l + 8, ...
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int c = 0;
#if defined(__AVX512F__)
  // The same lanes in one register (GCC left the loop below scalar): the same sums.
  __m512d va = _mm512_setzero_pd();
  for (; c + 8 <= d; c += 8) va = _mm512_add_pd(va, _mm512_cvtps_pd(_mm256_loadu_ps(in + c)));
  _mm512_storeu_pd(acc, va);
#elif defined(__AVX2__) && defined(__FMA__)
  // Lanes 0-3 and 4-7 in two registers: the same sums.
  __m256d va0 = _mm256_setzero_pd(), va1 = _mm256_setzero_pd();
  for (; c + 8 <= d; c += 8) {
    va0 = _mm256_add_pd(va0, _mm256_cvtps_pd(_mm_loadu_ps(in + c)));
    va1 = _mm256_add_pd(va1, _mm256_cvtps_pd(_mm_loadu_ps(in + c + 4)));
  }
  _mm256_storeu_pd(acc, va0);
  _mm256_storeu_pd(acc + 4, va1);
#endif
  for (; c + 8 <= d; c += 8)
    for (int l = 0; l < 8; ++l) acc[l] += in[c + l];
  double mean = 0.0;
  for (; c < d; ++c) mean += in[c];
  for (int l = 0; l < 8; ++l) mean += acc[l];
  mean /= d;
  double vacc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  c = 0;
#if defined(__AVX512F__)
  __m512d vv = _mm512_setzero_pd();
  const __m512d vmean = _mm512_set1_pd(mean);
  for (; c + 8 <= d; c += 8) {
    const __m512d t = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(in + c)), vmean);
    vv = _mm512_fmadd_pd(t, t, vv);  // t * t + acc, contracted as the scalar loop is
  }
  _mm512_storeu_pd(vacc, vv);
#elif defined(__AVX2__) && defined(__FMA__)
  __m256d vv0 = _mm256_setzero_pd(), vv1 = _mm256_setzero_pd();
  const __m256d vmean = _mm256_set1_pd(mean);
  for (; c + 8 <= d; c += 8) {
    const __m256d t0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(in + c)), vmean);
    const __m256d t1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(in + c + 4)), vmean);
    vv0 = _mm256_fmadd_pd(t0, t0, vv0);  // contracted as the scalar loop is
    vv1 = _mm256_fmadd_pd(t1, t1, vv1);
  }
  _mm256_storeu_pd(vacc, vv0);
  _mm256_storeu_pd(vacc + 4, vv1);
#endif
  for (; c + 8 <= d; c += 8)
    for (int l = 0; l < 8; ++l) {
      const double t = in[c + l] - mean;
      vacc[l] += t * t;
    }
  double var = 0.0;
  for (; c < d; ++c) var += (in[c] - mean) * (in[c] - mean);
  for (int l = 0; l < 8; ++l) var += vacc[l];
  var /= d;
  mean_out = mean;
  rstd = 1.0 / std::sqrt(var + eps);
}

namespace {

// out = gamma * xhat + beta, xhat = (in - mean) * inv: the one place this is written.
void LayerNormApply(const float* in, const float* gamma, const float* beta, int d, double mean, double inv,
                    float* out) {
  for (int c = 0; c < d; ++c) out[c] = static_cast<float>((in[c] - mean) * inv) * gamma[c] + beta[c];
}

}  // namespace

void LayerNormRow(const float* in, const float* gamma, const float* beta, int d, float eps, float* out, double* stats) {
  double mean, inv;
  LayerNormStats(in, d, eps, mean, inv);
  if (stats) stats[0] = mean, stats[1] = inv;
  LayerNormApply(in, gamma, beta, d, mean, inv, out);
}

void LayerNormRows(const float* in, const float* gamma, const float* beta, int d, float eps, float* out, int rows,
                   double* stats) {
  int r = 0;
#if defined(__AVX512F__)
  // Eight rows at a time when d is a whole number of lanes: LayerNormStats's sums,
  // lane by lane in the same order, with the rows side by side in the vectors for
  // the sums across lanes, the divisions and the square root (a row alone waited on
  // those scalar chains). IEEE operations in the same order: the same bits.
  if (d % 8 == 0)
    for (; r + 8 <= rows; r += 8) {
      const float* x = in + static_cast<std::ptrdiff_t>(r) * d;
      alignas(64) double lanes[8][8];
      __m512d acc[8];
      for (int i = 0; i < 8; ++i) acc[i] = _mm512_setzero_pd();
      for (int c = 0; c < d; c += 8)
        for (int i = 0; i < 8; ++i)
          acc[i] = _mm512_add_pd(acc[i], _mm512_cvtps_pd(_mm256_loadu_ps(x + static_cast<std::ptrdiff_t>(i) * d + c)));
      // Row i's lane l at lanes[i][l]; a gather of column l puts the rows side by side.
      const __m512i col = _mm512_set_epi64(56, 48, 40, 32, 24, 16, 8, 0);
      auto across = [&]() {  // 0 + lane 0 + lane 1 + ... + lane 7, per row
        __m512d sum = _mm512_setzero_pd();
        for (int l = 0; l < 8; ++l) sum = _mm512_add_pd(sum, _mm512_i64gather_pd(col, &lanes[0][l], 8));
        return sum;
      };
      for (int i = 0; i < 8; ++i) _mm512_store_pd(lanes[i], acc[i]);
      const __m512d vd = _mm512_set1_pd(static_cast<double>(d));
      alignas(64) double mean[8], inv[8];
      _mm512_store_pd(mean, _mm512_div_pd(across(), vd));
      for (int i = 0; i < 8; ++i) {
        const __m512d vmean = _mm512_set1_pd(mean[i]);
        __m512d vv = _mm512_setzero_pd();
        for (int c = 0; c < d; c += 8) {
          const __m512d t =
              _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + static_cast<std::ptrdiff_t>(i) * d + c)), vmean);
          vv = _mm512_fmadd_pd(t, t, vv);
        }
        _mm512_store_pd(lanes[i], vv);
      }
      const __m512d var = _mm512_add_pd(_mm512_div_pd(across(), vd), _mm512_set1_pd(static_cast<double>(eps)));
      _mm512_store_pd(inv, _mm512_div_pd(_mm512_set1_pd(1.0), _mm512_sqrt_pd(var)));
      for (int i = 0; i < 8; ++i) {
        const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(r + i) * d;
        if (stats) stats[2 * (r + i)] = mean[i], stats[2 * (r + i) + 1] = inv[i];
        LayerNormApply(in + o, gamma, beta, d, mean[i], inv[i], out + o);
      }
    }
#elif defined(__AVX2__) && defined(__FMA__)
  // The AVX-512 form above at 256 bits: four rows at a time (each row's eight lanes
  // in two registers, sixteen registers in all), the same operations in the same order.
  if (d % 8 == 0)
    for (; r + 4 <= rows; r += 4) {
      constexpr int R = 4;
      const float* x = in + static_cast<std::ptrdiff_t>(r) * d;
      alignas(32) double lanes[R][8];
      // Row i's lanes side by side with the other rows' (lanes[i][l] for i < R), then
      // 0 + lane 0 + ... + lane 7 per row, as LayerNormStats adds them.
      auto across = [&]() {
        __m256d sum = _mm256_setzero_pd();
        for (int l = 0; l < 8; ++l)
          sum = _mm256_add_pd(sum, _mm256_set_pd(lanes[3][l], lanes[2][l], lanes[1][l], lanes[0][l]));
        return sum;
      };
      __m256d acc[R][2];
      for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_pd();
      for (int c = 0; c < d; c += 8)
        for (int i = 0; i < R; ++i)
          for (int h = 0; h < 2; ++h)
            acc[i][h] = _mm256_add_pd(
                acc[i][h], _mm256_cvtps_pd(_mm_loadu_ps(x + static_cast<std::ptrdiff_t>(i) * d + c + 4 * h)));
      for (int i = 0; i < R; ++i) _mm256_store_pd(lanes[i], acc[i][0]), _mm256_store_pd(lanes[i] + 4, acc[i][1]);
      const __m256d vd = _mm256_set1_pd(static_cast<double>(d));
      alignas(32) double mean[R], inv[R];
      _mm256_store_pd(mean, _mm256_div_pd(across(), vd));
      for (int i = 0; i < R; ++i) {
        const __m256d vmean = _mm256_set1_pd(mean[i]);
        __m256d v0 = _mm256_setzero_pd(), v1 = _mm256_setzero_pd();
        for (int c = 0; c < d; c += 8) {
          const float* xi = x + static_cast<std::ptrdiff_t>(i) * d + c;
          const __m256d t0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(xi)), vmean);
          const __m256d t1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(xi + 4)), vmean);
          v0 = _mm256_fmadd_pd(t0, t0, v0);
          v1 = _mm256_fmadd_pd(t1, t1, v1);
        }
        _mm256_store_pd(lanes[i], v0);
        _mm256_store_pd(lanes[i] + 4, v1);
      }
      const __m256d var = _mm256_add_pd(_mm256_div_pd(across(), vd), _mm256_set1_pd(static_cast<double>(eps)));
      _mm256_store_pd(inv, _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(var)));
      for (int i = 0; i < R; ++i) {
        const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(r + i) * d;
        if (stats) stats[2 * (r + i)] = mean[i], stats[2 * (r + i) + 1] = inv[i];
        LayerNormApply(in + o, gamma, beta, d, mean[i], inv[i], out + o);
      }
    }
#endif
  for (; r < rows; ++r) {
    const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(r) * d;
    LayerNormRow(in + o, gamma, beta, d, eps, out + o, stats ? stats + 2 * r : nullptr);
  }
}

}  // namespace detail

void SoftmaxRow(float* row, int n) { Softmax(row, row, n); }

void LayerNormRows(const Mat& in, const RowVec& gamma, const RowVec& beta, float eps, Mat& out) {
  out.resize(in.rows(), in.cols());
  detail::LayerNormRows(in.data(), gamma.data(), beta.data(), static_cast<int>(in.cols()), eps, out.data(),
                        static_cast<int>(in.rows()));
}

namespace detail {

// One row of one head for the trace, in three passes over data that is in cache:
// the scores s[0, visible) (keys past `visible` are masked), the weights into `a`
// (scratch that attn V reads next; zeroed up to a_end) and both rows into the
// trace (s_out, a_out: n keys, masked ones -inf and 0). kStream: the trace rows
// are 64-byte aligned and written past the caches.
template <bool kStream>
void AttentionRow(const float* s, int visible, int n, float* a, int a_end, float* s_out, float* a_out) {
  using namespace simd;
  constexpr int W = kWidth;
  auto put = [](float* p, V v) {
    if (kStream)
      StreamStore(p, v);
    else
      Store(p, v);
  };
  // Pass 1: the row max, copying the scores to the trace on the way (if kept).
  V vm = Set1(kNegInf);
  int j = 0;
  for (; j + W <= visible; j += W) {
    const V x = Load(s + j);
    vm = Max(vm, x);
    if (s_out) put(s_out + j, x);
  }
  if (j < visible) vm = Max(vm, LoadPartial(s + j, visible - j, kNegInf));
  for (; s_out && j < n; j += W) {  // the partial vector at `visible`, then masked keys: -inf
    const V x = LoadPartial(s + j, std::max(0, std::min(W, visible - j)), kNegInf);
    if (j + W <= n)
      put(s_out + j, x);
    else
      StorePartial(s_out + j, x, n - j);
  }
  const float m = ReduceMax(vm);
  if (m == kNegInf) {  // every key masked: zeros, not 0/0 = NaN
    std::fill(a, a + std::max(visible, a_end), 0.0f);
    std::fill(a_out, a_out + n, 0.0f);
    return;
  }
  // Pass 2: exp(s - max) (the largest term is exp(0) = 1) and their sum.
  const V vmax = Set1(m);
  V sum = Zero();
  for (j = 0; j + W <= visible; j += W) {
    const V e = Exp(Sub(Load(s + j), vmax));
    Store(a + j, e);
    sum = Add(sum, e);
  }
  if (j < visible) {
    const V e = Exp(Sub(LoadPartial(s + j, visible - j, kNegInf), vmax));  // padding: 0
    Store(a + j, e);                                                       // the scratch row has room for whole vectors
    sum = Add(sum, e);
  }
  // Pass 3: normalise, into the scratch and the trace; masked weights are exactly 0.
  const V inv = Set1(1.0f / ReduceAdd(sum));
  for (j = 0; j < n; j += W) {
    const V x = j < visible ? Mul(Load(a + j), inv) : Zero();
    if (j < a_end) Store(a + j, x);
    if (j + W <= n)
      put(a_out + j, x);
    else
      StorePartial(a_out + j, x, n - j);
  }
}

// AttentionRow for m rows of at most one vector of keys (n <= kWidth), trace rows
// not streamed, row i at s + i * ld (a + i * ld), its keys visible up to
// visible0 + i (causal) or all n: each row gets AttentionRow's very operations,
// in stages over eight rows at a time. One row alone waited on its chain (max, exp,
// sum, division), and on a mispredicted branch wherever its visible length changed.
void AttentionRowsNarrow(const float* s, std::ptrdiff_t ld, int m, int n, bool causal, int visible0, float* a,
                         int a_end, float* s_out, float* a_out) {
  using namespace simd;
  constexpr int kRows = 8;
  for (int i0 = 0; i0 < m; i0 += kRows) {
    const int rows = std::min(kRows, m - i0);
    V v[kRows], e[kRows];
    float mx[kRows], sum[kRows];
    int vis[kRows];
    for (int r = 0; r < rows; ++r) {  // pass 1: the scores (masked keys -inf) and their max
      const int i = i0 + r, visible = vis[r] = causal ? std::min(n, visible0 + i) : n;
      v[r] = LoadPartial(s + i * ld, visible, kNegInf);
      if (s_out) StorePartial(s_out + static_cast<std::ptrdiff_t>(i) * n, v[r], n);
      mx[r] = ReduceMax(Max(Set1(kNegInf), v[r]));
    }
    for (int r = 0; r < rows; ++r) {  // pass 2: exp(s - max), and its sum
      e[r] = Exp(Sub(v[r], Set1(mx[r])));
      sum[r] = ReduceAdd(Add(Zero(), e[r]));
    }
    for (int r = 0; r < rows; ++r) {  // pass 3: normalised, into the scratch and the trace
      const int i = i0 + r;
      float* ai = a + i * ld;
      float* ao = a_out + static_cast<std::ptrdiff_t>(i) * n;
      if (mx[r] == kNegInf) {  // every key masked: zeros, not 0/0 = NaN
        std::fill(ai, ai + std::max(vis[r], a_end), 0.0f);
        std::fill(ao, ao + n, 0.0f);
        continue;
      }
      const V x = Mul(e[r], Set1(1.0f / sum[r]));
      if (a_end > 0) Store(ai, x);
      StorePartial(ao, x, n);
    }
  }
}

template void AttentionRow<true>(const float*, int, int, float*, int, float*, float*);
template void AttentionRow<false>(const float*, int, int, float*, int, float*, float*);

}  // namespace detail

}  // namespace mha
