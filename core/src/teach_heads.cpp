// Per-head metrics and the head x head Jensen-Shannon divergence.
#include <algorithm>
#include <cmath>
#include <vector>

#include "mha/teach.hpp"

namespace mha {

const char* ToString(HeadPattern p) {
  switch (p) {
    case HeadPattern::Self: return "self";
    case HeadPattern::Previous: return "previous";
    case HeadPattern::Next: return "next";
    case HeadPattern::First: return "first token";
    default: return "no clear pattern";
  }
}

// Exactly up to 256 rows; beyond, Hoeffding's bound settles most cases without the
// quadratic sum.
double TailAtLeast(const std::vector<double>& p, int k) {
  const int r = static_cast<int>(p.size());
  if (k <= 0) return 1.0;
  if (k > r) return 0.0;
  double mean = 0.0;
  for (double x : p) mean += x;
  if (r > 256 && k > mean) {
    const double bound = std::exp(-2.0 * (k - mean) * (k - mean) / r);
    if (bound < kMaxChanceP) return bound;
  }
  // at[h]: P(h hits so far), h < k; `done`: P(k hits or more so far).
  std::vector<double> at(static_cast<std::size_t>(k), 0.0);
  at[0] = 1.0;
  double done = 0.0;
  for (double x : p) {
    done += at[static_cast<std::size_t>(k - 1)] * x;
    for (int h = k - 1; h >= 1; --h)
      at[static_cast<std::size_t>(h)] =
          at[static_cast<std::size_t>(h)] * (1.0 - x) + at[static_cast<std::size_t>(h - 1)] * x;
    at[0] *= 1.0 - x;
  }
  return done;
}

HeadSummary SummarizeAttention(const Eigen::Ref<const Mat>& a, bool positional, Mask mask) {
  HeadSummary s;
  const Eigen::Index n = a.rows(), m = a.cols();
  const RowStats st = AttentionRowStats(a, Mask::None);
  s.mean_entropy = st.mean_entropy;
  s.mean_max_weight = st.mean_max_weight;
  // The keys row i sees: a head that prefers none of them gives each 1 / that.
  auto seen = [&](Eigen::Index i) { return mask == Mask::Causal ? std::min(i + 1, m) : m; };
  struct Relation {
    HeadPattern pattern;
    double weight = 0.0;
    std::vector<double> p;  // per row: the chance of hitting the key by a random pick
  };
  // Mean of a(i, j(i)) over the rows where key j(i) exists (and is not masked).
  auto measure = [&](HeadPattern pattern, Eigen::Index first_row, Eigen::Index offset, bool to_first) {
    Relation rel;
    rel.pattern = pattern;
    double sum = 0.0;
    for (Eigen::Index i = first_row; i < n; ++i) {
      const Eigen::Index j = to_first ? 0 : i + offset;
      if (j < 0 || j >= seen(i)) continue;
      sum += a(i, j);
      rel.p.push_back(1.0 / static_cast<double>(seen(i)));
    }
    rel.weight = rel.p.empty() ? 0.0 : sum / static_cast<double>(rel.p.size());
    return rel;
  };
  std::vector<Relation> relations;
  if (positional) {
    relations.push_back(measure(HeadPattern::Self, 0, 0, false));
    relations.push_back(measure(HeadPattern::Previous, 1, -1, false));
    relations.push_back(measure(HeadPattern::Next, 0, +1, false));
  }
  relations.push_back(measure(HeadPattern::First, positional ? 1 : 0, 0, true));
  for (const Relation& r : relations) {
    if (r.pattern == HeadPattern::Self) s.self = r.weight;
    if (r.pattern == HeadPattern::Previous) s.previous = r.weight;
    if (r.pattern == HeadPattern::Next) s.next = r.weight;
    if (r.pattern == HeadPattern::First) s.first = r.weight;
  }
  const Relation* best = nullptr;
  for (const Relation& r : relations)
    if (!r.p.empty() && (!best || r.weight > best->weight)) best = &r;  // strictly: ties keep the earlier
  if (!best) return s;
  s.strongest = best->pattern;
  s.score = best->weight;
  s.rows = static_cast<int>(best->p.size());
  for (double x : best->p) s.chance += x;
  s.chance /= s.rows;
  // Every row sees one key only (a causal first row): nothing to choose, no pattern.
  if (s.chance >= 1.0 - 1e-12) return s;
  s.lift = (s.score - s.chance) / (1.0 - s.chance);
  // A random pick's mean is hits / rows: it does as well with ceil(score * rows) hits.
  const int hits = static_cast<int>(std::ceil(s.score * s.rows - 1e-9));
  s.chance_p = TailAtLeast(best->p, hits);
  if (s.lift >= kMinLift && s.chance_p < kMaxChanceP) s.pattern = best->pattern;
  return s;
}

std::vector<HeadSummary> SummarizeHeads(const Trace& t) {
  std::vector<HeadSummary> out;
  for (int h = 0; h < t.cfg.num_heads; ++h) {
    HeadSummary s = SummarizeAttention(t.AttnHead(h), !t.in.cross(), t.in.cross() ? Mask::None : t.cfg.mask);
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
