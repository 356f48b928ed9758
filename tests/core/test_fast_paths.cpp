// The fast forward pass has paths the small oracle cases never reach: long inputs
// (several row blocks per head, weights packed once and reused, traces written past
// the caches), partial GEMM panels, a Trace reused across weights and shapes, and
// more than one thread. Each is checked against the naive oracle or a fresh trace.
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13) where a test calls simd::Exp; it must be silenced
// before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "close.hpp"
#include "ffn_reference.hpp"
#include "fixtures.hpp"
#include "mha/mha.hpp"
#include "oracle.hpp"
#include "../../core/src/backward.hpp"
#include "../../core/src/rows.hpp"
#include "../../core/src/simd.hpp"

namespace {

using fixtures::RandomInputs;
using fixtures::RandomMat;

void CheckOracle(const mha::Config& cfg, const mha::Weights& w, const mha::Inputs& in, const mha::Trace& t) {
  const oracle::Result o = oracle::Mha(cfg, w, in);
  using testutil::Flatten;
  using testutil::Flatten3;
  // Relative to each tensor's scale (testutil::Float32Tol); the projections' d_model
  // terms are the longest sums on the way to any of them.
  const double n = cfg.d_model;
  CHECK_F32_CLOSE("q", t.q.data(), Flatten3(o.q), n);
  CHECK_F32_CLOSE("k", t.k.data(), Flatten3(o.k), n);
  CHECK_F32_CLOSE("v", t.v.data(), Flatten3(o.v), n);
  CHECK_F32_CLOSE("scores", t.scores.data(), Flatten3(o.scores), n);
  CHECK_F32_CLOSE("attn", t.attn.data(), Flatten3(o.attn), n);
  CHECK_F32_CLOSE("context", t.context.data(), Flatten3(o.context), n);
  CHECK_F32_CLOSE("concat", t.concat.data(), Flatten(o.concat), n);
  CHECK_F32_CLOSE("attn_out", t.attn_out.data(), Flatten(o.attn_out), n);
  CHECK_F32_CLOSE("out", t.out.data(), Flatten(o.out), n);
}

bool SameBits(const mha::Mat& a, const mha::Mat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0);
}

void CheckSameTrace(const mha::Trace& a, const mha::Trace& b) {
  CHECK(SameBits(a.x_ln, b.x_ln));
  CHECK(SameBits(a.q, b.q));
  CHECK(SameBits(a.k, b.k));
  CHECK(SameBits(a.v, b.v));
  CHECK(SameBits(a.scores, b.scores));
  CHECK(SameBits(a.attn, b.attn));
  CHECK(SameBits(a.context, b.context));
  CHECK(SameBits(a.concat, b.concat));
  CHECK(SameBits(a.attn_out, b.attn_out));
  CHECK(SameBits(a.residual, b.residual));
  CHECK(SameBits(a.out, b.out));
  CHECK(a.flow.size() == b.flow.size());
}

struct Shape {
  int seq, seq_kv, d, heads, kv_heads;
  bool cross;
  mha::Mask mask;
  mha::Norm norm;
};

}  // namespace

TEST_CASE("long inputs, partial panels, GQA and cross-attention match the oracle", "[oracle][fast]") {
  const Shape shapes[] = {
      {70, 70, 64, 4, 4, false, mha::Mask::None, mha::Norm::Post},      // 3 row blocks, head_dim 16
      {97, 97, 128, 2, 2, false, mha::Mask::Causal, mha::Norm::Pre},    // head_dim 64: V read in place
      {130, 130, 48, 4, 2, false, mha::Mask::Causal, mha::Norm::None},  // head_dim 12, GQA
      {40, 100, 96, 8, 1, true, mha::Mask::None, mha::Norm::Post},      // cross, multi-query
      {256, 256, 64, 16, 16, false, mha::Mask::None, mha::Norm::Post},  // >8 MB trace: streamed stores
      {256, 256, 64, 16, 4, false, mha::Mask::Causal, mha::Norm::Pre},  // streamed + causal + GQA
      {33, 33, 1024, 16, 16, false, mha::Mask::None, mha::Norm::Post},  // wide model, few tokens
  };
  std::mt19937 rng(99);
  for (const Shape& s : shapes) {
    mha::Config cfg = fixtures::Layer(s.d, s.heads, s.kv_heads, s.mask, s.norm);
    cfg.seed = rng();
    const mha::Inputs in = RandomInputs(rng, s.seq, s.seq_kv, s.d, s.cross);
    auto w = std::make_shared<mha::Weights>(mha::InitWeights(cfg));
    w->ln_gamma = mha::RowVec::Random(s.d).array() + 1.0f;
    w->ln_beta = mha::RowVec::Random(s.d) * 0.5f;
    INFO("seq " << s.seq << " seq_kv " << s.seq_kv << " d_model " << s.d << " heads " << s.heads << " kv " << s.kv_heads
                << " mask " << mha::ToString(s.mask) << " norm " << mha::ToString(s.norm));
    mha::Trace t;
    mha::Forward(cfg, w, in, t);
    CheckOracle(cfg, *w, in, t);
    // Again on the same trace: now with the packed weights and buffers reused.
    mha::Forward(cfg, w, in, t);
    CheckOracle(cfg, *w, in, t);
  }
}

TEST_CASE("a reused Trace gives exactly what a fresh one gives, across weights, inputs and shapes", "[fast]") {
  std::mt19937 rng(5);
  mha::Config a;
  a.d_model = 64;
  a.num_heads = 4;
  a.seed = 1;
  mha::Config b = a;
  b.num_kv_heads = 2;  // same d_model, other K/V shapes
  mha::Config c = a;
  c.d_model = 96;
  c.num_heads = 6;
  auto w1 = std::make_shared<const mha::Weights>(mha::InitWeights(a));
  mha::Config a2 = a;
  a2.seed = 2;
  auto w2 = std::make_shared<const mha::Weights>(mha::InitWeights(a2));  // same shapes, other values
  auto wb = std::make_shared<const mha::Weights>(mha::InitWeights(b));
  auto wc = std::make_shared<const mha::Weights>(mha::InitWeights(c));
  const mha::Inputs x1 = RandomInputs(rng, 80, 80, 64, false);
  const mha::Inputs x2 = RandomInputs(rng, 80, 80, 64, false);
  const mha::Inputs x3 = RandomInputs(rng, 20, 20, 64, false);
  const mha::Inputs xc = RandomInputs(rng, 80, 80, 96, false);
  struct Step {
    const mha::Config* cfg;
    std::shared_ptr<const mha::Weights> w;
    const mha::Inputs* in;
  };
  const Step steps[] = {{&a, w1, &x1}, {&a, w1, &x2}, {&a, w2, &x2}, {&a, w1, &x3},
                        {&b, wb, &x1}, {&c, wc, &xc}, {&a, w1, &x1}, {&a, w2, &x1}};
  mha::Trace reused;
  int i = 0;
  for (const Step& s : steps) {
    INFO("step " << i++);
    mha::Forward(*s.cfg, s.w, *s.in, reused);
    const mha::Trace fresh = mha::Forward(*s.cfg, s.w, *s.in);
    CheckSameTrace(reused, fresh);
  }
}

namespace {
// Rows [i * n, (i + 1) * n) of m: sequence i's block of a batch tensor (empty stays empty).
mha::Mat Rows(const mha::Mat& m, int i, int n) {
  return m.size() == 0 ? mha::Mat() : mha::Mat(m.middleRows(static_cast<Eigen::Index>(i) * n, n));
}
}  // namespace

TEST_CASE("ForwardBatch gives each sequence exactly what Forward gives it alone", "[fast][batch]") {
  struct Case {
    int d, heads, kv_heads, seq, batch;
    mha::Mask mask;
    mha::Norm norm;
    mha::Block block;
    mha::Activation act;
  };
  // Head widths below, at and above a panel; row blocks of the attention core cut
  // (seq 40) or not; batches of one product block of rows and of several (37 x 11 >
  // 256 rows, the last block partial); every norm; GQA; ReLU and GELU.
  const Case cases[] = {
      {64, 4, 4, 16, 9, mha::Mask::Causal, mha::Norm::Pre, mha::Block::Encoder, mha::Activation::Relu},
      {48, 6, 2, 11, 37, mha::Mask::None, mha::Norm::Post, mha::Block::Encoder, mha::Activation::Gelu},
      {96, 3, 1, 40, 5, mha::Mask::Causal, mha::Norm::None, mha::Block::Attention, mha::Activation::Relu},
      {40, 5, 5, 7, 3, mha::Mask::None, mha::Norm::Pre, mha::Block::Attention, mha::Activation::Relu},
  };
  std::mt19937 rng(23);
  for (const Case& k : cases) {
    mha::Config cfg = fixtures::Layer(k.d, k.heads, k.kv_heads, k.mask, k.norm, k.block, k.act);
    auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
    const int H = k.heads, G = cfg.kv_heads(), S = k.seq;
    mha::Trace batch, lean;
    // Three passes on one trace: new weights (read in place), then packed as they go,
    // then packed already, each with new inputs; on 1 and 2 threads.
    for (int pass = 0; pass < 3; ++pass) {
      cfg.threads = 1 + pass % 2;
      mha::Inputs all;
      all.x = RandomMat(rng, k.batch * S, k.d);
      mha::ForwardBatch(cfg, w, all, k.batch, batch);
      REQUIRE(batch.batch == k.batch);
      REQUIRE(batch.seq == S);
      {  // for the backward pass: what is kept is the same, the rest is left empty
        INFO("for_backward, pass " << pass);
        mha::ForwardBatch(cfg, w, all, k.batch, lean, /*for_backward=*/true);
        const bool post = k.norm == mha::Norm::Post;
        for (const auto& [kept, full] : {std::pair{&lean.x_ln, &batch.x_ln},
                                         {&lean.q, &batch.q},
                                         {&lean.k, &batch.k},
                                         {&lean.v, &batch.v},
                                         {&lean.attn, &batch.attn},
                                         {&lean.concat, &batch.concat},
                                         {&lean.out, &batch.out},
                                         {&lean.ffn_ln, &batch.ffn_ln},
                                         {&lean.ffn_hidden, &batch.ffn_hidden},
                                         {&lean.block_out, &batch.block_out}})
          CHECK(SameBits(*kept, *full));
        CHECK((lean.scores.size() == 0 && lean.context.size() == 0 && lean.attn_out.size() == 0));
        CHECK(lean.ffn_out.size() == 0);
        CHECK(SameBits(lean.residual, post ? batch.residual : mha::Mat()));
        CHECK(SameBits(lean.ffn_residual, post ? batch.ffn_residual : mha::Mat()));
      }
      for (int b = 0; b < k.batch; ++b) {
        INFO("d_model " << k.d << " seq " << S << " batch " << k.batch << " pass " << pass << " sequence " << b);
        mha::Inputs one;
        one.x = Rows(all.x, b, S);
        const mha::Trace t = mha::Forward(cfg, w, one);
        CHECK(SameBits(Rows(batch.x_ln, b, S), t.x_ln));
        CHECK(SameBits(Rows(batch.q, b, H * S), t.q));
        CHECK(SameBits(Rows(batch.k, b, G * S), t.k));
        CHECK(SameBits(Rows(batch.v, b, G * S), t.v));
        CHECK(SameBits(Rows(batch.scores, b, H * S), t.scores));
        CHECK(SameBits(Rows(batch.attn, b, H * S), t.attn));
        CHECK(SameBits(Rows(batch.context, b, H * S), t.context));
        CHECK(SameBits(Rows(batch.concat, b, S), t.concat));
        CHECK(SameBits(Rows(batch.attn_out, b, S), t.attn_out));
        CHECK(SameBits(Rows(batch.residual, b, S), t.residual));
        CHECK(SameBits(Rows(batch.out, b, S), t.out));
        CHECK(SameBits(Rows(batch.ffn_ln, b, S), t.ffn_ln));
        CHECK(SameBits(Rows(batch.ffn_hidden, b, S), t.ffn_hidden));
        CHECK(SameBits(Rows(batch.ffn_out, b, S), t.ffn_out));
        CHECK(SameBits(Rows(batch.ffn_residual, b, S), t.ffn_residual));
        CHECK(SameBits(Rows(batch.block_out, b, S), t.block_out));
        CHECK(batch.AttnHead(H - 1, b) == t.AttnHead(H - 1));
      }
    }
  }
  mha::Config cfg;
  mha::Inputs odd;
  odd.x = RandomMat(rng, 10, cfg.d_model);
  mha::Trace t;
  CHECK_THROWS_AS(mha::ForwardBatch(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), odd, 3, t),
                  mha::Error);
}

TEST_CASE("the trace is bit-identical for 1, 2 and 3 threads", "[fast][threads]") {
  const Shape shapes[] = {
      {32, 32, 512, 8, 8, false, mha::Mask::None, mha::Norm::Post},
      {75, 75, 96, 6, 3, false, mha::Mask::Causal, mha::Norm::Pre},
      {9, 41, 40, 5, 5, true, mha::Mask::None, mha::Norm::None},
  };
  std::mt19937 rng(17);
  for (const Shape& s : shapes) {
    mha::Config cfg;
    cfg.d_model = s.d;
    cfg.num_heads = s.heads;
    cfg.num_kv_heads = s.kv_heads;
    cfg.mask = s.mask;
    cfg.norm = s.norm;
    const mha::Inputs in = RandomInputs(rng, s.seq, s.seq_kv, s.d, s.cross);
    auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
    cfg.threads = 1;
    const mha::Trace one = mha::Forward(cfg, w, in);
    for (int threads : {2, 3}) {
      INFO("seq " << s.seq << " d_model " << s.d << " threads " << threads);
      cfg.threads = threads;
      CheckSameTrace(mha::Forward(cfg, w, in), one);
    }
  }
}

TEST_CASE("ForwardAttention is Forward's sublayer without residual and norm", "[fast]") {
  std::mt19937 rng(3);
  mha::Config cfg;
  cfg.d_model = 64;
  cfg.num_heads = 8;
  cfg.norm = mha::Norm::Post;  // ignored by ForwardAttention
  const mha::Inputs in = RandomInputs(rng, 30, 30, 64, false);
  auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  mha::Trace sub;
  mha::ForwardAttention(cfg, w, in, sub);
  cfg.norm = mha::Norm::None;
  const mha::Trace full = mha::Forward(cfg, w, in);
  CHECK(SameBits(sub.attn, full.attn));
  CHECK(SameBits(sub.scores, full.scores));
  CHECK(SameBits(sub.attn_out, full.attn_out));
  CHECK(sub.out.size() == 0);
  CHECK(sub.residual.size() == 0);
  for (const auto& tv : mha::Tensors(sub)) CHECK(tv.name != "out");
}

TEST_CASE("SoftmaxRow: stable, exact zeros where masked, zeros for a fully masked row", "[softmax]") {
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(11);
  for (int n : {1, 3, 15, 16, 17, 31, 64, 100}) {
    std::vector<float> row(n);
    std::normal_distribution<float> g(0.0f, 30.0f);  // wide: exp without max-subtraction overflows
    for (auto& v : row) v = g(rng) + 1000.0f;
    for (int j = 0; j < n; j += 3) row[j] = -inf;
    std::vector<double> want(n);
    double m = -INFINITY, sum = 0;
    for (float v : row) m = std::max(m, static_cast<double>(v));
    for (int j = 0; j < n; ++j) sum += (want[j] = std::exp(row[j] - m));
    for (auto& v : want) v /= sum;
    if (m == -INFINITY) std::fill(want.begin(), want.end(), 0.0);
    mha::SoftmaxRow(row.data(), n);
    INFO("n = " << n);
    CHECK_F32_CLOSE("softmax", row.data(), want, n);
    for (int j = 0; j < n; j += 3) CHECK(row[j] == 0.0f);
  }
  std::vector<float> masked(20, -inf);
  mha::SoftmaxRow(masked.data(), 20);
  for (float v : masked) CHECK(v == 0.0f);
}

// A masked score (-inf), a padded lane or any x <= -104 gives exp(x) = 0 without
// computing an underflowing result: on x86 each underflow costs a microcode assist
// of about a hundred cycles, and a causal mask or a padded vector met one in every
// row. The underflow flag of MXCSR records whether any instruction underflowed.
TEST_CASE("exp of a masked score is exactly 0 and underflows nothing", "[softmax]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  using mha::simd::kWidth;
  alignas(64) float x[kWidth], y[kWidth];
  const float dead[] = {-inf, nan, -1e30f, -1000.0f, -104.0f};
  for (int l = 0; l < kWidth; ++l) x[l] = dead[l % 5];
#if defined(__SSE__)
  _mm_setcsr(_mm_getcsr() & ~0x3fu);  // clear the sticky exception flags
#endif
  mha::simd::Store(y, mha::simd::Exp(mha::simd::Load(x)));
  for (int l = 0; l < kWidth; ++l) CHECK(y[l] == 0.0f);
  // A causal block of 16 rows over one vector of keys (most rows partly masked; the
  // narrow path takes at most kWidth keys) and a padded softmax row.
  const int n = kWidth;
  std::vector<float> s(16 * 2 * n, 0.5f), a(16 * 2 * n), ao(16 * n), row(11, 1.0f);
  mha::detail::AttentionRowsNarrow(s.data(), 2 * n, 16, n, true, 1, a.data(), n, nullptr, ao.data());
  mha::SoftmaxRow(row.data(), 11);
  CHECK(ao[1] == 0.0f);
  CHECK(ao[15 * n + n - 1] == 1.0f / static_cast<float>(n));
#if defined(__SSE__)
  CHECK((_mm_getcsr() & 0x10u) == 0);  // UE: no underflow anywhere above
#endif
}

TEST_CASE("LayerNormRows matches a double-precision reference", "[layernorm]") {
  std::mt19937 rng(12);
  for (int d : {1, 7, 8, 9, 64, 100}) {
    mha::Mat x = RandomMat(rng, 21, d) * 100.0f;  // rows in groups of 8 and alone
    x.array() += 1e4f;                            // a large mean: a one-pass variance would cancel badly
    mha::RowVec g = mha::RowVec::Random(d), b = mha::RowVec::Random(d);
    mha::Mat y;
    mha::LayerNormRows(x, g, b, 1e-5f, y);
    const auto want = oracle::LayerNorm(oracle::FromMat(x), oracle::FromVec(g), oracle::FromVec(b), 1e-5);
    INFO("d = " << d);
    CHECK_F32_CLOSE("layernorm", y.data(), testutil::Flatten(want), d);
  }
}

TEST_CASE("LayerNorm of many rows at once has the bits of one row at a time", "[layernorm]") {
  std::mt19937 rng(13);
  for (int d : {8, 16, 24, 64, 256, 12}) {
    const int rows = 19;  // two groups of 8, then 3 alone
    mha::Mat x = RandomMat(rng, rows, d) * 3.0f;
    x.row(4).setZero();  // a constant row: variance 0
    mha::RowVec g = mha::RowVec::Random(d), b = mha::RowVec::Random(d);
    mha::Mat many(rows, d), one(rows, d);
    std::vector<double> stats_many(2 * rows), stats_one(2 * rows);
    mha::detail::LayerNormRows(x.data(), g.data(), b.data(), d, 1e-5f, many.data(), rows, stats_many.data());
    for (int r = 0; r < rows; ++r)
      mha::detail::LayerNormRow(x.data() + r * d, g.data(), b.data(), d, 1e-5f, one.data() + r * d,
                                stats_one.data() + 2 * r);
    INFO("d = " << d);
    CHECK(std::memcmp(many.data(), one.data(), sizeof(float) * rows * d) == 0);
    CHECK(std::memcmp(stats_many.data(), stats_one.data(), sizeof(double) * 2 * rows) == 0);
  }
}

TEST_CASE("LayerNorm backward with the forward pass's statistics has the bits of recomputing them", "[layernorm]") {
  // With the kept statistics, rows go eight at a time where d is a whole number of
  // lanes; without them, one at a time: dx, dgamma and dbeta must agree bit for bit,
  // with and without another path's gradient added.
  std::mt19937 rng(15);
  mha::detail::Pool pool;
  for (int d : {8, 24, 64, 12}) {
    const int rows = 83;  // two tasks of 64 rows; groups of 8, then 3 alone
    mha::Mat x = RandomMat(rng, rows, d) * 3.0f, dy = RandomMat(rng, rows, d), other = RandomMat(rng, rows, d);
    x.array() += 5.0f;
    mha::RowVec g = mha::RowVec::Random(d), b = mha::RowVec::Random(d);
    mha::Mat y(rows, d);
    mha::LnStats stats(rows, 2);
    mha::detail::LayerNormRows(x.data(), g.data(), b.data(), d, 1e-5f, y.data(), rows, stats.data());
    for (int with_add = 0; with_add < 2; ++with_add) {
      mha::Mat dx8, dx1, xh8, xh1;
      mha::RowVec dg8 = mha::RowVec::Zero(d), db8 = mha::RowVec::Zero(d), dg1 = dg8, db1 = db8;
      mha::detail::LayerNormBackward(pool, 1, x, g, 1e-5f, dy, dx8, with_add ? &other : nullptr, dg8, db8, xh8, &stats);
      mha::detail::LayerNormBackward(pool, 1, x, g, 1e-5f, dy, dx1, with_add ? &other : nullptr, dg1, db1, xh1,
                                     nullptr);
      INFO("d = " << d << ", add " << with_add);
      CHECK(SameBits(dx8, dx1));
      CHECK(SameBits(xh8, xh1));
      CHECK(std::memcmp(dg8.data(), dg1.data(), sizeof(float) * d) == 0);
      CHECK(std::memcmp(db8.data(), db1.data(), sizeof(float) * d) == 0);
    }
  }
}

TEST_CASE("a weight gradient with its bias's column sums has the bits of the two passes", "[train][gemm]") {
  // WeightGrad adds the bias gradient's column sums in its own pass over d: they must
  // be AccumulateColumnSums's, bit for bit, on any thread count, for panels read in
  // place and packed, several blocks of rows of the gradient and of the depth.
  std::mt19937 rng(16);
  mha::detail::Pool pool;
  mha::detail::GemmScratch scratch;
  struct Shape {
    int rows, in, out;
  };
  for (const Shape sh : {Shape{300, 64, 64}, Shape{257, 130, 11}, Shape{2048, 16, 40}, Shape{5, 3, 33}})
    for (int threads : {1, 2, 3}) {
      const mha::Mat a = RandomMat(rng, sh.rows, sh.in), d = RandomMat(rng, sh.rows, sh.out);
      const mha::RowVec start = mha::RowVec::Random(sh.out);  // sums add to what is there
      mha::Mat g1(sh.in, sh.out), g2(sh.in, sh.out);
      mha::RowVec b1 = start, b2 = start;
      mha::detail::WeightGrad(pool, threads, a, d, g1, scratch, &b1);
      mha::detail::WeightGrad(pool, 1, a, d, g2, scratch);
      mha::detail::AccumulateColumnSums(pool, 1, d, b2);
      INFO("rows " << sh.rows << ", in " << sh.in << ", out " << sh.out << ", threads " << threads);
      CHECK(SameBits(g1, g2));
      CHECK(std::memcmp(b1.data(), b2.data(), sizeof(float) * sh.out) == 0);
    }
}

TEST_CASE("softmax rows of one vector of keys, several at once, have the bits of one row at a time", "[softmax]") {
  std::mt19937 rng(14);
  std::normal_distribution<float> z(0.0f, 4.0f);
  constexpr int ld = 48, m = 19;  // two groups of 8 rows and 3
  for (int n : {1, 5, 16}) {
    if (n > mha::simd::kWidth) continue;
    for (int causal = 0; causal < 2; ++causal)
      for (int visible0 : {0, 1, 3}) {  // 0: the first causal row sees no key at all
        std::vector<float> s(m * ld);
        for (float& v : s) v = z(rng);
        const int a_end = causal ? std::min(n, visible0 + m - 1) : n;
        std::vector<float> a1(m * ld, 7.0f), a2(m * ld, 7.0f), so1(m * n), so2(m * n), ao1(m * n), ao2(m * n);
        mha::detail::AttentionRowsNarrow(s.data(), ld, m, n, causal, visible0, a1.data(), a_end, so1.data(),
                                         ao1.data());
        for (int i = 0; i < m; ++i) {
          const int visible = causal ? std::min(n, visible0 + i) : n;
          mha::detail::AttentionRow<false>(s.data() + i * ld, visible, n, a2.data() + i * ld, a_end, so2.data() + i * n,
                                           ao2.data() + i * n);
        }
        INFO("n = " << n << ", causal " << causal << ", visible0 " << visible0);
        CHECK(std::memcmp(so1.data(), so2.data(), sizeof(float) * so1.size()) == 0);
        CHECK(std::memcmp(ao1.data(), ao2.data(), sizeof(float) * ao1.size()) == 0);
        for (int i = 0; i < m; ++i)  // the scratch rows attn V reads: a_end weights each
          CHECK(std::memcmp(a1.data() + i * ld, a2.data() + i * ld, sizeof(float) * a_end) == 0);
      }
  }
}

TEST_CASE("editing one token or one setting recomputes exactly what a fresh pass computes", "[fast][reuse]") {
  // A reused Trace projects only the rows whose input changed: the result must be
  // bit-identical to a fresh trace, for every kind of edit.
  std::mt19937 rng(23);
  struct Setup {
    mha::Norm norm;
    mha::Mask mask;
    bool cross;
    int seq, seq_kv, d, heads, kv_heads;
  };
  const Setup setups[] = {
      {mha::Norm::Post, mha::Mask::None, false, 32, 32, 512, 8, 8},
      {mha::Norm::Pre, mha::Mask::Causal, false, 70, 70, 64, 4, 2},
      {mha::Norm::None, mha::Mask::None, true, 9, 75, 48, 4, 4},
  };
  for (const Setup& s : setups) {
    mha::Config cfg;
    cfg.d_model = s.d;
    cfg.num_heads = s.heads;
    cfg.num_kv_heads = s.kv_heads;
    cfg.norm = s.norm;
    cfg.mask = s.mask;
    cfg.threads = 2;
    auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
    mha::Inputs in = RandomInputs(rng, s.seq, s.seq_kv, s.d, s.cross);
    mha::Trace t;
    mha::Forward(cfg, w, in, t);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (int edit = 0; edit < 6; ++edit) {
      INFO("norm " << mha::ToString(s.norm) << " cross " << s.cross << " edit " << edit);
      if (edit == 0) in.x.row(s.seq - 1).setRandom();                     // the last word typed
      if (edit == 1) in.x.row(0).setRandom();                             // the first
      if (edit == 2) in.x.middleRows(1, 2).setRandom();                   // two in a row
      if (edit == 3) cfg.temperature = 0.7f;                              // a slider: no row changes
      if (edit == 4 && s.cross) in.memory.row(s.seq_kv / 2).setRandom();  // one memory word
      if (edit == 5) cfg.threads = 1;
      mha::Forward(cfg, w, in, t);
      CheckSameTrace(t, mha::Forward(cfg, w, in));
    }
    // The sublayer alone on the same trace, then the full layer again.
    mha::ForwardAttention(cfg, w, in, t);
    CheckSameTrace(t, [&] {
      mha::Trace f;
      mha::ForwardAttention(cfg, w, in, f);
      return f;
    }());
    in.x.row(1).setRandom();
    mha::Forward(cfg, w, in, t);
    CheckSameTrace(t, mha::Forward(cfg, w, in));
  }
}

TEST_CASE("an input with NaN or Inf anywhere is refused before anything is computed", "[fast][validation]") {
  std::mt19937 rng(31);
  mha::Config cfg;
  cfg.d_model = 24;
  cfg.num_heads = 3;
  auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (float v : bad) {
    for (int at : {0, 17, 5 * 24 - 1}) {
      mha::Inputs in = RandomInputs(rng, 5, 7, 24, true);
      in.x.data()[at] = v;
      CHECK_THROWS_WITH(mha::Forward(cfg, w, in), Catch::Contains("NaN or Inf"));
      in = RandomInputs(rng, 5, 7, 24, true);
      in.memory.data()[at % (7 * 24)] = v;
      CHECK_THROWS_WITH(mha::Forward(cfg, w, in), Catch::Contains("NaN or Inf"));
    }
  }
  // Up to Limits::kMaxAbsValue is fine; past it (or any float as large) is refused.
  mha::Inputs in = RandomInputs(rng, 5, 5, 24, false);
  in.x(2, 3) = mha::Limits::kMaxAbsValue;
  in.x(4, 23) = -mha::Limits::kMaxAbsValue;
  CHECK_NOTHROW(mha::Forward(cfg, w, in));
  for (float v : {std::nextafter(mha::Limits::kMaxAbsValue, 1e30f), -3e38f}) {
    in.x(2, 3) = v;
    CHECK_THROWS_WITH(mha::Forward(cfg, w, in), Catch::Contains("larger than"));
  }
}

TEST_CASE("the shape-flow table rebuilt in place equals a fresh one, and each step has its own id", "[fast][flow]") {
  // ShapeFlowInto reuses the rows of an earlier table (without allocating); what it
  // leaves must be exactly what a fresh table says.
  for (auto block : {mha::Block::Attention, mha::Block::Encoder})
    for (auto norm : {mha::Norm::Post, mha::Norm::Pre, mha::Norm::None})
      for (auto act : {mha::Activation::Relu, mha::Activation::Gelu})
        for (int d_ff : {0, 100}) {
          mha::Config cfg;
          cfg.d_model = 48;
          cfg.num_heads = 4;
          cfg.block = block;
          cfg.norm = norm;
          cfg.activation = act;
          cfg.d_ff = d_ff;
          cfg.ln_eps = 1e-6f;
          mha::Config other = cfg;
          other.block = block == mha::Block::Encoder ? mha::Block::Attention : mha::Block::Encoder;
          other.norm = norm == mha::Norm::Pre ? mha::Norm::Post : mha::Norm::Pre;
          std::vector<mha::FlowRow> rows;
          mha::ShapeFlowInto(other, 3, 3, rows);  // built once for another table, then rebuilt
          mha::ShapeFlowInto(cfg, 7, 7, rows);
          const std::vector<mha::FlowRow> want = mha::ShapeFlow(cfg, 7, 7);
          REQUIRE(rows.size() == want.size());
          for (std::size_t i = 0; i < rows.size(); ++i) {
            INFO("row " << i << ": " << want[i].step);
            CHECK(rows[i].id == want[i].id);
            CHECK(rows[i].step == want[i].step);
            CHECK(rows[i].formula == want[i].formula);
            CHECK(rows[i].tensor == want[i].tensor);
            CHECK(rows[i].shape == want[i].shape);
            CHECK(rows[i].params == want[i].params);
            CHECK(rows[i].param_count == want[i].param_count);
            CHECK(rows[i].flops == want[i].flops);
            CHECK(mha::FindStep(rows, rows[i].id) == static_cast<int>(i));  // no id twice
          }
          const bool enc = block == mha::Block::Encoder, pre = norm == mha::Norm::Pre;
          CHECK((mha::FindStep(rows, mha::StepId::PreNorm) >= 0) == pre);
          CHECK((mha::FindStep(rows, mha::StepId::FfnPreNorm) >= 0) == (enc && pre));
          for (auto id : {mha::StepId::FfnUp, mha::StepId::FfnDown, mha::StepId::FfnResidual})
            CHECK((mha::FindStep(rows, id) >= 0) == enc);
          CHECK(rows[mha::FindStep(rows, mha::StepId::Residual)].tensor == "out");
          if (enc) {
            const mha::FlowRow& up = rows[mha::FindStep(rows, mha::StepId::FfnUp)];
            const std::int64_t f = cfg.ffn_dim(), d = 48, s = 7;
            CHECK(up.tensor == "ffn_hidden");
            CHECK(up.shape == std::vector<std::int64_t>{1, s, f});
            CHECK(up.param_count == d * f + f);
            CHECK(up.flops == 2 * s * d * f + s * f + (act == mha::Activation::Gelu ? 8 : 1) * s * f);
            CHECK(rows.back().id == mha::StepId::FfnResidual);
            CHECK(rows.back().tensor == "block_out");
          }
        }
}

TEST_CASE("the fast FFN sublayer matches the plain Eigen reference (ffn_reference.hpp)", "[fast][ffn]") {
  std::mt19937 rng(41);
  for (auto norm : {mha::Norm::Post, mha::Norm::Pre, mha::Norm::None})
    for (auto act : {mha::Activation::Relu, mha::Activation::Gelu}) {
      mha::Config cfg;
      cfg.d_model = 64;
      cfg.num_heads = 4;
      cfg.block = mha::Block::Encoder;
      cfg.norm = norm;
      cfg.activation = act;
      cfg.d_ff = 200;  // not a whole number of panels
      auto w = std::make_shared<mha::Weights>(mha::InitWeights(cfg));
      w->ln2_gamma = mha::RowVec::Random(64).array() + 1.0f;
      w->ln2_beta = mha::RowVec::Random(64) * 0.5f;
      const mha::Inputs in = RandomInputs(rng, 37, 37, 64, false);
      mha::Trace t;
      mha::Forward(cfg, w, in, t);
      mha::Forward(cfg, w, in, t);  // packed FFN weights reused
      mha::Trace ref = t;           // same attention result; the FFN again, by Eigen
      reference::ForwardFfn(cfg, *w, ref);
      INFO("norm " << mha::ToString(norm) << " gelu " << (act == mha::Activation::Gelu));
      auto flat = [](const mha::Mat& m) { return std::vector<double>(m.data(), m.data() + m.size()); };
      // Two float32 results (32 ulps); the FFN's d_model and d_ff terms.
      const double n = cfg.d_model + cfg.ffn_dim();
      if (norm == mha::Norm::Pre) CHECK_F32_CLOSE_ULPS("ffn_ln", t.ffn_ln.data(), flat(ref.ffn_ln), n, 32);
      CHECK_F32_CLOSE_ULPS("ffn_hidden", t.ffn_hidden.data(), flat(ref.ffn_hidden), n, 32);
      CHECK_F32_CLOSE_ULPS("ffn_out", t.ffn_out.data(), flat(ref.ffn_out), n, 32);
      CHECK_F32_CLOSE_ULPS("ffn_residual", t.ffn_residual.data(), flat(ref.ffn_residual), n, 32);
      CHECK_F32_CLOSE_ULPS("block_out", t.block_out.data(), flat(ref.block_out), n, 32);
      // Back to attention only on the same trace: the FFN tensors are emptied.
      cfg.block = mha::Block::Attention;
      mha::Forward(cfg, w, in, t);
      CHECK(t.block_out.size() == 0);
      CHECK(t.ffn_hidden.size() == 0);
    }
}

#ifdef __linux__
#include <dirent.h>
#include <fstream>
#include <signal.h>
#include <unistd.h>

TEST_CASE("the forward pass's worker threads never take the application's signals", "[fast][threads]") {
  // A process-directed SIGINT goes to any thread that does not block it: the app's
  // own handling (deferring Ctrl-C while it writes a file) must not be bypassed.
  mha::Config cfg;
  cfg.threads = 3;
  std::mt19937 rng(51);
  const mha::Inputs in = RandomInputs(rng, 64, 64, 512, false);
  auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  mha::Trace t;
  mha::Forward(cfg, w, in, t);  // starts the workers; they live as long as `t`
  int workers = 0;
  DIR* dir = opendir("/proc/self/task");
  REQUIRE(dir != nullptr);
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.' || std::atoi(e->d_name) == getpid()) continue;
    std::ifstream status(std::string("/proc/self/task/") + e->d_name + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("SigBlk:", 0) != 0) continue;
      const unsigned long long blocked = std::stoull(line.substr(7), nullptr, 16);
      INFO("thread " << e->d_name << " " << line);
      CHECK((blocked >> (SIGINT - 1) & 1) == 1);
      CHECK((blocked >> (SIGTERM - 1) & 1) == 1);
      ++workers;
    }
  }
  closedir(dir);
  CHECK(workers >= 1);
}
#endif
