// Per-head metrics and the head x head Jensen-Shannon divergence.
#include <algorithm>
#include <cmath>

#include "mha/teach.hpp"

namespace mha {

const char* ToString(HeadPattern p) {
  switch (p) {
    case HeadPattern::Self: return "self";
    case HeadPattern::Previous: return "previous";
    case HeadPattern::Next: return "next";
    case HeadPattern::First: return "first token";
    default: return "spread";
  }
}

HeadSummary SummarizeAttention(const Eigen::Ref<const Mat>& a, bool positional) {
  HeadSummary s;
  const Eigen::Index n = a.rows(), m = a.cols();
  const RowStats st = AttentionRowStats(a, Mask::None);
  s.mean_entropy = st.mean_entropy;
  s.mean_max_weight = st.mean_max_weight;
  // Mean of a(i, j(i)) over the rows where key j(i) exists.
  auto mean_at = [&](Eigen::Index first_row, Eigen::Index offset, bool to_first) {
    double sum = 0.0;
    Eigen::Index rows = 0;
    for (Eigen::Index i = first_row; i < n; ++i) {
      const Eigen::Index j = to_first ? 0 : i + offset;
      if (j < 0 || j >= m) continue;
      sum += a(i, j);
      ++rows;
    }
    return rows > 0 ? sum / rows : 0.0;
  };
  s.first = mean_at(positional ? 1 : 0, 0, true);
  if (positional) {
    s.self = mean_at(0, 0, false);
    s.previous = mean_at(1, -1, false);
    s.next = mean_at(0, +1, false);
  }
  const std::pair<HeadPattern, double> candidates[] = {{HeadPattern::Self, s.self},
                                                       {HeadPattern::Previous, s.previous},
                                                       {HeadPattern::Next, s.next},
                                                       {HeadPattern::First, s.first}};
  double best = kMostlyThreshold;
  for (const auto& [pattern, weight] : candidates) {
    if (!positional && pattern != HeadPattern::First) continue;
    if (weight > best) {  // strictly: ties keep the earlier relation
      best = weight;
      s.pattern = pattern;
    }
  }
  return s;
}

std::vector<HeadSummary> SummarizeHeads(const Trace& t) {
  std::vector<HeadSummary> out;
  for (int h = 0; h < t.cfg.num_heads; ++h) {
    HeadSummary s = SummarizeAttention(t.AttnHead(h), !t.in.cross());
    s.head = h;
    out.push_back(s);
  }
  return out;
}

double JensenShannon(const float* p, const float* q, int n) {
  double sp = 0.0, sq = 0.0;
  for (int k = 0; k < n; ++k) {
    sp += p[k];
    sq += q[k];
  }
  // An all-zero row (every key masked) is no distribution at all.
  if (sp <= 0.0 || sq <= 0.0) return (sp <= 0.0 && sq <= 0.0) ? 0.0 : std::log(2.0);
  // Renormalised in double: softmax rows sum to 1 only up to float rounding.
  double js = 0.0;
  for (int k = 0; k < n; ++k) {
    // Ordered as (smaller, larger) so that JS(p, q) == JS(q, p) bit for bit, whatever
    // the compiler fuses into multiply-adds.
    const double a0 = p[k] / sp, b0 = q[k] / sq;
    const double lo = std::min(a0, b0), hi = std::max(a0, b0), m = 0.5 * (lo + hi);
    if (hi == 0.0) continue;  // neither row puts weight on key k
    const double tlo = lo > 0.0 ? lo * std::log(lo / m) : 0.0;
    js += 0.5 * (tlo + hi * std::log(hi / m));
  }
  return js > 0.0 ? js : 0.0;  // a true 0 can round to -1e-17
}

double MeanJensenShannon(const Eigen::Ref<const Mat>& a, const Eigen::Ref<const Mat>& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw Error("Two attention maps can only be compared if they have the same shape.");
  if (a.rows() == 0) return 0.0;
  double sum = 0.0;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    sum += JensenShannon(a.row(i).data(), b.row(i).data(), static_cast<int>(a.cols()));
  return sum / a.rows();
}

Eigen::MatrixXd HeadDivergence(const Trace& t) {
  const int H = t.cfg.num_heads;
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(H, H);
  if (t.attn.rows() == 0) return d;
  for (int a = 0; a < H; ++a)
    for (int b = a; b < H; ++b) d(a, b) = d(b, a) = MeanJensenShannon(t.AttnHead(a), t.AttnHead(b));
  return d;
}

}  // namespace mha
