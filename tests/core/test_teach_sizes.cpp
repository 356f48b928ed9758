// Head count vs parameters, GQA facts and the KV cache, where Q/K/V come from, and
// the lesson's worked example checked against a hand calculation.
#include <catch2/catch.hpp>

#include <cmath>

#include "mha/cost.hpp"
#include "mha/flash.hpp"
#include "mha/mha.hpp"

namespace {

std::int64_t FlowParams(const std::vector<mha::FlowRow>& flow, const std::string& tensor) {
  std::int64_t n = 0;
  for (const auto& r : flow)
    if (r.tensor == tensor) n += r.param_count;
  return n;
}

}  // namespace

TEST_CASE("head count table: one row per divisor, same parameters for every num_heads, FLOPs barely move",
          "[teach][sizes]") {
  mha::Config cfg;  // d_model 512, 8 heads
  const int seq = 10;
  const auto rows = mha::HeadCountTable(cfg, seq, seq);
  std::vector<int> heads;
  for (const auto& r : rows) heads.push_back(r.num_heads);
  CHECK(heads == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256});
  const std::int64_t d = 512;
  std::int64_t min_flops = rows[0].flops, max_flops = rows[0].flops;
  for (const auto& r : rows) {
    INFO("num_heads " << r.num_heads);
    CHECK(r.head_dim * r.num_heads == 512);
    CHECK(r.current == (r.num_heads == 8));
    // W_Q, W_K, W_V, W_O are each (d_model, d_model) plus a bias, whatever num_heads is.
    CHECK(r.params == 4 * (d * d + d));
    CHECK(r.kv_cache_bytes == 2 * d * seq * 4);  // num_heads * head_dim = d_model
    CHECK_FALSE(r.has_gqa);
    // The same numbers as the shape-flow table of that configuration.
    mha::Config c = cfg;
    c.num_heads = r.num_heads;
    std::int64_t flops = 0;
    for (const auto& f : mha::ShapeFlow(c, seq, seq))
      if (f.id != mha::StepId::Input && f.id != mha::StepId::PreNorm && f.id != mha::StepId::Residual) flops += f.flops;
    CHECK(r.flops == flops);
    min_flops = std::min(min_flops, r.flops);
    max_flops = std::max(max_flops, r.flops);
  }
  // The lesson's point: splitting into heads redistributes the work, it hardly adds any.
  CHECK(double(max_flops) / double(min_flops) < 1.02);
  CHECK(max_flops > min_flops);  // per-head scaling and softmax do grow with num_heads
  // Odd d_model: only its divisors.
  mha::Config odd;
  odd.d_model = 12;
  odd.num_heads = 3;
  std::vector<int> h12;
  for (const auto& r : mha::HeadCountTable(odd, 4, 4)) h12.push_back(r.num_heads);
  CHECK(h12 == std::vector<int>{1, 2, 3, 4, 6, 12});
}

TEST_CASE("head count table with GQA: the rows it divides get the grouped variant and its savings", "[teach][sizes]") {
  mha::Config cfg;
  cfg.num_kv_heads = 2;
  const int seq = 7, seq_kv = 9;
  const auto rows = mha::HeadCountTable(cfg, seq, seq_kv);
  for (const auto& r : rows) {
    INFO("num_heads " << r.num_heads);
    const bool divides = r.num_heads >= 2 && r.num_heads % 2 == 0;
    CHECK(r.has_gqa == divides);
    if (!divides) continue;
    const std::int64_t d = 512, kvd = 2 * r.head_dim;
    CHECK(r.num_kv_heads == 2);
    CHECK(r.gqa_params == 2 * (d * d + d) + 2 * (d * kvd + kvd));
    CHECK(r.gqa_kv_cache_bytes == 2 * 2 * r.head_dim * seq_kv * 4);
    CHECK(r.kv_cache_bytes == 2 * r.num_heads * r.head_dim * seq_kv * 4);
    CHECK(r.gqa_flops <= r.flops);
    if (r.num_heads > 2) CHECK(r.gqa_params < r.params);
  }
  CHECK(mha::KvCacheBytes(8, 64, 10) == 40960);
}

TEST_CASE("GQA facts: which query heads share which K/V head, and what it saves", "[teach][sizes]") {
  mha::Config cfg;  // 512 / 8 heads, head_dim 64
  cfg.num_kv_heads = 2;
  const mha::GqaFacts f = mha::DescribeGqa(cfg, 10);
  CHECK(f.kind == "grouped-query");
  CHECK(f.group_size == 4);
  CHECK(f.kv_head_of == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  REQUIRE(f.query_heads_of.size() == 2);
  CHECK(f.query_heads_of[1] == std::vector<int>{4, 5, 6, 7});
  // W_K and W_V shrink from (512, 512) to (512, 128), their biases from 512 to 128.
  CHECK(f.kv_params == 2 * (512 * 128 + 128));
  CHECK(f.mha_kv_params == 2 * (512 * 512 + 512));
  CHECK(f.params_saved == f.mha_kv_params - f.kv_params);
  CHECK(f.kv_cache_bytes == 2 * 2 * 64 * 10 * 4);
  CHECK(f.mha_kv_cache_bytes == 2 * 8 * 64 * 10 * 4);
  CHECK(f.cache_bytes_saved == 3 * f.kv_cache_bytes);  // a quarter of the cache
  // The same numbers as the shape-flow table's K and V rows.
  const auto flow = mha::ShapeFlow(cfg, 10, 10);
  CHECK(f.kv_params == FlowParams(flow, "k") + FlowParams(flow, "v"));
  // The same sharing as the forward pass uses.
  std::string notice;
  const mha::Inputs in = mha::MakeInputs("the cat sat", "", cfg, &notice);
  const mha::Trace t = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
  for (int h = 0; h < cfg.num_heads; ++h) CHECK(f.kv_head_of[h] == t.KvHeadOf(h));

  cfg.num_kv_heads = 1;
  const mha::GqaFacts mqa = mha::DescribeGqa(cfg, 10);
  CHECK(mqa.kind == "multi-query");
  CHECK(mqa.query_heads_of[0].size() == 8);
  cfg.num_kv_heads = 0;
  const mha::GqaFacts mh = mha::DescribeGqa(cfg, 10);
  CHECK(mh.kind == "multi-head");
  CHECK(mh.params_saved == 0);
  CHECK(mh.cache_bytes_saved == 0);
  cfg.num_kv_heads = 3;
  CHECK_THROWS_AS(mha::DescribeGqa(cfg, 10), mha::Error);
}

TEST_CASE("attention sources: square self-attention, rectangular cross-attention", "[teach][sizes]") {
  mha::Config cfg;
  cfg.d_model = 16;
  cfg.num_heads = 2;
  std::string notice;
  const auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  const mha::Trace self = mha::Forward(cfg, w, mha::MakeInputs("고양이가 쥐를 잡았다", "", cfg, &notice));
  const mha::AttentionSources s = mha::DescribeSources(self);
  CHECK_FALSE(s.cross);
  CHECK(s.kind == "self-attention");
  CHECK(s.key_tokens == s.query_tokens);
  CHECK(s.query_tokens.size() == 3);
  CHECK_THAT(s.explanation, Catch::Contains("3 x 3"));
  const mha::Trace cross = mha::Forward(cfg, w, mha::MakeInputs("the cat", "고양이가 쥐를 잡았다 .", cfg, &notice));
  const mha::AttentionSources c = mha::DescribeSources(cross);
  CHECK(c.cross);
  CHECK(c.seq == 2);
  CHECK(c.seq_kv == 4);
  CHECK(c.key_tokens == std::vector<std::string>{"고양이가", "쥐를", "잡았다", "."});
  CHECK_THAT(c.kind, Catch::Contains("encoder-decoder"));
  CHECK_THAT(c.explanation, Catch::Contains("2 x 4"));
  CHECK(cross.AttnHead(0).rows() == 2);
  CHECK(cross.AttnHead(0).cols() == 4);
}

TEST_CASE("lesson example: X = [[1,2,3,4],[5,6,7,8],[9,10,11,12]], two heads on their own 2 dimensions",
          "[teach][lesson]") {
  const mha::LessonExample ex = mha::MakeLessonExample();
  CHECK(ex.in.tokens == std::vector<std::string>{"word1", "word2", "word3"});
  CHECK(ex.cfg.d_model == 4);
  CHECK(ex.cfg.num_heads == 2);
  CHECK(ex.cfg.head_dim() == 2);
  CHECK_FALSE(ex.title.empty());
  CHECK_FALSE(ex.description.empty());
  const mha::Trace t = mha::Forward(ex.cfg, std::make_shared<const mha::Weights>(ex.weights), ex.in);

  // By hand. W_Q = W_K = W_V = I: head 1 sees columns 1-2 of each word, head 2 columns 3-4.
  //   head 1: q = k = v = [1,2], [5,6], [9,10]
  //   head 2: q = k = v = [3,4], [7,8], [11,12]
  CHECK(t.q(0, 0) == 1);
  CHECK(t.q(0, 1) == 2);
  CHECK(t.k(2, 1) == 10);     // head 1, word3
  CHECK(t.v(3 + 0, 0) == 3);  // head 2, word1
  // Head 1, query word1: q.k = 1*1 + 2*2 = 5, 1*5 + 2*6 = 17, 1*9 + 2*10 = 29;
  // divided by sqrt(d_k) = sqrt(2): 3.5355, 12.0208, 20.5061.
  const double r2 = std::sqrt(2.0);
  CHECK(t.scores(0, 0) == Approx(5 / r2));
  CHECK(t.scores(0, 1) == Approx(17 / r2));
  CHECK(t.scores(0, 2) == Approx(29 / r2));
  // softmax: subtract the largest, 29/sqrt 2: exponents -24/sqrt 2 = -12 sqrt 2 and
  // -12/sqrt 2 = -6 sqrt 2, so the weights are (e^-16.97, e^-8.49, 1) / sum.
  const double a = std::exp(-12 * r2), b = std::exp(-6 * r2), s = a + b + 1;
  CHECK(t.attn(0, 0) == Approx(a / s).epsilon(1e-5));
  CHECK(t.attn(0, 1) == Approx(b / s).epsilon(1e-5));
  CHECK(t.attn(0, 2) == Approx(1 / s).epsilon(1e-6));
  CHECK(t.attn(0, 2) > 0.9997);  // even scaled, these big inputs make the softmax pick one word
  // context = sum of weight x v: (a [1,2] + b [5,6] + [9,10]) / s = [8.99917, 9.99917].
  const double c0 = (a * 1 + b * 5 + 9) / s, c1 = (a * 2 + b * 6 + 10) / s;
  CHECK(t.context(0, 0) == Approx(c0).epsilon(1e-6));
  CHECK(t.context(0, 1) == Approx(c1).epsilon(1e-6));
  // Head 2, query word1: q.k = 3*3 + 4*4 = 25, 3*7 + 4*8 = 53, 3*11 + 4*12 = 81;
  // exponents -(81-25)/sqrt 2 = -28 sqrt 2 and -(81-53)/sqrt 2 = -14 sqrt 2.
  CHECK(t.scores(3, 0) == Approx(25 / r2));
  CHECK(t.scores(3, 2) == Approx(81 / r2));
  const double a2 = std::exp(-28 * r2), b2 = std::exp(-14 * r2), s2 = a2 + b2 + 1;
  const double d0 = (a2 * 3 + b2 * 7 + 11) / s2, d1 = (a2 * 4 + b2 * 8 + 12) / s2;
  // concat puts head 1 then head 2 side by side; W_O = I, b_O = 0, so attn_out = concat.
  CHECK(t.concat(0, 0) == Approx(c0).epsilon(1e-6));
  CHECK(t.concat(0, 1) == Approx(c1).epsilon(1e-6));
  CHECK(t.concat(0, 2) == Approx(d0).epsilon(1e-6));
  CHECK(t.concat(0, 3) == Approx(d1).epsilon(1e-6));
  CHECK(t.attn_out == t.concat);
  // No LayerNorm: out = x + attn_out.
  CHECK(t.out(0, 0) == Approx(1 + c0).epsilon(1e-6));

  // The step-by-step view of the same query shows the same hand numbers.
  const mha::QueryExplanation e = mha::ExplainQuery(t, 0, 0);
  CHECK(e.keys[0].dot == 5);
  CHECK(e.keys[1].dot == 17);
  CHECK(e.keys[2].dot == 29);
  CHECK(e.divisor == Approx(r2));
  CHECK(e.context[0] == Approx(c0).epsilon(1e-6));
  CHECK(e.keys[2].token == "word3");
}

TEST_CASE("tensor inspector: find a tensor by its flow row, slice one head of it", "[teach][sizes]") {
  mha::Config cfg;
  cfg.d_model = 12;
  cfg.num_heads = 3;
  cfg.num_kv_heads = 1;
  std::string notice;
  const mha::Trace t = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)),
                                    mha::MakeInputs("the cat sat on the mat", "", cfg, &notice));
  const auto tensors = mha::Tensors(t);
  // Every step of the shape flow names a tensor the inspector can show, with that shape;
  // the Q/K/V projection rows show q, k, v with the heads side by side (before the split).
  int merged = 0;
  for (const auto& row : t.flow) {
    const mha::TensorView* v = mha::FindTensor(tensors, row.tensor);
    INFO(row.step);
    REQUIRE(v != nullptr);
    if (v->shape == row.shape) continue;
    const mha::Mat m = mha::MergeHeads(*v);
    CHECK(row.shape == std::vector<std::int64_t>{1, m.rows(), m.cols()});
    ++merged;
  }
  CHECK(merged == 3);
  // Merged, they are the projections x W + b themselves.
  const mha::Weights& w = *t.weights;
  mha::Mat Q = t.in.x * w.W_q, K = t.in.x * w.W_k;
  Q.rowwise() += w.b_q;
  K.rowwise() += w.b_k;
  CHECK(mha::MergeHeads(*mha::FindTensor(tensors, "q")).isApprox(Q, 1e-6f));
  CHECK(mha::MergeHeads(*mha::FindTensor(tensors, "k")).isApprox(K, 1e-6f));
  CHECK(mha::FindTensor(tensors, "nope") == nullptr);
  const mha::TensorView q2 = mha::HeadSlice(*mha::FindTensor(tensors, "q"), 2);
  CHECK(q2.name == "q[head 2]");
  CHECK(q2.shape == std::vector<std::int64_t>{6, 4});
  CHECK(Eigen::Map<const mha::Mat>(q2.data, 6, 4) == t.q.middleRows(2 * 6, 6));
  const mha::TensorView a1 = mha::HeadSlice(*mha::FindTensor(tensors, "attn"), 1);
  CHECK(Eigen::Map<const mha::Mat>(a1.data, 6, 6) == t.AttnHead(1));
  // k has one head under MQA.
  CHECK_THROWS_WITH(mha::HeadSlice(*mha::FindTensor(tensors, "k"), 1), Catch::Contains("0 to 0"));
  CHECK_THROWS_WITH(mha::HeadSlice(*mha::FindTensor(tensors, "W_q"), 0), Catch::Contains("no head axis"));
}

TEST_CASE("memory against n: the n x n weights, the activations, the parameters, and where n^2 takes over",
          "[teach][sizes][cost]") {
  mha::Config cfg;
  cfg.d_model = 64;
  cfg.num_heads = 4;
  cfg.norm = mha::Norm::Post;
  const std::int64_t d = 64, h = 4;
  // By hand: scores and weights 2 h n^2; Q, K, V, the context, W_O's output and the
  // residual 6 n d; W_Q, W_K, W_V, W_O with biases and LayerNorm's gamma and beta.
  auto weights = [&](std::int64_t n) { return 2 * h * n * n * 4; };
  auto activations = [&](std::int64_t n) { return 6 * n * d * 4; };
  const std::int64_t parameters = (4 * (d * d + d) + 2 * d) * 4;
  for (int n : {1, 10, 100, 1000}) {
    const mha::ByteGroups b = mha::GroupBytes(mha::ShapeFlow(cfg, n, n));
    CHECK(b.weights == weights(n));
    CHECK(b.weights == static_cast<std::int64_t>(mha::StandardAttentionBytes(cfg, n, n)));
    CHECK(b.activations == activations(n));
    CHECK(b.parameters == parameters);
  }
  int first = 1;
  while (weights(first) < activations(first) + parameters) ++first;
  CHECK(mha::WeightsOvertakeTheRestAt(cfg) == first);
  // More heads: more n x n maps, so n^2 takes over sooner.
  cfg.num_heads = 16;
  CHECK(mha::WeightsOvertakeTheRestAt(cfg) < first);
}
