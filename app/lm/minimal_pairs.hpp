// Minimal pairs in the manner of BLiMP: a grammatical sentence and the same sentence with
// one form wrong ("고양이가 ..." against "고양이이 ..."). A language model knows the rule
// when it gives the good sentence the higher probability; a head does the job when, at
// the position that decides the form, it attends to the word the form depends on (the
// cue: the noun before a particle, the subject before an honorific verb).
//
//   std::vector<MinimalPair> pairs = LoadMinimalPairs("assets/corpus/pairs.jsonl");
//   PairsReport r = ScoreMinimalPairs(lm, pairs);
//   r.phenomena[i].accuracy      the share of pairs where the good sentence wins
//   r.phenomena[i].best_layer    the head whose weight from the deciding position to the
//   r.phenomena[i].best_head     cue is highest on average, that mean weight, and the
//   r.phenomena[i].best_weight   weight uniform attention would give (cue pieces / n)
//   PairsKnockouts k = KnockOutFoundHeads(lm, pairs, r);
//   k.runs[k.found[i]].accuracy[i]    phenomenon i's accuracy without its found head
//   k.runs[k.control[i]].accuracy[i]  and without a control head of the same layer
//
// Everything throws mha::Error with a teaching message; nothing here touches the UI.
#pragma once

#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/ablation.hpp"

namespace mha::lm {

// One line of a pairs file (JSON Lines): {"phenomenon", "good", "bad", "cue", "prefix"}.
// `prefix` is the text the two sentences share up to the deciding position (for people
// reading the file; the scorer finds the shared pieces itself).
struct MinimalPair {
  std::string phenomenon, good, bad, cue, prefix;
  int line = 0;  // 1-based, for messages
};

// Reads a pairs file. Throws mha::Error naming the file and line for a missing file, a
// line that is not a JSON object, a missing or empty field, good == bad, or a cue that
// is not in the good sentence. Blank lines are skipped; an empty file is refused.
std::vector<MinimalPair> LoadMinimalPairs(const std::string& path);
std::vector<MinimalPair> ParseMinimalPairs(const std::string& text, const std::string& name);

// One pair through the model.
struct PairScore {
  double logp_good = 0, logp_bad = 0;  // log-probability (nats) of each sentence's pieces after the shared ones
  int decide = 0;                      // the position whose output predicts the first differing piece
  std::vector<int> cue;                // the positions of the cue's pieces (BOS is position 0); empty when
                                       // a piece joins the cue's end to the form, so no position decides
                                       // after the cue (the pair then counts for accuracy only)
  std::vector<double> cue_weight;      // per layer * num_heads + head: attention from decide to the cue pieces
  bool correct() const { return logp_good > logp_bad; }
};
// Throws mha::Error if the sentences, with BOS, do not fit the model's context, if one's
// pieces are a prefix of the other's, or if the cue does not end before they differ.
// `ablate` (one per layer, mha/ablation.hpp), if given, knocks heads out of both runs.
// A sentence longer than the context's pieces can cover (`longest_piece` bytes each, as
// LongestPieceBytes; 0: measured here) is refused before it is tokenised.
PairScore ScoreMinimalPair(const LanguageModel& lm, const MinimalPair& p,
                           const std::vector<HeadAblation>* ablate = nullptr, std::size_t longest_piece = 0);
// The bytes of " " + text the vocabulary's longest piece covers.
std::size_t LongestPieceBytes(const LanguageModel& lm);

struct PhenomenonScore {
  std::string phenomenon;
  int pairs = 0, correct = 0;
  double accuracy = 0;
  int attention_pairs = 0;          // the pairs whose cue ends before the deciding position
  std::vector<double> mean_weight;  // per layer * num_heads + head, averaged over those pairs
  double uniform = 0;               // mean over those pairs of cue pieces / (decide + 1)
  int best_layer = 0, best_head = 0;
  double best_weight = 0;
};
struct PairsReport {
  int num_layers = 0, num_heads = 0;
  std::vector<PhenomenonScore> phenomena;  // in the order they first appear in the file
  // Per pair, in the file's order: logp_good - logp_bad (> 0: the good sentence wins),
  // and the index of its phenomenon in `phenomena`. A knock-out's paired test reads them.
  std::vector<double> margins;
  std::vector<int> phenomenon_of;
};
PairsReport ScoreMinimalPairs(const LanguageModel& lm, const std::vector<MinimalPair>& pairs,
                              const std::vector<HeadAblation>* ablate = nullptr);

// The causal half of the head-finding report: does the model need the head it attends
// with? For each phenomenon, its found head (best_layer, best_head) is knocked out
// (zero ablation), and so is a control: the head of the same layer with the least mean
// weight on the cue (of another layer where the layer has one head; none if the model
// has one head), so that a drop is the found head's and not any head's. Each distinct
// head is knocked out alone, once, and every phenomenon is scored without it.
struct KnockoutRun {
  HeadRef head;
  std::vector<double> accuracy;  // per phenomenon, in the report's order
};
struct PairsKnockouts {
  std::vector<KnockoutRun> runs;  // each head knocked out, in (layer, head) order
  std::vector<int> found;         // per phenomenon: the run of its found head
  std::vector<int> control;       // per phenomenon: the run of its control head, or -1
};
// The control head of phenomenon `p` of `plain`, or {-1, -1} if the model has one head.
HeadRef ControlHead(const PairsReport& plain, const PhenomenonScore& p);
PairsKnockouts KnockOutFoundHeads(const LanguageModel& lm, const std::vector<MinimalPair>& pairs,
                                  const PairsReport& plain);

}  // namespace mha::lm
