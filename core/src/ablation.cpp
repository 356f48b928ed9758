// Head ablation: the forward pass's Ablate phase, the checks of a head set, the mean
// contexts of mean ablation, the importance table and the repeated-span loss.
#include "mha/ablation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "check.hpp"
#include "forward_pass.hpp"
#include "rng.hpp"

namespace mha {

namespace detail {

// Rows [r0, r1) of concat (every sequence of a batch: rows are batch * seq): each
// knocked-out head's block becomes its replacement. Only concat is written, and
// every row by exactly one task, so the result does not depend on the threads.
void AblateTask(Pass& p, int task) {
  const int r0 = task * kNormRows, r1 = std::min(p.rows, r0 + kNormRows), hd = p.hd;
  const HeadAblation& a = p.t->in.ablate;
  float* concat = p.t->concat.data();
  const std::ptrdiff_t width = static_cast<std::ptrdiff_t>(a.heads.size()) * hd;
  for (int i = r0; i < r1; ++i) {
    const float* from = a.values.data();
    if (a.patching()) {
      if (!a.positions.empty() && !std::binary_search(a.positions.begin(), a.positions.end(), i)) continue;
      from = a.patch.data() + static_cast<std::ptrdiff_t>(i) * width;
    }
    for (std::size_t n = 0; n < a.heads.size(); ++n)
      std::memcpy(concat + static_cast<std::ptrdiff_t>(i) * p.d + static_cast<std::ptrdiff_t>(a.heads[n]) * hd,
                  from + static_cast<std::ptrdiff_t>(n) * hd, sizeof(float) * hd);
  }
}

void CheckAblation(const Config& cfg, const HeadAblation& a, int rows) {
  if (a.empty()) return;
  const int H = cfg.num_heads;
  for (std::size_t n = 0; n < a.heads.size(); ++n) {
    const int h = a.heads[n];
    if (h < 0 || h >= H)
      throw Error("Head " + std::to_string(h) + " cannot be knocked out: the layer has " + std::to_string(H) + " head" +
                  (H == 1 ? "" : "s") + " (0 to " + std::to_string(H - 1) + ").");
    if (n > 0 && h <= a.heads[n - 1])
      throw Error("The knocked-out heads must be listed once each, in ascending order; head " + std::to_string(h) +
                  " comes after head " + std::to_string(a.heads[n - 1]) + ".");
  }
  const Mat& m = a.patching() ? a.patch : a.values;
  const Eigen::Index want_rows = a.patching() ? rows : static_cast<Eigen::Index>(a.heads.size());
  const Eigen::Index want_cols =
      a.patching() ? static_cast<Eigen::Index>(a.heads.size()) * cfg.head_dim() : cfg.head_dim();
  if (m.rows() != want_rows || m.cols() != want_cols)
    throw Error("The replacement of the " + std::string(a.patching() ? "patched" : "knocked-out") +
                " heads' context has shape (" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) +
                ") but needs (" + std::to_string(want_rows) + ", " + std::to_string(want_cols) + "): " +
                (a.patching() ? "one row per position, head_dim columns per patched head."
                              : "one head_dim row per knocked-out head."));
  for (std::size_t n = 0; n < a.positions.size(); ++n)
    if (a.positions[n] < 0 || a.positions[n] >= rows || (n > 0 && a.positions[n] <= a.positions[n - 1]))
      throw Error("The patched positions must be distinct, ascending and within the " + std::to_string(rows) +
                  " rows of the input; got " + std::to_string(a.positions[n]) + ".");
  if (!AllInRange(m.data(), static_cast<std::size_t>(m.size())))
    throw Error("The replacement of the knocked-out heads' context holds NaN, Inf or a value beyond |" +
                std::to_string(static_cast<int>(Limits::kMaxAbsValue)) + "|.");
}

}  // namespace detail

const char* ToString(AblationMode m) { return m == AblationMode::Zero ? "zero" : "mean"; }

std::string HeadName(const HeadRef& h) {
  return "L" + std::to_string(h.layer) + (h.head < 0 ? " (all heads)" : "H" + std::to_string(h.head));
}

namespace {

// Adds every row of the trace's concat (each head's context side by side; every
// sequence of a batch) into sums, in row order.
void AddConcatRows(const Trace& t, Eigen::RowVectorXd& sums) {
  const Mat& c = t.concat;
  if (sums.size() != c.cols()) sums = Eigen::RowVectorXd::Zero(c.cols());
  for (Eigen::Index i = 0; i < c.rows(); ++i) sums += c.row(i).cast<double>();
}

ContextMeans Finish(const std::vector<Eigen::RowVectorXd>& sums, std::int64_t rows, int num_heads) {
  ContextMeans means;
  for (const auto& s : sums) {
    const int d = static_cast<int>(s.size()), hd = d / num_heads;
    Mat m(num_heads, hd);
    for (int h = 0; h < num_heads; ++h)
      for (int j = 0; j < hd; ++j) m(h, j) = static_cast<float>(s[h * hd + j] / static_cast<double>(rows));
    means.push_back(std::move(m));
  }
  return means;
}

}  // namespace

ContextMeans MeanContexts(Trainer& trainer, const Model& m, const std::vector<Batch>& reference) {
  const int L = m.cfg.num_layers;
  std::vector<Eigen::RowVectorXd> sums(L);
  std::int64_t rows = 0;
  for (const Batch& b : reference) {
    trainer.Evaluate(m, b);
    for (int l = 0; l < L; ++l) AddConcatRows(trainer.LayerTrace(l), sums[l]);
    rows += static_cast<std::int64_t>(b.batch) * b.seq;
  }
  if (rows == 0)
    throw Error("Mean ablation needs a reference text to average each head's context over; none was given.");
  return Finish(sums, rows, m.cfg.layer.num_heads);
}

ContextMeans MeanContexts(const std::vector<const Trace*>& layers) {
  if (layers.empty() || layers[0]->concat.rows() == 0)
    throw Error("Mean ablation needs a reference text to average each head's context over; none was given.");
  std::vector<Eigen::RowVectorXd> sums(layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) AddConcatRows(*layers[l], sums[l]);
  return Finish(sums, layers[0]->concat.rows(), layers[0]->cfg.num_heads);
}

void CheckHeads(int num_layers, int num_heads, const std::vector<HeadRef>& heads) {
  const std::string range = "the model has " + std::to_string(num_layers) + " layer" + (num_layers == 1 ? "" : "s") +
                            " (0 to " + std::to_string(num_layers - 1) + ") of " + std::to_string(num_heads) + " head" +
                            (num_heads == 1 ? "" : "s") + " (0 to " + std::to_string(num_heads - 1) +
                            "), so heads are L0H0 to L" + std::to_string(num_layers - 1) + "H" +
                            std::to_string(num_heads - 1) + ".";
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const HeadRef& h = heads[i];
    if (h.layer < 0 || h.layer >= num_layers || h.head < 0 || h.head >= num_heads)
      throw Error("Head " + std::to_string(h.layer) + "." + std::to_string(h.head) + " does not exist: " + range);
    for (std::size_t j = 0; j < i; ++j)
      if (heads[j] == h) throw Error("Head " + HeadName(h) + " is listed twice; name each head once.");
  }
}

std::vector<HeadAblation> LayerAblations(int num_layers, const Config& layer, AblationMode mode,
                                         const std::vector<HeadRef>& heads, const ContextMeans* means) {
  const int H = layer.num_heads, hd = layer.head_dim();
  CheckHeads(num_layers, H, heads);
  if (mode == AblationMode::Mean) {
    if (!means || static_cast<int>(means->size()) != num_layers)
      throw Error("Mean ablation needs each layer's mean head contexts; they were not measured.");
    for (const Mat& m : *means)
      if (m.rows() != H || m.cols() != hd) throw Error("The mean head contexts do not fit the model's heads.");
  }
  std::vector<HeadRef> sorted = heads;
  std::sort(sorted.begin(), sorted.end());
  std::vector<HeadAblation> out(static_cast<std::size_t>(num_layers));
  for (const HeadRef& h : sorted) out[h.layer].heads.push_back(h.head);
  for (int l = 0; l < num_layers; ++l) {
    HeadAblation& a = out[l];
    a.values = Mat::Zero(static_cast<Eigen::Index>(a.heads.size()), hd);
    if (mode == AblationMode::Mean)
      for (std::size_t n = 0; n < a.heads.size(); ++n) a.values.row(n) = (*means)[l].row(a.heads[n]);
  }
  return out;
}

std::vector<HeadAblation> PatchHeads(const ModelTrace& source, const std::vector<HeadRef>& heads,
                                     const std::vector<int>& positions) {
  const int L = static_cast<int>(source.layers.size());
  if (L == 0) throw Error("Patching needs the clean run's trace; it has no layers.");
  const Config& c = source.layers.front().cfg;
  const int H = c.num_heads, hd = c.head_dim(), seq = source.layers.front().seq;
  CheckHeads(L, H, heads);
  for (std::size_t n = 0; n < positions.size(); ++n)
    if (positions[n] < 0 || positions[n] >= seq || (n > 0 && positions[n] <= positions[n - 1]))
      throw Error("The patched positions must be distinct, ascending and within the clean run's " +
                  std::to_string(seq) + " positions (0 to " + std::to_string(seq - 1) + ").");
  std::vector<HeadRef> sorted = heads;
  std::sort(sorted.begin(), sorted.end());
  std::vector<HeadAblation> out(static_cast<std::size_t>(L));
  for (const HeadRef& h : sorted) out[h.layer].heads.push_back(h.head);
  for (int l = 0; l < L; ++l) {
    HeadAblation& a = out[l];
    if (a.empty()) continue;
    const Mat& concat = source.layers[l].concat;  // the clean run's heads, side by side
    const int n = static_cast<int>(a.heads.size());
    a.patch.resize(seq, static_cast<Eigen::Index>(n) * hd);
    for (int k = 0; k < n; ++k)
      a.patch.middleCols(static_cast<Eigen::Index>(k) * hd, hd) =
          concat.middleCols(static_cast<Eigen::Index>(a.heads[k]) * hd, hd);
    a.positions = positions;
  }
  return out;
}

ImportanceTable MeasureImportance(int num_layers, const Config& layer, AblationMode mode, const ContextMeans* means,
                                  const AblatedLoss& loss) {
  ImportanceTable t;
  t.base = loss(nullptr);
  const int H = layer.num_heads;
  auto measure = [&](const std::vector<HeadRef>& set, HeadRef name) {
    const std::vector<HeadAblation> a = LayerAblations(num_layers, layer, mode, set, means);
    HeadImportance r;
    r.head = name;
    r.stats = loss(&a);
    r.increase = r.stats.loss - t.base.loss;
    return r;
  };
  for (int l = 0; l < num_layers; ++l)
    for (int h = 0; h < H; ++h) t.heads.push_back(measure({{l, h}}, {l, h}));
  for (int l = 0; l < num_layers; ++l) {
    std::vector<HeadRef> all;
    for (int h = 0; h < H; ++h) all.push_back({l, h});
    t.layers.push_back(measure(all, {l, -1}));
  }
  auto order = [](const HeadImportance& a, const HeadImportance& b) {
    if (a.increase != b.increase) return a.increase > b.increase;
    return a.head < b.head;
  };
  std::stable_sort(t.heads.begin(), t.heads.end(), order);
  std::stable_sort(t.layers.begin(), t.layers.end(), order);
  return t;
}

RepeatedSpans MakeRepeatedSpans(const std::vector<int>& candidates, int prefix_token, int span, int count,
                                std::uint64_t seed) {
  if (candidates.empty() || span < 2 || count < 1)
    throw Error("A repeated span needs at least 2 tokens, at least one sequence and tokens to draw from.");
  RepeatedSpans r;
  r.prefix = prefix_token >= 0 ? 1 : 0;
  r.span = span;
  detail::SplitMix64 rng(detail::StreamSeed(seed, "repeated-spans"));
  std::vector<int> pool;
  for (int s = 0; s < count; ++s) {
    std::vector<int> a;
    if (static_cast<int>(candidates.size()) >= span) {
      pool = candidates;
      for (int k = 0; k < span; ++k) {  // partial Fisher-Yates: distinct tokens
        const std::size_t j = k + static_cast<std::size_t>(rng.Next() % (pool.size() - k));
        std::swap(pool[k], pool[j]);
        a.push_back(pool[k]);
      }
    } else {
      for (int k = 0; k < span; ++k) a.push_back(candidates[rng.Next() % candidates.size()]);
    }
    std::vector<int> seq;
    if (prefix_token >= 0) seq.push_back(prefix_token);
    seq.insert(seq.end(), a.begin(), a.end());
    seq.insert(seq.end(), a.begin(), a.end());
    r.sequences.push_back(std::move(seq));
  }
  return r;
}

RepeatLoss MeasureRepeatLoss(const Model& m, const RepeatedSpans& s, const std::vector<HeadAblation>* ablate) {
  RepeatLoss r;
  const int L = s.span;
  r.first.assign(L - 1, 0.0);
  r.second.assign(L - 1, 0.0);
  ModelTrace t;
  // -log softmax(row)[target] in double
  auto nll = [](const Mat& logits, int row, int target) {
    const float* z = logits.row(row).data();
    const int V = static_cast<int>(logits.cols());
    double mx = z[0];
    for (int j = 1; j < V; ++j) mx = std::max(mx, static_cast<double>(z[j]));
    double sum = 0;
    for (int j = 0; j < V; ++j) sum += std::exp(static_cast<double>(z[j]) - mx);
    return mx + std::log(sum) - static_cast<double>(z[target]);
  };
  for (const std::vector<int>& seq : s.sequences) {
    RunModel(m, seq, t, ablate);
    for (int k = 0; k + 1 < L; ++k) {
      const int i1 = s.prefix + k, i2 = s.prefix + L + k;
      r.first[k] += nll(t.logits[0], i1, seq[i1 + 1]);
      r.second[k] += nll(t.logits[0], i2, seq[i2 + 1]);
    }
  }
  const double n = static_cast<double>(s.sequences.size());
  for (int k = 0; k + 1 < L; ++k) {
    r.first[k] /= n;
    r.second[k] /= n;
    r.first_mean += r.first[k] / (L - 1);
    r.second_mean += r.second[k] / (L - 1);
  }
  return r;
}

}  // namespace mha
