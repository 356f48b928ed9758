// Activation patching inside the forward pass (mha::PatchHeads): a patched head's block
// of concat is the clean run's, at the patched positions only, and nothing else of the
// layer changes; patching from the run itself is the plain pass bit for bit. And the
// value-weighted norms of mha/influence.hpp against a naive double-precision loop.
// (The comparison with a torch rebuild is tests/cli/test_patch.py.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "fixtures.hpp"
#include "mha/influence.hpp"
#include "mha/mha.hpp"

namespace {

using namespace mha;

bool SameBits(const Mat& a, const Mat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

Model SmallModel(int heads, int kv_heads, Block block, std::uint64_t seed) {
  ModelConfig c;
  c.layer = fixtures::Layer(32, heads, kv_heads, Mask::Causal, Norm::Pre, block);
  c.layer.seed = seed;
  c.layer.threads = 1;
  c.num_layers = 2;
  c.max_seq = 24;
  for (int i = 0; i < 13; ++i) c.vocab.push_back(std::to_string(i));
  return InitModel(c);
}

std::vector<int> Tokens(std::mt19937& rng, int n) {
  std::uniform_int_distribution<int> d(0, 12);
  std::vector<int> t;
  for (int i = 0; i < n; ++i) t.push_back(d(rng));
  return t;
}

}  // namespace

TEST_CASE("patching a head from the run itself is the plain pass, bit for bit", "[patching]") {
  std::mt19937 rng(7);
  const Model m = SmallModel(4, 2, Block::Encoder, 3);
  const std::vector<int> tokens = Tokens(rng, 11);
  ModelTrace plain, patched;
  RunModel(m, tokens, plain);
  const std::vector<HeadAblation> p = PatchHeads(plain, {{0, 1}, {1, 3}});
  RunModel(m, tokens, patched, &p);
  for (int l = 0; l < 2; ++l) CHECK(SameBits(patched.layers[l].block_out, plain.layers[l].block_out));
  CHECK(SameBits(patched.logits[0], plain.logits[0]));
}

TEST_CASE("a patched head's block of concat is the clean run's, at the patched positions only", "[patching]") {
  std::mt19937 rng(9);
  const Model m = SmallModel(4, 2, Block::Attention, 5);  // GQA: patching is per query head
  const int hd = m.cfg.layer.head_dim();
  std::vector<int> clean = Tokens(rng, 9), corrupt = clean;
  corrupt[2] = (corrupt[2] + 1) % 13;
  ModelTrace c, x, p;
  RunModel(m, clean, c);
  RunModel(m, corrupt, x);
  for (const std::vector<int>& positions : {std::vector<int>{}, std::vector<int>{4}, std::vector<int>{0, 5, 8}}) {
    const std::vector<HeadAblation> patch = PatchHeads(c, {{1, 2}}, positions);
    REQUIRE(patch[0].empty());
    REQUIRE(patch[1].heads == std::vector<int>{2});
    RunModel(m, corrupt, p, &patch);
    // Layer 0 is the corrupt run's; layer 1's own work (attn, context) too.
    CHECK(SameBits(p.layers[0].out, x.layers[0].out));
    CHECK(SameBits(p.layers[1].attn, x.layers[1].attn));
    CHECK(SameBits(p.layers[1].context, x.layers[1].context));
    for (int i = 0; i < 9; ++i) {
      const bool at = positions.empty() || std::find(positions.begin(), positions.end(), i) != positions.end();
      for (int h = 0; h < 4; ++h) {
        const Mat got = p.layers[1].concat.block(i, h * hd, 1, hd);
        const Mat want = (h == 2 && at ? c : x).layers[1].concat.block(i, h * hd, 1, hd);
        CHECK(SameBits(got, want));
      }
    }
  }
}

TEST_CASE("patching refuses heads and positions the clean run does not have", "[patching]") {
  std::mt19937 rng(1);
  const Model m = SmallModel(4, 4, Block::Attention, 2);
  ModelTrace c;
  RunModel(m, Tokens(rng, 6), c);
  CHECK_THROWS_WITH(PatchHeads(c, {{2, 0}}), Catch::Contains("L0H0 to L1H3"));
  CHECK_THROWS_WITH(PatchHeads(c, {{0, 0}}, {6}), Catch::Contains("0 to 5"));
  CHECK_THROWS_WITH(PatchHeads(c, {{0, 0}}, {3, 3}), Catch::Contains("distinct"));
  // A patch of another length than the run's input is refused by the pass itself.
  ModelTrace longer;
  const std::vector<HeadAblation> p = PatchHeads(c, {{0, 1}});
  CHECK_THROWS_WITH(RunModel(m, Tokens(rng, 7), longer, &p), Catch::Contains("one row per position"));
}

TEST_CASE("value-weighted norms equal a naive loop, and bound each head's output", "[patching][norms]") {
  std::mt19937 rng(4);
  for (Norm norm : {Norm::Post, Norm::Pre}) {
    const Config cfg = fixtures::Layer(24, 6, 3, Mask::Causal, norm);  // GQA
    const auto w = std::make_shared<const Weights>(InitWeights(cfg));
    const Inputs in = fixtures::RandomInputs(rng, 7, 7, 24, false);
    const Trace t = Forward(cfg, w, in);
    const Mat norms = ValueWeightedNorms(t);
    REQUIRE(norms.rows() == t.attn.rows());
    const int H = 6, hd = 4, seq = 7, d = 24;
    const Eigen::MatrixXd x = (norm == Norm::Pre ? t.x_ln : in.x).cast<double>();
    double worst = 0, scale = 0;
    for (int h = 0; h < H; ++h) {
      const int g = h / 2;
      for (int i = 0; i < seq; ++i) {
        Eigen::VectorXd sum = Eigen::VectorXd::Zero(d);
        double bound = 0;
        for (int j = 0; j < seq; ++j) {
          // (x_j W_V^g + b_V^g) W_O^h, written out.
          Eigen::VectorXd f = Eigen::VectorXd::Zero(d);
          for (int c = 0; c < hd; ++c) {
            double v = w->b_v[g * hd + c];
            for (int k = 0; k < d; ++k) v += x(j, k) * w->W_v(k, g * hd + c);
            for (int o = 0; o < d; ++o) f[o] += v * w->W_o(h * hd + c, o);
          }
          const double alpha = t.attn(h * seq + i, j), want = alpha * f.norm();
          worst = std::max(worst, std::abs(norms(h * seq + i, j) - want));
          scale = std::max(scale, want);
          sum += alpha * f;
          bound += norms(h * seq + i, j);
        }
        // ||sum_j alpha f_j|| <= sum_j alpha ||f_j|| (the triangle inequality).
        CHECK(sum.norm() <= bound * (1 + 1e-5) + 1e-6);
      }
    }
    CHECK(worst <= 1e-5 * scale);
  }
}

TEST_CASE("value-weighted norms need the attention weights", "[patching][norms]") {
  std::mt19937 rng(2);
  Config cfg = fixtures::Layer(16, 2, 2, Mask::None, Norm::Post);
  cfg.attention = Attention::Flash;
  const auto w = std::make_shared<const Weights>(InitWeights(cfg));
  const Trace t = Forward(cfg, w, fixtures::RandomInputs(rng, 5, 5, 16, false));
  CHECK_THROWS_WITH(ValueWeightedNorms(t), Catch::Contains("Flash"));
}
