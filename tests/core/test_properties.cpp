// Properties every correct multi-head attention has, whatever the weights.
#include <catch2/catch.hpp>
#include <numeric>
#include <random>

#include "close.hpp"
#include "fixtures.hpp"
#include "mha/mha.hpp"

namespace {

// Self-attention inputs: seq random rows of width d.
mha::Inputs RandomInputs(std::mt19937& rng, int seq, int d) { return fixtures::RandomInputs(rng, seq, seq, d, false); }

std::shared_ptr<const mha::Weights> W(const mha::Config& c) {
  return std::make_shared<const mha::Weights>(mha::InitWeights(c));
}

}  // namespace

TEST_CASE("attention rows sum to 1 and lie in [0, 1]", "[property]") {
  std::mt19937 rng(1);
  for (auto mask : {mha::Mask::None, mha::Mask::Causal}) {
    mha::Config c;
    c.d_model = 48;
    c.num_heads = 6;
    c.mask = mask;
    const auto t = mha::Forward(c, W(c), RandomInputs(rng, 9, 48));
    for (Eigen::Index r = 0; r < t.attn.rows(); ++r) {
      CHECK(t.attn.row(r).sum() == Approx(1.0f).epsilon(1e-6));
      CHECK(t.attn.row(r).minCoeff() >= 0.0f);
      CHECK(t.attn.row(r).maxCoeff() <= 1.0f);
    }
  }
}

TEST_CASE("the causal upper triangle is exactly 0, and its scores are -inf", "[property]") {
  std::mt19937 rng(2);
  mha::Config c;
  c.d_model = 32;
  c.num_heads = 4;
  c.mask = mha::Mask::Causal;
  const auto t = mha::Forward(c, W(c), RandomInputs(rng, 11, 32));
  for (int h = 0; h < c.num_heads; ++h) {
    const auto a = t.AttnHead(h);
    const auto s = t.ScoresHead(h);
    for (int i = 0; i < t.seq; ++i)
      for (int j = 0; j < t.seq_kv; ++j) {
        if (j > i) {
          CHECK(a(i, j) == 0.0f);
          CHECK(std::isinf(s(i, j)));
        } else {
          CHECK(a(i, j) > 0.0f);
        }
      }
    CHECK(a(0, 0) == 1.0f);  // the first token can only see itself
  }
}

TEST_CASE("without positional encoding, permuting the tokens permutes the outputs", "[property]") {
  std::mt19937 rng(3);
  for (auto norm : {mha::Norm::Post, mha::Norm::Pre, mha::Norm::None}) {
    mha::Config c;
    c.d_model = 40;
    c.num_heads = 5;
    c.num_kv_heads = norm == mha::Norm::Pre ? 1 : 5;
    c.norm = norm;
    c.positional_encoding = false;
    const mha::Inputs in = RandomInputs(rng, 8, 40);
    std::vector<int> perm(8);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    mha::Inputs pin = in;
    for (int i = 0; i < 8; ++i) pin.x.row(i) = in.x.row(perm[i]);
    const auto w = W(c);
    const auto a = mha::Forward(c, w, in);
    const auto b = mha::Forward(c, w, pin);
    for (int i = 0; i < 8; ++i) {
      INFO("row " << i << " <- " << perm[i] << " norm " << mha::ToString(norm));
      // The same sums in another order: two float32 results (32 ulps) over d_model + seq terms.
      CHECK((b.out.row(i) - a.out.row(perm[i])).cwiseAbs().maxCoeff() <= testutil::Float32Tol(a.out, 40 + 8, 32));
      for (int h = 0; h < c.num_heads; ++h)
        for (int j = 0; j < 8; ++j) CHECK(b.AttnHead(h)(i, j) == Approx(a.AttnHead(h)(perm[i], perm[j])).margin(1e-6));
    }
  }
}

TEST_CASE("the concatenated heads equal each head run alone", "[property]") {
  std::mt19937 rng(4);
  mha::Config c;
  c.d_model = 36;
  c.num_heads = 6;
  c.num_kv_heads = 3;
  const auto in = RandomInputs(rng, 7, 36);
  const auto w = W(c);
  const auto t = mha::Forward(c, w, in);
  const int hd = c.head_dim();
  for (int h = 0; h < c.num_heads; ++h) {
    // Head h alone: its own slice of W_Q, the slice of its K/V head, plain attention.
    const int g = t.KvHeadOf(h);
    mha::Mat q = in.x * w->W_q.middleCols(h * hd, hd);
    q.rowwise() += w->b_q.segment(h * hd, hd);
    mha::Mat k = in.x * w->W_k.middleCols(g * hd, hd);
    k.rowwise() += w->b_k.segment(g * hd, hd);
    mha::Mat v = in.x * w->W_v.middleCols(g * hd, hd);
    v.rowwise() += w->b_v.segment(g * hd, hd);
    mha::Mat s = q * k.transpose() / std::sqrt(static_cast<float>(hd));
    for (int i = 0; i < s.rows(); ++i) mha::SoftmaxRow(&s(i, 0), static_cast<int>(s.cols()));
    const mha::Mat ctx = s * v;
    INFO("head " << h << " reads K/V head " << g);
    CHECK((t.concat.middleCols(h * hd, hd) - ctx).cwiseAbs().maxCoeff() <= testutil::Float32Tol(ctx, 36 + 7, 32));
  }
  // Changing one head's slice of W_Q changes only that head's columns of concat.
  auto w2 = std::make_shared<mha::Weights>(*w);
  w2->W_q.middleCols(2 * hd, hd) *= 3.0f;
  const auto t2 = mha::Forward(c, w2, in);
  for (int h = 0; h < c.num_heads; ++h) {
    const float diff = (t2.concat.middleCols(h * hd, hd) - t.concat.middleCols(h * hd, hd)).cwiseAbs().maxCoeff();
    if (h == 2)
      CHECK(diff > 1e-3f);
    else
      CHECK(diff == 0.0f);
  }
}

TEST_CASE("num_heads = 1 is plain single-head attention", "[property]") {
  std::mt19937 rng(5);
  mha::Config c;
  c.d_model = 16;
  c.num_heads = 1;
  c.norm = mha::Norm::None;
  const auto in = RandomInputs(rng, 5, 16);
  const auto w = W(c);
  const auto t = mha::Forward(c, w, in);
  mha::Mat Q = (in.x * w->W_q).rowwise() + w->b_q;
  mha::Mat K = (in.x * w->W_k).rowwise() + w->b_k;
  mha::Mat V = (in.x * w->W_v).rowwise() + w->b_v;
  mha::Mat A = Q * K.transpose() / 4.0f;  // sqrt(d_k) = sqrt(16)
  for (int i = 0; i < 5; ++i) {
    A.row(i) = (A.row(i).array() - A.row(i).maxCoeff()).exp();
    A.row(i) /= A.row(i).sum();
  }
  const mha::Mat out = ((A * V) * w->W_o).rowwise() + w->b_o;
  // Two float32 results (32 ulps) over the d_model + seq terms summed on the way.
  CHECK((t.attn - A).cwiseAbs().maxCoeff() <= testutil::Float32Tol(A, 16 + 5, 32));
  CHECK((t.attn_out - out).cwiseAbs().maxCoeff() <= testutil::Float32Tol(out, 16 + 5, 32));
  const mha::Mat residual = in.x + out;  // norm none: residual only
  CHECK((t.out - residual).cwiseAbs().maxCoeff() <= testutil::Float32Tol(residual, 16 + 5, 32));
}

TEST_CASE("post-LN output rows have mean 0 and variance 1 (gamma 1, beta 0)", "[property]") {
  std::mt19937 rng(6);
  mha::Config c;
  c.d_model = 64;
  c.num_heads = 4;
  const auto t = mha::Forward(c, W(c), RandomInputs(rng, 6, 64));
  for (int i = 0; i < 6; ++i) {
    const float mean = t.out.row(i).mean();
    const float var = (t.out.row(i).array() - mean).square().mean();
    CHECK(std::abs(mean) < 1e-5f);
    CHECK(var == Approx(1.0f).epsilon(1e-3));  // eps 1e-5 shrinks it a hair
  }
}

TEST_CASE("a fully masked row gives zeros, not NaN", "[property]") {
  const float inf = std::numeric_limits<float>::infinity();
  float row[4] = {-inf, -inf, -inf, -inf};
  mha::SoftmaxRow(row, 4);
  for (float v : row) CHECK(v == 0.0f);
  float big[3] = {1e4f, -1e4f, 1e4f};
  mha::SoftmaxRow(big, 3);
  CHECK(big[0] == Approx(0.5f));
  CHECK(big[1] == 0.0f);
  CHECK(std::isfinite(big[2]));
}

TEST_CASE("scaling divides the scores by sqrt(d_k), temperature divides them further", "[property]") {
  std::mt19937 rng(7);
  mha::Config c;
  c.d_model = 32;
  c.num_heads = 2;  // d_k = 16, sqrt = 4
  const auto in = RandomInputs(rng, 4, 32);
  const auto w = W(c);
  const auto scaled = mha::Forward(c, w, in);
  c.scale = false;
  const auto raw = mha::Forward(c, w, in);
  CHECK((raw.scores / 4.0f - scaled.scores).cwiseAbs().maxCoeff() <= testutil::Float32Tol(scaled.scores, 16, 32));
  c.scale = true;
  c.temperature = 2.0f;
  const auto hot = mha::Forward(c, w, in);
  CHECK((scaled.scores / 2.0f - hot.scores).cwiseAbs().maxCoeff() <= testutil::Float32Tol(hot.scores, 16, 32));
}

TEST_CASE("the same word gets the same embedding in every sentence", "[embed]") {
  mha::Config c;
  c.d_model = 16;
  c.positional_encoding = false;
  const auto a = mha::MakeInputs("the cat sat", "", c);
  const auto b = mha::MakeInputs("a cat ran", "", c);
  CHECK(a.x.row(1) == b.x.row(1));
  CHECK(a.x.row(0) != b.x.row(0));
  // Prefix-stable in d_model, and the seed matters.
  CHECK(mha::EmbedToken("cat", 8, 42) == mha::EmbedToken("cat", 16, 42).head(8));
  CHECK(mha::EmbedToken("cat", 8, 42) != mha::EmbedToken("cat", 8, 43));
  // PE(pos 0) = [0, 1, 0, 1, ...]; PE(1, 0) = sin(1).
  const mha::Mat pe = mha::PositionalEncoding(2, 4);
  CHECK(pe(0, 0) == 0.0f);
  CHECK(pe(0, 1) == 1.0f);
  CHECK(pe(1, 0) == Approx(std::sin(1.0)));
  CHECK(pe(1, 2) == Approx(std::sin(1.0 / 100.0)));  // 10000^(2/4) = 100
}

TEST_CASE("weights are seeded Xavier/Glorot, reproducible, and independent per tensor", "[weights]") {
  mha::Config c;
  c.d_model = 64;
  c.num_heads = 8;
  const auto a = mha::InitWeights(c);
  const auto b = mha::InitWeights(c);
  CHECK(a.W_q == b.W_q);
  const float bound = std::sqrt(6.0f / 128.0f);
  CHECK(a.W_q.cwiseAbs().maxCoeff() <= bound);
  CHECK(a.W_q.cwiseAbs().maxCoeff() > 0.9f * bound);
  CHECK(a.ln_gamma.isOnes());
  CHECK(a.ln_beta.isZero());
  c.num_kv_heads = 2;
  const auto g = mha::InitWeights(c);
  CHECK(g.W_q == a.W_q);  // GQA does not change W_Q
  CHECK(g.W_k.cols() == 16);
  c.seed = 7;
  CHECK(mha::InitWeights(c).W_q != a.W_q);
}
