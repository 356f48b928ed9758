// What each head of a trained model does, measured from its attention weights over
// held-out sequences, in the manner of TransformerLens's head detectors: a head's
// score for a pattern is the mean attention weight its queries put on the key that
// pattern names (averaged over the queries where the pattern names a key).
//
//   k-back      key i-k (k = 1 is the previous token)     self     key i
//   first       key 0 (queries i >= 1)                     reverse  key seq-1-i
//   induction   the key right after the previous occurrence of the query's token
//               (queries whose token occurred before)
//   sorted      (sort task) the input position holding the next token in sorted order
//
// A head's label is its best pattern when that scores at least kMinLabelScore, else
// "spread".
#pragma once

#include <string>
#include <vector>

#include "mha/model.hpp"
#include "mha/tasks.hpp"
#include "mha/train.hpp"

namespace mha {

struct HeadProfile {
  int layer = 0, head = 0;
  std::vector<double> back;  // back[k-1]: mean weight on the key k back, k = 1..kMaxBack
  double self = 0, first = 0, reverse = 0, induction = 0, sorted = 0;
  std::string label;  // "previous-token", "2-back", "self", "first", "reverse", "induction", "sorted",
                      // "spread"
  double score = 0;   // the label's score (for "spread": the best score)
};

constexpr int kMaxBack = 8;
constexpr double kMinLabelScore = 0.4;

// Runs the model on the held-out batch (trainer's forward pass) and profiles every
// head of every layer, layer by layer, head by head. `task` (optional) adds the
// task's own pattern where it has one (sorted).
std::vector<HeadProfile> ProfileHeads(Trainer& trainer, const Model& m, const Batch& heldout,
                                      const TaskSpec* task = nullptr);
// The same over several batches (one held-out set evaluated a part at a time, to bound
// the memory of the pass): each head's sums run over the sequences in the same order,
// so the profile is the one of a single batch holding them all.
std::vector<HeadProfile> ProfileHeads(Trainer& trainer, const Model& m, const std::vector<Batch>& heldout,
                                      const TaskSpec* task = nullptr);

// The same from one sequence's attention: attn is (num_heads * seq, seq) as
// Trace::attn (of sequence `sequence` of a batch's trace). Adds into sums; call
// FinishProfile once all sequences are in.
void AddToProfile(const Trace& t, const std::vector<int>& tokens, int layer, std::vector<HeadProfile>& heads,
                  std::vector<std::vector<double>>& counts, const TaskSpec* task = nullptr, int sequence = 0);
void FinishProfile(std::vector<HeadProfile>& heads, const std::vector<std::vector<double>>& counts);
// Sets p.label and p.score from p's scores (FinishProfile does it for every head; call
// it again after replacing a score measured elsewhere).
void LabelHead(HeadProfile& p);

}  // namespace mha
