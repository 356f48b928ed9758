// Head ablation inside the forward pass: no ablation is the plain pass bit for bit;
// a knocked-out head changes concat (and what follows) and nothing before it; the
// result does not depend on the thread count, the batch or the trace's history; the
// importance table's order is the same on 1 and 2 threads. (The comparison with a
// torch rebuild is tests/cli/test_ablation.py.)
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <utility>

#include "close.hpp"
#include "fixtures.hpp"
#include "mha/mha.hpp"

namespace {

using namespace mha;

bool SameBits(const Mat& a, const Mat& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

Model SmallModel(int layers, int heads, int kv_heads, Norm norm, Block block, std::uint64_t seed) {
  ModelConfig c;
  c.layer = fixtures::Layer(32, heads, kv_heads, Mask::Causal, norm, block);
  c.layer.seed = seed;
  c.layer.threads = 1;
  c.num_layers = layers;
  c.max_seq = 24;
  for (int i = 0; i < 13; ++i) c.vocab.push_back(std::to_string(i));
  return InitModel(c);
}

std::vector<int> Tokens(std::mt19937& rng, int n, int vocab) {
  std::uniform_int_distribution<int> d(0, vocab - 1);
  std::vector<int> t;
  for (int i = 0; i < n; ++i) t.push_back(d(rng));
  return t;
}

}  // namespace

TEST_CASE("ablating no head is the plain forward pass, bit for bit", "[ablation]") {
  std::mt19937 rng(3);
  for (Block block : {Block::Attention, Block::Encoder}) {
    const Model m = SmallModel(2, 4, 2, Norm::Pre, block, 11);
    const std::vector<int> tokens = Tokens(rng, 17, 13);
    ModelTrace plain, none, after;
    RunModel(m, tokens, plain);
    const std::vector<HeadAblation> empty(2);
    RunModel(m, tokens, none, &empty);
    // A trace that knocked a head out, then runs without: no trace of the ablation left.
    const std::vector<HeadAblation> some =
        LayerAblations(2, m.cfg.LayerConfig(), AblationMode::Zero, {{0, 1}}, nullptr);
    RunModel(m, tokens, after, &some);
    RunModel(m, tokens, after);
    for (int l = 0; l < 2; ++l) {
      CHECK(SameBits(none.layers[l].concat, plain.layers[l].concat));
      CHECK(SameBits(none.layers[l].out, plain.layers[l].out));
      CHECK(SameBits(after.layers[l].concat, plain.layers[l].concat));
      CHECK(SameBits(after.layers[l].out, plain.layers[l].out));
    }
    CHECK(SameBits(none.logits[0], plain.logits[0]));
    CHECK(SameBits(after.logits[0], plain.logits[0]));
  }
}

TEST_CASE("a knocked-out head's block of concat is replaced, and nothing before concat changes", "[ablation]") {
  std::mt19937 rng(5);
  // GQA: 4 query heads reading 2 K/V heads; ablation is per query head.
  const Config cfg = fixtures::Layer(32, 4, 2, Mask::None, Norm::Post);
  const auto w = std::make_shared<const Weights>(InitWeights(cfg));
  Inputs in = fixtures::RandomInputs(rng, 9, 9, 32, false);
  const Trace plain = Forward(cfg, w, in);
  const ContextMeans means = MeanContexts(std::vector<const Trace*>{&plain});
  for (AblationMode mode : {AblationMode::Zero, AblationMode::Mean}) {
    in.ablate = LayerAblations(1, cfg, mode, {{0, 2}, {0, 0}}, &means)[0];
    REQUIRE(in.ablate.heads == std::vector<int>{0, 2});
    const Trace t = Forward(cfg, w, in);
    CHECK(SameBits(t.attn, plain.attn));
    CHECK(SameBits(t.context, plain.context));
    const int hd = cfg.head_dim();
    Mat expect = plain.concat;
    for (int h : {0, 2})
      for (int i = 0; i < 9; ++i)
        expect.block(i, h * hd, 1, hd) = mode == AblationMode::Zero ? Mat::Zero(1, hd) : Mat(means[0].row(h));
    CHECK(SameBits(t.concat, expect));
    // Mean ablation of every position by the mean over those positions: the mean of
    // the replaced block equals the head's own mean (to rounding).
    // A float32 mean of 9 rows against the double one, at the scale of what it sums.
    if (mode == AblationMode::Mean) {
      const Eigen::MatrixXd mean = plain.concat.cast<double>().colwise().mean();
      CHECK((t.concat.colwise().mean().cast<double>() - mean).cwiseAbs().maxCoeff() <=
            testutil::Float32Tol(plain.concat, 9, 32));
    }
    // W_O reads the replaced concat: attn_out = concat W_O + b_O (an independent product,
    // d_model terms).
    const Eigen::MatrixXd oracle = (t.concat.cast<double>() * w->W_o.cast<double>()).rowwise() + w->b_o.cast<double>();
    CHECK((t.attn_out.cast<double>() - oracle).cwiseAbs().maxCoeff() <= testutil::Float32Tol(oracle, cfg.d_model));
    CHECK(!SameBits(t.out, plain.out));
    // Heads 1 and 3 untouched.
    CHECK(SameBits(t.concat.middleCols(hd, hd), plain.concat.middleCols(hd, hd)));
  }
}

TEST_CASE("an ablated pass is the same on 1 and 2 threads, alone or in a batch", "[ablation]") {
  std::mt19937 rng(9);
  Model m = SmallModel(2, 4, 4, Norm::Post, Block::Encoder, 21);
  Batch b;
  b.batch = 3;
  b.seq = 20;
  b.tokens.clear();
  for (int s = 0; s < 3; ++s) {
    const std::vector<int> t = Tokens(rng, 20, 13);
    b.tokens.insert(b.tokens.end(), t.begin(), t.end());
  }
  b.targets.assign(b.tokens.begin() + 1, b.tokens.end());
  b.targets.push_back(-1);
  const std::vector<HeadAblation> ab =
      LayerAblations(2, m.cfg.LayerConfig(), AblationMode::Zero, {{1, 3}, {0, 0}, {1, 1}}, nullptr);
  Trainer one(1), two(2);
  const double l1 = one.Evaluate(m, b, &ab).loss;
  const double l2 = two.Evaluate(m, b, &ab).loss;
  CHECK(l1 == l2);
  const double plain = one.Evaluate(m, b).loss;
  CHECK(plain != l1);
  // Evaluate without an ablation after one with it: the plain loss again.
  CHECK(one.Evaluate(m, b, &ab).loss == l1);
  CHECK(one.Evaluate(m, b).loss == plain);
  // Each sequence of the batch alone through RunModel: the same concat rows.
  ModelTrace t;
  m.cfg.layer.threads = 2;
  one.Evaluate(m, b, &ab);
  for (int s = 0; s < 3; ++s) {
    RunModel(m, std::vector<int>(b.tokens.begin() + s * 20, b.tokens.begin() + (s + 1) * 20), t, &ab);
    for (int l = 0; l < 2; ++l) CHECK(SameBits(t.layers[l].concat, one.LayerTrace(l).concat.middleRows(s * 20, 20)));
  }
}

TEST_CASE("mean contexts through the trainer equal the per-sequence means", "[ablation]") {
  std::mt19937 rng(13);
  const Model m = SmallModel(2, 2, 2, Norm::Pre, Block::Attention, 5);
  std::vector<Batch> ref(2);
  std::vector<std::vector<int>> seqs;
  for (Batch& b : ref) {
    b.batch = 2;
    b.seq = 12;
    for (int s = 0; s < 2; ++s) {
      seqs.push_back(Tokens(rng, 12, 13));
      b.tokens.insert(b.tokens.end(), seqs.back().begin(), seqs.back().end());
    }
    b.targets.assign(b.tokens.size(), -1);
    b.targets[0] = 1;
  }
  Trainer trainer(2);
  const ContextMeans means = MeanContexts(trainer, m, ref);
  REQUIRE(means.size() == 2);
  for (int l = 0; l < 2; ++l) {
    Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(32);
    double scale = 0;  // of what the mean sums
    ModelTrace t;
    for (const auto& s : seqs) {
      RunModel(m, s, t);
      sum += t.layers[l].concat.cast<double>().colwise().sum();
      scale = std::max(scale, double(t.layers[l].concat.cwiseAbs().maxCoeff()));
    }
    sum /= 48.0;
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 16; ++j)  // a float32 mean over 48 positions against the double one
        CHECK(std::abs(means[l](h, j) - sum[h * 16 + j]) <= testutil::Float32Tol(std::vector<double>{scale}, 48));
  }
}

TEST_CASE("a held-out set profiled a part at a time is profiled as one batch", "[ablation]") {
  // The ablation's reference pass cuts a held-out set to fit the memory estimate; the
  // head labels must not depend on the cut.
  std::mt19937 rng(17);
  const Model m = SmallModel(2, 4, 2, Norm::Pre, Block::Attention, 31);
  Batch all;
  all.batch = 5;
  all.seq = 16;
  for (int s = 0; s < all.batch; ++s) {
    const std::vector<int> t = Tokens(rng, all.seq, 13);
    all.tokens.insert(all.tokens.end(), t.begin(), t.end());
  }
  all.targets.assign(all.tokens.size(), -1);
  all.targets[0] = 1;
  std::vector<Batch> parts;
  const std::pair<int, int> cuts[] = {{0, 2}, {2, 2}, {4, 1}};
  for (const auto& [first, count] : cuts) {
    Batch p = all;
    p.batch = count;
    p.tokens.assign(all.tokens.begin() + first * all.seq, all.tokens.begin() + (first + count) * all.seq);
    p.targets.assign(p.tokens.size(), -1);
    p.targets[0] = 1;
    parts.push_back(p);
  }
  Trainer trainer(2);
  const std::vector<HeadProfile> whole = ProfileHeads(trainer, m, all), cut = ProfileHeads(trainer, m, parts);
  REQUIRE(whole.size() == cut.size());
  for (std::size_t k = 0; k < whole.size(); ++k) {
    CHECK(whole[k].layer == cut[k].layer);
    CHECK(whole[k].head == cut[k].head);
    CHECK(whole[k].back == cut[k].back);
    CHECK(whole[k].self == cut[k].self);
    CHECK(whole[k].first == cut[k].first);
    CHECK(whole[k].induction == cut[k].induction);
    CHECK(whole[k].label == cut[k].label);
  }
}

TEST_CASE("the importance table's order is the same on 1 and 2 threads", "[ablation]") {
  const TaskSpec task{TaskKind::Offsets, 2, 11, 16};
  ModelConfig c;
  c.layer = fixtures::Layer(32, 4, 0, TaskMask(task), Norm::Pre);
  c.layer.seed = 3;
  c.num_layers = 2;
  c.max_seq = task.seq;
  c.vocab = TaskVocab(task);
  c.num_targets = NumTargets(task);
  const Model m = InitModel(c);
  Batch b;
  MakeBatch(task, 7, 0, 64, b);
  auto table = [&](int threads) {
    Trainer t(threads);
    const ContextMeans means = MeanContexts(t, m, {b});
    return MeasureImportance(2, c.LayerConfig(), AblationMode::Mean, &means,
                             [&](const std::vector<HeadAblation>* a) { return t.Evaluate(m, b, a); });
  };
  const ImportanceTable one = table(1), two = table(2);
  REQUIRE(one.heads.size() == 8);
  REQUIRE(one.layers.size() == 2);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(one.heads[i].head == two.heads[i].head);
    CHECK(one.heads[i].increase == two.heads[i].increase);
    if (i > 0) CHECK(one.heads[i - 1].increase >= one.heads[i].increase);
  }
  for (std::size_t i = 0; i < 2; ++i) CHECK(one.layers[i].stats.loss == two.layers[i].stats.loss);
}

TEST_CASE("bad head sets are refused with the valid range", "[ablation]") {
  const Config cfg = fixtures::Shape(16, 4);
  CHECK_THROWS_WITH(LayerAblations(2, cfg, AblationMode::Zero, {{2, 0}}, nullptr), Catch::Contains("L0H0 to L1H3"));
  CHECK_THROWS_WITH(LayerAblations(2, cfg, AblationMode::Zero, {{0, 4}}, nullptr), Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(LayerAblations(2, cfg, AblationMode::Zero, {{0, 1}, {0, 1}}, nullptr),
                    Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(LayerAblations(2, cfg, AblationMode::Mean, {{0, 1}}, nullptr), Catch::Contains("mean"));
  // The forward pass refuses a malformed ablation before computing.
  std::mt19937 rng(1);
  Inputs in = fixtures::RandomInputs(rng, 3, 3, 16, false);
  in.ablate.heads = {1, 0};
  in.ablate.values = Mat::Zero(2, 4);
  const auto w = std::make_shared<const Weights>(InitWeights(cfg));
  CHECK_THROWS_WITH(Forward(cfg, w, in), Catch::Contains("ascending"));
  in.ablate.heads = {0, 4};
  CHECK_THROWS_WITH(Forward(cfg, w, in), Catch::Contains("0 to 3"));
  in.ablate.heads = {0};
  CHECK_THROWS_WITH(Forward(cfg, w, in), Catch::Contains("shape"));
}

TEST_CASE("a one-layer one-head model with its only head out keeps its residual path", "[ablation]") {
  std::mt19937 rng(2);
  const Model m = SmallModel(1, 1, 1, Norm::Post, Block::Attention, 4);
  const std::vector<int> tokens = Tokens(rng, 8, 13);
  const std::vector<HeadAblation> ab = LayerAblations(1, m.cfg.LayerConfig(), AblationMode::Zero, {{0, 0}}, nullptr);
  ModelTrace t;
  RunModel(m, tokens, t, &ab);
  // attn_out is b_O at every position: the output is LN(x + b_O), each position alone.
  const Weights& w = *m.layers[0];
  for (int i = 0; i < 8; ++i) CHECK((t.layers[0].attn_out.row(i) - w.b_o).cwiseAbs().maxCoeff() == 0.0f);
}

TEST_CASE("repeated spans: distinct tokens, the span twice after the prefix", "[ablation]") {
  std::vector<int> cand;
  for (int i = 3; i < 40; ++i) cand.push_back(i);
  const RepeatedSpans s = MakeRepeatedSpans(cand, 1, 10, 5, 42);
  REQUIRE(s.sequences.size() == 5);
  for (const auto& q : s.sequences) {
    REQUIRE(q.size() == 21u);
    CHECK(q[0] == 1);
    for (int k = 0; k < 10; ++k) {
      CHECK(q[1 + k] == q[11 + k]);
      for (int j = 0; j < k; ++j) CHECK(q[1 + j] != q[1 + k]);
    }
  }
  CHECK(MakeRepeatedSpans(cand, 1, 10, 5, 42).sequences == s.sequences);
}
