// Head count vs parameters and FLOPs, grouped-query attention and the KV cache,
// where Q/K/V come from, the lesson's worked example and the positional-heads example.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "mha/embed.hpp"
#include "mha/teach.hpp"

namespace mha {
namespace {

bool IsAttentionRow(const FlowRow& r) {
  // By .npz key, the stable name of each step's result.
  static const std::set<std::string> kKeys = {"q", "k", "v", "scores", "attn", "context", "concat", "attn_out"};
  return kKeys.count(r.tensor) > 0;
}

}  // namespace

std::int64_t KvCacheBytes(int num_kv_heads, int head_dim, int seq_kv) {
  return std::int64_t(2) * num_kv_heads * head_dim * seq_kv * std::int64_t(sizeof(float));
}

std::int64_t AttentionParams(const std::vector<FlowRow>& flow) {
  std::int64_t n = 0;
  for (const auto& r : flow)
    if (IsAttentionRow(r)) n += r.param_count;
  return n;
}

std::int64_t AttentionFlops(const std::vector<FlowRow>& flow) {
  std::int64_t n = 0;
  for (const auto& r : flow)
    if (IsAttentionRow(r)) n += r.flops;
  return n;
}

std::vector<HeadCountRow> HeadCountTable(const Config& cfg, int seq, int seq_kv) {
  std::vector<HeadCountRow> rows;
  if (cfg.d_model <= 0) return rows;
  const int G = cfg.num_heads > 0 ? cfg.kv_heads() : 0;
  const bool uses_gqa = G > 0 && G < cfg.num_heads;
  for (int H : ValidHeadCounts(cfg.d_model)) {
    HeadCountRow r;
    r.num_heads = H;
    r.head_dim = cfg.d_model / H;
    r.current = H == cfg.num_heads;
    Config c = cfg;
    c.num_heads = H;
    c.num_kv_heads = 0;
    const auto flow = ShapeFlow(c, seq, seq_kv);
    r.params = AttentionParams(flow);
    r.flops = AttentionFlops(flow);
    r.kv_cache_bytes = KvCacheBytes(H, r.head_dim, seq_kv);
    if (uses_gqa && G <= H && H % G == 0) {
      c.num_kv_heads = G;
      const auto gflow = ShapeFlow(c, seq, seq_kv);
      r.has_gqa = true;
      r.num_kv_heads = G;
      r.gqa_params = AttentionParams(gflow);
      r.gqa_flops = AttentionFlops(gflow);
      r.gqa_kv_cache_bytes = KvCacheBytes(G, r.head_dim, seq_kv);
    }
    rows.push_back(r);
  }
  return rows;
}

GqaFacts DescribeGqa(const Config& cfg, int seq_kv) {
  GqaFacts f;
  f.num_heads = cfg.num_heads;
  f.num_kv_heads = cfg.kv_heads();
  if (f.num_heads <= 0 || f.num_kv_heads <= 0 || f.num_heads % f.num_kv_heads != 0)
    throw Error("num_heads = " + std::to_string(cfg.num_heads) + " is not divisible by num_kv_heads = " +
                std::to_string(f.num_kv_heads) + ": each K/V head must serve a whole number of query heads.");
  f.group_size = f.num_heads / f.num_kv_heads;
  f.head_dim = cfg.head_dim();
  f.kind = f.num_kv_heads == f.num_heads ? "multi-head" : f.num_kv_heads == 1 ? "multi-query" : "grouped-query";
  f.query_heads_of.assign(f.num_kv_heads, {});
  for (int h = 0; h < f.num_heads; ++h) {
    const int g = h / f.group_size;  // the same rule as Trace::KvHeadOf
    f.kv_head_of.push_back(g);
    f.query_heads_of[g].push_back(h);
  }
  const std::int64_t d = cfg.d_model, kvd = std::int64_t(f.num_kv_heads) * f.head_dim,
                     full = std::int64_t(f.num_heads) * f.head_dim;
  f.kv_params = 2 * (d * kvd + kvd);
  f.mha_kv_params = 2 * (d * full + full);
  f.kv_cache_bytes = KvCacheBytes(f.num_kv_heads, f.head_dim, seq_kv);
  f.mha_kv_cache_bytes = KvCacheBytes(f.num_heads, f.head_dim, seq_kv);
  f.params_saved = f.mha_kv_params - f.kv_params;
  f.cache_bytes_saved = f.mha_kv_cache_bytes - f.kv_cache_bytes;
  return f;
}

AttentionSources DescribeSources(const Trace& t) {
  AttentionSources s;
  s.cross = t.in.cross();
  s.seq = t.seq;
  s.seq_kv = t.seq_kv;
  s.query_tokens = t.in.tokens;
  s.key_tokens = s.cross ? t.in.memory_tokens : t.in.tokens;
  const std::string n = std::to_string(t.seq), m = std::to_string(t.seq_kv);
  if (s.cross) {
    s.kind = "cross-attention (encoder-decoder)";
    s.explanation =
        "Queries come from the sentence (Q = x W_Q); keys and values come from the memory sentence "
        "(K = m W_K, V = m W_V), as when a decoder reads the encoder's output. Each map is " +
        n + " x " + m + ": one row per query token, one column per memory token.";
  } else {
    s.kind = "self-attention";
    s.explanation =
        "Q, K and V all come from the same sentence x (Q = x W_Q, K = x W_K, V = x W_V), so every "
        "token looks at every token of its own sentence and each map is square, " +
        n + " x " + n + ".";
  }
  return s;
}

const TensorView* FindTensor(const std::vector<TensorView>& tensors, const std::string& name) {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

TensorView HeadSlice(const TensorView& t, int head) {
  if (t.shape.size() != 4 || t.shape[0] != 1)
    throw Error("Tensor " + t.name + " has shape " + ShapeString(t.shape) +
                ", which has no head axis: only (1, heads, rows, cols) tensors split into heads.");
  if (head < 0 || head >= t.shape[1])
    throw Error("Tensor " + t.name + " has " + std::to_string(t.shape[1]) + " heads, numbered 0 to " +
                std::to_string(t.shape[1] - 1) + "; there is no head " + std::to_string(head) + ".");
  const std::int64_t rows = t.shape[2], cols = t.shape[3];
  return {t.name + "[head " + std::to_string(head) + "]", {rows, cols}, t.data + head * rows * cols};
}

Mat MergeHeads(const TensorView& t) {
  const TensorView h0 = HeadSlice(t, 0);  // checks the shape
  const std::int64_t heads = t.shape[1], rows = t.shape[2], cols = t.shape[3];
  Mat m(rows, heads * cols);
  for (std::int64_t h = 0; h < heads; ++h)
    m.middleCols(h * cols, cols) = Eigen::Map<const Mat>(h0.data + h * rows * cols, rows, cols);
  return m;
}

LessonExample MakeLessonExample() {
  LessonExample ex;
  Config& c = ex.cfg;
  c.d_model = 4;
  c.num_heads = 2;
  c.num_kv_heads = 0;
  c.mask = Mask::None;
  c.norm = Norm::None;
  c.scale = true;
  c.temperature = 1.0f;
  c.positional_encoding = false;
  c.block = Block::Attention;
  ex.in.tokens = {"word1", "word2", "word3"};
  ex.in.x.resize(3, 4);
  ex.in.x << 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12;
  Weights& w = ex.weights;
  w.W_q = w.W_k = w.W_v = w.W_o = Mat::Identity(4, 4);
  w.b_q = w.b_k = w.b_v = w.b_o = RowVec::Zero(4);
  w.ln_gamma = RowVec::Ones(4);
  w.ln_beta = RowVec::Zero(4);
  ex.title = "Lesson example: three words, two heads";
  ex.description =
      "X = [[1,2,3,4],[5,6,7,8],[9,10,11,12]]: three words, d_model = 4, two heads with head_dim = 2. "
      "W_Q = W_K = W_V = I, so head 1 works on the first two numbers of each word and head 2 on the last "
      "two; W_O = I and all biases are 0, so attn_out is just the two heads side by side. No positional "
      "encoding, no mask, no LayerNorm: every number can be checked by hand.";
  // Section 4 of the lesson gives the shapes of each step (one head: (3, 2); the
  // concat and the final output: (3, 4)).
  ex.expected = {{"Q_1 = X @ W^Q_1 \u2192 (3, 2)", "q", 0, 0, {}, {3, 2}},
                 {"K_1 = X @ W^K_1 \u2192 (3, 2)", "k", 0, 0, {}, {3, 2}},
                 {"V_1 = X @ W^V_1 \u2192 (3, 2)", "v", 0, 0, {}, {3, 2}},
                 {"output_1 = Attention(Q_1, K_1, V_1) \u2192 (3, 2)", "context", 0, 0, {}, {3, 2}},
                 {"output_2 \u2192 (3, 2)", "context", 1, 0, {}, {3, 2}},
                 {"output = [output_1 | output_2] \u2192 (3, 4)", "concat", -1, 0, {}, {3, 4}},
                 {"final_output = output @ W^O \u2192 (3, 4)", "attn_out", -1, 0, {}, {3, 4}}};
  return ex;
}

LessonExample MakeHandCalculationExample() {
  LessonExample ex;
  Config& c = ex.cfg;
  c.d_model = 2;
  c.num_heads = 2;
  c.num_kv_heads = 0;
  c.mask = Mask::None;
  c.norm = Norm::None;
  c.scale = true;  // sqrt(d_k) = 1: the lesson's numbers either way
  c.temperature = 1.0f;
  c.positional_encoding = false;
  c.block = Block::Attention;
  ex.in.tokens = {"x"};  // the lesson's one input row, X = [1, 2]: the same in Korean and English
  ex.in.x.resize(1, 2);
  ex.in.x << 1, 2;
  Weights& w = ex.weights;
  // Column h is head h's projection (d_k = 1): both rows 0.5 for head 1, 0.3 for head 2,
  // so [1, 2] @ [0.5, 0.5]^T = 1.5 and [1, 2] @ [0.3, 0.3]^T = 0.9.
  w.W_q.resize(2, 2);
  w.W_q << 0.5f, 0.3f, 0.5f, 0.3f;
  w.W_k = w.W_v = w.W_q;
  w.W_o = Mat::Identity(2, 2);  // the lesson leaves W^O open: I shows the concat itself
  w.b_q = w.b_k = w.b_v = w.b_o = RowVec::Zero(2);
  w.ln_gamma = RowVec::Ones(2);
  w.ln_beta = RowVec::Zero(2);
  ex.title = "Lesson hand calculation: one word, two heads";
  ex.description =
      "X = [1, 2]: one word, d_model = 2, two heads with d_k = 1. Head 1's W^Q = W^K = W^V = [0.5, 0.5]^T, head 2's "
      "[0.3, 0.3]^T; W^O = I (the lesson leaves it open), biases 0, no positional encoding, mask or LayerNorm. "
      "With one key each head's weight is 1, so its output is its V.";
  ex.expected = {{"Q_1 = [1,2] @ [0.5] = 1.5", "q", 0, 0, {1.5}, {}},
                 {"K_1 = 1.5", "k", 0, 0, {1.5}, {}},
                 {"V_1 = 1.5", "v", 0, 0, {1.5}, {}},
                 {"output_1 = Attention(1.5, 1.5, 1.5) = 1.5", "context", 0, 0, {1.5}, {}},
                 {"Q_2 = [1,2] @ [0.3] = 0.9", "q", 1, 0, {0.9}, {}},
                 {"K_2 = 0.9", "k", 1, 0, {0.9}, {}},
                 {"V_2 = 0.9", "v", 1, 0, {0.9}, {}},
                 {"output_2 = 0.9", "context", 1, 0, {0.9}, {}},
                 {"Concat: [1.5, 0.9]", "concat", -1, 0, {1.5, 0.9}, {}},
                 {"final: [1.5, 0.9] @ W^O (W^O = I)", "attn_out", -1, 0, {1.5, 0.9}, {}}};
  return ex;
}

std::vector<LessonExample> LessonPresets() { return {MakeLessonExample(), MakeHandCalculationExample()}; }

LessonCheck CheckLesson(const Trace& t, const LessonExpectation& e) {
  const std::vector<TensorView> tensors = Tensors(t);
  const TensorView* whole = FindTensor(tensors, e.tensor);
  if (!whole) throw Error("The trace has no tensor named " + e.tensor + ".");
  TensorView v = *whole;
  if (e.head >= 0) {
    v = HeadSlice(v, e.head);
  } else if (!v.shape.empty() && v.shape.front() == 1) {  // the batch axis
    v.shape.erase(v.shape.begin());
  }
  LessonCheck c;
  c.shape = v.shape;
  if (v.shape.size() != 2)
    throw Error("Tensor " + e.tensor + " is not a matrix once its batch and head axes are taken.");
  if (e.row < 0 || e.row >= v.shape[0])
    throw Error("Tensor " + e.tensor + " has " + std::to_string(v.shape[0]) + " rows; there is no row " +
                std::to_string(e.row) + ".");
  const std::int64_t cols = v.shape[1];
  for (std::int64_t j = 0; j < cols; ++j) c.values.push_back(v.data[e.row * cols + j]);
  if (!e.shape.empty()) {
    c.ok = c.shape == e.shape;
    return c;
  }
  c.ok = c.values.size() == e.values.size();
  for (std::size_t j = 0; c.ok && j < c.values.size(); ++j) {
    c.max_abs_diff = std::max(c.max_abs_diff, std::abs(c.values[j] - e.values[j]));
    c.ok = std::abs(c.values[j] - e.values[j]) <= 1e-5 + 1e-6 * std::abs(e.values[j]);
  }
  return c;
}

LessonExample MakePositionalHeadsExample(const std::vector<std::string>& tokens) {
  if (tokens.empty()) throw Error("The positional-heads example needs at least one token: type a sentence first.");
  constexpr int kD = 64, kHeads = 4, kHd = kD / kHeads, kPairs = kHd / 2;
  // Score gap between the best key and the next: a^2 / sqrt(16) * sum(1 - cos w_f) over
  // the 8 pairs, about 0.27 a^2; a = 5 makes it ~6.7, so the best key takes ~99%.
  constexpr double kA = 5.0;
  LessonExample ex;
  Config& c = ex.cfg;
  c.d_model = kD;
  c.num_heads = kHeads;
  c.num_kv_heads = 0;
  c.mask = Mask::None;
  c.norm = Norm::Post;
  c.scale = true;
  c.temperature = 1.0f;
  c.positional_encoding = false;  // x below already is the encoding
  c.block = Block::Attention;
  const int seq = static_cast<int>(std::min<std::size_t>(tokens.size(), Limits::kMaxTokens));
  ex.in.tokens.assign(tokens.begin(), tokens.begin() + seq);
  ex.in.x = PositionalEncoding(seq, kD);
  Weights& w = ex.weights;
  w.W_q = Mat::Zero(kD, kD);
  w.W_k = Mat::Zero(kD, kD);
  w.W_v = w.W_o = Mat::Identity(kD, kD);
  w.b_q = w.b_k = w.b_v = w.b_o = RowVec::Zero(kD);
  w.ln_gamma = RowVec::Ones(kD);
  w.ln_beta = RowVec::Zero(kD);
  // The pair of dims (2f, 2f+1) holds (sin w_f pos, cos w_f pos), w_f = 10000^(-2f/d).
  // As a row vector times [[cos t, sin t], [-sin t, cos t]] it becomes the pair at
  // angle w_f pos - t: with t = w_f that is position pos - 1.
  const double shift[kHeads] = {1.0, 0.0, 0.0, -1.0};  // previous, self, (first), next
  for (int h = 0; h < kHeads; ++h) {
    for (int f = 0; f < kPairs; ++f) {
      const double wf = std::pow(10000.0, -2.0 * f / kD);
      const int in = 2 * f, out = h * kHd + 2 * f;
      w.W_k(in, out) = w.W_k(in + 1, out + 1) = static_cast<float>(kA);
      if (h == 2) {  // first token: q is the encoding of position 0, for every query
        w.b_q[out] = 0.0f;
        w.b_q[out + 1] = static_cast<float>(kA);
        continue;
      }
      const double t = shift[h] * wf;
      w.W_q(in, out) = static_cast<float>(kA * std::cos(t));
      w.W_q(in, out + 1) = static_cast<float>(kA * std::sin(t));
      w.W_q(in + 1, out) = static_cast<float>(-kA * std::sin(t));
      w.W_q(in + 1, out + 1) = static_cast<float>(kA * std::cos(t));
    }
  }
  ex.title = "Four positional heads: previous, self, first, next";
  ex.description =
      "x is only each word's position (its sinusoidal encoding, no word embedding), so position is all a head can "
      "use. d_model = 64, four heads of head_dim 16, built by hand: W_Q and W_K compare the encoding's 8 fastest "
      "sine/cosine pairs. Head 0's W_Q turns each pair back by one position, so each word attends to the previous "
      "one; head 1 does not turn it (each word attends to itself); head 2's query is a constant b_Q equal to the "
      "encoding of position 0 (every word attends to the first); head 3 turns it forward (the next word). "
      "W_V = W_O = I.";
  return ex;
}

}  // namespace mha
