#include "gui/views/model_view/jobs_panel.hpp"

#include <algorithm>
#include <cstdio>

#include <imgui.h>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "lm/head_names.hpp"
#include "gui/panels/panels.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The label a job shows, in the interface's language.
// A job as the window names it: the knock-out's words ("classifier → noun") only where the
// stored evidence shows the model needs the head for it (lm/head_names.hpp, as the head's
// name says), else what the weight alone shows ("looks at the noun").
std::string JobText(const AppState& s, const lm::HeadJob& j) {
  if (const auto& ev = s.result.head_evidence.value) {
    const lm::HeadLabel l = lm::NameHead(*ev, j.layer, j.head);
    const auto causal = [&](const lm::HeadClaim& c) { return c.kind == "causal" && c.job == j.job; };
    if (causal(l.name) || std::any_of(l.also.begin(), l.also.end(), causal)) {
      if (j.job == "particle-noun") return _("particle → noun");
      if (j.job == "classifier-noun") return _("classifier → noun");
      if (j.job == "verb-subject") return _("verb → subject");
      return _("agreement");
    }
  }
  return j.job == "particle-noun" || j.job == "classifier-noun" ? _("looks at the noun") : _("looks at the subject");
}

// The jobs measured on the minimal pairs (sources/model_measures.hpp), or null.
const std::vector<lm::HeadJob>* Jobs(const AppState& s) {
  return UsingLanguageModel(s) ? s.result.head_jobs.value.get() : nullptr;
}

// The heads' jobs, one entry per (head, job): two particle phenomena on one head are one
// label, with the best-beating phenomenon kept for the numbers.
std::vector<lm::HeadJob> JobsOf(const AppState& s, int layer, int head) {
  std::vector<lm::HeadJob> out;
  if (const auto* jobs = Jobs(s))
    for (const lm::HeadJob& j : *jobs) {
      if (j.layer != layer || j.head != head) continue;
      auto same = std::find_if(out.begin(), out.end(), [&](const lm::HeadJob& o) { return o.text == j.text; });
      if (same == out.end())
        out.push_back(j);
      else if (j.weight / j.uniform > same->weight / same->uniform)
        *same = j;
    }
  return out;
}

std::vector<std::string> RawPieces(const AppState& s) {
  if (!UsingLanguageModel(s) || s.result.pass.tokens.empty()) return {};
  return s.choice.source.lm->tokenizer.Pieces(s.result.pass.tokens);
}

// The job's places in the current sentence with head (layer, head)'s weight on each.
struct SiteReading {
  lm::CueSite site;
  double weight = 0, uniform = 0, weight_choose = 0;
};
std::vector<SiteReading> ReadSites(const AppState& s, const lm::HeadJob& j) {
  std::vector<SiteReading> out;
  const auto& layers = s.result.pass.layers;
  if (j.layer >= static_cast<int>(layers.size())) return out;
  const Trace& t = layers[static_cast<std::size_t>(j.layer)];
  const std::vector<std::string> pieces = RawPieces(s);
  if (static_cast<int>(pieces.size()) != t.seq) return out;
  // "agreement" (English) has no sites read here: only Korean verb-final sentences are.
  const std::string job = j.job == "agreement" ? "" : j.job;
  for (const lm::CueSite& c : lm::FindCues(pieces)) {
    if (c.job != job) continue;
    SiteReading r{c, lm::SiteWeight(t, j.head, c), lm::SiteUniform(c), 0};
    lm::CueSite at_choose = c;
    at_choose.query = c.choose;
    r.weight_choose = lm::SiteWeight(t, j.head, at_choose);
    out.push_back(r);
  }
  return out;
}

std::string Shown(const AppState& s, int i) {
  return i >= 0 && i < static_cast<int>(s.result.tokens.size()) ? s.result.tokens[static_cast<std::size_t>(i)] : "?";
}

std::string CueText(const AppState& s, const lm::CueSite& c) {
  std::string out;
  for (int j : c.cue) out += (out.empty() ? "" : " ") + Shown(s, j);
  return out;
}

// "가 → _고양이 1.00 (uniform 0.50)"
std::string SiteText(const AppState& s, const SiteReading& r) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %.2f (", r.weight);
  char tail[64];
  std::snprintf(tail, sizeof tail, _("uniform %.2f"), r.uniform);
  return Shown(s, r.site.query) + " → " + CueText(s, r.site) + buf + tail + ")";
}

// Whether the job shows on this sentence: its weight, over the sentence's places,
// beats chance by the same rule as on the pairs.
bool ShowsHere(const std::vector<SiteReading>& rs) {
  if (rs.empty()) return false;
  double w = 0, u = 0;
  for (const SiteReading& r : rs) {
    w += r.weight;
    u += r.uniform;
  }
  return lm::BeatsChance(w / rs.size(), u / rs.size());
}

struct TryThis {
  const char* job;       // a HeadJob::job, or "induction" / "previous-token" (the validation labels)
  const char* sentence;  // example text, the same in every interface language
  const char* what;      // N_(): what to look at
};
// Each checked on mhaviz-small by the GUI tests: the job's head beats chance on it.
const TryThis kTryThese[] = {
    {"particle-noun", "고양이가 쥐를 잡았다", N_("particle → noun: the rows of 가 and 를 look at their noun")},
    {"verb-subject", "할머니께서 아침마다 웃으신다",
     N_("looks at the subject: before the verb, the row of 마다 looks back at 할머니께서")},
    {"classifier-noun", "책 세 권을 샀다", N_("classifier → noun: 세, which chooses 권, looks at 책")},
    {"induction", "고양이가 쥐를 잡았다. 고양이가 쥐를",
     N_("induction: the second 고양이가 looks at what followed the first")},
    {"agreement", "The keys to the old cabinet are on the table.",
     N_("agreement: the verb looks back past the cabinet to the keys")},
};

bool ModelHasJob(const AppState& s, const std::string& job) {
  if (job == "induction" || job == "previous-token") {
    if (const auto& labels = s.result.validation_labels.value; UsingLanguageModel(s) && labels)
      for (const HeadProfile& hp : *labels)
        if (hp.label == job) return true;
    return false;
  }
  if (const auto* jobs = Jobs(s))
    for (const lm::HeadJob& j : *jobs)
      if (j.job == job) return true;
  return false;
}

}  // namespace

std::vector<std::string> HeadJobTexts(const AppState& s, int layer, int head) {
  std::vector<std::string> out;
  for (const lm::HeadJob& j : JobsOf(s, layer, head)) out.push_back(JobText(s, j));
  return out;
}

std::string HeadJobDetails(const AppState& s, int layer, int head) {
  std::string out;
  for (const lm::HeadJob& j : JobsOf(s, layer, head)) {
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  _("%s: on the minimal pairs (%s), %.2f of its weight from the piece that chooses the form to the "
                    "cue word, against %.2f uniform; the model's accuracy there %.2f"),
                  JobText(s, j).c_str(), j.phenomenon.c_str(), j.weight, j.uniform, j.accuracy);
    out += std::string("\n") + buf;
    if (!j.learned) out += std::string(" ") + _("(at chance: the model does not choose the form by it)");
    for (const SiteReading& r : ReadSites(s, j)) {
      out += "\n  " + SiteText(s, r);
      // The pairs measure the piece whose output chooses the form; a particle's own row
      // comes after that choice, so both are given.
      if (r.site.choose != r.site.query) {
        char at[160];
        std::snprintf(at, sizeof at, _("; where it is chosen, at %s: %.2f"), Shown(s, r.site.choose).c_str(),
                      r.weight_choose);
        out += at;
      }
    }
  }
  return out;
}

std::string HeadJobsStatus(const AppState& s) {
  const auto& m = s.result.head_jobs;
  if (!UsingLanguageModel(s)) return "";
  if (m.value) return "minimal pairs";
  if (m.measuring) return "minimal pairs (measuring)";
  return m.unavailable.empty() ? "" : "minimal pairs (" + m.unavailable + ")";
}

std::string HeadJobsStatusShown(const AppState& s) {
  const auto& m = s.result.head_jobs;
  if (!UsingLanguageModel(s)) return "";
  if (m.value) return _("minimal pairs");
  if (m.measuring) return _("minimal pairs (measuring)");
  return m.unavailable.empty() ? "" : i18n::Format(_("minimal pairs (%s)"), m.unavailable.c_str());
}

void DrawTryThese(AppState& s) {
  if (!UsingLanguageModel(s)) return;
  std::vector<const TryThis*> shown;
  for (const TryThis& t : kTryThese)
    if (ModelHasJob(s, t.job)) shown.push_back(&t);
  if (shown.empty()) return;
  ImGui::TextUnformatted(_("Try these:"));
  int n = 0;
  for (const TryThis* tp : shown) {
    const TryThis& t = *tp;
    // Wrap the buttons at the view's right edge rather than run past it.
    const float w = ImGui::CalcTextSize(t.sentence).x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
    ImGui::PushID(n);
    if (ImGui::SmallButton(t.sentence)) {
      SetSentence(s, t.sentence);
      s.dirty = true;
    }
    Probe(s, ("try_these " + std::to_string(n)).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _(t.what));
    ImGui::PopID();
    ++n;
  }
}

void DrawJobsOnSentence(AppState& s) {
  const auto* jobs = Jobs(s);
  if (!jobs || jobs->empty()) return;
  ImGui::Spacing();
  SectionTitle(s, _("Jobs on this sentence"),
               _("each head's job, read off its map: the row of the query piece, the columns of the word it looks at"),
               true);
  const int L = static_cast<int>(s.result.pass.layers.size());
  const int H = L > 0 ? s.result.pass.layers.front().cfg.num_heads : 0;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      for (const lm::HeadJob& j : JobsOf(s, l, h)) {
        const std::vector<SiteReading> rs = ReadSites(s, j);
        std::string line = "L" + std::to_string(l) + "H" + std::to_string(h) + " " + JobText(s, j) + ": ";
        if (rs.empty()) {
          Muted((line + _("nothing in this sentence to read it on")).c_str());
          continue;
        }
        for (std::size_t i = 0; i < rs.size(); ++i) line += (i ? ", " : "") + SiteText(s, rs[i]);
        ImGui::PushStyleColor(ImGuiCol_Text, ShowsHere(rs) ? ImGui::GetStyleColorVec4(ImGuiCol_Text)
                                                           : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%s", line.c_str());
        ImGui::PopStyleColor();
      }
  // Said, not hidden: the English attractor sentence is in the course, and no head of
  // this model looks at its subject clearly enough to list it under Try these.
  for (const TryThis& t : kTryThese)
    if (std::string(t.job) == "agreement" && !ModelHasJob(s, t.job))
      Muted(
          i18n::Format(_("No head looks past the attractor to the subject clearly enough to list \"%s\"."), t.sentence)
              .c_str());
}

nlohmann::json DumpHeadJobs(AppState& s) {
  nlohmann::json jobs = nlohmann::json::array();
  if (const auto* all = Jobs(s))
    for (const lm::HeadJob& j : *all) {
      nlohmann::json sites = nlohmann::json::array();
      std::vector<SiteReading> rs = ReadSites(s, j);
      for (const SiteReading& r : rs)
        sites.push_back({{"query", r.site.query},
                         {"choose", r.site.choose},
                         {"cue", r.site.cue},
                         {"weight", r.weight},
                         {"weight_from_choose", r.weight_choose},
                         {"uniform", r.uniform}});
      jobs.push_back({{"layer", j.layer},
                      {"head", j.head},
                      {"job", j.job},
                      {"text", j.text},
                      {"shown", JobText(s, j)},
                      {"phenomenon", j.phenomenon},
                      {"weight", j.weight},
                      {"uniform", j.uniform},
                      {"accuracy", j.accuracy},
                      {"learned", j.learned},
                      {"sites", sites},
                      {"shows_here", ShowsHere(rs)}});
    }
  nlohmann::json tries = nlohmann::json::array(), left_out = nlohmann::json::array();
  if (UsingLanguageModel(s))
    for (const TryThis& t : kTryThese)
      (ModelHasJob(s, t.job) ? tries : left_out).push_back({{"job", t.job}, {"sentence", t.sentence}});
  return {{"jobs", jobs},
          {"jobs_measured_on", HeadJobsStatus(s)},
          {"pairs_file", s.result.head_jobs.file},
          {"try_these", tries},
          {"try_these_left_out", left_out}};
}

}  // namespace mha::gui
