// One name per head for every view, the presentation header and the exports: the Model
// view's maps, the Importance chart, the header over a presented view all call
// NameShownHead, so a head is called the same everywhere. In this order of evidence:
//
//   a language model's measured evidence (lm/head_names.hpp: a knock-out's job before a
//     pattern on the validation text before attention on the pairs' cue words), the
//     shipped file or the cache: instant;
//   its patterns on the validation text, while no evidence was stored for it;
//   otherwise the pattern on the sentence shown (mha/heads.hpp), claimed only where it
//     beats a random pick on this sentence's rows (ChanceOfLabel), or where the weights
//     were set by hand to make it (the positional heads, the lessons' examples).
//
// Each name says what it was measured on.
#pragma once

#include <string>
#include <vector>

#include "gui/state/app_state.hpp"
#include "gui/state/recompute_state.hpp"
#include "mha/heads.hpp"

namespace mha::gui {

struct ShownHeadName {
  std::string text;         // as shown: "verb → subject", "previous-token 0.95"
  std::string key;          // English, for --dump-state: "verb-subject", "previous-token", "spread"
  std::string kind;         // "causal", "pattern", "attention", "none"
  bool claimed = false;     // a job or a pattern the evidence supports (else "spread", or below chance)
  std::string measured_on;  // as shown: "validation text", "this sentence", "set by hand"
  std::string evidence;     // the numbers, English (the tooltip's last line)
  double score = 0;         // a pattern's score (0 for a job)
};

ShownHeadName NameShownHead(AppState& s, int layer, int head);

// Every head's pattern on the sentence shown, every layer (the Model view's fallback,
// and what the names say on the sentence), recomputed with each new result.
const std::vector<HeadProfile>& SentenceProfile(AppState& s);
// Beside a big seeded trace, on the recompute's task: its sentence profile (at 100 heads
// x 1024 tokens their reads, a page apart, took the window 110 ms).
Primed PrimeSentenceProfile(const Trace& t, const Choice& c);

// The traces the Model view shows: every layer of a trained model, else the one layer.
std::vector<const Trace*> LayerTraces(const AppState& s);
// The sentence's token identities (induction and duplicates need them): the model's
// ids, or the words numbered by first appearance.
std::vector<int> TokenIds(const AppState& s);

}  // namespace mha::gui
