// What the teaching views show, computed from a Trace: one query step by step, the
// effect of the sqrt(d_k) scaling, per-head metrics, head count vs parameters,
// grouped-query and cross-attention facts, and the lesson's worked example.
//
// Every function here is pure (a Trace or Config in, values out) so that each number
// a view shows is a number the core computed and the tests checked. Entropies and
// divergences are in nats (natural log).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha {

// ---------------------------------------------------------------------------------
// 1. One query, step by step: the hand calculation, done by the app.
// ---------------------------------------------------------------------------------

struct KeyStep {
  int index = 0;          // j: position of this key in the key sequence
  std::string token;      // its label (a memory token in cross-attention)
  RowVec k, v;            // k_j, v_j of the K/V head this query head reads (head_dim)
  float dot = 0;          // q . k_j
  float scaled = 0;       // the trace's score: dot / sqrt(d_k) / T (dot / T with scaling off); -inf if masked
  bool masked = false;    // hidden by the causal mask (j > query)
  float exp_shifted = 0;  // exp(scaled - max_scaled); 0 if masked
  float weight = 0;       // the trace's softmax weight, = exp_shifted / exp_sum up to rounding
  RowVec weighted_v;      // weight * v_j (head_dim)
};

struct QueryExplanation {
  int head = 0, query = 0, kv_head = 0, head_dim = 0;
  std::string query_token;
  bool cross = false;
  RowVec q;            // the query vector q_i of this head (head_dim)
  bool scaled = true;  // cfg.scale
  float sqrt_dk = 1;   // sqrt(head_dim)
  float temperature = 1;
  float divisor = 1;  // what each dot product is divided by: sqrt_dk * T, or T
  std::vector<KeyStep> keys;
  float max_scaled = 0;    // the max subtracted before exp (numerical stability)
  float exp_sum = 0;       // sum of exp_shifted
  RowVec context;          // sum_j weight_j v_j, added up here
  RowVec trace_context;    // the trace's context row for (head, query), for comparison
  float max_abs_diff = 0;  // max |context - trace_context|: rounding only (float vs double)
};

// Head `head`'s output for query token `query`, step by step. The scores and weights
// are the trace's own (exactly what the export holds); the steps the trace does not
// store (q.k before scaling, exp, weight x v_j and their sum, in key order) are computed
// here in double from the trace's q, k, v. The sum equals trace.context up to the
// trace's float rounding (~1e-7 relative). Throws mha::Error for a head or query out
// of range. Holds 3 * seq_kv * head_dim floats: compute it when the trace or the
// selection changes, not every frame.
QueryExplanation ExplainQuery(const Trace& t, int head, int query);

// Which of n entries a view with room for `max_shown` (>= 3) shows: all of them if
// they fit, else the first and last few with -1 where an ellipsis goes, e.g.
// n = 64, max_shown = 7 -> 0 1 2 -1 61 62 63.
std::vector<int> ElidedIndices(int n, int max_shown);

// ---------------------------------------------------------------------------------
// 2. Scores, masked scores and softmax weights: why divide by sqrt(d_k).
// ---------------------------------------------------------------------------------

struct RowStats {
  std::vector<double> entropy;      // per query row: -sum p ln p (nats)
  std::vector<double> max_entropy;  // ln(number of unmasked keys): a uniform row's entropy
  std::vector<double> max_weight;   // largest weight of the row
  double mean_entropy = 0, mean_max_weight = 0;
};
// Row statistics of a (seq, seq_kv) attention map under `mask` (which sets how many
// keys each row can see, for max_entropy). Rows that are all zero (every key masked)
// have entropy 0, max_entropy 0 and max_weight 0.
RowStats AttentionRowStats(const Eigen::Ref<const Mat>& weights, Mask mask);

struct HeadAttention {
  int head = 0;
  bool scaled = true;
  float temperature = 1;
  float multiplier = 1;  // each q.k is multiplied by this: 1/(sqrt(d_k) T) or 1/T
  Mat scores;            // (seq, seq_kv) q k^T * multiplier, before the mask
  Mat masked_scores;     // the same with -inf where the causal mask hides a key
  Mat weights;           // softmax of each row of masked_scores
  RowStats stats;
  double score_std = 0;  // mean over rows of the std of the unmasked scores
};
// Head `head`'s attention recomputed from the trace's q and k with scaling on or off
// and a temperature, with the trace's mask. With scale == cfg.scale and
// temperature == cfg.temperature it reproduces trace.scores / trace.attn.
HeadAttention ComputeHeadAttention(const Trace& t, int head, bool scale, float temperature);

// The same head with and without the sqrt(d_k) scaling at one temperature: without
// it the scores spread sqrt(d_k) times wider and the softmax saturates (lower
// entropy, max weight near 1).
struct ScalingComparison {
  HeadAttention with_scaling, without_scaling;
};
ScalingComparison CompareScaling(const Trace& t, int head, float temperature);

// ---------------------------------------------------------------------------------
// 3. Head metrics: what each head mostly attends to, and how alike heads are.
// ---------------------------------------------------------------------------------

enum class HeadPattern { Self, Previous, Next, First, Spread };
// "self", "previous", "next", "first token", "no clear pattern"
const char* ToString(HeadPattern p);

// A head "mostly attends to" a relation only where that beats chance on this sentence:
//  1. its mean weight there is at least kMinLift of the way from an even spread over
//     the keys a row sees (1/n: what a head that prefers nothing gives) to all of it
//     (1): with 3 keys at least 0.67, with 10 keys 0.55, never less than 0.5;
//  2. a head that put each row on one key picked at random would reach that mean on
//     these rows with probability below kMaxChanceP. With 3 tokens the previous,
//     next and first token are named by 2 rows each, which a random pick hits with
//     probability 1/9: no label on so few rows, however sharp.
// Else the head shows no clear pattern.
inline constexpr double kMinLift = 0.5;
inline constexpr double kMaxChanceP = 0.05;
// (the least mean weight any label takes: kMinLift of the way from 0 to 1)
inline constexpr double kMostlyThreshold = kMinLift;

struct HeadSummary {
  int head = 0;
  double mean_entropy = 0, mean_max_weight = 0;
  // Mean weight on each relation, averaged over the rows where it exists:
  double self = 0;      // key j = i, all rows
  double previous = 0;  // j = i - 1, rows i >= 1
  double next = 0;      // j = i + 1, rows i + 1 < seq_kv
  double first = 0;     // j = 0, rows i >= 1 (for row 0 the first token is itself)
  HeadPattern pattern = HeadPattern::Spread;
  // The relation with the largest mean weight (the label's, when there is one) against
  // chance on these rows: its mean weight, the mean of 1/n over its rows (n: the keys
  // a row sees), the lift (weight - chance) / (1 - chance), its rows, and the
  // probability that a head picking one key per row at random does as well.
  HeadPattern strongest = HeadPattern::Spread;
  double score = 0, chance = 0, lift = 0, chance_p = 1;
  int rows = 0;
};
// Labels an attention map: the relation with the largest mean weight, if it beats
// chance as kMinLift and kMaxChanceP say, else Spread; ties go in the order self,
// previous, next, first. `positional` is false for cross-attention, where key j is
// another sentence's token and self/previous/next mean nothing: only First or Spread.
// `mask` Causal: row i sees keys 0..i only (chance is 1/(i + 1) there).
HeadSummary SummarizeAttention(const Eigen::Ref<const Mat>& attn, bool positional, Mask mask = Mask::None);
// P(at least k hits) when row r is hit with probability p[r], independently (the
// Poisson binomial tail): how likely a head picking one key per row at random hits the
// named key on k of these rows.
double TailAtLeast(const std::vector<double>& p, int k);
std::vector<HeadSummary> SummarizeHeads(const Trace& t);

// Jensen-Shannon divergence of two distributions over n keys, in nats:
// JS(p, q) = KL(p || m) / 2 + KL(q || m) / 2 with m = (p + q) / 2. Symmetric,
// 0 for identical rows, at most ln 2 (rows with no key in common).
double JensenShannon(const float* p, const float* q, int n);
// The mean JS divergence between corresponding rows of two (seq, seq_kv) maps.
double MeanJensenShannon(const Eigen::Ref<const Mat>& a, const Eigen::Ref<const Mat>& b);
// (num_heads, num_heads) mean JS divergence between every pair of heads' maps:
// 0 = the same pattern, ln 2 ~ 0.693 = nothing in common. Costs about
// num_heads^2 / 2 * seq * seq_kv logarithms: compute it when the trace changes, not
// every frame.
Eigen::MatrixXd HeadDivergence(const Trace& t);

// ---------------------------------------------------------------------------------
// 4 and 7. Head count vs parameters, grouped-query attention, the KV cache.
// ---------------------------------------------------------------------------------

// Bytes one layer's KV cache holds for seq_kv tokens: K and V, float32:
// 2 * num_kv_heads * head_dim * seq_kv * 4.
std::int64_t KvCacheBytes(int num_kv_heads, int head_dim, int seq_kv);

// Sums over the attention rows of a shape-flow table (tensors q, k, v, scores, attn,
// context, concat, attn_out: the projections and the attention itself, not the
// norms or the FFN), so the numbers agree with the table the app shows.
std::int64_t AttentionParams(const std::vector<FlowRow>& flow);  // W_Q, W_K, W_V, W_O + biases
std::int64_t AttentionFlops(const std::vector<FlowRow>& flow);

struct HeadCountRow {
  int num_heads = 0, head_dim = 0;
  bool current = false;  // the configuration's own num_heads
  // Plain multi-head attention (num_kv_heads = num_heads):
  std::int64_t params = 0;  // W_Q, W_K, W_V, W_O with biases
  std::int64_t flops = 0;   // the attention sublayer
  std::int64_t kv_cache_bytes = 0;
  // Grouped-query variant with the configuration's num_kv_heads, when that
  // configuration uses GQA/MQA and its num_kv_heads divides this num_heads:
  bool has_gqa = false;
  int num_kv_heads = 0;
  std::int64_t gqa_params = 0, gqa_flops = 0, gqa_kv_cache_bytes = 0;
};
// One row per valid num_heads (the divisors of cfg.d_model, up to Limits::kMaxHeads),
// ascending, for seq query and seq_kv key tokens.
std::vector<HeadCountRow> HeadCountTable(const Config& cfg, int seq, int seq_kv);

struct GqaFacts {
  int num_heads = 0, num_kv_heads = 0, group_size = 0, head_dim = 0;
  std::string kind;                                         // "multi-head", "grouped-query", "multi-query"
  std::vector<int> kv_head_of;                              // query head h -> the K/V head it reads
  std::vector<std::vector<int>> query_heads_of;             // K/V head g -> the query heads sharing it
  std::int64_t kv_params = 0, mha_kv_params = 0;            // W_K, W_V with biases; and with num_heads K/V heads
  std::int64_t kv_cache_bytes = 0, mha_kv_cache_bytes = 0;  // for seq_kv tokens, one layer
  std::int64_t params_saved = 0, cache_bytes_saved = 0;
};
GqaFacts DescribeGqa(const Config& cfg, int seq_kv);

// Where Q, K and V come from, for labelling heatmaps.
struct AttentionSources {
  bool cross = false;
  int seq = 0, seq_kv = 0;
  std::vector<std::string> query_tokens;  // heatmap rows
  std::vector<std::string> key_tokens;    // heatmap columns
  std::string kind;                       // "self-attention" / "cross-attention (encoder-decoder)"
  std::string explanation;                // one line in the lesson's words
};
AttentionSources DescribeSources(const Trace& t);

// ---------------------------------------------------------------------------------
// Tensor inspector: any tensor of the trace by name, one head of a per-head tensor.
// ---------------------------------------------------------------------------------

// The tensor named `name` (an .npz key, e.g. a FlowRow's `tensor`), or nullptr.
const TensorView* FindTensor(const std::vector<TensorView>& tensors, const std::string& name);
// Head `head` of a (1, heads, rows, cols) tensor (q, k, v, scores, attn, context) as a
// (rows, cols) view of the same memory, named e.g. "q[head 2]". Throws mha::Error if
// the tensor has no head axis or the head is out of range.
TensorView HeadSlice(const TensorView& t, int head);
// A (1, heads, rows, cols) tensor with its heads side by side again: (rows, heads * cols).
// The shape-flow rows "Q/K/V projection" name q, k, v but show the projection before
// the split, (1, seq, heads * head_dim): this gives those values in that shape.
Mat MergeHeads(const TensorView& t);

// ---------------------------------------------------------------------------------
// 5. The lesson's tiny worked example.
// ---------------------------------------------------------------------------------

// Three "words" X = [[1,2,3,4],[5,6,7,8],[9,10,11,12]], d_model = 4, two heads of
// head_dim 2. W_Q = W_K = W_V = W_O = I and all biases 0, so head 1 sees dimensions
// 0-1 of each word and head 2 dimensions 2-3, and every number can be checked by
// hand. No positional encoding, no mask, no LayerNorm, attention only.
// What a lesson states about one tensor of its example, to set beside what the forward
// pass computes: tensor `tensor` (an .npz key: q, k, v, scores, attn, context, concat,
// attn_out), head `head` of it (-1: a tensor without a head axis), and either the
// numbers of query row `row` (`values`) or only the (rows, cols) shape of that head
// (`shape`, where the lesson gives no numbers).
struct LessonExpectation {
  std::string what;  // as the lesson writes it: "Q_1 = [1,2] @ [0.5]"
  std::string tensor;
  int head = -1;
  int row = 0;
  std::vector<double> values;
  std::vector<std::int64_t> shape;
};

struct LessonExample {
  Config cfg;
  Inputs in;
  Weights weights;
  std::string title;
  std::string description;
  std::vector<LessonExpectation> expected;  // the lesson's own numbers (or shapes)
};
LessonExample MakeLessonExample();

// Lesson 004's hand calculation ("연습: 2-Head Attention (간소화)"): one word X = [1, 2],
// d_model 2, two heads of d_k 1, W^Q = W^K = W^V = [0.5, 0.5]^T for head 1 and
// [0.3, 0.3]^T for head 2, W^O = I: Q_1 = K_1 = V_1 = 1.5, Q_2 = ... = 0.9, one key so
// each weight is 1, output_1 = 1.5, output_2 = 0.9, concat [1.5, 0.9].
LessonExample MakeHandCalculationExample();

// Every worked example of lesson 004 as a preset, in the lesson's order: the 2-head
// example of section 4 (MakeLessonExample, where the lesson gives shapes), then the
// hand calculation (MakeHandCalculationExample, where it gives numbers).
std::vector<LessonExample> LessonPresets();

// What the trace computed where a lesson states `e`: the (rows, cols) of that head of
// the tensor (or of the tensor without its batch axis) and row e.row's numbers; `ok`
// when they agree with the lesson (its shape; its numbers to 1e-5). Throws mha::Error
// for a tensor, head or row the trace does not have.
struct LessonCheck {
  std::vector<std::int64_t> shape;
  std::vector<double> values;
  double max_abs_diff = 0;
  bool ok = false;
};
LessonCheck CheckLesson(const Trace& t, const LessonExpectation& e);

// Four heads with known jobs, built by hand, for the lesson "heads specialise": on the
// given tokens, x is only each position's sinusoidal encoding (no word embedding, so
// position is all a head can use; d_model 64, 4 heads of head_dim 16) and W_Q, W_K
// compare the 8 fastest-turning sine/cosine pairs of the encoding:
//   head 0 attends to the previous token (W_Q rotates each pair back one position:
//          q_i = a PE(i-1), k_j = a PE(j), so q_i . k_j = a^2 sum cos(w_f (i-1-j)) peaks at j = i-1),
//   head 1 to the token itself (no rotation),
//   head 2 to the first token (q constant through b_Q: q . k_j = a^2 sum cos(w_f j)),
//   head 3 to the next token (rotated forward).
// W_V = W_O = I, no mask, post-LN. Throws mha::Error for no tokens.
LessonExample MakePositionalHeadsExample(const std::vector<std::string>& tokens);

}  // namespace mha
