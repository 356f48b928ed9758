#include "lm/pairs_table.hpp"

#include <algorithm>
#include <cmath>

namespace mha::lm {

double CoinUpperTail(int k, int n) {
  if (k <= 0) return 1;
  if (k > n) return 0;
  // Sum the terms in log space from the largest (i = k) down: each is C(n, i) / 2^n.
  const double log_half_n = n * std::log(0.5);
  double sum = 0;
  for (int i = k; i <= n; ++i) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + log_half_n;
    const double term = std::exp(log_term);
    sum += term;
    if (term < sum * 1e-17) break;  // the rest cannot change a double
  }
  return std::min(1.0, sum);
}

ChanceBand CoinBand(int n, double alpha) {
  ChanceBand b;
  if (n <= 0) return b;
  // The smallest c >= n/2 with P(X > c) + P(X < n - c) = 2 P(X >= c + 1) <= alpha.
  int c = (n + 1) / 2;
  while (c < n && 2 * CoinUpperTail(c + 1, n) > alpha) ++c;
  b.hi_count = c;
  b.lo_count = n - c;
  b.hi = static_cast<double>(c) / n;
  b.lo = static_cast<double>(n - c) / n;
  return b;
}

double McNemarDrop(int lost, int gained) { return CoinUpperTail(lost, lost + gained); }

std::vector<HeadRef> EveryHead(const LanguageModel& lm) {
  std::vector<HeadRef> out;
  for (int l = 0; l < lm.model.cfg.num_layers; ++l)
    for (int h = 0; h < lm.model.cfg.layer.num_heads; ++h) out.push_back({l, h});
  return out;
}

namespace {

// The row's example: the first pair that its (first) carrier's knock-out turns from
// right to wrong, else the phenomenon's first pair.
PairExample Example(const std::vector<MinimalPair>& pairs, const KnockoutTable& t, int row,
                    const std::vector<std::vector<double>>& margins) {
  const PhenomenonRow& r = t.rows[static_cast<std::size_t>(row)];
  int carrier = -1;
  if (!r.carriers.empty())
    carrier = static_cast<int>(std::find(t.heads.begin(), t.heads.end(), r.carriers.front()) - t.heads.begin());
  int pick = -1;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (t.plain.phenomenon_of[i] != row) continue;
    if (pick < 0) pick = static_cast<int>(i);
    if (carrier >= 0 && t.plain.margins[i] > 0 && margins[static_cast<std::size_t>(carrier)][i] <= 0) {
      pick = static_cast<int>(i);
      break;
    }
  }
  PairExample e;
  if (pick < 0) return e;
  const MinimalPair& p = pairs[static_cast<std::size_t>(pick)];
  e.line = p.line;
  e.good = p.good;
  e.bad = p.bad;
  e.cue = p.cue;
  e.margin = t.plain.margins[static_cast<std::size_t>(pick)];
  for (const auto& m : margins) e.margin_without.push_back(m[static_cast<std::size_t>(pick)]);
  return e;
}

}  // namespace

KnockoutTable KnockOutHeads(const LanguageModel& lm, const std::vector<MinimalPair>& pairs,
                            const std::vector<HeadRef>& heads, AblationMode mode, const ContextMeans* means,
                            const PairsReport* plain, const TableProgress& progress) {
  KnockoutTable t;
  t.mode = mode;
  t.num_layers = lm.model.cfg.num_layers;
  t.num_heads = lm.model.cfg.layer.num_heads;
  t.heads = heads;
  CheckHeads(t.num_layers, t.num_heads, heads);
  if (heads.empty()) throw Error("The proof table needs at least one head to knock out.");
  t.level = kDropAlpha / static_cast<double>(heads.size());
  t.plain = plain ? *plain : ScoreMinimalPairs(lm, pairs);
  if (t.plain.margins.size() != pairs.size())
    throw Error("The intact model's report was scored on other pairs (" + std::to_string(t.plain.margins.size()) +
                " of them, not " + std::to_string(pairs.size()) + ").");
  const std::size_t P = t.plain.phenomena.size();
  for (const PhenomenonScore& ph : t.plain.phenomena) {
    PhenomenonRow r;
    r.phenomenon = ph.phenomenon;
    r.pairs = ph.pairs;
    r.correct = ph.correct;
    r.accuracy = ph.accuracy;
    r.band = CoinBand(ph.pairs);
    r.learned = ph.correct > r.band.hi_count;
    t.rows.push_back(std::move(r));
  }
  const Config layer = lm.model.cfg.LayerConfig();
  std::vector<std::vector<double>> margins;  // per head, per pair
  for (std::size_t k = 0; k < heads.size(); ++k) {
    if (progress) progress(static_cast<int>(k), static_cast<int>(heads.size()), heads[k]);
    const std::vector<HeadAblation> a = LayerAblations(t.num_layers, layer, mode, {heads[k]}, means);
    const PairsReport ko = ScoreMinimalPairs(lm, pairs, &a);
    std::vector<KnockoutCell> cells(P);
    for (std::size_t p = 0; p < P; ++p) cells[p].head = heads[k];
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      KnockoutCell& c = cells[static_cast<std::size_t>(t.plain.phenomenon_of[i])];
      const bool before = t.plain.margins[i] > 0, after = ko.margins[i] > 0;
      c.correct += after;
      c.lost += before && !after;
      c.gained += !before && after;
    }
    for (std::size_t p = 0; p < P; ++p) {
      KnockoutCell& c = cells[p];
      PhenomenonRow& r = t.rows[p];
      c.accuracy = static_cast<double>(c.correct) / r.pairs;
      c.p = McNemarDrop(c.lost, c.gained);
      c.significant = c.p <= t.level;
      c.to_chance = c.correct <= r.band.hi_count;
      r.cells.push_back(c);
    }
    margins.push_back(ko.margins);
  }
  for (std::size_t p = 0; p < P; ++p) {
    PhenomenonRow& r = t.rows[p];
    int significant = 0;
    for (const KnockoutCell& c : r.cells) {
      significant += c.significant;
      if (r.learned && c.significant && c.to_chance) r.carriers.push_back(c.head);
    }
    r.sole = r.carriers.size() == 1 && significant == 1;
    r.example = Example(pairs, t, static_cast<int>(p), margins);
  }
  return t;
}

nlohmann::json TableJson(const KnockoutTable& t) {
  using nlohmann::json;
  json heads = json::array();
  for (const HeadRef& h : t.heads) heads.push_back({{"layer", h.layer}, {"head", h.head}, {"name", HeadName(h)}});
  json rows = json::array();
  for (const PhenomenonRow& r : t.rows) {
    json cells = json::array();
    for (const KnockoutCell& c : r.cells)
      cells.push_back({{"name", HeadName(c.head)},
                       {"layer", c.head.layer},
                       {"head", c.head.head},
                       {"correct", c.correct},
                       {"accuracy", c.accuracy},
                       {"drop", r.accuracy - c.accuracy},
                       {"lost", c.lost},
                       {"gained", c.gained},
                       {"p", c.p},
                       {"significant", c.significant},
                       {"to_chance", c.to_chance}});
    json carriers = json::array();
    for (const HeadRef& h : r.carriers) carriers.push_back(HeadName(h));
    json example = nullptr;
    if (r.example.line > 0)
      example = {{"line", r.example.line}, {"good", r.example.good},     {"bad", r.example.bad},
                 {"cue", r.example.cue},   {"margin", r.example.margin}, {"margin_without", r.example.margin_without}};
    rows.push_back({{"phenomenon", r.phenomenon},
                    {"pairs", r.pairs},
                    {"correct", r.correct},
                    {"accuracy", r.accuracy},
                    {"chance", 0.5},
                    {"chance_band", {r.band.lo, r.band.hi}},
                    {"learned", r.learned},
                    {"knocked_out", cells},
                    {"carriers", carriers},
                    {"sole_carrier", r.sole},
                    {"example", example}});
  }
  return {{"mode", ToString(t.mode)},
          {"heads", heads},
          {"test",
           {{"chance", 0.5},
            {"chance_band",
             "the accuracies a fair coin reaches over the phenomenon's pairs with probability 0.99 "
             "(exact binomial, two-sided)"},
            {"drop",
             "exact one-sided McNemar test on the pairs the knock-out flips: p = P(X >= lost), X ~ "
             "Binomial(lost + gained, 1/2)"},
            {"level", t.level},
            {"level_rule", "0.01 / heads knocked out (Bonferroni over the table's heads)"},
            {"carrier",
             "a learned phenomenon (intact accuracy above the chance band) whose drop without the "
             "head is significant and leaves it inside the chance band"}}},
          {"rows", rows}};
}

}  // namespace mha::lm
