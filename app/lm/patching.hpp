// Activation patching on a language model (Meng et al. 2022's causal tracing; Wang et
// al. 2022 traced the IOI circuit this way): which head carries what makes the clean
// sentence's next piece likely?
//
//   PatchReport r = PatchEveryHead(lm, "할머니께서 방에서", "형이 방에서", "주무", true);
//
// The corrupt sentence is run with one head's context (before W_O reads it) taken from
// the clean sentence's run, at every position (or at one), and the target piece's
// log-probability after the last position is measured. What the head restores is
//
//     recovered = (patched - corrupt) / (clean - corrupt)
//
// 1: the head alone carries the whole difference; 0: nothing; it can be negative or
// above 1. The patch is a variant of the one forward pass (mha::PatchHeads), as
// ablation is; the two sentences must have the same number of pieces, position i of
// one standing for position i of the other.
#pragma once

#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/ablation.hpp"

namespace mha::lm {

struct PatchSide {
  std::string sentence;
  std::vector<int> ids;             // <s> and the pieces
  std::vector<std::string> pieces;  // their spellings
  double logp = 0;                  // log P(target) after the last position, nats
};

struct HeadPatch {
  HeadRef head;
  double logp = 0, recovered = 0;             // every position patched together
  std::vector<double> logp_at, recovered_at;  // one position patched at a time (empty: not measured)
};

struct LayerPatch {
  int layer = 0;
  double logp = 0, recovered = 0;  // every head of the layer, every position
};

struct PatchReport {
  PatchSide clean, corrupt;
  int target = 0;
  std::string target_piece;
  bool target_default = false;   // the clean run's likeliest next piece (no --target)
  std::vector<HeadPatch> heads;  // (layer, head) order
  std::vector<LayerPatch> layers;
};

// A sentence as patching reads it: NFC, <s> first, refused (mha::Error naming `flag`)
// when empty or longer than the model's context.
std::vector<int> PatchIds(const LanguageModel& lm, const std::string& sentence, const std::string& flag);
// The id of `piece` as the vocabulary spells it, or of "▁" + piece (a word start).
// Throws mha::Error naming the clean run's likeliest next pieces (`clean_logits`, one
// row) otherwise.
int TargetPiece(const LanguageModel& lm, const std::string& piece, const float* clean_logits);

// Every head patched alone (and, with `per_position`, at each position alone), every
// layer's heads together. Throws mha::Error with a teaching message: a sentence empty
// or too long, different piece counts (both tokenisations named), a target not in the
// vocabulary, or a target the two runs give the same log-probability (nothing to
// recover).
PatchReport PatchEveryHead(const LanguageModel& lm, const std::string& clean, const std::string& corrupt,
                           const std::string& target, bool per_position);

}  // namespace mha::lm
