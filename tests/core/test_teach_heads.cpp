// Head metrics: the "mostly attends to" label and the Jensen-Shannon divergence.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "mha/mha.hpp"

namespace {

// Row i puts `w` on key j(i) and spreads the rest evenly over the other keys.
mha::Mat Pattern(int n, float w, int (*key)(int, int)) {
  mha::Mat a(n, n);
  for (int i = 0; i < n; ++i) {
    const int j = key(i, n);
    for (int c = 0; c < n; ++c) a(i, c) = (c == j) ? w : (1.0f - w) / (n - 1);
  }
  return a;
}

std::vector<float> RandomDistribution(std::mt19937& rng, int n, bool sparse) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> p(n);
  float s = 0;
  for (auto& x : p) s += (x = (sparse && u(rng) < 0.5f) ? 0.0f : u(rng));
  if (s == 0) {
    p[0] = 1;
    s = 1;
  }
  for (auto& x : p) x /= s;
  return p;
}

}  // namespace

TEST_CASE("pattern labels: identity-like -> self, shifted -> previous / next, first column -> first token",
          "[teach][heads]") {
  const int n = 6;
  auto self = [](int i, int) { return i; };
  auto prev = [](int i, int) { return i > 0 ? i - 1 : 0; };
  auto next = [](int i, int m) { return i + 1 < m ? i + 1 : i; };
  auto first = [](int, int) { return 0; };
  CHECK(mha::SummarizeAttention(mha::Mat::Identity(n, n), true).pattern == mha::HeadPattern::Self);
  CHECK(mha::SummarizeAttention(Pattern(n, 0.8f, self), true).pattern == mha::HeadPattern::Self);
  CHECK(mha::SummarizeAttention(Pattern(n, 0.8f, prev), true).pattern == mha::HeadPattern::Previous);
  CHECK(mha::SummarizeAttention(Pattern(n, 0.8f, next), true).pattern == mha::HeadPattern::Next);
  CHECK(mha::SummarizeAttention(Pattern(n, 0.8f, first), true).pattern == mha::HeadPattern::First);
  CHECK(mha::SummarizeAttention(mha::Mat::Constant(n, n, 1.0f / n), true).pattern == mha::HeadPattern::Spread);
  // The threshold: halfway from an even spread (1/6) to 1, so 0.583 with 6 keys.
  CHECK(mha::SummarizeAttention(Pattern(n, 0.6f, self), true).pattern == mha::HeadPattern::Self);
  CHECK(mha::SummarizeAttention(Pattern(n, 0.55f, self), true).pattern == mha::HeadPattern::Spread);
  CHECK(mha::SummarizeAttention(Pattern(n, 0.45f, self), true).pattern == mha::HeadPattern::Spread);
  const mha::HeadSummary s = mha::SummarizeAttention(Pattern(n, 0.8f, prev), true);
  CHECK(s.previous == Approx(0.8));  // rows 1..5 each put 0.8 on key i - 1
  CHECK(s.self == Approx((0.8 + 5 * 0.04) / 6));
  CHECK(s.mean_max_weight == Approx(0.8));
  // Cross-attention: keys are another sentence's tokens, so only "first token" or "spread".
  CHECK(mha::SummarizeAttention(mha::Mat::Identity(n, n), false).pattern == mha::HeadPattern::Spread);
  CHECK(mha::SummarizeAttention(Pattern(n, 0.9f, first), false).pattern == mha::HeadPattern::First);
  const mha::HeadSummary c = mha::SummarizeAttention(mha::Mat::Identity(n, n), false);
  CHECK(c.self == 0.0);
  CHECK(c.first == Approx(1.0 / n));
  // One token: it can only attend to itself, which is no choice and no pattern.
  CHECK(mha::SummarizeAttention(mha::Mat::Ones(1, 1), true).pattern == mha::HeadPattern::Spread);
  CHECK(std::string(mha::ToString(mha::HeadPattern::First)) == "first token");
  CHECK(std::string(mha::ToString(mha::HeadPattern::Spread)) == "no clear pattern");
}

TEST_CASE("a label must beat chance on the sentence's length: 1/n and the rows it rests on", "[teach][heads]") {
  auto self = [](int i, int) { return i; };
  auto prev = [](int i, int) { return i > 0 ? i - 1 : 0; };
  auto first = [](int, int) { return 0; };
  // 3 keys: a row weight of 0.5 is barely above the even 1/3, so no pattern.
  mha::HeadSummary s = mha::SummarizeAttention(Pattern(3, 0.5f, self), true);
  CHECK(s.pattern == mha::HeadPattern::Spread);
  CHECK(s.strongest == mha::HeadPattern::Self);
  CHECK(s.chance == Approx(1.0 / 3));
  CHECK(s.lift == Approx((0.5 - 1.0 / 3) / (2.0 / 3)));
  // ... and however sharp, the previous and the first token are named by 2 rows only:
  // a head picking keys at random hits both with probability 1/9.
  s = mha::SummarizeAttention(Pattern(3, 0.95f, prev), true);
  CHECK(s.pattern == mha::HeadPattern::Spread);
  CHECK(s.strongest == mha::HeadPattern::Previous);
  CHECK(s.rows == 2);
  CHECK(s.chance_p == Approx(1.0 / 9));
  CHECK(mha::SummarizeAttention(Pattern(3, 0.95f, first), true).pattern == mha::HeadPattern::Spread);
  // Self on 3 rows, each above 2/3: all three hit at random with probability 1/27.
  s = mha::SummarizeAttention(Pattern(3, 0.95f, self), true);
  CHECK(s.pattern == mha::HeadPattern::Self);
  CHECK(s.chance_p == Approx(1.0 / 27));
  // 10 keys: 0.55 is more than halfway from 0.1 to 1, on 9 rows far beyond chance.
  CHECK(mha::SummarizeAttention(Pattern(10, 0.56f, prev), true).pattern == mha::HeadPattern::Previous);
  CHECK(mha::SummarizeAttention(Pattern(10, 0.54f, prev), true).pattern == mha::HeadPattern::Spread);
  // Causal: row i sees i + 1 keys, so the first token's chance is the mean of 1/(i + 1).
  const int n = 8;
  mha::Mat causal = mha::Mat::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) causal(i, j) = 1.0f / static_cast<float>(i + 1);
  s = mha::SummarizeAttention(causal, true, mha::Mask::Causal);
  CHECK(s.pattern == mha::HeadPattern::Spread);  // the even spread over what each row sees
  double chance = 0.0;
  for (int i = 1; i < n; ++i) chance += 1.0 / (i + 1);
  CHECK(s.strongest == mha::HeadPattern::Self);  // row 0 puts its 1 on itself: self's mean is highest
  s = mha::SummarizeAttention(causal, false, mha::Mask::Causal);
  CHECK(s.strongest == mha::HeadPattern::First);
  CHECK(s.chance == Approx((1.0 + chance) / n));
  CHECK(s.lift == Approx(0.0).margin(1e-6));
}

TEST_CASE("a real forward pass with a self head and a previous-token head is labelled so", "[teach][heads]") {
  // One-hot tokens; head 0 matches query i with key i, head 1 query i with key i - 1.
  const int seq = 5, hd = 5, d = 2 * hd;
  const float c = 4.0f;
  mha::Config cfg;
  cfg.d_model = d;
  cfg.num_heads = 2;
  cfg.norm = mha::Norm::None;
  cfg.positional_encoding = false;
  auto w = std::make_shared<mha::Weights>();
  w->W_q = mha::Mat::Identity(d, d) * c;
  w->W_k = mha::Mat::Zero(d, d);
  for (int a = 0; a < hd; ++a) w->W_k(a, a) = c;                    // head 0: k_j = c e_j
  for (int j = 0; j + 1 < hd; ++j) w->W_k(hd + j, hd + j + 1) = c;  // head 1: k_j = c e_{j+1}
  w->W_v = w->W_o = mha::Mat::Identity(d, d);
  w->b_q = w->b_k = w->b_v = w->b_o = mha::RowVec::Zero(d);
  w->ln_gamma = mha::RowVec::Ones(d);
  w->ln_beta = mha::RowVec::Zero(d);
  mha::Inputs in;
  in.x = mha::Mat::Zero(seq, d);
  for (int i = 0; i < seq; ++i) {
    in.x(i, i) = 1;
    in.x(i, hd + i) = 1;
    in.tokens.push_back("t" + std::to_string(i));
  }
  const mha::Trace t = mha::Forward(cfg, w, in);
  const auto heads = mha::SummarizeHeads(t);
  REQUIRE(heads.size() == 2);
  CHECK(heads[0].head == 0);
  CHECK(heads[0].pattern == mha::HeadPattern::Self);
  CHECK(heads[1].head == 1);
  CHECK(heads[1].pattern == mha::HeadPattern::Previous);
  CHECK(heads[1].previous > 0.99);
  // The summaries' entropies are the scaling view's numbers for the same head.
  CHECK(heads[1].mean_entropy == mha::AttentionRowStats(t.AttnHead(1), cfg.mask).mean_entropy);
  const Eigen::MatrixXd js = mha::HeadDivergence(t);
  CHECK(js(0, 0) == 0.0);
  CHECK(js(1, 1) == 0.0);
  CHECK(js(0, 1) == js(1, 0));
  CHECK(js(0, 1) > 0.5);  // almost disjoint maps: close to ln 2
  CHECK(js(0, 1) <= std::log(2.0));
}

TEST_CASE("Jensen-Shannon divergence: zero on itself, symmetric, bounded by ln 2, a known value", "[teach][heads]") {
  std::mt19937 rng(11);
  for (int rep = 0; rep < 500; ++rep) {
    const int n = 1 + static_cast<int>(rng() % 12);
    const auto p = RandomDistribution(rng, n, rep % 2 == 0);
    const auto q = RandomDistribution(rng, n, rep % 3 == 0);
    const double pq = mha::JensenShannon(p.data(), q.data(), n);
    CHECK(mha::JensenShannon(p.data(), p.data(), n) == 0.0);
    CHECK(pq == mha::JensenShannon(q.data(), p.data(), n));
    CHECK(pq >= 0.0);
    CHECK(pq <= std::log(2.0) + 1e-12);
  }
  const float a[] = {1, 0}, b[] = {0.5f, 0.5f}, c[] = {0, 1};
  // m = (0.75, 0.25): (ln(1/0.75) + 0.5 ln(0.5/0.75) + 0.5 ln(0.5/0.25)) / 2
  CHECK(mha::JensenShannon(a, b, 2) ==
        Approx(0.5 * (std::log(4.0 / 3) + 0.5 * std::log(2.0 / 3) + 0.5 * std::log(2.0))));
  CHECK(mha::JensenShannon(a, c, 2) == Approx(std::log(2.0)).epsilon(1e-12));  // disjoint
  const float z[] = {0, 0};
  CHECK(mha::JensenShannon(z, z, 2) == 0.0);
}

TEST_CASE("HeadDivergence over a random trace: zero diagonal, symmetric, bounded, the mean of row JS",
          "[teach][heads]") {
  std::mt19937 rng(12);
  mha::Config cfg;
  cfg.d_model = 48;
  cfg.num_heads = 6;
  cfg.num_kv_heads = 2;
  cfg.mask = mha::Mask::Causal;
  std::string notice;
  const mha::Inputs in = mha::MakeInputs("고양이가 쥐를 잡았다 . the cat chased the mouse", "", cfg, &notice);
  const mha::Trace t = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
  const Eigen::MatrixXd js = mha::HeadDivergence(t);
  REQUIRE(js.rows() == 6);
  REQUIRE(js.cols() == 6);
  for (int a = 0; a < 6; ++a) {
    CHECK(js(a, a) == 0.0);
    for (int b = 0; b < 6; ++b) {
      CHECK(js(a, b) == js(b, a));
      CHECK(js(a, b) >= 0.0);
      CHECK(js(a, b) <= std::log(2.0));
      double mean = 0;
      for (int i = 0; i < t.seq; ++i)
        mean += mha::JensenShannon(&t.attn(a * t.seq + i, 0), &t.attn(b * t.seq + i, 0), t.seq_kv);
      CHECK(js(a, b) == Approx(mean / t.seq).epsilon(1e-12));
      if (a != b) CHECK(js(a, b) > 0.0);  // different W_Q columns: different maps
    }
  }
  CHECK_THROWS_AS(mha::MeanJensenShannon(mha::Mat::Ones(2, 3), mha::Mat::Ones(3, 3)), mha::Error);
  // Every head of a cross-attention trace gets a label, never a positional one.
  cfg.mask = mha::Mask::None;
  const mha::Inputs cross = mha::MakeInputs("the cat", "le chat noir", cfg, &notice);
  const mha::Trace ct = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), cross);
  for (const auto& s : mha::SummarizeHeads(ct)) {
    CHECK((s.pattern == mha::HeadPattern::First || s.pattern == mha::HeadPattern::Spread));
    CHECK(s.self == 0.0);
  }
}

TEST_CASE("The positional-heads example: previous, self, first and next token, each sharp", "[teach][heads]") {
  for (const std::string& sentence :
       {std::string("the cat sat on the mat and the dog ran to the door"), std::string("고양이가 쥐를 잡았다"),
        std::string("a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j")}) {
    std::vector<std::string> tokens;
    for (const auto& tok : mha::Tokenize(sentence, mha::Limits::kMaxTokens).tokens) tokens.push_back(tok.text);
    mha::LessonExample ex = mha::MakePositionalHeadsExample(tokens);
    REQUIRE(ex.in.x.rows() == static_cast<int>(tokens.size()));
    mha::Trace t;
    mha::Forward(ex.cfg, std::make_shared<const mha::Weights>(ex.weights), ex.in, t);
    const auto heads = mha::SummarizeHeads(t);
    REQUIRE(heads.size() == 4);
    INFO(sentence);
    CHECK(heads[1].pattern == mha::HeadPattern::Self);
    // On 3 tokens the previous, first and next token rest on 2 rows, which a random
    // pick of keys matches 1 time in 9: sharp as they are, not beyond chance.
    const bool few = t.seq <= 3;
    CHECK(heads[0].pattern == (few ? mha::HeadPattern::Spread : mha::HeadPattern::Previous));
    CHECK(heads[2].pattern == (few ? mha::HeadPattern::Spread : mha::HeadPattern::First));
    CHECK(heads[3].pattern == (few ? mha::HeadPattern::Spread : mha::HeadPattern::Next));
    CHECK(heads[0].strongest == mha::HeadPattern::Previous);
    CHECK(heads[2].strongest == mha::HeadPattern::First);
    CHECK(heads[3].strongest == mha::HeadPattern::Next);
    // Sharp: every row puts most of its weight on the one key its head is for.
    const int n = t.seq;
    for (int i = 0; i < n; ++i) {
      const int want[4] = {std::max(0, i - 1), i, 0, std::min(n - 1, i + 1)};
      for (int h = 0; h < 4; ++h) {
        INFO("head " << h << ", row " << i);
        CHECK(t.AttnHead(h)(i, want[h]) > 0.9f);
      }
    }
  }
  CHECK_THROWS_AS(mha::MakePositionalHeadsExample({}), mha::Error);
}

TEST_CASE("a pattern named on one sentence is claimed only beyond a random pick, or never on 3 tokens",
          "[teach][heads]") {
  auto profile = [](const char* label, double score) {
    mha::HeadProfile p;
    p.label = label;
    p.score = score;
    return p;
  };
  // 3 tokens, exactly one-hot on the previous token: 2 rows, each hit by a random pick
  // with probability 1/3, both with 1/9 > 0.05.
  mha::LabelChance c = mha::ChanceOfLabel(profile("previous-token", 1.0), 3, false, {});
  CHECK(c.rows == 2);
  CHECK(c.chance == Approx(1.0 / 3));
  CHECK(c.chance_p == Approx(1.0 / 9));
  CHECK_FALSE(c.claimed);
  // 10 tokens at 0.95: 9 rows, all 9 hits needed: 0.1^9.
  c = mha::ChanceOfLabel(profile("previous-token", 0.95), 10, false, {});
  CHECK(c.rows == 9);
  CHECK(c.chance_p == Approx(1e-9));
  CHECK(c.claimed);
  // Causal, 4 tokens: row i sees i + 1 keys; all three hits: 1/2 * 1/3 * 1/4.
  c = mha::ChanceOfLabel(profile("previous-token", 1.0), 4, true, {});
  CHECK(c.chance == Approx((1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3));
  CHECK(c.chance_p == Approx(1.0 / 24));
  CHECK(c.claimed);
  // Induction on a repeated half: the rows whose token occurred before (3 of 6).
  c = mha::ChanceOfLabel(profile("induction", 1.0), 6, false, {0, 1, 2, 0, 1, 2});
  CHECK(c.rows == 3);
  CHECK(c.chance_p == Approx(1.0 / 216));
  // The next token under a causal mask is hidden: no pick reaches it, nothing is claimed.
  c = mha::ChanceOfLabel(profile("next", 0.0), 5, true, {});
  CHECK_FALSE(c.claimed);
  CHECK_FALSE(mha::ChanceOfLabel(profile("spread", 0.3), 10, false, {}).claimed);
  // 3-back at 0.9 over 7 rows of 10 keys.
  c = mha::ChanceOfLabel(profile("3-back", 0.9), 10, false, {});
  CHECK(c.rows == 7);
  CHECK(c.claimed);
}

TEST_CASE("a profile whose queries look one token ahead is labelled next", "[teach][heads]") {
  mha::HeadProfile p;
  p.back.assign(mha::kMaxBack, 0.05);
  p.self = 0.05;
  p.next = 0.9;
  mha::LabelHead(p);
  CHECK(p.label == "next");
  CHECK(p.score == Approx(0.9));
  // A tie between the first token and 2-back (3 tokens, row 2) goes to the first token.
  mha::HeadProfile q;
  q.back.assign(mha::kMaxBack, 0.0);
  q.back[0] = 0.5;
  q.back[1] = 1.0;
  q.first = 1.0;
  mha::LabelHead(q);
  CHECK(q.label == "first");
}
