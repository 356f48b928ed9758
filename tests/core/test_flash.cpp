// Flash attention against the standard path and a naive double-precision softmax:
// any tile size, tiles that do not divide the sequence, fully masked tiles and rows
// that see no key at all, every mask, GQA/MQA, cross-attention and the sqrt(d_k) switch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "close.hpp"
#include "fixtures.hpp"
#include "mha/flash.hpp"
#include "mha/mha.hpp"

namespace {

using fixtures::RandomMat;

// The largest |a - b| over two equally shaped matrices (and where it is), for messages.
struct MaxDiff {
  double value = 0;
  Eigen::Index row = 0, col = 0;
};
MaxDiff Largest(const mha::Mat& a, const mha::Mat& b) {
  MaxDiff d;
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const double e = std::abs(static_cast<double>(a(i, j)) - b(i, j));
      if (!(e <= d.value)) d = {std::isnan(e) ? INFINITY : e, i, j};
    }
  return d;
}

#define CHECK_MAT_WITHIN(name, a, b, tol)                                                                   \
  do {                                                                                                      \
    const MaxDiff d_ = Largest(a, b);                                                                       \
    INFO(name << ": largest difference " << d_.value << " at (" << d_.row << ", " << d_.col                 \
              << "): " << (a)(d_.row, d_.col) << " vs " << (b)(d_.row, d_.col) << ", tolerance " << (tol)); \
    CHECK(d_.value <= (tol));                                                                               \
  } while (0)
// Within testutil::Float32Tol of b's scale (the rule of tests/core/close.hpp): `ulps`
// roundoffs times the square root of the terms summed; 32 ulps for two float32 results.
double Tol(const mha::Mat& b, double terms, double ulps) {
  return testutil::Float32Tol(std::vector<double>(b.data(), b.data() + b.size()), terms, ulps);
}
#define CHECK_MAT_CLOSE(name, a, b, terms, ulps) CHECK_MAT_WITHIN(name, a, b, Tol(b, terms, ulps))

// Naive attention of one head in double: scores, the softmax of each row over the keys
// it sees (a row that sees none: zeros), then the weights times v.
mha::Mat NaiveHead(const mha::Mat& q, const mha::Mat& k, const mha::Mat& v, double scale, bool causal, int offset) {
  const int n = static_cast<int>(q.rows()), m = static_cast<int>(k.rows()), hd = static_cast<int>(q.cols());
  mha::Mat out = mha::Mat::Zero(n, hd);
  for (int i = 0; i < n; ++i) {
    const int vis = causal ? std::clamp(i + 1 + offset, 0, m) : m;
    if (vis == 0) continue;
    std::vector<double> s(vis);
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < vis; ++j) {
      double d = 0;
      for (int c = 0; c < hd; ++c) d += static_cast<double>(q(i, c)) * k(j, c);
      s[j] = scale * d;
      mx = std::max(mx, s[j]);
    }
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (int c = 0; c < hd; ++c) {
      double acc = 0;
      for (int j = 0; j < vis; ++j) acc += s[j] / sum * v(j, c);
      out(i, c) = static_cast<float>(acc);
    }
  }
  return out;
}

mha::Mat Flash(const mha::Mat& q, const mha::Mat& k, const mha::Mat& v, float scale, bool causal, int offset, int br,
               int bc) {
  mha::Mat out(q.rows(), q.cols());
  out.setConstant(std::numeric_limits<float>::quiet_NaN());  // every element must be written
  mha::FlashAttentionHead(q.data(), k.data(), v.data(), static_cast<int>(q.rows()), static_cast<int>(k.rows()),
                          static_cast<int>(q.cols()), scale, causal, offset, br, bc, out.data());
  return out;
}

// A random configuration of the kind `mhaviz trace` accepts, both paths' traces.
struct Pair {
  mha::Config cfg;
  mha::Trace standard, flash;
};

}  // namespace

TEST_CASE("Flash attention of one head equals a naive softmax for any Br, Bc >= 1", "[flash]") {
  std::mt19937 rng(2022);
  std::uniform_int_distribution<int> len(1, 90), tile(1, 70), dims(0, 7), offs(-4, 3);
  const int head_dims[] = {1, 3, 8, 16, 20, 33, 64, 96};
  for (int trial = 0; trial < 150; ++trial) {
    const int n = len(rng), m = trial % 3 == 0 ? n : len(rng), hd = head_dims[dims(rng)];
    const bool causal = trial % 2 == 1;
    const int offset = causal ? offs(rng) : 0;
    // Tiles of every kind: 1 x 1, ones that do not divide n or m, ones larger than both.
    const int br = trial % 10 == 0 ? 1 : tile(rng), bc = trial % 10 == 0 ? 1 : trial % 10 == 1 ? 200 : tile(rng);
    const mha::Mat q = RandomMat(rng, n, hd, 1.5f), k = RandomMat(rng, m, hd, 1.5f), v = RandomMat(rng, m, hd);
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    INFO("trial " << trial << ": seq " << n << ", seq_kv " << m << ", head_dim " << hd << ", causal " << causal
                  << " offset " << offset << ", Br " << br << ", Bc " << bc);
    const mha::Mat got = Flash(q, k, v, static_cast<float>(scale), causal, offset, br, bc);
    // Against double precision (rounded to float): the scores' hd and the weighted sum's
    // seq_kv terms.
    CHECK_MAT_CLOSE("context", got, NaiveHead(q, k, v, static_cast<float>(scale), causal, offset), hd + m, 16);
  }
}

TEST_CASE("Flash attention: rows that see no key get zeros, not NaN, and fully masked tiles are skipped", "[flash]") {
  std::mt19937 rng(7);
  const int n = 37, m = 29, hd = 20;
  const mha::Mat q = RandomMat(rng, n, hd), k = RandomMat(rng, m, hd), v = RandomMat(rng, m, hd);
  // Offset -5: rows 0..4 see no key (their scores are all -inf); with Br = 4 the first
  // row block is masked in every tile, and above the diagonal every tile is.
  for (int br : {1, 4, 7, 64})
    for (int bc : {1, 3, 16, 100}) {
      const mha::Mat got = Flash(q, k, v, 0.3f, true, -5, br, bc);
      INFO("Br " << br << ", Bc " << bc);
      CHECK(got.topRows(5).cwiseAbs().maxCoeff() == 0.0f);
      CHECK(got.allFinite());
      CHECK_MAT_CLOSE("context", got, NaiveHead(q, k, v, 0.3f, true, -5), hd + m, 16);
    }
  // The standard path's convention for such a row, which Flash matches.
  std::vector<float> row(6, -std::numeric_limits<float>::infinity());
  mha::SoftmaxRow(row.data(), 6);
  CHECK(std::all_of(row.begin(), row.end(), [](float x) { return x == 0.0f; }));
}

TEST_CASE("Flash attention: large scores rescale without overflow", "[flash]") {
  // Scores up to ~1e4 that grow along the keys: every new tile raises the max, so O and
  // l are rescaled at every step by factors down to exp(-huge) = 0.
  std::mt19937 rng(3);
  const int n = 20, m = 150, hd = 8;
  mha::Mat q = RandomMat(rng, n, hd), k = RandomMat(rng, m, hd), v = RandomMat(rng, m, hd);
  for (int j = 0; j < m; ++j) k.row(j) *= 2.0f * j;
  const mha::Mat got = Flash(q, k, v, 1.0f, false, 0, 8, 16);
  CHECK(got.allFinite());
  CHECK_MAT_CLOSE("context", got, NaiveHead(q, k, v, 1.0, false, 0), hd + m, 16);
}

TEST_CASE("Forward with Attention::Flash equals the standard path within float32's bound at random configurations",
          "[flash][forward]") {
  std::mt19937 rng(1706);
  auto uni = [&rng](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  const int head_counts[] = {1, 2, 3, 4, 6, 8, 12, 16};
  for (int trial = 0; trial < 60; ++trial) {
    mha::Config cfg;
    cfg.num_heads = head_counts[uni(0, 7)];
    cfg.d_model = cfg.num_heads * uni(1, trial % 6 == 0 ? 80 : 24);
    std::vector<int> kv;
    for (int g = 1; g <= cfg.num_heads; ++g)
      if (cfg.num_heads % g == 0) kv.push_back(g);
    cfg.num_kv_heads = uni(0, 1) ? 0 : kv[uni(0, static_cast<int>(kv.size()) - 1)];
    cfg.mask = uni(0, 1) ? mha::Mask::Causal : mha::Mask::None;
    cfg.norm = static_cast<mha::Norm>(uni(0, 2));
    cfg.scale = uni(0, 3) != 0;
    cfg.temperature = uni(0, 2) == 0 ? 0.25f * uni(1, 12) : 1.0f;
    cfg.block = uni(0, 3) == 0 ? mha::Block::Encoder : mha::Block::Attention;
    cfg.activation = uni(0, 1) ? mha::Activation::Gelu : mha::Activation::Relu;
    cfg.seed = rng();
    cfg.threads = uni(1, 3);
    const bool cross = cfg.mask == mha::Mask::None && uni(0, 2) == 0;  // causal cross-attention is refused
    const int seq = trial % 15 == 0 ? uni(300, 1024) : uni(1, 150);
    const int seq_kv = cross ? (trial % 15 == 0 ? uni(300, 1024) : uni(1, 150)) : seq;
    mha::Config flash = cfg;
    flash.attention = mha::Attention::Flash;
    if (uni(0, 2) == 0) flash.flash_br = uni(1, 90), flash.flash_bc = uni(1, 200);
    INFO("trial " << trial << ": seq " << seq << " seq_kv " << seq_kv << " d_model " << cfg.d_model << " heads "
                  << cfg.num_heads << " kv " << cfg.kv_heads() << " mask " << mha::ToString(cfg.mask) << " norm "
                  << mha::ToString(cfg.norm) << " scale " << cfg.scale << " T " << cfg.temperature << " block "
                  << mha::ToString(cfg.block) << " cross " << cross << " Br " << mha::FlashBr(flash) << " Bc "
                  << mha::FlashBc(flash));
    const mha::Inputs in = fixtures::RandomInputs(rng, seq, seq_kv, cfg.d_model, cross);
    auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
    const mha::Trace s = mha::Forward(cfg, w, in);
    const mha::Trace f = mha::Forward(flash, w, in);
    CHECK(f.scores.size() == 0);
    CHECK(f.attn.size() == 0);
    CHECK(f.q == s.q);  // the projections are the same work
    // Two float32 results: they differ in the attention's hd and seq_kv terms, then W_O's
    // d_model and the FFN's d_ff.
    const double n = seq_kv + cfg.d_model / cfg.num_heads + cfg.d_model;
    CHECK_MAT_CLOSE("context", f.context, s.context, n, 32);
    CHECK_MAT_CLOSE("concat", f.concat, s.concat, n, 32);
    CHECK_MAT_CLOSE("attn_out", f.attn_out, s.attn_out, n, 32);
    if (cfg.block == mha::Block::Encoder) CHECK_MAT_CLOSE("block_out", f.block_out, s.block_out, n + cfg.ffn_dim(), 32);
  }
}

TEST_CASE("Flash attention: every tiling gives the same context, bit-identical for any thread count",
          "[flash][forward]") {
  std::mt19937 rng(11);
  mha::Config cfg = fixtures::Layer(96, 6, 2, mha::Mask::Causal, mha::Norm::Pre);
  const mha::Inputs in = fixtures::RandomInputs(rng, 77, 77, 96, false);
  auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  const mha::Trace s = mha::Forward(cfg, w, in);
  cfg.attention = mha::Attention::Flash;
  mha::Trace reused;  // one trace through every tiling: buffers reused, switched back and forth
  for (auto [br, bc] : {std::pair{1, 1}, {5, 7}, {16, 32}, {64, 128}, {77, 77}, {100, 3}, {3, 1000}}) {
    cfg.flash_br = br, cfg.flash_bc = bc;
    INFO("Br " << br << ", Bc " << bc);
    cfg.threads = 1;
    const mha::Trace one = mha::Forward(cfg, w, in);
    cfg.threads = 3;
    mha::Forward(cfg, w, in, reused);
    CHECK(reused.context == one.context);
    CHECK_MAT_CLOSE("context", one.context, s.context, 77 + 16 + 96, 32);
    CHECK_MAT_CLOSE("out", one.out, s.out, 77 + 16 + 96, 32);
  }
  // Back to the standard path on the same trace: its scores and weights are back.
  cfg.attention = mha::Attention::Standard;
  mha::Forward(cfg, w, in, reused);
  CHECK(reused.attn == s.attn);
  CHECK(reused.context == s.context);
}

TEST_CASE("Flash attention is validated: tile sizes, its longer token cap, and no training", "[flash][validate]") {
  mha::Config cfg = fixtures::Shape(512, 8);
  cfg.attention = mha::Attention::Flash;
  CHECK_NOTHROW(mha::Validate(cfg, 32768, 32768));
  CHECK_THROWS_WITH(mha::Validate(cfg, 32769, 32769), Catch::Contains("32768"));
  cfg.flash_br = -1;
  CHECK_THROWS_WITH(mha::Validate(cfg, 8, 8), Catch::Contains("flash_br = -1"));
  cfg.flash_br = 0;
  cfg.flash_bc = mha::Limits::kMaxFlashTile + 1;
  CHECK_THROWS_WITH(mha::Validate(cfg, 8, 8), Catch::Contains("flash_bc"));
  cfg.flash_bc = 0;
  // The standard path keeps its cap, and says what Flash would do.
  mha::Config std_cfg = fixtures::Shape(512, 8);
  CHECK_THROWS_WITH(mha::Validate(std_cfg, 2048, 2048), Catch::Contains("Flash attention"));
  // No n x n term in the estimate: at 32768 tokens the trace is linear in n.
  CHECK(mha::EstimateTraceBytes(cfg, 32768, 32768) < (std::size_t(896) << 20));
  CHECK(mha::EstimateTraceBytes(std_cfg, 32768, 32768) > mha::StandardAttentionBytes(std_cfg, 32768, 32768));
  std::mt19937 rng(1);
  const mha::Inputs in = fixtures::RandomInputs(rng, 8, 8, 512, false);
  auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  mha::Trace t;
  CHECK_THROWS_WITH(mha::ForwardBatch(cfg, w, in, 1, t, true), Catch::Contains("backward"));
}

TEST_CASE("FlashTiles steps through a head tile by tile and ends at the trace's context", "[flash][tiles]") {
  std::mt19937 rng(5);
  for (mha::Mask mask : {mha::Mask::None, mha::Mask::Causal})
    for (bool cross : {false, true}) {
      if (cross && mask == mha::Mask::Causal) continue;  // refused: no 'later' in another sentence
      mha::Config cfg = fixtures::Layer(64, 4, 2, mask, mha::Norm::Post);
      const int seq = 23, seq_kv = cross ? 31 : 23;
      const mha::Inputs in = fixtures::RandomInputs(rng, seq, seq_kv, 64, cross);
      auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
      const mha::Trace t = mha::Forward(cfg, w, in);
      for (int head : {0, 3})
        for (auto [br, bc] : {std::pair{4, 5}, {1, 1}, {23, 31}, {8, 64}}) {
          INFO("mask " << mha::ToString(mask) << " cross " << cross << " head " << head << " Br " << br << " Bc "
                       << bc);
          mha::FlashTiles it(t, head, br, bc);
          const int col_blocks = (seq_kv + it.bc() - 1) / it.bc();
          CHECK(it.count() == ((seq + it.br() - 1) / it.br()) * col_blocks);
          int skipped = 0;
          std::vector<float> m_prev(seq, -std::numeric_limits<float>::infinity());
          while (!it.finished()) {
            const mha::FlashTileStep& st = it.Next();
            CHECK(st.index == it.done() - 1);
            if (st.skipped) {
              ++skipped;
              CHECK(mask == mha::Mask::Causal);
              CHECK(st.col0 > st.row1 - 1);  // strictly above the diagonal
              continue;
            }
            const int rows = st.row1 - st.row0;
            REQUIRE(static_cast<int>(st.rescale.size()) == rows);
            for (int i = 0; i < rows; ++i) {
              CHECK(st.m_new[i] >= st.m_old[i]);  // the running max only grows
              CHECK(st.rescale[i] >= 0.0f);
              CHECK(st.rescale[i] <= 1.0f);
              CHECK(st.m_old[i] == m_prev[st.row0 + i]);
              m_prev[st.row0 + i] = st.m_new[i];
            }
            CHECK(st.o.rows() == rows);
          }
          if (mask == mha::Mask::Causal && br < seq && bc < seq_kv) CHECK(skipped > 0);
          const mha::Mat ctx = it.Context();
          const mha::Mat want = t.context.middleRows(static_cast<Eigen::Index>(head) * seq, seq);
          CHECK_MAT_CLOSE("context", ctx, want, seq_kv + 16, 32);
          // The weights recovered from m and l are the trace's attn rows.
          for (int row : {0, seq / 2, seq - 1}) {
            const std::vector<float> got = it.Weights(row);
            const auto a = t.AttnHead(head).row(row);
            for (int j = 0; j < seq_kv; ++j) CHECK(std::abs(got[j] - a(j)) <= 1e-6f);
          }
          CHECK(it.HeldBytes() < it.StandardHeadBytes() + 4096);
        }
    }
}

TEST_CASE("FlashTiles: halfway, finished rows are final and unfinished ones hold partial sums", "[flash][tiles]") {
  std::mt19937 rng(8);
  mha::Config cfg = fixtures::Layer(32, 2, 0, mha::Mask::None, mha::Norm::Post);
  const mha::Inputs in = fixtures::RandomInputs(rng, 12, 12, 32, false);
  const mha::Trace t = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
  mha::FlashTiles it(t, 1, 4, 5);         // 3 row blocks x 3 key blocks
  for (int i = 0; i < 4; ++i) it.Next();  // block 0 done, block 1 has seen keys 0..4
  CHECK(it.RowFinished(3));
  CHECK_FALSE(it.RowFinished(4));
  const std::vector<float> w = it.Weights(5);
  float sum = 0;
  for (int j = 0; j < 12; ++j) sum += w[j];
  CHECK(std::abs(sum - 1.0f) < 1e-6f);  // over the keys seen so far
  CHECK(w[5] == 0.0f);
  CHECK(it.Context().row(5).cwiseAbs().maxCoeff() == 0.0f);
  CHECK(it.Context().row(2).cwiseAbs().maxCoeff() > 0.0f);
  it.Reset();
  CHECK(it.done() == 0);
  CHECK_THROWS_AS(mha::FlashTiles(t, 2, 4, 4), mha::Error);
}
