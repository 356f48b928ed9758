// One query step by step (ExplainQuery) and the scaled/unscaled attention of a head.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "mha/mha.hpp"
#include "fixtures.hpp"

namespace {

using fixtures::RandomMat;

struct Random {
  mha::Config cfg;
  mha::Trace t;
};

Random RandomTrace(std::mt19937& rng) {
  Random r;
  mha::Config& c = r.cfg;
  c.num_heads = 1 + static_cast<int>(rng() % 8);
  c.d_model = c.num_heads * (1 + static_cast<int>(rng() % 64));
  std::vector<int> kv;
  for (int g = 1; g <= c.num_heads; ++g)
    if (c.num_heads % g == 0) kv.push_back(g);
  c.num_kv_heads = kv[rng() % kv.size()];
  c.seed = rng();
  c.scale = rng() % 4 != 0;
  c.temperature = rng() % 3 == 0 ? 0.25f + (rng() % 100) / 40.0f : 1.0f;
  c.norm = static_cast<mha::Norm>(rng() % 3);
  const bool cross = rng() % 3 == 0;
  c.mask = (!cross && rng() % 2) ? mha::Mask::Causal : mha::Mask::None;
  const int seq = 1 + static_cast<int>(rng() % 16);
  mha::Inputs in;
  in.x = RandomMat(rng, seq, c.d_model);
  for (int i = 0; i < seq; ++i) in.tokens.push_back("q" + std::to_string(i));
  if (cross) {
    const int m = 1 + static_cast<int>(rng() % 16);
    in.memory = RandomMat(rng, m, c.d_model);
    for (int i = 0; i < m; ++i) in.memory_tokens.push_back("m" + std::to_string(i));
  }
  r.t = mha::Forward(c, std::make_shared<const mha::Weights>(mha::InitWeights(c)), in);
  return r;
}

}  // namespace

TEST_CASE("ExplainQuery: every step agrees with the trace, and the sum is its context row", "[teach][query]") {
  std::mt19937 rng(1234);
  float worst_context = 0, worst_weight = 0;
  int explained = 0;
  for (int rep = 0; rep < 40; ++rep) {
    const Random r = RandomTrace(rng);
    const mha::Trace& t = r.t;
    const mha::Config& c = r.cfg;
    const int hd = c.head_dim();
    for (int h = 0; h < c.num_heads; ++h) {
      for (int i = 0; i < t.seq; ++i) {
        INFO("rep " << rep << " head " << h << " query " << i << " d_model " << c.d_model << " heads " << c.num_heads
                    << " kv " << c.kv_heads() << " mask " << mha::ToString(c.mask) << " cross " << t.in.cross()
                    << " scale " << c.scale << " T " << c.temperature);
        const mha::QueryExplanation e = mha::ExplainQuery(t, h, i);
        ++explained;
        const Eigen::Index qrow = static_cast<Eigen::Index>(h) * t.seq + i;
        REQUIRE(e.kv_head == t.KvHeadOf(h));
        REQUIRE(e.head_dim == hd);
        REQUIRE(static_cast<int>(e.keys.size()) == t.seq_kv);
        CHECK(e.q == t.q.row(qrow));
        CHECK(e.query_token == t.in.tokens[i]);
        CHECK(e.divisor == Approx((c.scale ? std::sqrt(double(hd)) : 1.0) * c.temperature).epsilon(1e-6));
        double weight_sum = 0;
        Eigen::RowVectorXd sum_wv = Eigen::RowVectorXd::Zero(hd), sum_abs_wv = Eigen::RowVectorXd::Zero(hd);
        for (int j = 0; j < t.seq_kv; ++j) {
          const mha::KeyStep& k = e.keys[j];
          const Eigen::Index krow = static_cast<Eigen::Index>(e.kv_head) * t.seq_kv + j;
          CHECK(k.k == t.k.row(krow));
          CHECK(k.v == t.v.row(krow));
          CHECK(k.token == (t.in.cross() ? t.in.memory_tokens[j] : t.in.tokens[j]));
          // The dot product, from its definition.
          double dot = 0;
          for (int d = 0; d < hd; ++d) dot += double(e.q[d]) * k.k[d];
          CHECK(k.dot == Approx(dot).epsilon(1e-6).margin(1e-6));
          const bool masked = c.mask == mha::Mask::Causal && j > i;
          CHECK(k.masked == masked);
          const float trace_score = t.scores(qrow, j);
          if (masked) {
            CHECK(k.scaled == -std::numeric_limits<float>::infinity());
            CHECK(trace_score == -std::numeric_limits<float>::infinity());
            CHECK(k.weight == 0.0f);
            CHECK(k.weighted_v.isZero(0));
          } else {
            // The division by sqrt(d_k) (and T) is what turned the dot into the score.
            CHECK(k.scaled == Approx(dot / e.divisor).epsilon(1e-5).margin(1e-5));
          }
          // Scores and weights shown are exactly the exported ones.
          CHECK((k.scaled == trace_score));
          CHECK(k.weight == t.attn(qrow, j));
          // ... and the softmax shown (exp / sum) gives those weights.
          const float dw = std::abs(float(double(k.exp_shifted) / e.exp_sum) - k.weight);
          worst_weight = std::max(worst_weight, dw);
          CHECK(dw <= 1e-6f);
          if (!masked) CHECK(k.exp_shifted == Approx(std::exp(double(k.scaled) - e.max_scaled)).epsilon(1e-6));
          weight_sum += k.weight;
          for (int d = 0; d < hd; ++d) {
            CHECK(k.weighted_v[d] == Approx(double(k.weight) * k.v[d]).epsilon(1e-6).margin(1e-7));
            sum_wv[d] += double(k.weight) * k.v[d];
            sum_abs_wv[d] += std::abs(double(k.weight) * k.v[d]);
          }
        }
        CHECK(weight_sum == Approx(1.0).epsilon(1e-6));
        // The sum of weight x v is the context row: the view's last line equals the trace.
        for (int d = 0; d < hd; ++d) {
          const float got = e.context[d], want = t.context(qrow, d);
          const float diff = std::abs(got - want) / std::max(1.0f, float(sum_abs_wv[d]));
          worst_context = std::max(worst_context, diff);
          CHECK(diff <= 1e-6f);
          CHECK(got == Approx(sum_wv[d]).epsilon(1e-6).margin(1e-6));
        }
        CHECK(e.trace_context == t.context.row(qrow));
        CHECK(e.max_abs_diff == (e.context - e.trace_context).cwiseAbs().maxCoeff());
        CHECK(e.max_abs_diff <= 1e-6f * std::max(1.0f, e.trace_context.cwiseAbs().maxCoeff()));
      }
    }
  }
  INFO("worst context difference " << worst_context << ", worst weight difference " << worst_weight);
  CHECK(explained > 200);
}

TEST_CASE("ExplainQuery refuses a head or query that does not exist, with the valid range", "[teach][query]") {
  std::mt19937 rng(2);
  mha::Config c;
  c.d_model = 8;
  c.num_heads = 2;
  mha::Inputs in;
  in.x = RandomMat(rng, 3, 8);
  in.tokens = {"a", "b", "c"};
  const mha::Trace t = mha::Forward(c, std::make_shared<const mha::Weights>(mha::InitWeights(c)), in);
  CHECK_THROWS_WITH(mha::ExplainQuery(t, 2, 0), Catch::Contains("0 to 1"));
  CHECK_THROWS_WITH(mha::ExplainQuery(t, -1, 0), Catch::Contains("num_heads = 2"));
  CHECK_THROWS_WITH(mha::ExplainQuery(t, 0, 3), Catch::Contains("3 tokens"));
  CHECK_THROWS_AS(mha::ExplainQuery(mha::Trace{}, 0, 0), mha::Error);
  CHECK_NOTHROW(mha::ExplainQuery(t, 1, 2));
  CHECK_THROWS_AS(mha::ComputeHeadAttention(t, 5, true, 1.0f), mha::Error);
  CHECK_THROWS_WITH(mha::ComputeHeadAttention(t, 0, true, 0.0f), Catch::Contains("temperature"));
  CHECK_THROWS_WITH(mha::ComputeHeadAttention(t, 0, false, 1e-38f), Catch::Contains("temperature"));
}

TEST_CASE("ExplainQuery shows the causal mask: later keys get -inf and weight 0", "[teach][query]") {
  std::mt19937 rng(3);
  mha::Config c;
  c.d_model = 8;
  c.num_heads = 2;
  c.mask = mha::Mask::Causal;
  mha::Inputs in;
  in.x = RandomMat(rng, 4, 8);
  in.tokens = {"a", "b", "c", "d"};
  const mha::Trace t = mha::Forward(c, std::make_shared<const mha::Weights>(mha::InitWeights(c)), in);
  const mha::QueryExplanation e = mha::ExplainQuery(t, 1, 1);
  CHECK_FALSE(e.keys[0].masked);
  CHECK_FALSE(e.keys[1].masked);
  CHECK(e.keys[2].masked);
  CHECK(e.keys[3].masked);
  CHECK(e.keys[0].weight + e.keys[1].weight == Approx(1.0f));
  // The first query sees only itself.
  CHECK(mha::ExplainQuery(t, 0, 0).keys[0].weight == 1.0f);
}

TEST_CASE("ElidedIndices keeps the ends and marks the gap", "[teach][query]") {
  CHECK(mha::ElidedIndices(64, 7) == std::vector<int>{0, 1, 2, -1, 61, 62, 63});
  CHECK(mha::ElidedIndices(64, 8) == std::vector<int>{0, 1, 2, 3, -1, 61, 62, 63});
  CHECK(mha::ElidedIndices(4, 7) == std::vector<int>{0, 1, 2, 3});
  CHECK(mha::ElidedIndices(7, 7) == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  CHECK(mha::ElidedIndices(10, 1) == std::vector<int>{0, -1, 9});
  CHECK(mha::ElidedIndices(0, 5).empty());
  for (int n = 1; n < 40; ++n)
    for (int m = 3; m < 12; ++m) {
      const auto v = mha::ElidedIndices(n, m);
      CHECK(static_cast<int>(v.size()) == std::min(n, m));
      int last = -2;
      for (int x : v)
        if (x >= 0) {
          CHECK(x > last);  // ascending, each index once
          last = x;
        }
      CHECK(v.back() == n - 1);
    }
}

TEST_CASE("AttentionRowStats: uniform rows have entropy ln n, one-hot rows entropy 0", "[teach][scaling]") {
  mha::Mat uniform = mha::Mat::Constant(3, 4, 0.25f);
  const mha::RowStats u = mha::AttentionRowStats(uniform, mha::Mask::None);
  for (int i = 0; i < 3; ++i) {
    CHECK(u.entropy[i] == Approx(std::log(4.0)).epsilon(1e-6));
    CHECK(u.max_entropy[i] == Approx(std::log(4.0)));
    CHECK(u.max_weight[i] == Approx(0.25));
  }
  CHECK(u.mean_entropy == Approx(std::log(4.0)).epsilon(1e-6));
  const mha::RowStats one = mha::AttentionRowStats(mha::Mat::Identity(3, 3), mha::Mask::None);
  CHECK(one.mean_entropy == 0.0);
  CHECK(one.mean_max_weight == 1.0);
  // Causal: row i sees i + 1 keys, so a uniform causal row i has entropy ln(i + 1).
  mha::Mat causal = mha::Mat::Zero(3, 3);
  causal << 1, 0, 0, 0.5f, 0.5f, 0, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f;
  const mha::RowStats cs = mha::AttentionRowStats(causal, mha::Mask::Causal);
  for (int i = 0; i < 3; ++i) {
    CHECK(cs.max_entropy[i] == Approx(std::log(i + 1.0)));
    CHECK(cs.entropy[i] == Approx(std::log(i + 1.0)).margin(1e-6));
  }
  // An all-zero (fully masked) row.
  const mha::RowStats z = mha::AttentionRowStats(mha::Mat::Zero(1, 3), mha::Mask::None);
  CHECK(z.entropy[0] == 0.0);
  CHECK(z.max_entropy[0] == 0.0);
}

TEST_CASE("ComputeHeadAttention with the trace's own settings reproduces scores and attn", "[teach][scaling]") {
  std::mt19937 rng(77);
  for (int rep = 0; rep < 30; ++rep) {
    const Random r = RandomTrace(rng);
    for (int h = 0; h < r.cfg.num_heads; ++h) {
      const mha::HeadAttention a = mha::ComputeHeadAttention(r.t, h, r.cfg.scale, r.cfg.temperature);
      const auto s = r.t.ScoresHead(h);
      const auto w = r.t.AttnHead(h);
      INFO("rep " << rep << " head " << h);
      REQUIRE(a.weights.rows() == r.t.seq);
      REQUIRE(a.weights.cols() == r.t.seq_kv);
      for (int i = 0; i < r.t.seq; ++i)
        for (int j = 0; j < r.t.seq_kv; ++j) {
          if (std::isinf(s(i, j))) {
            CHECK(a.masked_scores(i, j) == s(i, j));
            CHECK(std::isfinite(a.scores(i, j)));  // the unmasked score is still shown
          } else {
            CHECK(a.masked_scores(i, j) == Approx(s(i, j)).epsilon(1e-5).margin(1e-5));
          }
          CHECK(std::abs(a.weights(i, j) - w(i, j)) <= 1e-6f);
        }
    }
  }
}

TEST_CASE("without sqrt(d_k) the scores spread sqrt(d_k) times wider and the softmax saturates", "[teach][scaling]") {
  // The lesson's scale: d_model 512, 8 heads, d_k = 64, a real sentence.
  mha::Config c;
  std::string notice;
  const mha::Inputs in = mha::MakeInputs("The cat sat on the mat because it was warm.", "", c, &notice);
  const mha::Trace t = mha::Forward(c, std::make_shared<const mha::Weights>(mha::InitWeights(c)), in);
  for (int h = 0; h < c.num_heads; ++h) {
    const mha::ScalingComparison cmp = mha::CompareScaling(t, h, 1.0f);
    const auto& on = cmp.with_scaling;
    const auto& off = cmp.without_scaling;
    INFO("head " << h << " entropy on " << on.stats.mean_entropy << " off " << off.stats.mean_entropy << " max on "
                 << on.stats.mean_max_weight << " off " << off.stats.mean_max_weight);
    CHECK(on.scaled);
    CHECK_FALSE(off.scaled);
    CHECK(off.multiplier == 1.0f);
    CHECK(on.multiplier == Approx(1.0 / 8.0));
    CHECK(off.score_std == Approx(8.0 * on.score_std).epsilon(1e-4));
    CHECK(off.stats.mean_entropy < on.stats.mean_entropy);
    CHECK(off.stats.mean_max_weight > on.stats.mean_max_weight);
  }
  // Temperature is the volume knob: hotter is flatter, and at T -> infinity uniform.
  double last = -1;
  for (float T : {0.25f, 0.5f, 1.0f, 2.0f, 4.0f, 1e6f}) {
    const mha::HeadAttention a = mha::ComputeHeadAttention(t, 0, true, T);
    CHECK(a.stats.mean_entropy > last);
    last = a.stats.mean_entropy;
  }
  CHECK(last == Approx(std::log(double(t.seq))).epsilon(1e-4));
}
