#include "lm/head_names.hpp"

#include <algorithm>
#include <cstdio>

#include "lm/head_jobs.hpp"
#include "text/i18n.hpp"

namespace mha::lm {
namespace {

// What a knock-out shows the model needs the head for, by job.
const char* CausalText(const std::string& job) {
  if (job == "particle-noun") return N_("particle → noun");
  if (job == "classifier-noun") return N_("classifier → noun");
  if (job == "verb-subject") return N_("verb → subject");
  return N_("agreement");
}

// Where the head only looks: the word the phenomenon's form depends on.
const char* AttentionText(const std::string& job) {
  if (job == "particle-noun" || job == "classifier-noun") return N_("looks at the noun");
  return N_("looks at the subject");
}

std::string Num(const char* fmt, double v) {
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string PairsSource(const HeadEvidence& e) { return "minimal pairs (" + e.pairs.name + ")"; }

// Every phenomenon with a job whose knock-out of this head is a significant drop of a
// learned accuracy, the largest drop first.
std::vector<HeadClaim> CausalClaims(const HeadEvidence& e, const HeadRef& h) {
  struct Found {
    double drop;
    HeadClaim claim;
  };
  std::vector<Found> found;
  const KnockoutTable& t = e.table;
  const auto k = std::find(t.heads.begin(), t.heads.end(), h);
  if (k == t.heads.end()) return {};
  const std::size_t at = static_cast<std::size_t>(k - t.heads.begin());
  for (const PhenomenonRow& r : t.rows) {
    const std::string job = JobOfPhenomenon(r.phenomenon);
    const KnockoutCell& c = r.cells[at];
    if (job.empty() || !r.learned || !c.significant) continue;
    HeadClaim cl;
    cl.text = CausalText(job);
    cl.kind = "causal";
    cl.job = job;
    cl.phenomenon = r.phenomenon;
    cl.measured_on = PairsSource(e) + ", every head knocked out alone (" + ToString(t.mode) + ")";
    char p[32];
    std::snprintf(p, sizeof p, "%.1g", c.p);
    cl.evidence = r.phenomenon + " " + Num("%.3f", r.accuracy) + " -> " + Num("%.3f", c.accuracy) +
                  " without it over " + std::to_string(r.pairs) + " pairs (McNemar p = " + p +
                  (c.to_chance ? "; at chance" : "") + ")";
    found.push_back({r.accuracy - c.accuracy, cl});
  }
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.drop > b.drop; });
  std::vector<HeadClaim> out;
  for (Found& f : found) out.push_back(std::move(f.claim));
  return out;
}

std::vector<HeadClaim> PatternClaims(const HeadEvidence& e, const HeadRef& h) {
  for (const HeadProfile& p : e.profiles) {
    if (p.layer != h.layer || p.head != h.head || p.label == "spread") continue;
    HeadClaim cl;
    cl.text = p.label;
    cl.kind = "pattern";
    cl.job = p.label;
    cl.measured_on = "validation text (" + e.validation.name + ", " + std::to_string(e.windows) +
                     " windows; induction on their first halves repeated)";
    cl.evidence = p.label + " score " + Num("%.2f", p.score) + " (mean weight on the key the pattern names)";
    return {cl};
  }
  return {};
}

// The attention jobs of lm/head_jobs.hpp's rule (the phenomenon's best head on the cue,
// clearly beyond uniform), one per job.
std::vector<HeadClaim> AttentionClaims(const HeadEvidence& e, const HeadRef& h) {
  std::vector<HeadClaim> out;
  for (const HeadJob& j : HeadJobs(e.table.plain)) {
    if (j.layer != h.layer || j.head != h.head) continue;
    const char* text = AttentionText(j.job);
    if (std::any_of(out.begin(), out.end(), [&](const HeadClaim& c) { return c.text == text; })) continue;
    HeadClaim cl;
    cl.text = text;
    cl.kind = "attention";
    cl.job = j.job;
    cl.phenomenon = j.phenomenon;
    cl.measured_on = PairsSource(e) + ", attention from the piece that chooses the form to the cue word";
    cl.evidence = j.phenomenon + ": weight " + Num("%.2f", j.weight) + " against " + Num("%.2f", j.uniform) +
                  " uniform; no knock-out shows the model needs it";
    out.push_back(cl);
  }
  return out;
}

}  // namespace

HeadLabel NameHead(const HeadEvidence& e, int layer, int head) {
  const HeadRef h{layer, head};
  HeadLabel l;
  l.layer = layer;
  l.head = head;
  std::vector<HeadClaim> claims = CausalClaims(e, h);
  for (auto* more : {&PatternClaims, &AttentionClaims}) {
    std::vector<HeadClaim> c = more(e, h);
    // A causal claim already names the job; its attention-only twin adds nothing.
    for (HeadClaim& x : c)
      if (std::none_of(claims.begin(), claims.end(), [&](const HeadClaim& y) { return y.job == x.job; }))
        claims.push_back(std::move(x));
  }
  if (claims.empty()) {
    l.name.text = N_("spread");
    l.name.kind = "none";
    l.name.job = "spread";
    l.name.measured_on = "validation text (" + e.validation.name + ") and " + PairsSource(e);
    l.name.evidence = "no pattern scores 0.4 or more, no cue weight beats uniform, no knock-out costs a phenomenon";
    return l;
  }
  l.name = claims.front();
  l.also.assign(claims.begin() + 1, claims.end());
  return l;
}

std::vector<HeadLabel> NameEveryHead(const HeadEvidence& e) {
  std::vector<HeadLabel> out;
  for (int l = 0; l < e.table.num_layers; ++l)
    for (int h = 0; h < e.table.num_heads; ++h) out.push_back(NameHead(e, l, h));
  return out;
}

const std::vector<const char*>& HeadNameTexts() {
  static const std::vector<const char*> texts = {
      N_("particle → noun"),   N_("classifier → noun"),    N_("verb → subject"), N_("agreement"),
      N_("looks at the noun"), N_("looks at the subject"), N_("spread")};
  return texts;
}

nlohmann::json LabelJson(const HeadLabel& l) {
  auto claim = [](const HeadClaim& c) {
    return nlohmann::json{{"text", c.text},
                          {"kind", c.kind},
                          {"job", c.job},
                          {"phenomenon", c.phenomenon},
                          {"measured_on", c.measured_on},
                          {"evidence", c.evidence}};
  };
  nlohmann::json also = nlohmann::json::array();
  for (const HeadClaim& c : l.also) also.push_back(claim(c));
  return {{"layer", l.layer},
          {"head", l.head},
          {"name", HeadName({l.layer, l.head})},
          {"label", claim(l.name)},
          {"also", also}};
}

}  // namespace mha::lm
