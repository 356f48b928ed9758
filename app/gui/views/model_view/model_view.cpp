// Model view (BertViz's): every layer x head as a small heatmap of its attention on
// the learner's sentence. Clicking one opens it in the Heatmaps view at that layer,
// enlarged, and makes it the head the teaching views show. Each head carries the
// label of mha/heads.hpp (previous-token, first, induction...) measured on the
// sentence shown.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/views/model_view/jobs_panel.hpp"
#include "gui/state/app_state.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/panels/panels.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "mha/heads.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The view's own state (AppState::views): each head's label measured on the sentence,
// for the result of generation `of`.
struct ModelViewState {
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

// Beside a big seeded trace, on the recompute's task: its labels (at 100 heads x 1024
// tokens their reads, a page apart, took the window 110 ms). A trained model's layers
// are profiled by the view itself, all of them at once.
Primed PrimeModelView(const Trace& t, const Choice& c) {
  if (c.source.kind == ModelSourceKind::Trained) return nullptr;
  auto profile = std::make_shared<std::vector<HeadProfile>>(ProfileOnSentence({&t}, NumberWords(t.in.tokens)));
  return [profile](AppState& s) {
    ModelViewState& st = s.views.Get<ModelViewState>();
    st.profile = std::move(*profile);
    st.of = s.result.generation;
  };
}

// The traces the grid shows: every layer of a trained model, else the one layer.
std::vector<const Trace*> LayerTraces(const AppState& s) {
  std::vector<const Trace*> out;
  if (UsingTrainedModel(s) && !s.result.pass.layers.empty()) {
    for (const Trace& t : s.result.pass.layers) out.push_back(&t);
  } else if (HasResults(s)) {  // the last valid trace while the configuration cannot run
    out.push_back(&s.result.trace);
  }
  return out;
}

// The sentence's token identities (induction and duplicates need them): the model's
// ids, or the words numbered by first appearance.
std::vector<int> TokenIds(const AppState& s) {
  if (UsingTrainedModel(s) && !s.result.pass.tokens.empty()) return s.result.pass.tokens;
  return NumberWords(s.result.tokens);
}

// Where the labels were measured: the validation text (a language model's, once it is
// measured), else the sentence shown, and why not the validation text.
struct LabelsOn {
  enum class Where { Validation, Sentence, SentenceMeasuring, SentenceUnavailable } where = Where::Sentence;
  std::string why;  // SentenceUnavailable: the reason
  // --dump-state's "labels_measured_on" (English).
  std::string English() const {
    switch (where) {
      case Where::Validation: return "validation text";
      case Where::Sentence: return "sentence";
      case Where::SentenceMeasuring: return "sentence (measuring)";
      case Where::SentenceUnavailable: return "sentence (validation text unavailable (" + why + "))";
    }
    return "";
  }
  // The same, as the view says it.
  std::string Shown() const {
    switch (where) {
      case Where::Validation:
        return _("Labels measured on: validation text (induction: on its windows' first halves, repeated)");
      case Where::Sentence: return _("Labels measured on: sentence");
      case Where::SentenceMeasuring:
        return _("Labels measured on: sentence (the validation text is still being measured)");
      case Where::SentenceUnavailable:
        return i18n::Format(_("Labels measured on: sentence (validation text unavailable: %s)"), why.c_str());
    }
    return "";
  }
};

// Labels measured on the validation text when the source is the language model and
// they are ready; else on the current result, recomputed when the result changes.
// `on` says which.
const std::vector<HeadProfile>& Labels(AppState& s, LabelsOn* on) {
  const auto& v = s.result.validation_labels;
  using W = LabelsOn::Where;
  if (UsingLanguageModel(s) && v.value) {
    on->where = W::Validation;
    return *v.value;
  }
  on->where = !UsingLanguageModel(s)   ? W::Sentence
              : v.measuring            ? W::SentenceMeasuring
              : !v.unavailable.empty() ? W::SentenceUnavailable
                                       : W::Sentence;
  on->why = v.unavailable;
  // (a big recompute's task made them beside the trace: PrimeModelView)
  ModelViewState& st = s.views.Get<ModelViewState>();
  if (st.of != s.result.generation) {
    st.profile = ProfileOnSentence(LayerTraces(s), TokenIds(s));
    st.of = s.result.generation;
  }
  return st.profile;
}

// A thumbnail of at most `blocks` x `blocks` cells: longer sentences are sampled (the
// nearest cell), so a 1,000-token sentence or 256 heads still draw in a frame. Click
// a map for every cell.
void DrawMap(ImDrawList* dl, const Trace& t, int h, ImVec2 p0, float size, int blocks) {
  const int rows = std::min(t.seq, blocks), cols = std::min(t.seq_kv, blocks);
  const float cw = size / static_cast<float>(cols), ch = size / static_cast<float>(rows);
  const auto A = t.AttnHead(h);
  const bool causal = t.cfg.mask == Mask::Causal;
  for (int bi = 0; bi < rows; ++bi) {
    const int i = static_cast<int>(static_cast<long long>(bi) * t.seq / rows);
    for (int bj = 0; bj < cols; ++bj) {
      const int j = static_cast<int>(static_cast<long long>(bj) * t.seq_kv / cols);
      const ImU32 col = causal && j > i ? Col32(render::kMaskedColour) : Col32(render::Colormap(A(i, j)));
      dl->AddRectFilled(ImVec2(p0.x + bj * cw, p0.y + bi * ch), ImVec2(p0.x + (bj + 1) * cw, p0.y + (bi + 1) * ch),
                        col);
    }
  }
}

void OpenHead(AppState& s, int layer, int h) {
  if (UsingTrainedModel(s) && s.choice.layer != layer) {
    s.choice.layer = layer;
    s.dirty = true;
  }
  s.ui.enlarged = h;
  s.choice.head = h;
  ShowView(s, "heatmaps");
}

}  // namespace

namespace {

// The grid of maps: their size, how many a row holds, how finely they are sampled, and
// the lines of text above each (its label, its score, a language model's jobs).
struct MapGrid {
  int L = 0, H = 0;
  float label_w = 0, gap = 6, size = 0, text_h = 0;
  int per_row = 1, blocks = 8, lines = 2;
  std::vector<std::vector<std::string>> job_lines;  // [l * H + h]
};

// Presented, every layer's maps, their labels and switches fit the window's height:
// the maps shrink (to no less than 48 px) until the rows they take fit, then take as
// many a row as the width allows at that size.
void FitHeight(MapGrid& g, int L, int H, float avail_w) {
  const float avail_h = ImGui::GetContentRegionAvail().y;
  const float under = g.lines * g.text_h + ImGui::GetFrameHeight() + g.gap + 6;
  for (int pass = 0; pass < 2; ++pass) {
    const int rows = L * ((H + g.per_row - 1) / g.per_row);
    const float fit = avail_h / static_cast<float>(rows) - under;
    if (fit >= g.size) break;
    g.size = std::max(48.0f, fit);
    g.per_row = std::max(1, std::min(H, static_cast<int>(avail_w / (g.size + g.gap))));
  }
}

MapGrid LayOutMaps(const AppState& s, int L, int H) {
  MapGrid g;
  g.L = L;
  g.H = H;
  g.label_w = ImGui::CalcTextSize(i18n::Format(_("layer %d"), 10).c_str()).x + 8;
  const float avail = ImGui::GetContentRegionAvail().x - g.label_w;
  g.size = std::clamp(avail / static_cast<float>(std::min(H, 8)) - g.gap, 48.0f, 220.0f);
  g.per_row = std::max(1, static_cast<int>(avail / (g.size + g.gap)));
  // At most about 200,000 cells in all, and no more per map than it has pixels.
  g.blocks = std::clamp(static_cast<int>(std::sqrt(200000.0 / (L * H))), 8, std::max(8, static_cast<int>(g.size)));
  g.text_h = ImGui::GetTextLineHeight();
  // A language model's heads carry their linguistic jobs under the label: on one line
  // when they fit the map's width, else one a line, so none is cut off.
  g.job_lines.resize(static_cast<std::size_t>(L * H));
  g.lines = UsingLanguageModel(s) ? 3 : 2;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      const std::vector<std::string> texts = HeadJobTexts(s, l, h);
      std::string joined;
      for (const std::string& t : texts) joined += (joined.empty() ? "" : " · ") + t;
      auto& out = g.job_lines[static_cast<std::size_t>(l * H + h)];
      if (texts.size() > 1 && ImGui::CalcTextSize(joined.c_str()).x > g.size)
        out = texts;
      else if (!joined.empty())
        out = {joined};
      g.lines = std::max(g.lines, 2 + static_cast<int>(out.size()));
    }
  if (s.ui.present) FitHeight(g, L, H, avail);
  return g;
}

// The knock-out switches under map (l, h) at p (the map at m0): the choice's heads, as
// gui --ablate sets them.
void KnockOutSwitches(AppState& s, int l, int h, int H, ImVec2 p, ImVec2 m0, float size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The knock-out switches under the map: the same state as gui --ablate.
  const HeadRef ref{l, h};
  const auto& knocked = s.choice.knockout.heads;
  bool out = std::find(knocked.begin(), knocked.end(), ref) != knocked.end();
  if (out) {
    // The map stays (the head still attends); what it adds to the model is gone.
    dl->AddRectFilled(m0, ImVec2(m0.x + size - 2, m0.y + size - 2), IM_COL32(0, 0, 0, 110));
    dl->AddText(ImVec2(m0.x + 4, m0.y + 4), IM_COL32(255, 255, 255, 255), _("knocked out"));
  }
  ImGui::SetCursorScreenPos(ImVec2(p.x, m0.y + size + 2));
  ImGui::PushID(l * 1000 + h + 500);
  if (ImGui::Checkbox(_("out"), &out)) {
    std::vector<HeadRef> next = knocked;
    if (out)
      next.push_back(ref);
    else
      next.erase(std::remove(next.begin(), next.end(), ref), next.end());
    SetKnockedOut(s, next);
  }
  if (l == 0 && h == 0) Probe(s, "model_view_knock_first");
  if (h == H - 1) Probe(s, "model_view_knock_last");  // the last layer's is drawn last
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("Knock L%dH%d out: its context is zeroed before W_O, and every view shows the model "
                        "without it."),
                      l, h);
  ImGui::SameLine(0, 4);
  if (H > 1 && ImGui::SmallButton(_("only"))) {
    std::vector<HeadRef> next;
    for (const HeadRef& k : knocked)
      if (k.layer != l) next.push_back(k);
    for (int o = 0; o < H; ++o)
      if (o != h) next.push_back({l, o});
    SetKnockedOut(s, next);
  }
  if (H > 1 && ImGui::IsItemHovered())
    ImGui::SetTooltip(_("All but this one: knock out every other head of layer %d and keep L%dH%d."), l, l, h);
  ImGui::PopID();
}

// Map (l, h) of the grid at p: its label and score, its jobs, the map, its tooltip, and
// the switches that knock it out.
void DrawHeadMap(AppState& s, const MapGrid& g, const Trace& t, const std::vector<HeadProfile>& labels, int l, int h,
                 ImVec2 p) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int H = g.H, lines = g.lines;
  const float size = g.size, text_h = g.text_h;
  ImGui::SetCursorScreenPos(p);
  ImGui::PushID(l * 1000 + h);
  if (ImGui::InvisibleButton("##map", ImVec2(size, size + lines * text_h))) OpenHead(s, l, h);
  const bool hovered = ImGui::IsItemHovered();
  ImGui::PopID();
  if (l == 0 && h == 0) Probe(s, "model_view_first_map");
  if (l == g.L - 1 && h == H - 1) Probe(s, "model_view_last_map");
  Probe(s, ("model_view_map " + std::to_string(l) + " " + std::to_string(h)).c_str());
  char label_buf[48];
  std::snprintf(label_buf, sizeof label_buf, _("head %d"), h);
  const std::string label = label_buf;
  std::string job;
  for (const HeadProfile& hp : labels)
    if (hp.layer == l && hp.head == h) {
      char score[32];
      std::snprintf(score, sizeof score, " %.2f", hp.score);
      // "previous" fits a small map where "previous-token" and its score do not; a
      // name still too long is cut, never the score (the tooltip has it whole).
      const std::string shown = hp.label == "previous-token" ? _("previous") : HeadPatternText(hp.label);
      job = Ellipsize(shown, size - ImGui::CalcTextSize(score).x) + score;
    }
  // A long label stops at its map's edge (the tooltip has it whole).
  dl->PushClipRect(p, ImVec2(p.x + size, p.y + lines * text_h), true);
  dl->AddText(p, HeadColour(h), label.c_str());
  dl->AddText(ImVec2(p.x, p.y + text_h), ImGui::GetColorU32(ImGuiCol_TextDisabled), job.c_str());
  const auto& jobs = g.job_lines[static_cast<std::size_t>(l * H + h)];
  for (std::size_t k = 0; k < jobs.size(); ++k)
    dl->AddText(ImVec2(p.x, p.y + (2 + k) * text_h), Pal().accent, jobs[k].c_str());
  dl->PopClipRect();
  const ImVec2 m0(p.x, p.y + lines * text_h + 2);
  // Only the maps in sight: 100 heads' cells were 40 ms of every frame.
  if (ImGui::IsRectVisible(m0, ImVec2(m0.x + size, m0.y + size))) DrawMap(dl, t, h, m0, size - 2, g.blocks);
  const bool current = (!UsingTrainedModel(s) || s.choice.layer == l) && s.ui.enlarged == h;
  if (hovered || current)
    dl->AddRect(ImVec2(m0.x - 2, m0.y - 2), ImVec2(m0.x + size, m0.y + size), Pal().accent, 0, 0, 2.0f);
  if (hovered) {
    char tip[256];
    std::snprintf(tip, sizeof tip, _("layer %d, head %d%s%s: click to open it in Heatmaps"), l, h,
                  job.empty() ? "" : ", ", job.c_str());
    // Wrapped: the jobs' lines would run past a 1280-px window's edge.
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::TextUnformatted((tip + HeadJobDetails(s, l, h)).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  KnockOutSwitches(s, l, h, H, p, m0, size);
}

// Where the labels and the jobs were measured, as one text wrapped at the view's edge
// (at 200% text it takes two or three lines).
void DrawMeasuredOn(AppState& s, const LabelsOn& on) {
  std::string measured = on.Shown();
  const std::string jobs_on = HeadJobsStatus(s);
  if (!jobs_on.empty()) measured += "  " + i18n::Format(_("· jobs: %s"), HeadJobsStatusShown(s).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", measured.c_str());
  ImGui::PopStyleColor();
  if (jobs_on.empty()) return;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        _("A head's linguistic job is measured on the minimal pairs: for each phenomenon, the head with "
          "the highest mean weight from the piece that chooses the form to the cue word. It is shown "
          "only where that weight is at least twice the uniform weight and 0.2 above it."));
  // Tests wait for both measures, not for a time.
  if (s.result.head_jobs.value && on.where == LabelsOn::Where::Validation) Probe(s, "model_view_jobs_ready");
}

}  // namespace

void DrawModelView(AppState& s) {
  const auto traces = LayerTraces(s);
  if (traces.empty()) {
    Muted(_("Nothing to draw until the problem under Attention weights is fixed."));
    return;
  }
  const int H = traces.front()->cfg.num_heads, L = static_cast<int>(traces.size());
  Explanation(
      _("Every head of every layer on your sentence: row = layer, column = head; in each map a row is a "
        "query, a column a key. Click a map to open it in Heatmaps (and the teaching views) at that "
        "layer and head. Labels: each head's strongest pattern and its score. \"out\" knocks a head "
        "out (\"only\": every other head of its layer) and every view then shows the model without it."));
  LabelsOn on;
  const auto& labels = Labels(s, &on);
  DrawMeasuredOn(s, on);
  // Presented: the maps, their labels and switches; the suggestions and the jobs read
  // off them stay in the tab.
  if (!s.ui.present) DrawTryThese(s);
  const MapGrid g = LayOutMaps(s, L, H);
  for (int l = 0; l < L; ++l) {
    for (int h0 = 0; h0 < H; h0 += g.per_row) {
      const ImVec2 row0 = ImGui::GetCursorScreenPos();
      if (h0 == 0)
        ImGui::GetWindowDrawList()->AddText(ImVec2(row0.x, row0.y + g.text_h), ImGui::GetColorU32(ImGuiCol_Text),
                                            i18n::Format(_("layer %d"), l).c_str());
      for (int h = h0; h < std::min(H, h0 + g.per_row); ++h)
        DrawHeadMap(s, g, *traces[static_cast<std::size_t>(l)], labels, l, h,
                    ImVec2(row0.x + g.label_w + (h - h0) * (g.size + g.gap), row0.y));
      ImGui::SetCursorScreenPos(
          ImVec2(row0.x, row0.y + g.size + g.lines * g.text_h + ImGui::GetFrameHeight() + g.gap + 6));
      ImGui::Dummy(ImVec2(1, 1));
    }
  }
  if (!s.ui.present) DrawJobsOnSentence(s);
}

nlohmann::json DumpModelView(AppState& s) {
  const auto traces = LayerTraces(s);
  double weights = 0;
  for (const Trace* t : traces) weights += static_cast<double>(t->cfg.num_heads) * t->seq * t->seq_kv;
  const bool left_out = weights > dump::kMaxDumpWeights;
  nlohmann::json layers = left_out ? nlohmann::json(dump::kWeightsLeftOut) : nlohmann::json::array();
  for (const Trace* t : left_out ? decltype(traces){} : traces) {
    nlohmann::json heads = nlohmann::json::array();
    for (int h = 0; h < t->cfg.num_heads; ++h) {
      const auto A = t->AttnHead(h);
      nlohmann::json rows = nlohmann::json::array();
      for (int i = 0; i < t->seq; ++i) {
        std::vector<double> row(static_cast<std::size_t>(t->seq_kv));
        for (int k = 0; k < t->seq_kv; ++k) row[static_cast<std::size_t>(k)] = A(i, k);
        rows.push_back(row);
      }
      heads.push_back(rows);
    }
    layers.push_back(heads);
  }
  nlohmann::json labels = nlohmann::json::array();
  LabelsOn on;
  for (const HeadProfile& hp : Labels(s, &on))
    labels.push_back({{"layer", hp.layer}, {"head", hp.head}, {"label", hp.label}, {"score", hp.score}});
  nlohmann::json knocked = nlohmann::json::array();
  for (const HeadRef& h : s.result.knocked_out) knocked.push_back(HeadName(h));
  nlohmann::json out{
      {"attention", layers}, {"labels", labels}, {"labels_measured_on", on.English()}, {"knocked_out", knocked}};
  out.update(DumpHeadJobs(s));
  return out;
}

// --probe: whether the labels and the heads' jobs have landed. Both are measured on their
// own tasks, and the lines they add move every switch under them: a driver waits for them
// before it clicks.
nlohmann::json ProbeModelView(const AppState& s) {
  return {{"labels_measured", UsingLanguageModel(s) && s.result.validation_labels.value != nullptr},
          {"jobs", HeadJobsStatus(s)}};
}

ViewEntry ModelView() {
  ViewEntry v{"model-view", N_("Model view"), N_("Model view: every layer x head on the sentence"),
              "every layer x head as a small heatmap; click one to open it"};
  v.draw = &DrawModelView;
  v.dump = &DumpModelView;
  v.prime = &PrimeModelView;
  v.probe = &ProbeModelView;
  v.shows = "model_view_first_map";
  v.essentials = "model_view_first_map;model_view_last_map;model_view_knock_first;model_view_knock_last";
  return v;
}

}  // namespace mha::gui
