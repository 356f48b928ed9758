// The backward pass of one layer (backward.hpp). Each step differentiates the
// forward step named beside it; mha/ffn.hpp and mha/mha.hpp give the forward formulas.
#include "backward.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gemm.hpp"
#include "rows.hpp"
#include "simd.hpp"
#include "workspace.hpp"

namespace mha::detail {

namespace {

int Blocks(Eigen::Index n, int per) { return static_cast<int>((n + per - 1) / per); }

}  // namespace

namespace {

// One row of LayerNormBackward: xhat from the forward pass's own statistics
// (LayerNormStats), then dx. Sums in eight independent lanes, which the compiler
// keeps in one vector register.
void LayerNormBackwardRow(const Mat& in, const RowVec& gamma, float eps, const Mat& dout, Mat& din, const Mat* add,
                          Mat& xhat, const double* stats, Eigen::Index r) {
  const int d = static_cast<int>(in.cols());
  const float* x = in.data() + r * d;
  const float* dy = dout.data() + r * d;
  const float* gm = gamma.data();
  float* xh = xhat.data() + r * d;
  double mean, rstd;
  if (stats)
    mean = stats[2 * r], rstd = stats[2 * r + 1];
  else
    LayerNormStats(x, d, eps, mean, rstd);
  double s1[8] = {0, 0, 0, 0, 0, 0, 0, 0}, s2[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int c = 0;
#if defined(__AVX512F__)
  // The eight lanes in one register (GCC left the loop below scalar): the same sums.
  {
    const __m512d vmean = _mm512_set1_pd(mean), vrstd = _mm512_set1_pd(rstd);
    __m512d v1 = _mm512_setzero_pd(), v2 = _mm512_setzero_pd();
    for (; c + 8 <= d; c += 8) {
      const __m512d xd = _mm512_cvtps_pd(_mm256_loadu_ps(x + c));
      const __m256 xf = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_sub_pd(xd, vmean), vrstd));
      _mm256_storeu_ps(xh + c, xf);
      const __m512d g =
          _mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(dy + c)), _mm512_cvtps_pd(_mm256_loadu_ps(gm + c)));
      v1 = _mm512_add_pd(v1, g);
      v2 = _mm512_fmadd_pd(g, _mm512_cvtps_pd(xf), v2);  // contracted as the scalar loop is
    }
    _mm512_storeu_pd(s1, v1);
    _mm512_storeu_pd(s2, v2);
  }
#endif
  for (; c + 8 <= d; c += 8)
    for (int l = 0; l < 8; ++l) {
      xh[c + l] = static_cast<float>((x[c + l] - mean) * rstd);
      const double g = static_cast<double>(dy[c + l]) * gm[c + l];
      s1[l] += g;
      s2[l] += g * xh[c + l];
    }
  double m1 = 0, m2 = 0;
  for (; c < d; ++c) {
    xh[c] = static_cast<float>((x[c] - mean) * rstd);
    const double g = static_cast<double>(dy[c]) * gm[c];
    m1 += g;
    m2 += g * xh[c];
  }
  for (int l = 0; l < 8; ++l) m1 += s1[l], m2 += s2[l];
  m1 /= d;
  m2 /= d;
  float* dx = din.data() + r * d;
  // Two loops rather than a choice per element, so each one vectorises.
  auto term = [&](int c) {
    const double g = static_cast<double>(dy[c]) * gm[c];
    return static_cast<float>(rstd * (g - m1 - xh[c] * m2));
  };
  if (add) {
    const float* base = add->data() + r * d;
    for (c = 0; c < d; ++c) dx[c] = base[c] + term(c);
  } else {
    for (c = 0; c < d; ++c) dx[c] = term(c);
  }
}

#if defined(__AVX512F__)
// Eight rows of LayerNormBackwardRow at once, d a whole number of 8 lanes, the
// statistics kept: each row's very operations (its eight lane sums, their sum in
// lane order, the same fused operations for dx, as the compiler contracted the row
// form: (dy * gamma - m1) in one rounding, then - xhat * m2 in another), but sixteen
// independent chains in flight instead of two. One row at a time waited on its
// chains: 7% of a training step at d_model 64.
void LayerNormBackward8(const Mat& in, const RowVec& gamma, const Mat& dout, Mat& din, const Mat* add, Mat& xhat,
                        const double* stats, Eigen::Index r0) {
  constexpr int R = 8;
  const int d = static_cast<int>(in.cols());
  // Pointers held locally: the stores below could alias the matrices' own members.
  const float *gm = gamma.data(), *x = in.data(), *dy = dout.data(), *base = add ? add->data() : nullptr;
  float *xh = xhat.data(), *dx = din.data();
  alignas(64) double s1[R][8], s2[R][8];
  __m512d v1[R], v2[R];
  for (int r = 0; r < R; ++r) v1[r] = _mm512_setzero_pd(), v2[r] = _mm512_setzero_pd();
  for (int c = 0; c < d; c += 8) {
    const __m512d gd = _mm512_cvtps_pd(_mm256_loadu_ps(gm + c));
    for (int r = 0; r < R; ++r) {
      const std::ptrdiff_t o = (r0 + r) * d + c;
      const __m512d xd = _mm512_cvtps_pd(_mm256_loadu_ps(x + o));
      const __m256 xf = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_sub_pd(xd, _mm512_set1_pd(stats[2 * (r0 + r)])),
                                                      _mm512_set1_pd(stats[2 * (r0 + r) + 1])));
      _mm256_storeu_ps(xh + o, xf);
      const __m512d g = _mm512_mul_pd(_mm512_cvtps_pd(_mm256_loadu_ps(dy + o)), gd);
      v1[r] = _mm512_add_pd(v1[r], g);
      v2[r] = _mm512_fmadd_pd(g, _mm512_cvtps_pd(xf), v2[r]);
    }
  }
  for (int r = 0; r < R; ++r) _mm512_store_pd(s1[r], v1[r]), _mm512_store_pd(s2[r], v2[r]);
  double m1[R] = {0, 0, 0, 0, 0, 0, 0, 0}, m2[R] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int l = 0; l < 8; ++l)
    for (int r = 0; r < R; ++r) m1[r] += s1[r][l], m2[r] += s2[r][l];
  for (int r = 0; r < R; ++r) {
    const __m512d vm1 = _mm512_set1_pd(m1[r] / d), vm2 = _mm512_set1_pd(m2[r] / d);
    const __m512d vrstd = _mm512_set1_pd(stats[2 * (r0 + r) + 1]);
    for (int c = 0; c < d; c += 8) {
      const std::ptrdiff_t o = (r0 + r) * d + c;
      const __m512d gd = _mm512_cvtps_pd(_mm256_loadu_ps(gm + c));
      __m512d t = _mm512_fmsub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(dy + o)), gd, vm1);
      t = _mm512_fnmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(xh + o)), vm2, t);
      __m256 f = _mm512_cvtpd_ps(_mm512_mul_pd(vrstd, t));
      if (base) f = _mm256_add_ps(_mm256_loadu_ps(base + o), f);
      _mm256_storeu_ps(dx + o, f);
    }
  }
}
#elif defined(__AVX2__) && defined(__FMA__)
// LayerNormBackward8 at 256 bits: four rows at a time, each row's eight lane sums in
// two registers (sixteen accumulators), the same operations in the same order.
void LayerNormBackward4(const Mat& in, const RowVec& gamma, const Mat& dout, Mat& din, const Mat* add, Mat& xhat,
                        const double* stats, Eigen::Index r0) {
  constexpr int R = 4;
  const int d = static_cast<int>(in.cols());
  const float *gm = gamma.data(), *x = in.data(), *dy = dout.data(), *base = add ? add->data() : nullptr;
  float *xh = xhat.data(), *dx = din.data();
  alignas(32) double s1[R][8], s2[R][8];
  for (int h = 0; h < 2; ++h) {  // lanes 0-3, then 4-7: eight accumulators at a time
    __m256d v1[R], v2[R];
    for (int r = 0; r < R; ++r) v1[r] = v2[r] = _mm256_setzero_pd();
    for (int c = 4 * h; c < d; c += 8) {
      const __m256d gd = _mm256_cvtps_pd(_mm_loadu_ps(gm + c));
      for (int r = 0; r < R; ++r) {
        const std::ptrdiff_t o = (r0 + r) * d + c;
        const __m256d xd = _mm256_cvtps_pd(_mm_loadu_ps(x + o));
        const __m128 xf = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_sub_pd(xd, _mm256_set1_pd(stats[2 * (r0 + r)])),
                                                        _mm256_set1_pd(stats[2 * (r0 + r) + 1])));
        _mm_storeu_ps(xh + o, xf);
        const __m256d g = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(dy + o)), gd);
        v1[r] = _mm256_add_pd(v1[r], g);
        v2[r] = _mm256_fmadd_pd(g, _mm256_cvtps_pd(xf), v2[r]);
      }
    }
    for (int r = 0; r < R; ++r) _mm256_store_pd(s1[r] + 4 * h, v1[r]), _mm256_store_pd(s2[r] + 4 * h, v2[r]);
  }
  double m1[R] = {0, 0, 0, 0}, m2[R] = {0, 0, 0, 0};
  for (int l = 0; l < 8; ++l)
    for (int r = 0; r < R; ++r) m1[r] += s1[r][l], m2[r] += s2[r][l];
  for (int r = 0; r < R; ++r) {
    const __m256d vm1 = _mm256_set1_pd(m1[r] / d), vm2 = _mm256_set1_pd(m2[r] / d);
    const __m256d vrstd = _mm256_set1_pd(stats[2 * (r0 + r) + 1]);
    for (int c = 0; c < d; c += 4) {
      const std::ptrdiff_t o = (r0 + r) * d + c;
      const __m256d gd = _mm256_cvtps_pd(_mm_loadu_ps(gm + c));
      __m256d t = _mm256_fmsub_pd(_mm256_cvtps_pd(_mm_loadu_ps(dy + o)), gd, vm1);
      t = _mm256_fnmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(xh + o)), vm2, t);
      __m128 f = _mm256_cvtpd_ps(_mm256_mul_pd(vrstd, t));
      if (base) f = _mm_add_ps(_mm_loadu_ps(base + o), f);
      _mm_storeu_ps(dx + o, f);
    }
  }
}
#endif

}  // namespace

// y = gamma * xhat + beta with xhat = (x - mean) * rstd (biased variance, as
// LayerNormRow): dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),
// dxhat = dy * gamma; dgamma = sum over rows of dy * xhat, dbeta = sum of dy.
void LayerNormBackward(Pool& pool, int threads, const Mat& in, const RowVec& gamma, float eps, const Mat& dout,
                       Mat& din, const Mat* add, RowVec& dgamma, RowVec& dbeta, Mat& xhat, const LnStats* stats) {
  const Eigen::Index n = in.rows(), d = in.cols();
  const double* kept = stats && stats->rows() == n ? stats->data() : nullptr;
  SafeResize(xhat, n, d);
  if (add != &din) SafeResize(din, n, d);
  auto task = [&](int blk, int) {
    const Eigen::Index r0 = static_cast<Eigen::Index>(blk) * kRowsPerTask, r1 = std::min(n, r0 + kRowsPerTask);
    Eigen::Index r = r0;
#if defined(__AVX512F__)
    if (kept && d % 8 == 0)
      for (; r + 8 <= r1; r += 8) LayerNormBackward8(in, gamma, dout, din, add, xhat, kept, r);
#elif defined(__AVX2__) && defined(__FMA__)
    if (kept && d % 8 == 0)
      for (; r + 4 <= r1; r += 4) LayerNormBackward4(in, gamma, dout, din, add, xhat, kept, r);
#endif
    for (; r < r1; ++r) LayerNormBackwardRow(in, gamma, eps, dout, din, add, xhat, kept, r);
  };
  ParallelFor(pool, threads, Blocks(n, kRowsPerTask), task);
  // Rows in order: the same sums on any thread count. A stripe of columns per task,
  // its sums held in registers over every row (as AccumulateColumnSums); dg's
  // multiply-add is one fused operation, as the compiler contracted the scalar form.
  using simd::kWidth;
  constexpr int kStripe = 2;
  float* dg = dgamma.data();
  float* db = dbeta.data();
  const int cols = static_cast<int>(d), stripe = ColumnStripe(cols, threads, kStripe);
  auto sums = [&](int t, int) {
    const int c0 = t * stripe;
    int width[kStripe];
    simd::V g[kStripe], b[kStripe];
    for (int v = 0; v < kStripe; ++v) {
      width[v] = std::clamp(std::min(cols, c0 + stripe) - c0 - v * kWidth, 0, kWidth);
      g[v] = simd::LoadPartial(dg + c0 + v * kWidth, width[v]);
      b[v] = simd::LoadPartial(db + c0 + v * kWidth, width[v]);
    }
    for (Eigen::Index r = 0; r < n; ++r) {
      const float* dy = dout.data() + r * d + c0;
      const float* xh = xhat.data() + r * d + c0;
      for (int v = 0; v < kStripe; ++v) {
        if (width[v] == 0) continue;
        const simd::V y = simd::LoadPartial(dy + v * kWidth, width[v]);
        g[v] = simd::Fma(y, simd::LoadPartial(xh + v * kWidth, width[v]), g[v]);
        b[v] = simd::Add(b[v], y);
      }
    }
    for (int v = 0; v < kStripe; ++v)
      if (width[v] > 0) {
        simd::StorePartial(dg + c0 + v * kWidth, g[v], width[v]);
        simd::StorePartial(db + c0 + v * kWidth, b[v], width[v]);
      }
  };
  ParallelFor(pool, threads, (cols + stripe - 1) / stripe, sums);
}

namespace {

MHA_INLINE float Dot(const float* x, const float* y, int n) {
  using namespace simd;
  V acc = Zero();
  int j = 0;
  for (; j + kWidth <= n; j += kWidth) acc = Fma(Load(x + j), Load(y + j), acc);
  if (j < n) acc = Fma(LoadPartial(x + j, n - j), LoadPartial(y + j, n - j), acc);
  return ReduceAdd(acc);
}

// dh *= (hidden > 0), over n floats: a product by exactly 1 or 0. The factor comes
// from a vector compare: GCC 12 compiled the scalar form to a branch per element,
// which mispredicts on half of a ReLU's units (7% of mhaviz-small's ReLU step).
void ReluGradRows(const float* hidden, float* dh, Eigen::Index n) {
  using namespace simd;
  Eigen::Index i = 0;
  for (; i + kWidth <= n; i += kWidth) Store(dh + i, Mul(Load(dh + i), Step(Load(hidden + i))));
  for (; i < n; ++i) dh[i] *= hidden[i] > 0.0f ? 1.0f : 0.0f;
}

// dh[0, n) *= grad[0, n)
void MultiplyRows(const float* grad, float* dh, Eigen::Index n) {
  using namespace simd;
  Eigen::Index i = 0;
  for (; i + kWidth <= n; i += kWidth) Store(dh + i, Mul(Load(dh + i), Load(grad + i)));
  for (; i < n; ++i) dh[i] *= grad[i];
}

// C (m x n) = alpha * A (m x k) B (k x n) on the GEMM micro-kernel, B packed a panel
// at a time into `pack` (PanelFloats(k)); with b_transposed, B(p, j) is at b[j * ldb + p];
// with a_transposed, A(i, p) at a[p * lda + i].
void SmallGemm(int m, int k, int n, const float* a, std::ptrdiff_t lda, bool a_transposed, const float* b,
               std::ptrdiff_t ldb, bool b_transposed, float* c, std::ptrdiff_t ldc, float alpha, float* pack) {
  if (n <= simd::kWidth && !b_transposed) {  // one narrow panel: B read in place (gemm.hpp)
    (a_transposed ? PanelAT : Panel)(m, k, a, lda, b, ldb, c, ldc, n, nullptr, alpha);
    return;
  }
  for (int j0 = 0; j0 < n; j0 += kNR) {
    const int nc = std::min(kNR, n - j0);
    if (b_transposed)
      PackBT(b + static_cast<std::ptrdiff_t>(j0) * ldb, ldb, k, nc, pack);
    else
      PackB(b + j0, ldb, k, nc, pack);
    (a_transposed ? PanelAT : Panel)(m, k, a, lda, pack, kNR, c + j0, ldc, nc, nullptr, alpha);
  }
}

// The attention core of sequence b, K/V head g and its query heads, given
// dL/d(concat): context = attn V, attn = softmax(scores), scores = scale * q k^T.
//   dattn = dcontext V^T;  dV += attn^T dcontext
//   dscores = attn * (dattn - rowsum(dattn * attn))   (softmax; masked weights are 0)
//   dq = scale * dscores K;  dK += scale * dscores^T q
// The products run on the GEMM micro-kernel in per-thread scratch that only grows,
// so nothing is allocated at any accepted length; the query heads of a group add
// into their shared K/V head in head order.
void AttentionCoreBackward(const Config& cfg, const Trace& t, int b, int g, const Mat& dconcat, Mat& dq, Mat& dk,
                           Mat& dv, ThreadScratch& s) {
  const int S = t.seq, hd = cfg.head_dim(), H = cfg.num_heads, G = cfg.kv_heads(), group = H / G;
  const float scale = (cfg.scale ? 1.0f / std::sqrt(static_cast<float>(hd)) : 1.0f) / cfg.temperature;
  const Eigen::Index row0 = static_cast<Eigen::Index>(b) * S;
  // Sequence b's blocks of the batch trace: (b, head, S, hd) and (b, head, S, S).
  const float* K = t.k.data() + (static_cast<std::ptrdiff_t>(b) * G + g) * S * hd;
  const float* V = t.v.data() + (static_cast<std::ptrdiff_t>(b) * G + g) * S * hd;
  const std::ptrdiff_t ldc = dconcat.cols(), ldq = dq.cols(), ldkv = dk.cols();
  float* dK = dk.data() + row0 * ldkv + static_cast<std::ptrdiff_t>(g) * hd;
  float* dV = dv.data() + row0 * ldkv + static_cast<std::ptrdiff_t>(g) * hd;
  float* ds = s.ds.data();  // (S, S): dattn, then dscores in place
  float* tile = s.tile.data();
  float* pack = s.pack.Get(0);
  // This sequence's blocks come from a trace written long before, out of cache: their
  // loads are all started here, so their misses overlap instead of each product
  // waiting for its own in turn (the next sequence's V too, which comes first).
  {
    constexpr int kLine = 64 / sizeof(float);
    auto fetch = [](const float* p, std::ptrdiff_t n) {
      for (std::ptrdiff_t i = 0; i < n; i += kLine) simd::Prefetch(p + i);
    };
    const std::ptrdiff_t block = static_cast<std::ptrdiff_t>(S) * hd;
    fetch(K, block);
    for (int h = g * group; h < (g + 1) * group; ++h) {
      fetch(t.attn.data() + (static_cast<std::ptrdiff_t>(b) * H + h) * S * S, static_cast<std::ptrdiff_t>(S) * S);
      fetch(t.q.data() + (static_cast<std::ptrdiff_t>(b) * H + h) * block, block);
    }
    if (b + 1 < t.batch) fetch(V + static_cast<std::ptrdiff_t>(G) * block, block);
  }
  // The first head of the group writes dK and dV, the others add theirs.
  auto add = [&](float* to, const float* from) {
    for (int i = 0; i < S; ++i)
      for (int c = 0; c < hd; ++c) to[i * ldkv + c] += from[i * hd + c];
  };
  for (int h = g * group; h < (g + 1) * group; ++h) {
    const bool first = h == g * group;
    const float* A = t.attn.data() + (static_cast<std::ptrdiff_t>(b) * H + h) * S * S;
    const float* Q = t.q.data() + (static_cast<std::ptrdiff_t>(b) * H + h) * S * hd;
    const float* dC = dconcat.data() + row0 * ldc + static_cast<std::ptrdiff_t>(h) * hd;
    SmallGemm(S, hd, S, dC, ldc, false, V, hd, /*b_transposed=*/true, ds, S, 1.0f, pack);  // dattn
    for (int i = 0; i < S; ++i) {
      float* row = ds + static_cast<std::ptrdiff_t>(i) * S;
      const float* a = A + static_cast<std::ptrdiff_t>(i) * S;
      const float dot = Dot(row, a, S);
      for (int j = 0; j < S; ++j) row[j] = a[j] * (row[j] - dot);
    }
    SmallGemm(S, S, hd, ds, S, false, K, hd, false, dq.data() + row0 * ldq + static_cast<std::ptrdiff_t>(h) * hd, ldq,
              scale, pack);
    SmallGemm(S, S, hd, ds, S, /*a_transposed=*/true, Q, hd, false, first ? dK : tile, first ? ldkv : hd, scale, pack);
    if (!first) add(dK, tile);
    SmallGemm(S, S, hd, A, S, /*a_transposed=*/true, dC, ldc, false, first ? dV : tile, first ? ldkv : hd, 1.0f, pack);
    if (!first) add(dV, tile);
  }
}

// The FFN sublayer's backward: given dffn_out (= dF), its input `ffn_in` and hidden
// activations `hidden` from the forward pass (and for GELU its derivative `act_grad`,
// which the forward pass kept), adds W1, b1, W2, b2 gradients and writes dL/d(ffn
// input) into s.dffn_in.
void FfnBackward(Pool& pool, int threads, const Config& cfg, const Weights& w, const Mat& dF, const Mat& ffn_in,
                 const Mat& hidden, const Mat& act_grad, Weights& g, LayerScratch& s) {
  WeightGrad(pool, threads, hidden, dF, g.ffn_W2, s.gemm, &g.ffn_b2);
  RowsTimesTransposed(pool, threads, dF, w.ffn_W2, s.dh, false, s.gemm);  // d hidden
  // d pre-activation = d hidden * act'(pre). ReLU: pre > 0 exactly where hidden > 0.
  // GELU: act'(pre) as the forward pass computed it with act(pre).
  const bool gelu = cfg.activation == Activation::Gelu;
  if (gelu && (act_grad.rows() != s.dh.rows() || act_grad.cols() != s.dh.cols()))
    throw Error("internal: the GELU layer's trace has no kept derivative (ForwardBatch with for_backward)");
  auto task = [&](int blk, int) {
    const Eigen::Index r0 = static_cast<Eigen::Index>(blk) * kRowsPerTask;
    const Eigen::Index n = std::min<Eigen::Index>(kRowsPerTask, s.dh.rows() - r0);
    if (gelu)
      MultiplyRows(act_grad.data() + r0 * s.dh.cols(), s.dh.data() + r0 * s.dh.cols(), n * s.dh.cols());
    else
      ReluGradRows(hidden.data() + r0 * s.dh.cols(), s.dh.data() + r0 * s.dh.cols(), n * s.dh.cols());
  };
  ParallelFor(pool, threads, Blocks(s.dh.rows(), kRowsPerTask), task);
  WeightGrad(pool, threads, ffn_in, s.dh, g.ffn_W1, s.gemm, &g.ffn_b1);
  RowsTimesTransposed(pool, threads, s.dh, w.ffn_W1, s.dffn_in, false, s.gemm);
}

}  // namespace

void LayerBackward(Pool& pool, int threads, const Config& cfg, const Weights& w, const Trace& t, const Mat& dy,
                   Weights& g, Mat& dx, LayerScratch& s) {
  const int S = t.seq, batch = t.batch, d = cfg.d_model, G = cfg.kv_heads(), hd = cfg.head_dim();
  const Eigen::Index N = static_cast<Eigen::Index>(batch) * S;
  const bool pre = cfg.norm == Norm::Pre, post = cfg.norm == Norm::Post;
  const bool ffn = cfg.block == Block::Encoder;
  if (static_cast<int>(s.per_thread.size()) < threads) s.per_thread.resize(threads);
  for (ThreadScratch& ts : s.per_thread) {
    SafeResize(ts.ds, S, S);
    SafeResize(ts.tile, S, hd);
    ts.pack.Get(PanelFloats(std::max(S, hd)));
  }

  // dL/d(attention sublayer output `out`). The activations are read where the batch's
  // forward pass left them (every sequence's rows in one matrix).
  const Mat* dout = &dy;
  if (ffn) {
    const Mat* dF = &dy;
    if (post) {  // block_out = LN2(ffn_residual)
      LayerNormBackward(pool, threads, t.ffn_residual, w.ln2_gamma, cfg.ln_eps, dy, s.dres, nullptr, g.ln2_gamma,
                        g.ln2_beta, s.xhat, &t.ln2_stats);
      dF = &s.dres;
    }
    FfnBackward(pool, threads, cfg, w, *dF, pre ? t.ffn_ln : t.out, t.ffn_hidden, t.ffn_act_grad, g, s);
    // ffn_residual = out + ffn_out: the residual path carries dF straight to `out`.
    SafeResize(s.da, N, d);
    if (pre) {  // ffn_ln = LN2(out): dF plus LN2's backward of dffn_in
      LayerNormBackward(pool, threads, t.out, w.ln2_gamma, cfg.ln_eps, s.dffn_in, s.da, dF, g.ln2_gamma, g.ln2_beta,
                        s.xhat, &t.ln2_stats);
    } else {
      s.da = *dF + s.dffn_in;
    }
    dout = &s.da;
  }

  // The attention sublayer: out = LN1(x + attn_out) (post), x + attn_out(LN1(x)) (pre),
  // or x + attn_out (none).
  const Mat* dres = dout;
  if (post) {
    LayerNormBackward(pool, threads, t.residual, w.ln_gamma, cfg.ln_eps, *dout, s.dres, nullptr, g.ln_gamma, g.ln_beta,
                      s.xhat, &t.ln_stats);
    dres = &s.dres;
  }

  // attn_out = concat W_O + b_O
  WeightGrad(pool, threads, t.concat, *dres, g.W_o, s.gemm, &g.b_o);
  RowsTimesTransposed(pool, threads, *dres, w.W_o, s.dconcat, false, s.gemm);

  // The attention core, per (sequence, K/V head): the query heads of a group add into
  // their shared K/V head's gradient in head order.
  SafeResize(s.dq, N, d);
  SafeResize(s.dk, N, static_cast<Eigen::Index>(G) * hd);
  SafeResize(s.dv, N, static_cast<Eigen::Index>(G) * hd);
  auto core_task = [&](int task, int tid) {
    AttentionCoreBackward(cfg, t, task / G, task % G, s.dconcat, s.dq, s.dk, s.dv, s.per_thread[tid]);
  };
  ParallelFor(pool, threads, batch * G, core_task);

  // Q = src W_Q + b_Q, K = src W_K + b_K, V = src W_V + b_V (src = LN1(x) for pre-LN)
  const Mat& src = pre ? t.x_ln : t.in.x;
  WeightGrad(pool, threads, src, s.dq, g.W_q, s.gemm, &g.b_q);
  WeightGrad(pool, threads, src, s.dk, g.W_k, s.gemm, &g.b_k);
  WeightGrad(pool, threads, src, s.dv, g.W_v, s.gemm, &g.b_v);
  RowsTimesTransposed(pool, threads, s.dq, w.W_q, s.dsrc, false, s.gemm);
  RowsTimesTransposed(pool, threads, s.dk, w.W_k, s.dsrc, true, s.gemm);
  RowsTimesTransposed(pool, threads, s.dv, w.W_v, s.dsrc, true, s.gemm);
  // dx: the residual path (x reaches the output unchanged) plus the sublayer's.
  SafeResize(dx, N, d);
  if (pre)
    LayerNormBackward(pool, threads, t.in.x, w.ln_gamma, cfg.ln_eps, s.dsrc, dx, dres, g.ln_gamma, g.ln_beta, s.xhat,
                      &t.ln_stats);
  else
    dx = *dres + s.dsrc;
}

}  // namespace mha::detail
