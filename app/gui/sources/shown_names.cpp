#include "gui/sources/shown_names.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "gui/draw/view_widgets.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/view_caches.hpp"
#include "lm/head_labels.hpp"
#include "lm/head_names.hpp"
#include "mha/teach.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The sentence's profile, for the result of generation `of`.
struct SentenceProfileState {
  std::vector<HeadProfile> profile;
  std::uint64_t of = ~0ull;
};

// Words numbered by first appearance: the identities of a sentence without a vocabulary.
std::vector<int> NumberWords(const std::vector<std::string>& tokens) {
  std::map<std::string, int> seen;
  std::vector<int> ids;
  for (const std::string& t : tokens) ids.push_back(seen.emplace(t, static_cast<int>(seen.size())).first->second);
  return ids;
}

// Each head's strongest pattern on the sentence, every layer in `layers`; `ids` the
// tokens' identities.
std::vector<HeadProfile> ProfileOnSentence(const std::vector<const Trace*>& layers, const std::vector<int>& ids) {
  std::vector<HeadProfile> heads;
  std::vector<std::vector<double>> counts;
  for (std::size_t l = 0; l < layers.size(); ++l)
    if (static_cast<int>(ids.size()) == layers[l]->seq)
      AddToProfile(*layers[l], ids, static_cast<int>(l), heads, counts);
  FinishProfile(heads, counts);
  return heads;
}

std::string Score(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

const HeadProfile* Find(const std::vector<HeadProfile>& ps, int layer, int head) {
  for (const HeadProfile& p : ps)
    if (p.layer == layer && p.head == head) return &p;
  return nullptr;
}

// A claim of lm/head_names.hpp as the window says it.
ShownHeadName FromClaim(const lm::HeadClaim& c, const std::vector<HeadProfile>& profiles, int layer, int head) {
  ShownHeadName n;
  n.kind = c.kind;
  n.key = c.job;
  n.claimed = c.kind != "none";
  n.evidence = c.evidence;
  if (c.kind == "pattern") {
    const HeadProfile* p = Find(profiles, layer, head);
    n.score = p ? p->score : 0;
    n.text = HeadPatternText(c.text) + " " + Score(n.score);
    n.measured_on = _("validation text");
  } else if (c.kind == "none") {
    n.text = PatternShown(HeadPattern::Spread);
    n.measured_on = _("validation text and minimal pairs");
  } else {
    n.text = _(c.text.c_str());
    n.measured_on = _("minimal pairs");
  }
  return n;
}

// The pattern on the sentence shown, against chance on its rows.
ShownHeadName OnSentence(AppState& s, int layer, int head, bool validation_measuring) {
  ShownHeadName n;
  n.kind = "none";
  n.key = "spread";
  n.measured_on =
      validation_measuring ? _("this sentence (the validation text is still being measured)") : _("this sentence");
  const std::vector<const Trace*> traces = LayerTraces(s);
  // One layer shown (not a trained model's pass): the profile numbers it 0.
  const int at = traces.size() == 1 ? 0 : layer;
  const HeadProfile* p = Find(SentenceProfile(s), at, head);
  if (!p || at < 0 || at >= static_cast<int>(traces.size())) {
    n.text = PatternShown(HeadPattern::Spread);
    return n;
  }
  if (p->label == "spread") {  // no pattern reaches kMinLabelScore: nothing to weigh against chance
    n.text = PatternShown(HeadPattern::Spread);
    n.score = p->score;
    n.evidence = "no pattern scores " + Score(kMinLabelScore) + " or more (the best " + Score(p->score) + ")";
    return n;
  }
  const Trace& t = *traces[static_cast<std::size_t>(at)];
  const LabelChance c = ChanceOfLabel(*p, t.seq, t.cfg.mask == Mask::Causal, TokenIds(s));
  const bool by_hand = !UsingTrainedModel(s) && DescribeWeights(s).kind == "hand-set";
  n.score = p->score;
  const std::string pattern = HeadPatternText(p->label) + " " + Score(p->score);
  if (by_hand && p->label != "spread" && c.lift >= kMinLift) {
    // Weights made to have the pattern: no chance to rule out.
    n.claimed = true;
    n.measured_on = _("set by hand");
  } else {
    n.claimed = c.claimed;
  }
  n.kind = n.claimed ? "pattern" : "none";
  n.key = n.claimed ? p->label : "spread";
  n.evidence = p->label + " " + Score(p->score) + " over " + std::to_string(c.rows) + " rows, chance " +
               Score(c.chance) + " (p = " + Score(c.chance_p) + ")";
  if (n.claimed && n.measured_on == _("set by hand"))
    n.text = pattern;
  else if (n.claimed)
    n.text = i18n::Format(_("%s (chance %s)"), pattern.c_str(), Score(c.chance).c_str());
  else
    n.text = i18n::Format(_("%s (%s, chance %s)"), PatternShown(HeadPattern::Spread), pattern.c_str(),
                          Score(c.chance).c_str());
  return n;
}

}  // namespace

std::vector<const Trace*> LayerTraces(const AppState& s) {
  std::vector<const Trace*> out;
  if (UsingTrainedModel(s) && !s.result.pass.layers.empty()) {
    for (const Trace& t : s.result.pass.layers) out.push_back(&t);
  } else if (HasResults(s)) {  // the last valid trace while the configuration cannot run
    out.push_back(&s.result.trace);
  }
  return out;
}

std::vector<int> TokenIds(const AppState& s) {
  if (UsingTrainedModel(s) && !s.result.pass.tokens.empty()) return s.result.pass.tokens;
  return NumberWords(s.result.tokens);
}

const std::vector<HeadProfile>& SentenceProfile(AppState& s) {
  SentenceProfileState& st = s.views.Get<SentenceProfileState>();
  if (st.of != s.result.generation) {
    st.profile = ProfileOnSentence(LayerTraces(s), TokenIds(s));
    st.of = s.result.generation;
  }
  return st.profile;
}

Primed PrimeSentenceProfile(const Trace& t, const Choice& c) {
  if (c.source.kind == ModelSourceKind::Trained) return nullptr;
  auto profile = std::make_shared<std::vector<HeadProfile>>(ProfileOnSentence({&t}, NumberWords(t.in.tokens)));
  return [profile](AppState& s) {
    SentenceProfileState& st = s.views.Get<SentenceProfileState>();
    st.profile = std::move(*profile);
    st.of = s.result.generation;
  };
}

namespace {

ShownHeadName Name(AppState& s, int layer, int head) {
  if (!UsingLanguageModel(s)) return OnSentence(s, layer, head, false);
  const Result& r = s.result;
  if (r.head_evidence.value) {
    const lm::HeadEvidence& e = *r.head_evidence.value;
    return FromClaim(lm::NameHead(e, layer, head).name, e.profiles, layer, head);
  }
  if (r.validation_labels.value && !r.head_evidence.measuring) {
    // Nothing stored for this checkpoint: its patterns on the validation text alone.
    lm::HeadEvidence e;
    e.profiles = *r.validation_labels.value;
    e.validation.name = std::filesystem::path(r.validation_labels.file).filename().string();
    e.windows = lm::kLabelWindows;
    return FromClaim(lm::NameHead(e, layer, head).name, e.profiles, layer, head);
  }
  return OnSentence(s, layer, head, r.validation_labels.measuring || r.head_evidence.measuring);
}

// The names of one result, in one language, from one state of the measures: the Model
// view asks for every head twice a frame, the header once.
struct NamesCache {
  std::uint64_t generation = ~0ull;
  const void *evidence = nullptr, *validation = nullptr;
  bool measuring = false;
  i18n::Lang lang = i18n::Lang::kEnglish;
  std::map<std::pair<int, int>, ShownHeadName> names;
};

}  // namespace

ShownHeadName NameShownHead(AppState& s, int layer, int head) {
  NamesCache& c = s.views.Get<NamesCache>();
  const Result& r = s.result;
  const bool measuring = r.validation_labels.measuring || r.head_evidence.measuring;
  if (c.generation != r.generation || c.evidence != r.head_evidence.value.get() ||
      c.validation != r.validation_labels.value.get() || c.measuring != measuring || c.lang != i18n::Current()) {
    c = NamesCache{
        r.generation, r.head_evidence.value.get(), r.validation_labels.value.get(), measuring, i18n::Current(), {}};
  }
  const auto at = c.names.find({layer, head});
  if (at != c.names.end()) return at->second;
  return c.names[{layer, head}] = Name(s, layer, head);
}

}  // namespace mha::gui
