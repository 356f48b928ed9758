// Linguistic jobs of a language model's heads, from the minimal pairs (minimal_pairs.hpp):
// for each phenomenon, the head whose mean weight from the deciding position to the cue
// word is highest (what `mhaviz pairs` reports) is given that phenomenon's job only when
// the weight clearly beats chance:
//
//   weight >= kJobRatio * uniform   and   weight - uniform >= kJobMargin
//
// where uniform is the weight evenly spread attention would put on the cue. A head that
// wins its phenomenon by a hair over uniform gets no job. The job's name says what the
// attention does (particle -> noun, classifier -> noun, verb -> subject); it says
// "agreement" only where the model also chooses the right form (the phenomenon's accuracy
// beats a coin by three standard deviations), else "looks at the subject": a head can
// look at the right word while the model does not use what it reads there.
//
// FindCues reads the same jobs off one sentence's pieces, so a class can check a label
// on the sentence it typed: the query row and the cue columns to read off the map.
#pragma once

#include <string>
#include <vector>

#include "lm/minimal_pairs.hpp"
#include "mha/mha.hpp"

namespace mha::lm {

inline constexpr double kJobRatio = 2.0;
inline constexpr double kJobMargin = 0.2;
// The accuracy a phenomenon needs to count as learned: half the pairs plus three
// standard deviations of a fair coin, 0.5 + 1.5 / sqrt(pairs) (0.606 for 200 pairs).
double LearnedAccuracy(int pairs);

// The job a phenomenon names: "particle-noun", "classifier-noun", "verb-subject" (Korean
// honorific agreement), "agreement" (English agreement across an attractor); "" for a
// phenomenon the project does not name.
std::string JobOfPhenomenon(const std::string& phenomenon);

struct HeadJob {
  int layer = 0, head = 0;
  std::string job;         // JobOfPhenomenon
  std::string text;        // what the label says, in English: "particle → noun", "looks at the subject", ...
  std::string phenomenon;  // the pairs' phenomenon it was measured on
  double weight = 0, uniform = 0, accuracy = 0;
  bool learned = false;  // accuracy >= LearnedAccuracy(pairs)
};

// Whether a mean weight on the cue clearly beats the uniform weight (the rule above).
bool BeatsChance(double weight, double uniform);

// One HeadJob per phenomenon whose best head beats chance, in the report's order. A
// head may hold several (one per phenomenon); two phenomena of one job on one head
// (particle 이/가 and 을/를 on L0H0) stay two entries.
std::vector<HeadJob> HeadJobs(const PairsReport& r);

// One place in a sentence where a job can be read off the map: the row `query` and the
// columns `cue` (positions in the pieces, <s> at 0).
//   particle-noun    query: a particle piece (가, 를, 은, 로 ...) after a noun's pieces in
//                    the same word; cue: those pieces. `choose` is the piece whose output
//                    chooses the particle (the noun's last piece: the pairs' deciding
//                    position).
//   classifier-noun  query: a native numeral (한, 두, 세 ...), whose output chooses the
//                    classifier; cue: the word before it (the noun).
//   verb-subject     query: the last piece before a sentence's final word (the verb),
//                    whose output starts the verb; cue: the first word that ends in a
//                    subject particle (이, 가, 께서, 은, 는).
struct CueSite {
  std::string job;
  int query = 0, choose = 0;
  std::vector<int> cue;
};
std::vector<CueSite> FindCues(const std::vector<std::string>& pieces);

// Attention of head h from the site's query row to its cue columns, and what uniform
// attention over the query's visible keys would put there.
double SiteWeight(const Trace& t, int h, const CueSite& site);
double SiteUniform(const CueSite& site);

}  // namespace mha::lm
