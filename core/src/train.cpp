// The Trainer: a batch through the model (ForwardBatch per layer, the very pass the
// app shows, over every sequence at once), the loss, and the backward pass from the
// loss to every parameter. Layer internals: backward.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>

#include "backward.hpp"
#include "mha/forward.hpp"
#include "mha/train.hpp"
#include "rows.hpp"
#include "simd.hpp"
#include "weight_packs.hpp"
#include "workspace.hpp"

namespace mha {

static_assert(std::is_same_v<std::int32_t, int>, "token ids are read as int");

void CheckBatch(const ModelConfig& cfg, const Batch& b) {
  auto fail = [](const std::string& m) { throw Error(m); };
  if (b.batch < 1 || b.seq < 1) fail("A batch needs at least one sequence of at least one token.");
  if (b.seq > cfg.max_seq)
    fail("The batch's sequences have " + std::to_string(b.seq) +
         " tokens but the model takes at most max_seq = " + std::to_string(cfg.max_seq) + ".");
  if (b.num_targets != cfg.num_targets)
    fail("The batch has " + std::to_string(b.num_targets) + " targets per position but the model predicts " +
         std::to_string(cfg.num_targets) + " (one unembedding head per target).");
  const std::size_t n = static_cast<std::size_t>(b.batch) * b.seq;
  if (b.tokens.size() != n || b.targets.size() != n * b.num_targets)
    fail("The batch's arrays do not match its shape (batch " + std::to_string(b.batch) + ", seq " +
         std::to_string(b.seq) + ", targets " + std::to_string(b.num_targets) + ").");
  const int V = cfg.vocab_size();
  for (std::size_t i = 0; i < n; ++i)
    if (b.tokens[i] < 0 || b.tokens[i] >= V)
      fail("Token id " + std::to_string(b.tokens[i]) + " (sequence " + std::to_string(i / b.seq) + ", position " +
           std::to_string(i % b.seq) + ") is outside the vocabulary of " + std::to_string(V) + " tokens (ids 0 to " +
           std::to_string(V - 1) + ").");
  for (std::size_t i = 0; i < b.targets.size(); ++i)
    if (b.targets[i] < -1 || b.targets[i] >= V)
      fail("Target " + std::to_string(b.targets[i]) + " (sequence " + std::to_string(i / b.num_targets / b.seq) +
           ", position " + std::to_string(i / b.num_targets % b.seq) + ") is outside the vocabulary of " +
           std::to_string(V) + " tokens; use -1 for 'nothing to predict here'.");
  // The loss is a mean over the counted targets: with none it is 0/0 (torch gives NaN),
  // not the 0 and zero gradients the sum would give.
  if (std::all_of(b.targets.begin(), b.targets.end(), [](std::int32_t t) { return t == -1; }))
    fail(
        "The batch has no target to learn from: every target is -1 ('nothing to predict here'), so the loss "
        "would be 0/0 and every gradient zero. Give at least one target from 0 to " +
        std::to_string(V - 1) + ".");
}

struct Trainer::Impl {
  int max_threads = 1;  // what the caller allows
  int threads = 1;      // what this step uses (StepThreads)
  detail::Pool pool;
  std::vector<Trace> traces;               // per layer, the whole batch; its input in traces[l].in
  Mat hout, head, dhead, dy, dx, xhat;     // (N, d)
  LnStats head_stats;                      // the final LayerNorm's, per row (pre-LN)
  std::vector<Mat> logits;                 // per target (N, vocab); the gradient in place
  std::vector<double> loss_part;           // per sequence
  std::vector<std::int64_t> correct;       // per (sequence, target)
  std::vector<detail::SharedPacks> packs;  // per layer: its weights packed once per step
  detail::LayerScratch scratch;
  detail::GemmScratch gemm;

  StepStats stats;
  const StepStats& Run(const Model& m, const Batch& b, Model* grads, const std::vector<HeadAblation>* ablate = nullptr);
  void ForwardLayers(const Model& m, const Batch& b, const std::vector<HeadAblation>* ablate);
  void Loss(const Model& m, const Batch& b, bool grad);
  void Backward(const Model& m, const Batch& b, Model& g);
};

namespace {

int ThreadCount(int threads) {
  if (threads > 0) return std::min(threads, Limits::kMaxThreads);
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

// z[0, n) = exp(z - mx) in place; returns their sum (vector lanes, then across them).
float ExpShifted(float* z, int n, float mx) {
  using namespace simd;
  const V m = Set1(mx);
  V sum = Zero();
  int j = 0;
  for (; j + kWidth <= n; j += kWidth) {
    const V e = Exp(Sub(Load(z + j), m));
    Store(z + j, e);
    sum = Add(sum, e);
  }
  if (j < n) {
    // Padding lanes read -inf, and Exp gives exactly 0 there.
    const V e = Exp(Sub(LoadPartial(z + j, n - j, -std::numeric_limits<float>::infinity()), m));
    StorePartial(z + j, e, n - j);
    sum = Add(sum, e);
  }
  return ReduceAdd(sum);
}

// The largest of z[0, n), in vector lanes: max is exact, so the same value a scalar
// scan finds (a scalar scan was a tenth of the step at a vocabulary of 4000).
float RowMax(const float* z, int n) {
  using namespace simd;
  const float lowest = -std::numeric_limits<float>::infinity();
  V m = Set1(lowest);
  int j = 0;
  for (; j + kWidth <= n; j += kWidth) m = Max(m, Load(z + j));
  if (j < n) m = Max(m, LoadPartial(z + j, n - j, lowest));
  return ReduceMax(m);
}

// z[0, n) *= a
void Scale(float* z, int n, float a) {
  using namespace simd;
  const V va = Set1(a);
  int j = 0;
  for (; j + kWidth <= n; j += kWidth) Store(z + j, Mul(Load(z + j), va));
  if (j < n) StorePartial(z + j, Mul(LoadPartial(z + j, n - j), va), n - j);
}

// A step is some 8 + 14 * layers pool phases. At teaching size each is a few
// microseconds, less than waking a second thread and waiting for it costs, so a
// second thread made the step slower (measured: 1.3 ms on 1 thread, 2.2 ms on 2 for
// the offsets demo). As Forward's ThreadsFor: each thread gets at least ~2 MFLOP per
// phase, or the step runs alone. The work split never depends on this count.
int StepThreads(const ModelConfig& c, int batch, int seq, int allowed) {
  const double rows = static_cast<double>(batch) * seq;
  // 2 FLOP per weight and row forward, twice that backward; the attention core's
  // four products (scores, context, and their two gradients each) on top.
  const double flops =
      6.0 * static_cast<double>(ParameterCount(c)) * rows + 12.0 * c.num_layers * rows * seq * c.layer.d_model;
  const double phases = 8.0 + 14.0 * c.num_layers;
  return static_cast<int>(std::max(1.0, std::min<double>(allowed, 1.0 + flops / phases / 2e6)));
}

}  // namespace

Trainer::Trainer(int threads) : impl_(std::make_unique<Impl>()) { impl_->max_threads = ThreadCount(threads); }
Trainer::~Trainer() = default;

const Trace& Trainer::LayerTrace(int layer) const { return impl_->traces.at(layer); }

int Trainer::threads() const { return impl_->threads; }

const StepStats& Trainer::Evaluate(const Model& m, const Batch& b, const std::vector<HeadAblation>* ablate) {
  return impl_->Run(m, b, nullptr, ablate);
}

const StepStats& Trainer::Gradients(const Model& m, const Batch& b, Model& grads) { return impl_->Run(m, b, &grads); }

// On one thread the update was 9% of a 16-thread step at mhaviz-small's shape (3.5 of
// 38.5 ms). It is a pass over every parameter and its two moments: shared out where
// each thread gets some 64K parameters, or more.
double Trainer::Update(AdamW& opt, Model& m, Model& grads) {
  const double per_thread = static_cast<double>(ParameterCount(m.cfg)) / 65536.0;
  const int threads = static_cast<int>(std::max(1.0, std::min<double>(impl_->max_threads, per_thread)));
  return opt.Step(m, grads, &impl_->pool, threads);
}

const StepStats& Trainer::Impl::Run(const Model& m, const Batch& b, Model* grads,
                                    const std::vector<HeadAblation>* ablate) {
  CheckBatch(m.cfg, b);
  if (ablate && static_cast<int>(ablate->size()) != m.cfg.num_layers)
    throw Error("The ablation names " + std::to_string(ablate->size()) + " layers but the model has " +
                std::to_string(m.cfg.num_layers) + ".");
  threads = StepThreads(m.cfg, b.batch, b.seq, max_threads);
  ForwardLayers(m, b, ablate);
  Loss(m, b, grads != nullptr);
  if (grads) Backward(m, b, *grads);
  return stats;
}

// Every layer over the whole batch: its position-wise products over all batch * seq
// rows at once, the attention core per sequence and head (each result independent
// of the thread that computes it).
void Trainer::Impl::ForwardLayers(const Model& m, const Batch& b, const std::vector<HeadAblation>* ablate) {
  const ModelConfig& c = m.cfg;
  const int L = c.num_layers, B = b.batch, S = b.seq, d = c.layer.d_model;
  const Eigen::Index N = static_cast<Eigen::Index>(B) * S;
  traces.resize(L);
  Config lc = c.LayerConfig();
  lc.threads = threads;
  // Every layer runs its weights over the batch once: packed once here, lent to the pass.
  packs.resize(L);
  for (int l = 0; l < L; ++l) detail::PackShared(lc, *m.layers[l], packs[l]);
  Mat& x0 = traces[0].in.x;
  detail::SafeResize(x0, N, d);
  for (int s = 0; s < B; ++s)
    EmbedTokens(m, b.tokens.data() + static_cast<std::ptrdiff_t>(s) * S, S,
                x0.data() + static_cast<std::ptrdiff_t>(s) * S * d);
  for (int l = 0; l < L; ++l) {
    Trace& t = traces[l];
    if (l > 0) {
      const Trace& below = traces[l - 1];
      detail::SafeResize(t.in.x, N, d);
      t.in.x = c.layer.block == Block::Encoder ? below.block_out : below.out;  // no allocation: same size
    }
    detail::Workspace& ws = t.workspace.get();
    ws.ForgetWeights();  // the weights were updated in place since the last step
    ws.shared = &packs[l];
    ws.lent_pool = &pool;
    // Gradients never pass an ablation: the backward pass knows no knocked-out heads.
    if (ablate)
      t.in.ablate = (*ablate)[l];
    else if (!t.in.ablate.empty())
      t.in.ablate = HeadAblation();
    // Passing the trace's own input: every row is projected (nothing is compared).
    ForwardBatch(lc, m.layers[l], t.in, B, t, /*for_backward=*/true);
  }
  const Trace& top = traces[L - 1];
  detail::SafeResize(hout, N, d);
  hout = c.layer.block == Block::Encoder ? top.block_out : top.out;
  if (c.layer.norm == Norm::Pre) {
    detail::SafeResize(head, N, d);
    detail::SafeResize(head_stats, N, 2);
    auto ln = [&](int blk, int) {
      const Eigen::Index r0 = static_cast<Eigen::Index>(blk) * detail::kRowsPerTask;
      const Eigen::Index r1 = std::min(N, r0 + detail::kRowsPerTask);
      detail::LayerNormRows(hout.data() + r0 * d, m.lnf_gamma.data(), m.lnf_beta.data(), d, c.layer.ln_eps,
                            head.data() + r0 * d, static_cast<int>(r1 - r0), head_stats.data() + 2 * r0);
    };
    detail::ParallelFor(pool, threads, static_cast<int>((N + detail::kRowsPerTask - 1) / detail::kRowsPerTask), ln);
  }
  const Mat& h = c.layer.norm == Norm::Pre ? head : hout;
  logits.resize(c.num_targets);
  const int V = c.vocab_size();
  for (int k = 0; k < c.num_targets; ++k) {
    detail::SafeResize(logits[k], N, V);
    detail::Gemm(pool, threads, static_cast<int>(N), d, V, h.data(), d, m.unembed[k].data(), V, false, logits[k].data(),
                 V, m.unembed_b[k].data(), false, gemm);
  }
}

// Mean cross-entropy over every counted target; with `grad`, each logits row becomes
// dL/dlogits = (softmax - onehot) / count (zero where nothing is predicted).
void Trainer::Impl::Loss(const Model& m, const Batch& b, bool grad) {
  const int B = b.batch, S = b.seq, K = b.num_targets, V = m.cfg.vocab_size();
  StepStats& st = stats;
  st.counted.assign(K, 0);
  for (int s = 0; s < B; ++s)
    for (int i = 0; i < S; ++i)
      for (int k = 0; k < K; ++k) st.counted[k] += b.target(s, i, k) >= 0;
  std::int64_t total = 0;
  for (auto c : st.counted) total += c;
  const float inv = total > 0 ? 1.0f / static_cast<float>(total) : 0.0f;
  loss_part.assign(B, 0.0);
  correct.assign(static_cast<std::size_t>(B) * K, 0);
  auto task = [&](int s, int) {
    for (int i = 0; i < S; ++i) {
      const Eigen::Index r = static_cast<Eigen::Index>(s) * S + i;
      for (int k = 0; k < K; ++k) {
        float* z = logits[k].data() + r * V;
        const int t = b.target(s, i, k);
        if (t < 0) {
          if (grad) std::fill(z, z + V, 0.0f);
          continue;
        }
        const float mx = RowMax(z, V);
        const float zt = z[t];
        // Correct where the target is the first largest logit (std::max_element's pick).
        correct[static_cast<std::size_t>(s) * K + k] += zt == mx && std::find(z, z + t, mx) == z + t;
        // z becomes exp(z - max) (the gradient needs it), and sum its total.
        const float sum = ExpShifted(z, V, mx);
        loss_part[s] += static_cast<double>(mx) + std::log(static_cast<double>(sum)) - zt;
        if (grad) {
          // softmax / count, then minus one / count at the target
          Scale(z, V, inv / sum);
          z[t] -= inv;
        }
      }
    }
  };
  detail::ParallelFor(pool, threads, B, task);
  double loss = 0;
  for (double l : loss_part) loss += l;  // in sequence order: the same sum on any thread count
  st.loss = total > 0 ? loss / static_cast<double>(total) : 0.0;
  st.accuracy.assign(K, 0.0);
  for (int k = 0; k < K; ++k) {
    std::int64_t c = 0;
    for (int s = 0; s < B; ++s) c += correct[static_cast<std::size_t>(s) * K + k];
    st.accuracy[k] = st.counted[k] > 0 ? static_cast<double>(c) / static_cast<double>(st.counted[k]) : 0.0;
  }
}

void Trainer::Impl::Backward(const Model& m, const Batch& b, Model& g) {
  const ModelConfig& c = m.cfg;
  const int S = b.seq, d = c.layer.d_model;
  const Eigen::Index N = static_cast<Eigen::Index>(b.batch) * S;
  SetZero(g);
  const bool pre = c.layer.norm == Norm::Pre;
  const Mat& h = pre ? head : hout;
  // logits_k = h U_k + c_k
  detail::SafeResize(dhead, N, d);
  dhead.setZero();
  for (int k = 0; k < c.num_targets; ++k) {
    detail::WeightGrad(pool, threads, h, logits[k], g.unembed[k], gemm, &g.unembed_b[k]);
    detail::RowsTimesTransposed(pool, threads, logits[k], m.unembed[k], dhead, true, gemm);
  }
  // h = LN_f(x_L) for pre-LN
  if (pre)
    detail::LayerNormBackward(pool, threads, hout, m.lnf_gamma, c.layer.ln_eps, dhead, dy, nullptr, g.lnf_gamma,
                              g.lnf_beta, xhat, &head_stats);
  else
    dy = dhead;
  const Config lc = c.LayerConfig();
  for (int l = c.num_layers - 1; l >= 0; --l) {
    detail::LayerBackward(pool, threads, lc, *m.layers[l], traces[l], dy, *g.layers[l], dx, scratch);
    dy.swap(dx);
  }
  // x_0 = tok_embed[tokens] + pos_embed[position]: rows add up in batch order, each
  // column on its own, so a stripe of columns per task gives the same sums on any
  // thread count.
  const bool learned = c.positional == Positional::Learned;
  const int stripe = detail::ColumnStripe(d, threads, 4);
  auto embed = [&](int t, int) {
    const int c0 = t * stripe, c1 = std::min(d, c0 + stripe);
    for (Eigen::Index r = 0; r < N; ++r) {
      const float* from = dy.data() + r * d;
      float* tok = g.tok_embed.data() + static_cast<Eigen::Index>(b.tokens[static_cast<std::size_t>(r)]) * d;
      for (int j = c0; j < c1; ++j) tok[j] += from[j];
      if (learned) {
        float* pos = g.pos_embed.data() + (r % S) * d;
        for (int j = c0; j < c1; ++j) pos[j] += from[j];
      }
    }
  };
  detail::ParallelFor(pool, threads, (d + stripe - 1) / stripe, embed);
}

}  // namespace mha
