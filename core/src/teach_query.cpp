// One query step by step, and the scaled/unscaled attention of a head.
#include <cmath>
#include <limits>
#include <string>

#include "mha/forward.hpp"
#include "mha/teach.hpp"

namespace mha {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void CheckHead(const Trace& t, int head) {
  if (t.seq <= 0 || t.q.rows() == 0)
    throw Error("There is no forward pass to explain yet: run the attention layer first.");
  if (head < 0 || head >= t.cfg.num_heads)
    throw Error("Head " + std::to_string(head) +
                " does not exist: this layer has num_heads = " + std::to_string(t.cfg.num_heads) +
                ", so heads are numbered 0 to " + std::to_string(t.cfg.num_heads - 1) + ".");
}

bool Masked(const Config& cfg, int i, int j) { return cfg.mask == Mask::Causal && j > i; }

}  // namespace

QueryExplanation ExplainQuery(const Trace& t, int head, int query) {
  CheckHead(t, head);
  if (query < 0 || query >= t.seq)
    throw Error("Query token " + std::to_string(query) + " does not exist: the sentence has " + std::to_string(t.seq) +
                " tokens, numbered 0 to " + std::to_string(t.seq - 1) + ".");
  const Config& c = t.cfg;
  const int hd = c.head_dim(), g = t.KvHeadOf(head), skv = t.seq_kv;
  QueryExplanation e;
  e.head = head;
  e.query = query;
  e.kv_head = g;
  e.head_dim = hd;
  e.query_token = query < static_cast<int>(t.in.tokens.size()) ? t.in.tokens[query] : "";
  e.cross = t.in.cross();
  e.q = t.q.row(static_cast<Eigen::Index>(head) * t.seq + query);
  e.scaled = c.scale;
  e.sqrt_dk = static_cast<float>(std::sqrt(static_cast<double>(hd)));
  e.temperature = c.temperature;
  const double divisor = (c.scale ? std::sqrt(static_cast<double>(hd)) : 1.0) * c.temperature;
  e.divisor = static_cast<float>(divisor);
  const std::vector<std::string>& key_tokens = e.cross ? t.in.memory_tokens : t.in.tokens;

  // The scores and weights shown are the trace's own numbers (what the export holds);
  // what the trace does not store (q.k before scaling, the exponentials, each
  // weight x v and their sum) is computed here from them, in double.
  const Eigen::Index qrow = static_cast<Eigen::Index>(head) * t.seq + query;
  double mx = -std::numeric_limits<double>::infinity();
  e.keys.resize(skv);
  for (int j = 0; j < skv; ++j) {
    KeyStep& k = e.keys[j];
    k.index = j;
    k.token = j < static_cast<int>(key_tokens.size()) ? key_tokens[j] : "";
    const Eigen::Index row = static_cast<Eigen::Index>(g) * skv + j;
    k.k = t.k.row(row);
    k.v = t.v.row(row);
    double dot = 0.0;
    for (int c2 = 0; c2 < hd; ++c2) dot += static_cast<double>(e.q[c2]) * k.k[c2];
    k.dot = static_cast<float>(dot);
    k.masked = Masked(c, query, j);
    k.scaled = t.scores(qrow, j);
    k.weight = t.attn(qrow, j);
    if (!k.masked) mx = std::max(mx, static_cast<double>(k.scaled));
  }
  const bool any = mx > -std::numeric_limits<double>::infinity();
  e.max_scaled = any ? static_cast<float>(mx) : kNegInf;
  double sum = 0.0;
  std::vector<double> ctx(hd, 0.0);
  for (int j = 0; j < skv; ++j) {  // j ascending, as the trace's row x matrix product
    KeyStep& k = e.keys[j];
    const double ex = (any && !k.masked) ? std::exp(static_cast<double>(k.scaled) - mx) : 0.0;
    k.exp_shifted = static_cast<float>(ex);
    sum += ex;
    k.weighted_v.resize(hd);
    for (int c2 = 0; c2 < hd; ++c2) {
      const double wv = static_cast<double>(k.weight) * k.v[c2];
      k.weighted_v[c2] = static_cast<float>(wv);
      ctx[c2] += wv;
    }
  }
  e.exp_sum = static_cast<float>(sum);
  e.context.resize(hd);
  for (int c2 = 0; c2 < hd; ++c2) e.context[c2] = static_cast<float>(ctx[c2]);
  e.trace_context = t.context.row(qrow);
  e.max_abs_diff = hd > 0 ? (e.context - e.trace_context).cwiseAbs().maxCoeff() : 0.0f;
  return e;
}

std::vector<int> ElidedIndices(int n, int max_shown) {
  std::vector<int> out;
  if (n <= 0) return out;
  if (max_shown < 3) max_shown = 3;
  if (n <= max_shown) {
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  const int slots = max_shown - 1;  // one slot is the ellipsis
  const int head = (slots + 1) / 2, tail = slots / 2;
  for (int i = 0; i < head; ++i) out.push_back(i);
  out.push_back(-1);
  for (int i = n - tail; i < n; ++i) out.push_back(i);
  return out;
}

RowStats AttentionRowStats(const Eigen::Ref<const Mat>& w, Mask mask) {
  RowStats s;
  const Eigen::Index n = w.rows(), m = w.cols();
  s.entropy.assign(n, 0.0);
  s.max_entropy.assign(n, 0.0);
  s.max_weight.assign(n, 0.0);
  for (Eigen::Index i = 0; i < n; ++i) {
    double h = 0.0, mxw = 0.0;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double p = w(i, j);
      if (p > 0.0) h -= p * std::log(p);  // 0 ln 0 = 0
      mxw = std::max(mxw, p);
    }
    const Eigen::Index visible = mask == Mask::Causal ? std::min<Eigen::Index>(i + 1, m) : m;
    s.entropy[i] = h;
    s.max_weight[i] = mxw;
    s.max_entropy[i] = (mxw > 0.0 && visible > 0) ? std::log(static_cast<double>(visible)) : 0.0;
    s.mean_entropy += h;
    s.mean_max_weight += mxw;
  }
  if (n > 0) {
    s.mean_entropy /= n;
    s.mean_max_weight /= n;
  }
  return s;
}

HeadAttention ComputeHeadAttention(const Trace& t, int head, bool scale, float temperature) {
  CheckHead(t, head);
  {
    Config at = t.cfg;  // the same rules (and messages) as a forward pass at this temperature
    at.temperature = temperature;
    Validate(at, t.seq, t.seq_kv);
  }
  const Config& c = t.cfg;
  const int hd = c.head_dim(), g = t.KvHeadOf(head), seq = t.seq, skv = t.seq_kv;
  HeadAttention a;
  a.head = head;
  a.scaled = scale;
  a.temperature = temperature;
  // The same float expression as Forward, so the configuration's own setting
  // reproduces the trace.
  a.multiplier = (scale ? 1.0f / std::sqrt(static_cast<float>(hd)) : 1.0f) / temperature;
  const auto qh = t.q.middleRows(static_cast<Eigen::Index>(head) * seq, seq);
  const auto kh = t.k.middleRows(static_cast<Eigen::Index>(g) * skv, skv);
  a.scores.noalias() = (qh * kh.transpose()) * a.multiplier;
  if (!a.scores.allFinite())
    throw Error("At temperature " + std::to_string(temperature) + (scale ? "" : " without the sqrt(d_k) scaling") +
                " the scores overflow float32 (they would be infinite). Use a larger temperature.");
  a.masked_scores = a.scores;
  for (int i = 0; i < seq; ++i)
    for (int j = 0; j < skv; ++j)
      if (Masked(c, i, j)) a.masked_scores(i, j) = kNegInf;
  a.weights = a.masked_scores;
  for (int i = 0; i < seq; ++i) SoftmaxRow(&a.weights(i, 0), skv);
  a.stats = AttentionRowStats(a.weights, c.mask);
  double std_sum = 0.0;
  for (int i = 0; i < seq; ++i) {
    double mean = 0.0, var = 0.0;
    int n = 0;
    for (int j = 0; j < skv; ++j)
      if (!Masked(c, i, j)) {
        mean += a.scores(i, j);
        ++n;
      }
    if (n == 0) continue;
    mean /= n;
    for (int j = 0; j < skv; ++j)
      if (!Masked(c, i, j)) var += (a.scores(i, j) - mean) * (a.scores(i, j) - mean);
    std_sum += std::sqrt(var / n);
  }
  a.score_std = seq > 0 ? std_sum / seq : 0.0;
  return a;
}

ScalingComparison CompareScaling(const Trace& t, int head, float temperature) {
  return {ComputeHeadAttention(t, head, true, temperature), ComputeHeadAttention(t, head, false, temperature)};
}

}  // namespace mha
