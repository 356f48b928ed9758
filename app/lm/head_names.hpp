// One name per head for every consumer (the views, the presentation header, the
// exports), from what was measured (lm/head_evidence.hpp). A name claims what the
// evidence supports and no more, in this order of preference:
//
//   causal     the head's knock-out costs a learned phenomenon significantly (the proof
//              table's test, lm/pairs_table.hpp): "verb → subject", "classifier → noun",
//              "particle → noun", "agreement" (the phenomenon with the largest drop)
//   pattern    a positional pattern on the validation text (mha/heads.hpp):
//              "previous-token", "induction", "first", ...
//   attention  the head looks at a phenomenon's cue word clearly beyond uniform
//              (lm/head_jobs.hpp's rule) but no knock-out shows the model needs it:
//              "looks at the subject", "looks at the noun"
//   none       "spread"
//
// So a previous-token head whose attention happens to land on a particle's noun is
// called previous-token, not "particle → noun", unless knocking it out costs the
// particles. `text` is English and a msgid of po/ (the views show _(text)); `also`
// lists the other claims the evidence makes about the head, in the same order.
#pragma once

#include <string>
#include <vector>

#include "lm/head_evidence.hpp"

namespace mha::lm {

struct HeadClaim {
  std::string text;         // "verb → subject", "previous-token", "looks at the subject", "spread"
  std::string kind;         // "causal", "pattern", "attention", "none"
  std::string job;          // a key: "verb-subject", "classifier-noun", ..., or the pattern's label
  std::string phenomenon;   // the pairs' phenomenon it was measured on ("" for a pattern)
  std::string measured_on;  // "minimal pairs (pairs.jsonl), every head knocked out alone (zero)", ...
  std::string evidence;     // the numbers: "honorific agreement 0.940 -> 0.560 without it (McNemar p = 2e-09)"
};

struct HeadLabel {
  int layer = 0, head = 0;
  HeadClaim name;               // what the head is called
  std::vector<HeadClaim> also;  // the other claims, strongest first
};

HeadLabel NameHead(const HeadEvidence& e, int layer, int head);
// Every head, (layer, head) order.
std::vector<HeadLabel> NameEveryHead(const HeadEvidence& e);

// The texts a name can have, for the views' translations (each is marked N_()).
const std::vector<const char*>& HeadNameTexts();

nlohmann::json LabelJson(const HeadLabel& l);

}  // namespace mha::lm
