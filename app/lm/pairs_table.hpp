// The proof table: every phenomenon of the minimal pairs (minimal_pairs.hpp), scored
// with the model intact and then with each head knocked out alone. A head "does a job"
// only where its knock-out costs the phenomenon more than the number of pairs could
// cost by chance, and where the phenomenon was learned in the first place.
//
//   KnockoutTable t = KnockOutHeads(lm, pairs, EveryHead(lm), AblationMode::Zero, nullptr);
//   t.rows[p].cells[k]       phenomenon p without head t.heads[k]: accuracy, the pairs it
//                            lost and gained, the paired test's p-value, and whether the
//                            drop is significant and leaves the phenomenon at chance
//   t.rows[p].carriers       the heads whose knock-out takes a learned phenomenon to chance
//
// The statistics, all exact (binomial with p = 1/2, so they hold for any pair count):
// - chance is 0.5: a model that cannot tell the sentences apart wins half the pairs;
// - the chance band of n pairs holds the accuracies a fair coin reaches with probability
//   1 - kChanceAlpha (two-sided, 0.99): a phenomenon is learned when its intact accuracy
//   is above the band, and a knock-out leaves it at chance when its accuracy is not;
// - a drop is significant by the exact one-sided McNemar test on the pairs whose outcome
//   the knock-out changes: of the `lost + gained` pairs that flip, a head that does
//   nothing flips each way with probability 1/2, so p = P(X >= lost), X ~ Bin(lost +
//   gained, 1/2), and the drop counts where p <= kDropAlpha / (heads knocked out)
//   (Bonferroni over the table's heads: each phenomenon's family of tests holds at 0.01).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lm/minimal_pairs.hpp"
#include "mha/ablation.hpp"

namespace mha::lm {

inline constexpr double kChanceAlpha = 0.01;
inline constexpr double kDropAlpha = 0.01;

// P(X >= k) for X ~ Binomial(n, 1/2), exactly (in log space, so n may be large).
double CoinUpperTail(int k, int n);
// The chance band of n pairs: [lo, hi] in accuracy, the smallest symmetric interval
// around n/2 a fair coin's count falls in with probability at least 1 - alpha.
struct ChanceBand {
  int lo_count = 0, hi_count = 0;  // correct pairs: the band is [lo_count, hi_count]
  double lo = 0, hi = 1;           // the same as accuracies
};
ChanceBand CoinBand(int n, double alpha = kChanceAlpha);
// The one-sided exact McNemar p-value of a drop: `lost` pairs right intact and wrong
// without the head, `gained` the other way round.
double McNemarDrop(int lost, int gained);

// Every query head of the model, in (layer, head) order.
std::vector<HeadRef> EveryHead(const LanguageModel& lm);

struct KnockoutCell {
  HeadRef head;
  int correct = 0;
  double accuracy = 0;
  int lost = 0, gained = 0;  // pairs right intact and wrong without the head, and the other way
  double p = 1;              // McNemarDrop(lost, gained)
  bool significant = false;  // p <= the table's per-head level
  bool to_chance = false;    // the accuracy without the head is inside (or below) the chance band
};

// One pair of a phenomenon to show beside its row: the first whose good sentence wins
// intact and loses without the row's carrier (else the first pair), with the margin
// logp_good - logp_bad intact and without each head of the table.
struct PairExample {
  int line = 0;
  std::string good, bad, cue;
  double margin = 0;
  std::vector<double> margin_without;  // per table head
};

struct PhenomenonRow {
  std::string phenomenon;
  int pairs = 0, correct = 0;
  double accuracy = 0;
  ChanceBand band;
  bool learned = false;             // intact accuracy above the band
  std::vector<KnockoutCell> cells;  // per table head
  std::vector<HeadRef> carriers;    // significant drop to chance (a learned phenomenon only)
  bool sole = false;                // one carrier, and no other head's drop is significant
  PairExample example;
};

struct KnockoutTable {
  AblationMode mode = AblationMode::Zero;
  int num_layers = 0, num_heads = 0;
  std::vector<HeadRef> heads;  // the heads knocked out, one at a time
  double level = 0;            // the per-head significance level, kDropAlpha / heads.size()
  PairsReport plain;           // the intact model's report
  std::vector<PhenomenonRow> rows;
};

// Called before each knock-out with (done, total, head): a worker's progress and cancel
// point (it may throw to stop).
using TableProgress = std::function<void(int done, int total, const HeadRef& head)>;

// Scores the pairs intact (or takes `plain`, already scored) and without each of
// `heads`, alone. `means` is needed for mean ablation only. Throws mha::Error.
KnockoutTable KnockOutHeads(const LanguageModel& lm, const std::vector<MinimalPair>& pairs,
                            const std::vector<HeadRef>& heads, AblationMode mode, const ContextMeans* means,
                            const PairsReport* plain = nullptr, const TableProgress& progress = {});

// The table as `mhaviz pairs --ablate ... --json` prints it under "table" (the
// statistics named, so a reader needs no code to check them).
nlohmann::json TableJson(const KnockoutTable& t);

}  // namespace mha::lm
