// Incremental decoding with a KV cache against the one forward pass: at every step
// the decode step's logits equal a full recomputation of the whole sequence
// (RunModel), the cache equals the trace's k and v, the new query's weights equal the
// trace's last row; greedy text is the same with and without the cache; sampling is
// reproducible from its seed and draws from softmax(logits / T) over the top k.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mha/decode.hpp"
#include "mha/model.hpp"

using namespace mha;

namespace {

struct Case {
  const char* name;
  int d_model, heads, kv_heads, layers;
  Norm norm;
  Block block;
  Positional pos;
};

// Gains and biases moved off their initial 1 and 0, so every parameter matters.
Model RandomModel(const Case& c, int threads, int max_seq, std::uint64_t seed) {
  ModelConfig mc;
  mc.layer.d_model = c.d_model;
  mc.layer.num_heads = c.heads;
  mc.layer.num_kv_heads = c.kv_heads;
  mc.layer.norm = c.norm;
  mc.layer.block = c.block;
  mc.layer.d_ff = 2 * c.d_model;
  mc.layer.activation = Activation::Gelu;
  mc.layer.mask = Mask::Causal;
  mc.layer.seed = seed;
  mc.layer.threads = threads;
  mc.num_layers = c.layers;
  mc.positional = c.pos;
  mc.max_seq = max_seq;
  for (int i = 0; i < 50; ++i) mc.vocab.push_back("t" + std::to_string(i));
  Model m = InitModel(mc);
  std::uint64_t state = seed * 7919 + 1;
  auto jitter = [&]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((state >> 40) % 1000) / 1000.0f - 0.5f;
  };
  ForEachTensor(m, [&](const char* name, int, auto& t) {
    const std::string n = name;
    if (n.find("gamma") != std::string::npos || n.find("beta") != std::string::npos || n.rfind("b_", 0) == 0 ||
        n == "ffn_b1" || n == "ffn_b2" || n == "unembed_b")
      for (Eigen::Index i = 0; i < t.size(); ++i) t.data()[i] += 0.6f * jitter();
  });
  return m;
}

double MaxAbsDiff(const float* a, const float* b, Eigen::Index n) {
  double worst = 0;
  for (Eigen::Index i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

int Argmax(const RowVec& v) {
  int best = 0;
  for (int i = 1; i < v.size(); ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

// Models that cover every branch of a step: post-, pre- and no LayerNorm; attention
// only and the encoder block; MHA, GQA and MQA; learned, sinusoidal and no positions;
// head_dim 16, 32 (read in place) and 24 (V packed into panels where the GEMM panel is
// 32 wide).
const Case kCases[] = {
    {"pre-LN encoder, learned positions (mhaviz-small's shape)", 64, 4, 4, 2, Norm::Pre, Block::Encoder,
     Positional::Learned},
    {"post-LN encoder, GQA, sinusoidal", 64, 4, 2, 2, Norm::Post, Block::Encoder, Positional::Sinusoidal},
    {"no LayerNorm, attention only, MQA", 32, 2, 1, 1, Norm::None, Block::Attention, Positional::Learned},
    {"head_dim 24, pre-LN, no positions", 48, 2, 2, 2, Norm::Pre, Block::Encoder, Positional::None},
    {"head_dim 32, post-LN, 3 layers", 96, 3, 3, 3, Norm::Post, Block::Attention, Positional::Sinusoidal},
};

}  // namespace

TEST_CASE("every decode step's logits equal a full recomputation, on 1 and 2 threads", "[decode]") {
  // 40 positions: the keys fill one GEMM panel and spill into the next.
  const int max_seq = 40;
  for (const Case& c : kCases)
    for (int threads : {1, 2}) {
      INFO(c.name << ", " << threads << " thread(s)");
      const Model m = RandomModel(c, threads, max_seq, 11 + threads);
      std::uint64_t state = 1234 + threads;
      auto next_id = [&]() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<int>((state >> 33) % m.cfg.vocab_size());
      };
      for (int prompt_len : {1, 5}) {
        std::vector<int> ids;
        for (int i = 0; i < prompt_len; ++i) ids.push_back(next_id());
        Decoder dec(m);
        const DecodeStep* step = &dec.Prefill(ids);
        ModelTrace full;
        double worst_logit = 0, worst_kv = 0, worst_attn = 0;
        for (;;) {
          const int n = static_cast<int>(ids.size());
          REQUIRE(dec.cache().n == n);
          REQUIRE(step->position == n - 1);
          RunModel(m, ids, full);
          const Mat& logits = full.logits[0];
          worst_logit = std::max(worst_logit, MaxAbsDiff(step->logits.data(), logits.row(n - 1).data(), logits.cols()));
          const Config lc = m.cfg.LayerConfig();
          const int G = lc.kv_heads(), hd = lc.head_dim(), H = lc.num_heads;
          for (int l = 0; l < m.cfg.num_layers; ++l) {
            const Trace& t = full.layers[static_cast<std::size_t>(l)];
            for (int g = 0; g < G; ++g) {
              const Mat K = dec.cache().K(l, g), V = dec.cache().V(l, g);
              REQUIRE(K.rows() == n);
              REQUIRE(K.cols() == hd);
              worst_kv = std::max(worst_kv, MaxAbsDiff(K.data(), t.k.data() + std::ptrdiff_t(g) * n * hd, n * hd));
              worst_kv = std::max(worst_kv, MaxAbsDiff(V.data(), t.v.data() + std::ptrdiff_t(g) * n * hd, n * hd));
            }
            const Mat& a = step->attn[static_cast<std::size_t>(l)];
            REQUIRE(a.rows() == H);
            REQUIRE(a.cols() == n);
            for (int h = 0; h < H; ++h) {
              worst_attn = std::max(worst_attn,
                                    MaxAbsDiff(a.row(h).data(), t.attn.row(std::ptrdiff_t(h) * n + n - 1).data(), n));
              CHECK(a.row(h).sum() == Approx(1.0).margin(1e-5));
            }
          }
          if (n == max_seq) break;
          ids.push_back(next_id());
          step = &dec.Step(ids.back());
        }
        INFO("largest differences: logits " << worst_logit << ", cache " << worst_kv << ", attn " << worst_attn);
        CHECK(worst_logit <= 1e-5);
        // A step runs the forward pass's kernels in its order, the unembedding included:
        // the same bits.
        CHECK(worst_logit == 0);
        CHECK(worst_kv == 0);
        CHECK(worst_attn == 0);
        CHECK(dec.cache().Bytes() ==
              std::int64_t(2) * m.cfg.num_layers * m.cfg.layer.kv_heads() * m.cfg.layer.head_dim() * max_seq * 4);
      }
    }
}

TEST_CASE("greedy generation picks the same pieces with and without the cache", "[decode]") {
  for (const Case& c : kCases) {
    INFO(c.name);
    const Model m = RandomModel(c, 1, 32, 5);
    std::vector<int> cached = {3, 1, 4}, full = cached;
    Decoder dec(m);
    Sampler greedy_a{Sampling{}}, greedy_b{Sampling{}};
    const DecodeStep* step = &dec.Prefill(cached);
    ModelTrace t;
    while (static_cast<int>(cached.size()) < m.cfg.max_seq) {
      cached.push_back(greedy_a.Next(step->logits.data(), m.cfg.vocab_size()));
      RunModel(m, full, t);
      full.push_back(greedy_b.Next(t.logits[0].row(t.logits[0].rows() - 1).data(), m.cfg.vocab_size()));
      if (static_cast<int>(cached.size()) < m.cfg.max_seq) step = &dec.Step(cached.back());
    }
    CHECK(cached == full);
    // The greedy piece is the argmax (the smaller id on a tie).
    CHECK(cached[3] == Argmax(Decoder(m).Prefill({3, 1, 4}).logits));
  }
}

TEST_CASE("the same seed draws the same pieces, another seed others", "[decode]") {
  const Model m = RandomModel(kCases[0], 1, 32, 9);
  auto generate = [&](Sampling s) {
    Decoder dec(m);
    Sampler sampler(s);
    std::vector<int> ids = {1};
    const DecodeStep* step = &dec.Prefill(ids);
    while (static_cast<int>(ids.size()) < m.cfg.max_seq) {
      ids.push_back(sampler.Next(step->logits.data(), m.cfg.vocab_size()));
      if (static_cast<int>(ids.size()) < m.cfg.max_seq) step = &dec.Step(ids.back());
    }
    return ids;
  };
  Sampling s;
  s.temperature = 1.5;
  s.top_k = 20;
  s.seed = 7;
  const std::vector<int> a = generate(s), b = generate(s);
  CHECK(a == b);
  s.seed = 8;
  CHECK(generate(s) != a);
  s.top_k = 0;
  CHECK(generate(s) == generate(s));
}

TEST_CASE("sampling draws from softmax(logits / T) over the k likeliest pieces", "[decode]") {
  // logits log(1), log(2), ..., log(6): at T = 1 piece i has probability (i + 1) / 21.
  std::vector<float> logits;
  for (int i = 0; i < 6; ++i) logits.push_back(std::log(float(i + 1)));
  const int draws = 60000;
  auto frequencies = [&](Sampling s) {
    Sampler sampler(s);
    std::vector<double> f(6, 0);
    for (int i = 0; i < draws; ++i) f[static_cast<std::size_t>(sampler.Next(logits.data(), 6))] += 1.0 / draws;
    return f;
  };
  Sampling s;
  s.temperature = 1;
  s.seed = 3;
  std::vector<double> f = frequencies(s);
  for (int i = 0; i < 6; ++i) CHECK(f[i] == Approx((i + 1) / 21.0).margin(0.01));
  // T = 0.5 squares the odds: (i + 1)^2 / 91.
  s.temperature = 0.5;
  f = frequencies(s);
  for (int i = 0; i < 6; ++i) CHECK(f[i] == Approx((i + 1) * (i + 1) / 91.0).margin(0.01));
  // top-k 2: only pieces 5 and 4, as 6 : 5.
  s.temperature = 1;
  s.top_k = 2;
  f = frequencies(s);
  CHECK(f[0] + f[1] + f[2] + f[3] == 0);
  CHECK(f[5] == Approx(6 / 11.0).margin(0.01));
  // top-k 1 and temperature 0 are greedy.
  s.top_k = 1;
  f = frequencies(s);
  CHECK(f[5] == Approx(1.0));
  CHECK(Sampler(Sampling{}).Next(logits.data(), 6) == 5);
  // A tie goes to the smaller id.
  const std::vector<float> tie = {0.f, 2.f, 2.f, 1.f};
  CHECK(Sampler(Sampling{}).Next(tie.data(), 4) == 1);
}

TEST_CASE("a step's FLOPs: one row with the cache, the whole sequence without", "[decode]") {
  const Model m = RandomModel(kCases[1], 1, 40, 1);
  // One piece: recomputing everything is the one row.
  CHECK(DecodeFlops(m.cfg, 1).cached == DecodeFlops(m.cfg, 1).full);
  // With the cache each further key costs its score and its share of the context in
  // every head of every layer: 2 x 2 x num_heads x head_dim x layers.
  const Config lc = m.cfg.LayerConfig();
  const double per_key = 4.0 * lc.num_heads * lc.head_dim() * m.cfg.num_layers;
  CHECK(DecodeFlops(m.cfg, 21).cached - DecodeFlops(m.cfg, 20).cached == Approx(per_key));
  // Without it, every row again: recomputing n pieces costs what the n cached steps
  // that read them one by one cost together.
  double sum = 0;
  for (int n = 1; n <= 40; ++n) {
    sum += DecodeFlops(m.cfg, n).cached;
    CHECK(DecodeFlops(m.cfg, n).full == Approx(sum).epsilon(1e-12));
  }
}

TEST_CASE("a step on an empty cache reads the first piece, as a prefill of one does", "[decode]") {
  const Model m = RandomModel(kCases[1], 1, 8, 4);
  Decoder a(m), b(m);
  const RowVec first = a.Step(3).logits;
  CHECK(first == b.Prefill({3}).logits);
  CHECK(a.Step(5).logits == b.Step(5).logits);
  CHECK(a.cache().n == 2);
}

TEST_CASE("decoding refuses what it cannot do, with teaching errors", "[decode]") {
  Case c = kCases[2];
  Model m = RandomModel(c, 1, 8, 2);
  {
    Model bidirectional = RandomModel(c, 1, 8, 2);
    bidirectional.cfg.layer.mask = Mask::None;
    CHECK_THROWS_WITH(Decoder(bidirectional), Catch::Contains("causal"));
  }
  Decoder dec(m);
  CHECK_THROWS_WITH(dec.Prefill({}), Catch::Contains("1 to 8"));
  CHECK_THROWS_WITH(dec.Prefill({1, 99}), Catch::Contains("outside the model's vocabulary"));
  dec.Prefill({1, 2, 3, 4, 5, 6, 7});
  // A refused step or prefill changes nothing.
  CHECK_THROWS_WITH(dec.Step(-1), Catch::Contains("outside the model's vocabulary"));
  CHECK_THROWS_WITH(dec.Prefill({1, 2, 3, 4, 5, 6, 7, 8, 9}), Catch::Contains("1 to 8"));
  CHECK(dec.cache().n == 7);
  CHECK(dec.last().position == 6);
  dec.Step(3);
  CHECK_THROWS_WITH(dec.Step(3), Catch::Contains("at most 8 pieces"));
  CHECK(dec.cache().n == 8);
  Sampling s;
  s.temperature = -1;
  CHECK_THROWS_WITH(CheckSampling(s, 50), Catch::Contains("positive"));
  s.temperature = std::nan("");
  CHECK_THROWS_WITH(CheckSampling(s, 50), Catch::Contains("positive"));
  s.temperature = 1;
  s.top_k = 51;
  CHECK_THROWS_WITH(CheckSampling(s, 50), Catch::Contains("1..50"));
  s.top_k = 50;
  CHECK_NOTHROW(CheckSampling(s, 50));
  s.no_repeat_ngram = -1;
  CHECK_THROWS_WITH(CheckSampling(s, 50), Catch::Contains("0..32"));
  s.no_repeat_ngram = kMaxNoRepeatNgram + 1;
  CHECK_THROWS_WITH(CheckSampling(s, 50), Catch::Contains("Try 3 or 4"));
  s.no_repeat_ngram = 4;
  CHECK_NOTHROW(CheckSampling(s, 50));
}

// A deliberately plain oracle: every earlier window of n - 1 pieces equal to the last
// n - 1, and the piece after it.
std::vector<int> Repeats(const std::vector<int>& ids, int n) {
  std::vector<int> out;
  const int len = static_cast<int>(ids.size());
  for (int i = 0; i + n - 1 < len; ++i) {
    bool same = true;
    for (int j = 0; j < n - 1; ++j) same = same && ids[i + j] == ids[len - (n - 1) + j];
    if (same) out.push_back(ids[i + n - 1]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TEST_CASE("n-gram blocking takes out exactly the pieces that would repeat a run of n", "[decode]") {
  const int vocab = 12;
  // "a b c a b" + ?: with n = 3 the run "a b" was followed by c, so c is blocked.
  std::vector<int> ids = {1, 2, 3, 1, 2};
  std::vector<float> logits(vocab, 0.5f);
  CHECK(BlockRepeatedNgrams(ids, 3, logits.data(), vocab) == 1);
  for (int v = 0; v < vocab; ++v) CHECK(std::isinf(logits[v]) == (v == 3));
  // n = 1 blocks every piece already written; n = 0 none; a text shorter than n - 1 none.
  std::fill(logits.begin(), logits.end(), 0.5f);
  CHECK(BlockRepeatedNgrams(ids, 1, logits.data(), vocab) == 3);
  std::fill(logits.begin(), logits.end(), 0.5f);
  CHECK(BlockRepeatedNgrams(ids, 0, logits.data(), vocab) == 0);
  CHECK(BlockRepeatedNgrams({1}, 4, logits.data(), vocab) == 0);
  CHECK(std::count(logits.begin(), logits.end(), 0.5f) == vocab);
  // Against the oracle on random texts of a small alphabet, where repeats are common.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int len = 1 + static_cast<int>(rng() % 40), n = 1 + static_cast<int>(rng() % 5);
    std::vector<int> text(static_cast<std::size_t>(len));
    for (int& t : text) t = static_cast<int>(rng() % 4);
    std::fill(logits.begin(), logits.end(), 0.0f);
    const int blocked = BlockRepeatedNgrams(text, n, logits.data(), vocab);
    std::vector<int> got;
    for (int v = 0; v < vocab; ++v)
      if (std::isinf(logits[v])) got.push_back(v);
    CHECK(got == Repeats(text, n));
    CHECK(blocked == static_cast<int>(got.size()));
  }
}

TEST_CASE("with n-gram blocking greedy and sampled text never repeats a run of n pieces", "[decode]") {
  // Logits that always prefer the same piece would write "7 7 7 ...": blocking must
  // move on, and no window of n pieces of what is written may occur twice.
  const int vocab = 8, n = 2;
  for (double t : {0.0, 1.0}) {
    Sampling s;
    s.temperature = t;
    s.no_repeat_ngram = n;
    Sampler sampler(s);
    std::vector<int> ids = {0};
    for (int step = 0; step < 12; ++step) {
      std::vector<float> logits = {0, 1, 2, 3, 4, 5, 6, 9};
      BlockRepeatedNgrams(ids, n, logits.data(), vocab);
      ids.push_back(sampler.Next(logits.data(), vocab));
    }
    std::set<std::pair<int, int>> seen;
    bool repeated = false;
    for (std::size_t i = 0; i + 1 < ids.size(); ++i) repeated |= !seen.insert({ids[i], ids[i + 1]}).second;
    CHECK_FALSE(repeated);
  }
}
