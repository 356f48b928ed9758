// mha::Live keeps embeddings, weights, projections and packed panels between
// recomputes and redoes only what a change touches. Whatever the sequence of changes,
// its trace must be bit-identical to the plain pipeline computed from scratch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mha/mha.hpp"
#include "fixtures.hpp"

namespace {

using mha::Config;
using mha::Live;
using mha::LiveChoice;
using mha::Mat;
using mha::Trace;

const std::vector<std::string> kWords = {"the",    "cat", "sat", "on",  "a", "mat",   "고양이가", "쥐를",
                                         "잡았다", ".",   "dog", "ran", "!", "birds", "sing"};

// Every tensor (inputs, weights, intermediates), the shape-flow table and the
// configuration equal, bit for bit.
void RequireSameTrace(const Trace& a, const Trace& b) {
  const auto ta = mha::Tensors(a), tb = mha::Tensors(b);
  REQUIRE(ta.size() == tb.size());
  for (std::size_t i = 0; i < ta.size(); ++i) {
    INFO("tensor " << ta[i].name);
    REQUIRE(ta[i].name == tb[i].name);
    REQUIRE(ta[i].shape == tb[i].shape);
    REQUIRE(std::memcmp(ta[i].data, tb[i].data, sizeof(float) * static_cast<std::size_t>(ta[i].size())) == 0);
  }
  REQUIRE(a.in.tokens == b.in.tokens);
  REQUIRE(a.in.memory_tokens == b.in.memory_tokens);
  REQUIRE(a.flow.size() == b.flow.size());
  for (std::size_t i = 0; i < a.flow.size(); ++i) {
    REQUIRE(a.flow[i].step == b.flow[i].step);
    REQUIRE(a.flow[i].shape == b.flow[i].shape);
    REQUIRE(a.flow[i].flops == b.flow[i].flops);
  }
}

// The plain pipeline: fresh inputs, fresh weights, a fresh trace.
Trace Plain(const Config& cfg, const std::string& sentence, const std::string& memory) {
  Trace t;
  mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), mha::MakeInputs(sentence, memory, cfg),
               t);
  return t;
}

// A one-thread configuration of the given size.
Config Small(int d_model, int heads) {
  Config c = fixtures::Shape(d_model, heads);
  c.threads = 1;
  return c;
}

// What the app holds: the cached stages, the trace and the learner's choice.
struct Session {
  explicit Session(const Config& cfg) { c.cfg = cfg; }
  void Run() { live.Recompute(c, t); }
  Live live;
  Trace t;
  LiveChoice c;
};

Mat Mean(const Trace& t) {
  Mat m;
  mha::MeanAttention(t, m);
  return m;
}

}  // namespace

TEST_CASE("Live after a random walk of changes equals the plain pipeline, bit for bit", "[live]") {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::vector<std::string> words = {"the", "cat", "sat", "on", "the", "mat"};
  std::vector<std::string> memory_words = {"고양이가", "쥐를", "잡았다"};
  Config cfg;
  cfg.d_model = 48;
  cfg.num_heads = 4;
  cfg.threads = 1;
  bool cross = false;
  Live live;
  Trace t;
  Mat mean;
  const int kSteps = 300;
  int resplits = 0;
  for (int step = 0; step < kSteps; ++step) {
    const int prev_heads = cfg.num_heads, prev_d = cfg.d_model;
    switch (pick(14)) {
      case 0: words[pick(static_cast<int>(words.size()))] = kWords[pick(static_cast<int>(kWords.size()))]; break;
      case 1:
        if (words.size() < 40) words.push_back(kWords[pick(static_cast<int>(kWords.size()))]);
        break;
      case 2:
        if (words.size() > 1) words.pop_back();
        break;
      case 3:
      case 4: {  // the num_heads slider (kv heads follow)
        const auto valid = mha::ValidHeadCounts(cfg.d_model);
        cfg.num_heads = valid[pick(static_cast<int>(valid.size()))];
        cfg.num_kv_heads = 0;
        break;
      }
      case 5: {  // GQA: a divisor of num_heads
        std::vector<int> kv;
        for (int g = 1; g <= cfg.num_heads; ++g)
          if (cfg.num_heads % g == 0) kv.push_back(g);
        cfg.num_kv_heads = kv[pick(static_cast<int>(kv.size()))];
        break;
      }
      case 6: cfg.temperature = 0.5f + 0.25f * pick(5); break;
      case 7: cfg.mask = cfg.mask == mha::Mask::None ? mha::Mask::Causal : mha::Mask::None; break;
      case 8: cfg.norm = static_cast<mha::Norm>(pick(3)); break;
      case 9:
        cfg.scale = !cfg.scale;
        cfg.positional_encoding = pick(2) == 0;
        break;
      case 10: {  // the d_model slider, keeping num_heads valid
        const int ds[] = {32, 48, 64, 96};
        cfg.d_model = ds[pick(4)];
        if (cfg.d_model % cfg.num_heads) cfg.num_heads = 4;
        if (cfg.num_kv_heads && cfg.num_heads % cfg.num_kv_heads) cfg.num_kv_heads = 0;
        break;
      }
      case 11: cfg.seed = 40 + pick(3); break;
      case 12:
        cfg.block = cfg.block == mha::Block::Attention ? mha::Block::Encoder : mha::Block::Attention;
        cfg.d_ff = pick(2) ? 0 : 40;
        cfg.activation = pick(2) ? mha::Activation::Relu : mha::Activation::Gelu;
        break;
      case 13:
        cross = !cross;
        memory_words[pick(3)] = kWords[pick(static_cast<int>(kWords.size()))];
        break;
    }
    cfg.threads = 1 + pick(2);
    if (cross && cfg.mask == mha::Mask::Causal) cfg.mask = mha::Mask::None;
    std::string sentence, memory;
    for (const auto& w : words) sentence += (sentence.empty() ? "" : " ") + w;
    if (cross)
      for (const auto& w : memory_words) memory += (memory.empty() ? "" : " ") + w;
    LiveChoice c;
    c.cfg = cfg;
    c.sentence = sentence;
    c.memory = memory;
    std::string notice;
    live.Recompute(c, t, &mean, &notice);
    if (cfg.num_heads != prev_heads && cfg.d_model == prev_d) ++resplits;
    INFO("step " << step << ": d_model " << cfg.d_model << ", heads " << cfg.num_heads << ", kv " << cfg.kv_heads()
                 << ", sentence '" << sentence << "', memory '" << memory << "'");
    const Trace plain = Plain(cfg, sentence, memory);
    RequireSameTrace(t, plain);
    REQUIRE(mean == Mean(plain));
    REQUIRE(notice.empty());
  }
  CHECK(resplits > 20);  // the walk did exercise the re-split path
}

TEST_CASE("Live: a num_heads change re-splits Q, K, V instead of recomputing them", "[live]") {
  // Checked through the result: every head count of d_model = 64, in both orders,
  // from one trace, equals a fresh pass (Forward's re-split is the only way the
  // projections can be reused across head counts).
  for (int threads : {1, 2}) {
    Config cfg;
    cfg.d_model = 64;
    cfg.threads = threads;
    Live live;
    Trace t;
    const std::string s = "the cat sat on the mat and the dog ran";
    auto heads = mha::ValidHeadCounts(64);
    for (int pass = 0; pass < 2; ++pass) {
      for (int h : heads) {
        cfg.num_heads = h;
        LiveChoice c;
        c.cfg = cfg;
        c.sentence = s;
        live.Recompute(c, t);
        INFO("heads " << h << ", threads " << threads);
        RequireSameTrace(t, Plain(cfg, s, ""));
      }
      std::reverse(heads.begin(), heads.end());
    }
  }
}

TEST_CASE("Live recycles old weights only when nothing else holds them", "[live]") {
  const Config cfg = Small(32, 4);
  Session s(cfg);
  s.c.sentence = "one two three";
  s.Run();
  const Trace kept = s.t;  // a copy still holds the seed-42 weights
  const Trace kept_plain = Plain(cfg, "one two three", "");
  for (int i = 1; i <= 4; ++i) {  // 43, 44, 43, 44: each change writes into a spare set
    s.c.cfg.seed = 42 + (i % 2 ? 1 : 2);
    s.Run();
    RequireSameTrace(s.t, Plain(s.c.cfg, "one two three", ""));
  }
  RequireSameTrace(kept, kept_plain);  // never written over
  s.c.cfg.seed = 42;
  s.Run();
  RequireSameTrace(s.t, kept_plain);
}

TEST_CASE("Live: errors teach, and the next valid choice is still exact", "[live]") {
  const Config cfg = Small(48, 4);
  Session s(cfg);
  s.c.sentence = "the cat sat";
  s.Run();

  s.c.cfg.num_heads = 5;  // 48 % 5 != 0
  REQUIRE_THROWS_WITH(s.Run(), Catch::Contains("not divisible"));
  s.c.cfg.num_heads = 4;
  s.c.sentence = "   ";
  REQUIRE_THROWS_WITH(s.Run(), Catch::Contains("empty"));
  s.c.sentence = "the dog sat";
  s.c.memory = " ";
  REQUIRE_THROWS_WITH(s.Run(), Catch::Contains("memory"));
  s.c.memory = "";
  s.Run();
  RequireSameTrace(s.t, Plain(s.c.cfg, "the dog sat", ""));

  // Given weights with a NaN are refused with the weight's name.
  auto bad = std::make_shared<mha::Weights>(mha::InitWeights(s.c.cfg));
  bad->W_o(2, 3) = std::numeric_limits<float>::quiet_NaN();
  s.c.weights = bad;
  REQUIRE_THROWS_WITH(s.Run(), Catch::Contains("W_o") && Catch::Contains("row 2, column 3"));
  s.c.weights.reset();
  s.Run();
  RequireSameTrace(s.t, Plain(s.c.cfg, "the dog sat", ""));
}

TEST_CASE("Live with given inputs and weights equals Forward on them", "[live]") {
  Config cfg;
  cfg.d_model = 32;
  cfg.num_heads = 2;
  cfg.threads = 1;
  cfg.block = mha::Block::Encoder;  // the given weights have no FFN: seeded ones are added
  const mha::Inputs in = mha::MakeInputs("a given input", "", cfg);
  Config attn_only = cfg;
  attn_only.block = mha::Block::Attention;
  auto given = std::make_shared<const mha::Weights>(mha::InitWeights(attn_only));
  Live live;
  Trace t;
  LiveChoice c;
  c.cfg = cfg;
  c.inputs = &in;
  c.weights = given;
  for (int h : {2, 4, 8, 2}) {
    c.cfg.num_heads = h;
    live.Recompute(c, t);
    Config full = c.cfg;
    Trace plain;
    mha::Forward(full, std::make_shared<const mha::Weights>(mha::InitWeights(full)), in, plain);
    RequireSameTrace(t, plain);  // given attention weights = seeded ones, FFN seeded
  }
}

TEST_CASE("Live's token cache: the same word gets the same row in any sentence", "[live]") {
  const Config cfg = Small(40, 4);
  Session s(cfg);
  // Long (the positional-encoding table grows), then shorter, then repeated words.
  std::string long_sentence;
  for (int i = 0; i < 150; ++i) long_sentence += kWords[i % kWords.size()] + " ";
  for (const std::string& text : {std::string("고양이가 쥐를 잡았다"), long_sentence, std::string("cat cat cat")}) {
    s.c.sentence = text;
    s.Run();
    RequireSameTrace(s.t, Plain(cfg, text, ""));
  }
}

// Regressions found in review of the caches (each failed before its fix).
namespace {

Trace Fresh(const Config& c, const std::shared_ptr<const mha::Weights>& w, const mha::Inputs& in) {
  Trace t;
  mha::Forward(c, w, in, t);
  return t;
}

}  // namespace

TEST_CASE("FFN weight values are checked when the same weights switch to the encoder block", "[live][regression]") {
  const Config c = Small(16, 2);
  Config enc = c;
  enc.block = mha::Block::Encoder;
  mha::Weights w = mha::InitWeights(enc);
  w.ffn_W1(0, 0) = std::numeric_limits<float>::quiet_NaN();
  auto W = std::make_shared<const mha::Weights>(w);
  const mha::Inputs in = mha::MakeInputs("the cat sat", "", c);
  Trace t;
  mha::Forward(c, W, in, t);  // attention only: the FFN's values are not used yet
  REQUIRE_THROWS_WITH(mha::Forward(enc, W, in, t), Catch::Contains("ffn_W1") && Catch::Contains("NaN"));
}

TEST_CASE("A copied or moved Trace recomputes everything its new tensors need", "[live][regression]") {
  const Config c4 = Small(16, 4), c2 = Small(16, 2);
  auto W = std::make_shared<const mha::Weights>(mha::InitWeights(c4));
  const mha::Inputs a = mha::MakeInputs("the cat sat on", "", c4), b = mha::MakeInputs("a dog ran home", "", c4);
  SECTION("copy-assign, same configuration: no stale K^T panels") {
    Trace t1 = Fresh(c4, W, a), t2 = Fresh(c4, W, b);
    t2 = t1;
    mha::Forward(c4, W, a, t2);
    RequireSameTrace(t2, Fresh(c4, W, a));
  }
  SECTION("copy-assign across head counts: no re-split of already split tensors") {
    Trace t1 = Fresh(c4, W, a), t2 = Fresh(c2, W, a);
    t2 = t1;
    const mha::Inputs a2 = a;
    mha::Forward(c4, W, a2, t2);
    RequireSameTrace(t2, Fresh(c4, W, a));
  }
  SECTION("a moved-from Trace rebuilds its shape-flow table") {
    Trace t1 = Fresh(c4, W, a), t2 = Fresh(c4, W, a);
    t2 = std::move(t1);
    mha::Forward(c4, W, a, t1);  // NOLINT(bugprone-use-after-move): reuse is allowed
    RequireSameTrace(t1, Fresh(c4, W, a));
    REQUIRE(!t1.flow.empty());
  }
}

TEST_CASE("Live and Trace report what each change recomputed", "[live]") {
  Session s(Small(64, 4));
  s.c.sentence = "the cat sat on the mat";  // 6 tokens, 5 distinct
  s.Run();
  using W = mha::LiveReport::Weights;
  CHECK(s.live.report().embedded == 5);
  CHECK(s.live.report().weights == W::New);
  CHECK(s.t.reuse.q_rows == 6);
  CHECK(s.t.reuse.kv_rows == 6);
  CHECK_FALSE(s.t.reuse.resplit);

  s.c.cfg.temperature = 0.5f;  // nothing before attention changes
  s.Run();
  CHECK(s.live.report().embedded == 0);
  CHECK(s.live.report().weights == W::Kept);
  CHECK(s.t.reuse.q_rows == 0);
  CHECK(s.t.reuse.kv_rows == 0);

  s.c.sentence = "the dog sat on the mat";  // one new word, one row
  s.Run();
  CHECK(s.live.report().embedded == 1);
  CHECK(s.t.reuse.q_rows == 1);
  CHECK(s.t.reuse.kv_rows == 1);

  s.c.cfg.num_heads = 8;  // the same Q, K, V, cut into 8 heads
  s.Run();
  CHECK(s.live.report().weights == W::Kept);
  CHECK(s.t.reuse.resplit);
  CHECK(s.t.reuse.q_rows == 0);

  s.c.cfg.num_kv_heads = 2;  // GQA: new K/V width, so new weights (the first time all of them)
  s.Run();
  CHECK(s.live.report().weights == W::New);
  CHECK_FALSE(s.t.reuse.resplit);
  CHECK(s.t.reuse.q_rows == 6);
  s.c.cfg.num_kv_heads = 0;  // back: the recycled set only needs its K/V part
  s.Run();
  CHECK(s.live.report().weights == W::KvOnly);
  RequireSameTrace(s.t, Plain(s.c.cfg, "the dog sat on the mat", ""));

  s.c.cfg.seed = 7;
  s.Run();
  CHECK(s.live.report().weights == W::New);
  CHECK(s.live.report().embedded == 5);
}
