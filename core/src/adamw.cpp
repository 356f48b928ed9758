// AdamW, the learning-rate schedule and gradient clipping, written to round as
// torch.optim.AdamW (single-tensor path) and torch.nn.utils.clip_grad_norm_ do, so a
// run can be checked against torch step by step.
#include <algorithm>
#include <cmath>
#include <string>
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif
#include <type_traits>

#include "batch_gemm.hpp"  // ParallelFor
#include "mha/train.hpp"
#include "pool.hpp"

namespace mha {

float LearningRate(const OptimConfig& o, int step) {
  if (o.warmup > 0 && step < o.warmup) return o.lr * static_cast<float>(step + 1) / static_cast<float>(o.warmup);
  if (o.total_steps <= o.warmup) return o.lr;
  const double progress =
      std::min(1.0, static_cast<double>(step - o.warmup) / static_cast<double>(o.total_steps - o.warmup));
  const double min_lr = static_cast<double>(o.lr) * o.min_lr_ratio;
  return static_cast<float>(min_lr + 0.5 * (1.0 + std::cos(3.14159265358979323846 * progress)) * (o.lr - min_lr));
}

void AdamW::Collect(Model& m, Model& grads) {
  slots_.clear();
  ForEachTensor(m, [&](const char*, int, auto& t) {
    using T = std::decay_t<decltype(t)>;
    slots_.push_back({t.data(), nullptr, nullptr, nullptr, t.size(), T::RowsAtCompileTime != 1});
  });
  std::size_t i = 0;
  ForEachTensor(grads, [&](const char*, int, auto& t) { slots_.at(i++).g = t.data(); });
  i = 0;
  ForEachTensor(m1_, [&](const char*, int, auto& t) { slots_.at(i++).m1 = t.data(); });
  i = 0;
  ForEachTensor(m2_, [&](const char*, int, auto& t) { slots_.at(i++).m2 = t.data(); });
}

AdamW::AdamW(const Model& m, const OptimConfig& o) : o_(o), m1_(ZerosLike(m)), m2_(ZerosLike(m)) {
  auto bad = [](const std::string& what) { throw Error(what); };
  if (!(o.lr > 0) || !std::isfinite(o.lr)) bad("The learning rate must be a positive number (try 3e-3).");
  if (!(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1))
    bad("AdamW's betas must lie in [0, 1) (torch's defaults: 0.9 and 0.999).");
  if (!(o.eps > 0)) bad("AdamW's eps must be positive (torch's default: 1e-8).");
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay)) bad("Weight decay must be 0 or more (try 0.01).");
  if (!(o.clip >= 0) || !std::isfinite(o.clip)) bad("The clipping norm must be 0 (off) or positive (try 1.0).");
  if (o.warmup < 0 || o.total_steps < 0) bad("Warm-up and total steps must be 0 or more.");
}

namespace {

// Elements per task of the update: a multiple of the vector width, so each element
// takes the same path (sixteen-wide or scalar tail) as in one pass over its tensor.
constexpr std::int64_t kChunk = 1 << 14;

}  // namespace

// Each tensor's sum of squares is one chain of double additions in element order
// (the squares of floats are exact in double). Alone, each addition waited for the
// one before; here the chains of four tensors of one size run side by side, and
// groups of four on the pool's threads: a chain's additions are the same in any group.
void AdamW::SumsOfSquares(detail::Pool* pool, int threads) {
  by_size_.resize(slots_.size());
  for (std::size_t i = 0; i < by_size_.size(); ++i) by_size_[i] = static_cast<int>(i);
  std::sort(by_size_.begin(), by_size_.end(),
            [&](int a, int b) { return slots_[a].n != slots_[b].n ? slots_[a].n < slots_[b].n : a < b; });
  auto rest = [](Slot& s, std::int64_t from, double acc) {
    for (std::int64_t i = from; i < s.n; ++i) acc += static_cast<double>(s.g[i]) * s.g[i];
    s.sq = acc;
  };
  const std::size_t fours = by_size_.size() / 4;
  auto group = [&](int task, int) {
    if (static_cast<std::size_t>(task) >= fours) {  // the ones left over, alone
      rest(slots_[by_size_[4 * fours + (task - fours)]], 0, 0.0);
      return;
    }
    const std::size_t k = 4 * static_cast<std::size_t>(task);
    Slot* s[4] = {&slots_[by_size_[k]], &slots_[by_size_[k + 1]], &slots_[by_size_[k + 2]], &slots_[by_size_[k + 3]]};
    const std::int64_t common = std::min(std::min(s[0]->n, s[1]->n), std::min(s[2]->n, s[3]->n));
    const float *g0 = s[0]->g, *g1 = s[1]->g, *g2 = s[2]->g, *g3 = s[3]->g;
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (std::int64_t i = 0; i < common; ++i) {
      a0 += static_cast<double>(g0[i]) * g0[i];
      a1 += static_cast<double>(g1[i]) * g1[i];
      a2 += static_cast<double>(g2[i]) * g2[i];
      a3 += static_cast<double>(g3[i]) * g3[i];
    }
    rest(*s[0], common, a0);
    rest(*s[1], common, a1);
    rest(*s[2], common, a2);
    rest(*s[3], common, a3);
  };
  const int tasks = static_cast<int>(fours + by_size_.size() % 4);
  if (pool) {
    detail::ParallelFor(*pool, threads, tasks, group);
  } else {
    for (int t = 0; t < tasks; ++t) group(t, 0);
  }
}

// Elements [begin, end) of one tensor: clipped gradient in, parameter and moments out.
void AdamW::Update(const Slot& s, std::int64_t begin, std::int64_t end, float lr, float step_size,
                   float bc2_sqrt) const {
  const float b1 = o_.beta1, b2 = o_.beta2, eps = o_.eps;
  // Decoupled weight decay on matrices only (minGPT, nanoGPT): biases and LayerNorm
  // gains keep their scale.
  const float decay = s.decayed ? 1.0f - lr * o_.weight_decay : 1.0f;
  std::int64_t i = begin;
  // Sixteen (AVX-512) or eight (AVX2) at a time, each operation and its rounding as
  // the scalar loop below compiles them (GCC left that loop scalar: std::sqrt may set
  // errno); tests/core/test_fast_paths.cpp compares the two bit for bit.
#if defined(__AVX512F__)
  {
    const __m512 vdecay = _mm512_set1_ps(decay), vb1 = _mm512_set1_ps(b1), vb2 = _mm512_set1_ps(b2);
    const __m512 c1 = _mm512_set1_ps(1.0f - b1), c2 = _mm512_set1_ps(1.0f - b2);
    const __m512 vbc2 = _mm512_set1_ps(bc2_sqrt), veps = _mm512_set1_ps(eps), vstep = _mm512_set1_ps(step_size);
    for (; i + 16 <= end; i += 16) {
      const __m512 g = _mm512_loadu_ps(s.g + i);
      const __m512 p = _mm512_mul_ps(_mm512_loadu_ps(s.p + i), vdecay);
      const __m512 m1 = _mm512_fmadd_ps(_mm512_loadu_ps(s.m1 + i), vb1, _mm512_mul_ps(g, c1));
      const __m512 m2 = _mm512_fmadd_ps(_mm512_loadu_ps(s.m2 + i), vb2, _mm512_mul_ps(_mm512_mul_ps(g, c2), g));
      const __m512 denom = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(m2), vbc2), veps);
      _mm512_storeu_ps(s.m1 + i, m1);
      _mm512_storeu_ps(s.m2 + i, m2);
      _mm512_storeu_ps(s.p + i, _mm512_fnmadd_ps(vstep, _mm512_div_ps(m1, denom), p));
    }
  }
#elif defined(__AVX2__) && defined(__FMA__)
  {
    const __m256 vdecay = _mm256_set1_ps(decay), vb1 = _mm256_set1_ps(b1), vb2 = _mm256_set1_ps(b2);
    const __m256 c1 = _mm256_set1_ps(1.0f - b1), c2 = _mm256_set1_ps(1.0f - b2);
    const __m256 vbc2 = _mm256_set1_ps(bc2_sqrt), veps = _mm256_set1_ps(eps), vstep = _mm256_set1_ps(step_size);
    for (; i + 8 <= end; i += 8) {
      const __m256 g = _mm256_loadu_ps(s.g + i);
      const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(s.p + i), vdecay);
      const __m256 m1 = _mm256_fmadd_ps(_mm256_loadu_ps(s.m1 + i), vb1, _mm256_mul_ps(g, c1));
      const __m256 m2 = _mm256_fmadd_ps(_mm256_loadu_ps(s.m2 + i), vb2, _mm256_mul_ps(_mm256_mul_ps(g, c2), g));
      const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(m2), vbc2), veps);
      _mm256_storeu_ps(s.m1 + i, m1);
      _mm256_storeu_ps(s.m2 + i, m2);
      _mm256_storeu_ps(s.p + i, _mm256_fnmadd_ps(vstep, _mm256_div_ps(m1, denom), p));
    }
  }
#endif
  for (; i < end; ++i) {
    const float g = s.g[i];
    s.p[i] *= decay;
    s.m1[i] = s.m1[i] * b1 + (1.0f - b1) * g;
    s.m2[i] = s.m2[i] * b2 + (1.0f - b2) * g * g;
    const float denom = std::sqrt(s.m2[i]) / bc2_sqrt + eps;
    s.p[i] -= step_size * (s.m1[i] / denom);
  }
}

double AdamW::Step(Model& m, Model& grads) { return Step(m, grads, nullptr, 1); }

double AdamW::Step(Model& m, Model& grads, detail::Pool* pool, int threads) {
  Collect(m, grads);
  // Global norm as clip_grad_norm_: each tensor's 2-norm, then the norm of those.
  SumsOfSquares(pool, threads);
  double sq = 0;
  for (const Slot& s : slots_) sq += s.sq;
  const double norm = std::sqrt(sq);
  float coef = 1.0f;
  if (o_.clip > 0) coef = std::min(1.0f, static_cast<float>(o_.clip / (norm + 1e-6)));
  const float lr = LearningRate(o_, step_);
  ++step_;
  // Scalars in double, as torch computes them in Python before one cast to float.
  const double bc1 = 1.0 - std::pow(static_cast<double>(o_.beta1), step_);
  const double bc2 = 1.0 - std::pow(static_cast<double>(o_.beta2), step_);
  const float step_size = static_cast<float>(lr / bc1);
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  // Element by element from here: chunks of each tensor, on any thread.
  chunks_.clear();
  for (int k = 0; k < static_cast<int>(slots_.size()); ++k)
    for (std::int64_t b = 0; b < slots_[k].n; b += kChunk) chunks_.push_back({k, b, std::min(slots_[k].n, b + kChunk)});
  auto task = [&](int t, int) {
    const Chunk& c = chunks_[t];
    const Slot& s = slots_[c.slot];
    if (coef < 1.0f)
      for (std::int64_t i = c.begin; i < c.end; ++i) s.g[i] *= coef;
    Update(s, c.begin, c.end, lr, step_size, bc2_sqrt);
  };
  if (pool) {
    detail::ParallelFor(*pool, threads, static_cast<int>(chunks_.size()), task);
  } else {
    for (int t = 0; t < static_cast<int>(chunks_.size()); ++t) task(t, 0);
  }
  return norm;
}

}  // namespace mha
