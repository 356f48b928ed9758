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
#include "gui/sources/shown_names.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/views/model_view/jobs_panel.hpp"
#include "gui/state/app_state.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "gui/panels/panels.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "mha/heads.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The cell last hovered (--probe's "cell"): layer, head, query row, key column, weight.
struct HoverState {
  int layer = -1, head = -1, query = -1, key = -1;
  double weight = 0;
};

// The token labels as last drawn (--probe's "labels"): the first map's keys and its
// grid row's queries, as written (cut with "…" where a cell is narrow), on how many
// lines the keys stand, and the cells' side.
struct LabelsShown {
  std::vector<std::string> keys, queries;
  int key_lines = 0;
  float cell = 0;
};

// Where the labels were measured: the validation text (a language model's, once it is
// measured), else the sentence shown, and why not the validation text.
struct LabelsOn {
  enum class Where { Validation, Sentence, SentenceMeasuring, SentenceUnavailable } where = Where::Sentence;
  std::string why;        // SentenceUnavailable: the reason
  bool evidence = false;  // Validation: the stored knock-out table names the jobs too
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
        return evidence ? _("Labels: a head's job where knocking it out costs the minimal pairs a phenomenon, "
                            "else its pattern on the validation text (induction: on its windows' first "
                            "halves, repeated)")
                        : _("Labels measured on: validation text (induction: on its windows' first halves, "
                            "repeated)");
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
    on->evidence = s.result.head_evidence.value != nullptr;
    return *v.value;
  }
  on->where = !UsingLanguageModel(s)   ? W::Sentence
              : v.measuring            ? W::SentenceMeasuring
              : !v.unavailable.empty() ? W::SentenceUnavailable
                                       : W::Sentence;
  on->why = v.unavailable;
  // (a big recompute's task made them beside the trace: PrimeSentenceProfile)
  return SentenceProfile(s);
}

// A thumbnail of at most `blocks` x `blocks` cells: longer sentences are sampled (the
// nearest cell), so a 1,000-token sentence or 256 heads still draw in a frame. Click
// a map for every cell.
void DrawMap(ImDrawList* dl, const Trace& t, int h, ImVec2 p0, ImVec2 size, int blocks) {
  const int rows = std::min(t.seq, blocks), cols = std::min(t.seq_kv, blocks);
  const float cw = size.x / static_cast<float>(cols), ch = size.y / static_cast<float>(rows);
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

// The map's cell under the mouse (sampled as DrawMap samples), outlined: its query and
// key tokens and the weight, a tooltip's first line; "" off the cells. --probe reports it.
std::string HoveredCell(AppState& s, ImDrawList* dl, const Trace& t, int l, int h, ImVec2 p0, ImVec2 size, int blocks) {
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (m.x < p0.x || m.y < p0.y || m.x >= p0.x + size.x || m.y >= p0.y + size.y) return {};
  const int rows = std::min(t.seq, blocks), cols = std::min(t.seq_kv, blocks);
  const float cw = size.x / static_cast<float>(cols), ch = size.y / static_cast<float>(rows);
  const int bi = std::clamp(static_cast<int>((m.y - p0.y) / ch), 0, rows - 1);
  const int bj = std::clamp(static_cast<int>((m.x - p0.x) / cw), 0, cols - 1);
  const int i = static_cast<int>(static_cast<long long>(bi) * t.seq / rows);
  const int j = static_cast<int>(static_cast<long long>(bj) * t.seq_kv / cols);
  dl->AddRect(ImVec2(p0.x + bj * cw, p0.y + bi * ch), ImVec2(p0.x + (bj + 1) * cw, p0.y + (bi + 1) * ch),
              Pal().notice_text, 0, 0, 2.0f);
  const double w = t.AttnHead(h)(i, j);
  const auto tok = [](const std::vector<std::string>& v, int k) {
    return k < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(k)] : std::to_string(k);
  };
  const std::vector<std::string>& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;
  s.views.Get<HoverState>() = {l, h, i, j, w};
  char b[512];
  std::snprintf(b, sizeof b, "%s \u2192 %s  %.3f\n", tok(t.in.tokens, i).c_str(), tok(keys, j).c_str(), w);
  return b;
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

// The grid of maps: their width and height (equal in the tab; presented, each takes its
// share of the window both ways), how many a row holds, how finely they are sampled,
// and the lines of text above each (its label, its score, a language model's jobs).
struct MapGrid {
  int L = 0, H = 0;
  float label_w = 0, gap = 6, size = 0, size_h = 0, text_h = 0;
  int per_row = 1, blocks = 8, lines = 2;
  std::vector<std::vector<std::string>> job_lines;  // [l * H + h]
  // Token labels, where the cells hold them: the keys above every map on 1 line (each
  // within its cell) or 2 (staggered, as the heatmaps set Korean keys: never turned on
  // their side); the queries left of each row's first map, in the label column.
  int key_lines = 0;
  bool queries = false;
  int switch_lines = 1;  // "out" and "only" under a map: 2 where they do not fit its width
  const std::vector<std::string>*qtok = nullptr, *ktok = nullptr;
  float Cell() const { return (size - 2) / static_cast<float>(std::max(1, ktok ? static_cast<int>(ktok->size()) : 1)); }
  float CellH() const {
    return (size_h - 2) / static_cast<float>(std::max(1, qtok ? static_cast<int>(qtok->size()) : 1));
  }
  float Above() const { return (lines + key_lines) * text_h; }
  float Under() const { return switch_lines * ImGui::GetFrameHeight() + gap + 6; }
};

// Presented, every layer's maps, their labels and switches fit the window: as many maps
// a row as makes them largest, each as wide as its column and as tall as its row of the
// window allows (square maps of 8 heads in one row left half the window empty), at most
// twice as wide as tall or as tall as wide; no smaller than 48 px, else 48 px squares,
// as many a row as the width allows.
void FitWindow(MapGrid& g, int L, int H, float avail_w) {
  // (less the spacing after the last row's Dummy, which otherwise brought a scrollbar)
  const float avail_h = ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y - 2;
  float best = 0, best_w = 48.0f, best_h = 48.0f;
  int best_per_row = 0;
  for (int per_row = 1; per_row <= H; ++per_row) {
    const int rows = L * ((H + per_row - 1) / per_row);
    float w = avail_w / static_cast<float>(per_row) - g.gap,
          h = avail_h / static_cast<float>(rows) - g.Above() - g.Under();
    if (w < 48.0f || h < 48.0f) continue;
    w = std::min(w, 2 * h);
    h = std::min(h, 2 * w);
    if (w * h > best * 1.01f) {
      best = w * h;
      best_w = w;
      best_h = h;
      best_per_row = per_row;
    }
  }
  g.size = std::floor(best_w);
  g.size_h = std::floor(best_h);
  g.per_row = best_per_row > 0 ? best_per_row : std::max(1, std::min(H, static_cast<int>(avail_w / (g.size + g.gap))));
}

float MaxWidth(const std::vector<std::string>& v) {
  float w = 0;
  for (const std::string& t : v) w = std::max(w, ImGui::CalcTextSize(ForDisplay(t).c_str()).x);
  return w;
}

// The maps' size and how many a row, with the token labels (labels) or without.
void SizeMaps(AppState& s, MapGrid& g, bool labels) {
  const float fs = ImGui::GetFontSize();
  g.queries = labels;
  g.key_lines = labels ? 2 : 0;
  g.gap = labels ? std::max(6.0f, fs * 0.5f) : 6.0f;  // room for the edge keys' labels
  g.label_w = ImGui::CalcTextSize(i18n::Format(_("layer %d"), 10).c_str()).x + 8;
  if (labels) g.label_w = std::max(g.label_w, std::min(MaxWidth(*g.qtok), fs * 7.0f) + fs * 0.5f);
  const float avail = ImGui::GetContentRegionAvail().x - g.label_w;
  g.size = std::clamp(avail / static_cast<float>(std::min(g.H, 8)) - g.gap, 48.0f, 220.0f);
  g.size_h = g.size;
  g.per_row = std::max(1, static_cast<int>(avail / (g.size + g.gap)));
  const float switches = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                         ImGui::CalcTextSize(_("out")).x + 4 + ImGui::CalcTextSize(_("only")).x +
                         ImGui::GetStyle().FramePadding.x * 2;
  for (int pass = 0; pass < 2; ++pass) {  // the switches' lines change the height a map may take
    if (s.ui.present) FitWindow(g, g.L, g.H, avail);
    g.switch_lines = g.H > 1 && switches > g.size ? 2 : 1;
  }
  // At most about 200,000 cells in all, and no more per map than it has pixels.
  g.blocks = std::clamp(static_cast<int>(std::sqrt(200000.0 / (g.L * g.H))), 8,
                        std::max(8, static_cast<int>(std::max(g.size, g.size_h))));
}

// Labels where every cell is drawn (no sampling) and is at least 0.9 of the font high,
// as the heatmaps' matrices have them; keys on one line where each fits its cell.
void PlanLabels(AppState& s, MapGrid& g, const Trace& t) {
  SizeMaps(s, g, true);
  const bool whole = t.seq <= g.blocks && t.seq_kv <= g.blocks && static_cast<int>(g.qtok->size()) == t.seq &&
                     static_cast<int>(g.ktok->size()) == t.seq_kv;
  if (!whole || std::min(g.Cell(), g.CellH()) < ImGui::GetFontSize() * 0.9f) {
    SizeMaps(s, g, false);
    return;
  }
  g.key_lines = MaxWidth(*g.ktok) <= g.Cell() - 3.0f ? 1 : 2;
}

MapGrid LayOutMaps(AppState& s, const Trace& trace, int L, int H) {
  MapGrid g;
  g.L = L;
  g.H = H;
  g.text_h = ImGui::GetTextLineHeight();
  g.qtok = &trace.in.tokens;
  g.ktok = trace.in.cross() ? &trace.in.memory_tokens : &trace.in.tokens;
  SizeMaps(s, g, false);  // the width the jobs' lines may take; resized with them below
  // A language model's heads carry their linguistic jobs under the label: on one line
  // when they fit the map's width, else one a line, so none is cut off.
  g.job_lines.resize(static_cast<std::size_t>(L * H));
  g.lines = UsingLanguageModel(s) ? 3 : 2;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      // A job the head's name already says is not said twice.
      const std::string name = NameShownHead(s, l, h).text;
      std::vector<std::string> texts;
      for (std::string& t : HeadJobTexts(s, l, h))
        if (t != name) texts.push_back(std::move(t));
      std::string joined;
      for (const std::string& t : texts) joined += (joined.empty() ? "" : " · ") + t;
      auto& out = g.job_lines[static_cast<std::size_t>(l * H + h)];
      if (texts.size() > 1 && ImGui::CalcTextSize(joined.c_str()).x > g.size)
        out = texts;
      else if (!joined.empty())
        out = {joined};
      g.lines = std::max(g.lines, 2 + static_cast<int>(out.size()));
    }
  PlanLabels(s, g, trace);
  return g;
}

// The keys above map (l, h) whose cells start at m0; the first map's, as written, to
// --probe.
void KeyLabels(AppState& s, const MapGrid& g, int l, int h, ImVec2 m0) {
  if (g.key_lines == 0) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cell = g.Cell();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  std::vector<std::string> shown;
  for (std::size_t j = 0; j < g.ktok->size(); ++j) {
    // Staggered: odd keys on the upper line, each with two cells' width.
    const bool upper = g.key_lines == 2 && j % 2 == 1;
    // ... and none reaches past half the gap to the next map (where its keys begin).
    const float centre = (static_cast<float>(j) + 0.5f) * cell, to_edge = std::min(centre, g.size - 2 - centre);
    const float room = std::min(g.key_lines == 2 ? 2 * cell - 4 : cell - 3, 2 * (to_edge + g.gap * 0.5f) - 2);
    const std::string k = Ellipsize(ForDisplay((*g.ktok)[j]), room);
    const ImVec2 ts = ImGui::CalcTextSize(k.c_str());
    const float x = m0.x + (static_cast<float>(j) + 0.5f) * cell - ts.x * 0.5f;
    dl->AddText(ImVec2(x, m0.y - 2 - ts.y * (upper ? 2.0f : 1.0f)), text, k.c_str());
    shown.push_back(k);
  }
  if (l == 0 && h == 0) {
    auto& r = s.views.Get<LabelsShown>();
    r.keys = std::move(shown);
    r.key_lines = g.key_lines;
    r.cell = cell;
  }
}

// The queries left of the rows of the maps whose first cell row starts at y.
void QueryLabels(AppState& s, const MapGrid& g, float x_right, float y, bool first) {
  if (!g.queries) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize(), cell = g.CellH();
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < g.qtok->size(); ++i) {
    const std::string q = Ellipsize(ForDisplay((*g.qtok)[i]), g.label_w - fs * 0.5f);
    const ImVec2 ts = ImGui::CalcTextSize(q.c_str());
    dl->AddText(ImVec2(x_right - fs * 0.3f - ts.x, y + (static_cast<float>(i) + 0.5f) * cell - ts.y * 0.5f),
                ImGui::GetColorU32(ImGuiCol_Text), q.c_str());
    shown.push_back(q);
  }
  if (first) s.views.Get<LabelsShown>().queries = std::move(shown);
}

// The knock-out switches under map (l, h) at p (the map at m0): the choice's heads, as
// gui --ablate sets them.
void KnockOutSwitches(AppState& s, int l, int h, int H, ImVec2 p, ImVec2 m0, ImVec2 size, bool two_lines) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The knock-out switches under the map: the same state as gui --ablate.
  const HeadRef ref{l, h};
  const auto& knocked = s.choice.knockout.heads;
  bool out = std::find(knocked.begin(), knocked.end(), ref) != knocked.end();
  if (out) {
    // The map stays (the head still attends); what it adds to the model is gone.
    dl->AddRectFilled(m0, ImVec2(m0.x + size.x - 2, m0.y + size.y - 2), IM_COL32(0, 0, 0, 110));
    dl->AddText(ImVec2(m0.x + 4, m0.y + 4), IM_COL32(255, 255, 255, 255), _("knocked out"));
  }
  ImGui::SetCursorScreenPos(ImVec2(p.x, m0.y + size.y + 2));
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
  // Two lines where a small map is narrower than both (they ran into the next map's).
  if (two_lines)
    ImGui::SetCursorScreenPos(ImVec2(p.x, ImGui::GetCursorScreenPos().y));
  else
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
void DrawHeadMap(AppState& s, const MapGrid& g, const Trace& t, int l, int h, ImVec2 p) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int H = g.H, lines = g.lines;
  const float size = g.size, size_h = g.size_h, text_h = g.text_h;
  ImGui::SetCursorScreenPos(p);
  ImGui::PushID(l * 1000 + h);
  if (ImGui::InvisibleButton("##map", ImVec2(size, size_h + g.Above()))) OpenHead(s, l, h);
  const bool hovered = ImGui::IsItemHovered();
  ImGui::PopID();
  if (l == 0 && h == 0) Probe(s, "model_view_first_map");
  if (l == g.L - 1 && h == H - 1) Probe(s, "model_view_last_map");
  Probe(s, ("model_view_map " + std::to_string(l) + " " + std::to_string(h)).c_str());
  char label_buf[48];
  std::snprintf(label_buf, sizeof label_buf, _("head %d"), h);
  const std::string label = label_buf;
  // The name every view gives the head (sources/shown_names.hpp): a short one fits a
  // small map ("previous" for "previous-token"); a name still too long is cut, never
  // its score (the tooltip has it whole).
  const ShownHeadName name = NameShownHead(s, l, h);
  std::string job;
  if (name.kind == "pattern") {
    char score[32];
    std::snprintf(score, sizeof score, " %.2f", name.score);
    const std::string shown = name.key == "previous-token" ? _("previous") : HeadPatternText(name.key);
    job = Ellipsize(shown, size - ImGui::CalcTextSize(score).x) + score;
  } else {
    job = Ellipsize(name.text, size);
  }
  // A long label stops at its map's edge (the tooltip has it whole).
  dl->PushClipRect(p, ImVec2(p.x + size, p.y + lines * text_h), true);
  dl->AddText(p, HeadColour(h), label.c_str());
  dl->AddText(ImVec2(p.x, p.y + text_h), name.claimed ? Pal().ok_text : ImGui::GetColorU32(ImGuiCol_TextDisabled),
              job.c_str());
  const auto& jobs = g.job_lines[static_cast<std::size_t>(l * H + h)];
  for (std::size_t k = 0; k < jobs.size(); ++k)
    dl->AddText(ImVec2(p.x, p.y + (2 + k) * text_h), Pal().accent, jobs[k].c_str());
  dl->PopClipRect();
  const ImVec2 m0(p.x, p.y + g.Above() + 2);
  // (a presented map's cells need not be square: a driver finds a cell from this)
  s.ui.probe["model_view_cells " + std::to_string(l) + " " + std::to_string(h)] = {m0.x, m0.y, size - 2, size_h - 2};
  KeyLabels(s, g, l, h, m0);
  // Only the maps in sight: 100 heads' cells were 40 ms of every frame.
  if (ImGui::IsRectVisible(m0, ImVec2(m0.x + size, m0.y + size_h)))
    DrawMap(dl, t, h, m0, ImVec2(size - 2, size_h - 2), g.blocks);
  const bool current = (!UsingTrainedModel(s) || s.choice.layer == l) && s.ui.enlarged == h;
  if (hovered || current)
    dl->AddRect(ImVec2(m0.x - 2, m0.y - 2), ImVec2(m0.x + size, m0.y + size_h), Pal().accent, 0, 0, 2.0f);
  if (hovered) {
    char tip[256];
    std::snprintf(tip, sizeof tip, _("layer %d, head %d%s%s: click to open it in Heatmaps"), l, h,
                  job.empty() ? "" : ", ", name.text.c_str());
    // The cell under the mouse, outlined, and its query, key and weight: what a job line
    // such as "가 → ▁고양이 1.00" says can be checked on the map.
    const std::string cell = HoveredCell(s, dl, t, l, h, m0, ImVec2(size - 2, size_h - 2), g.blocks);
    ImGui::BeginTooltip();
    // Wrapped: the jobs' lines would run past a 1280-px window's edge.
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::TextUnformatted(
        (cell + tip + "\n" + i18n::Format(_("measured on: %s"), name.measured_on.c_str()) + HeadJobDetails(s, l, h))
            .c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  KnockOutSwitches(s, l, h, H, p, m0, ImVec2(size, size_h), g.switch_lines == 2);
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
  Labels(s, &on);
  DrawMeasuredOn(s, on);
  // Presented: the maps, their labels and switches; the suggestions and the jobs read
  // off them stay in the tab.
  if (!s.ui.present) DrawTryThese(s);
  const MapGrid g = LayOutMaps(s, *traces.front(), L, H);
  if (g.key_lines == 0) s.views.Get<LabelsShown>() = {};  // none drawn: none reported
  for (int l = 0; l < L; ++l) {
    for (int h0 = 0; h0 < H; h0 += g.per_row) {
      const ImVec2 row0 = ImGui::GetCursorScreenPos();
      if (h0 == 0)
        ImGui::GetWindowDrawList()->AddText(ImVec2(row0.x, row0.y + g.text_h), ImGui::GetColorU32(ImGuiCol_Text),
                                            i18n::Format(_("layer %d"), l).c_str());
      QueryLabels(s, g, row0.x + g.label_w, row0.y + g.Above() + 2, l == 0 && h0 == 0);
      for (int h = h0; h < std::min(H, h0 + g.per_row); ++h)
        DrawHeadMap(s, g, *traces[static_cast<std::size_t>(l)], l, h,
                    ImVec2(row0.x + g.label_w + (h - h0) * (g.size + g.gap), row0.y));
      ImGui::SetCursorScreenPos(ImVec2(row0.x, row0.y + g.size_h + g.Above() + g.Under()));
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
  // The names the maps show, as every view names the heads (sources/shown_names.hpp).
  nlohmann::json names = nlohmann::json::array();
  for (std::size_t l = 0; l < traces.size(); ++l)
    for (int h = 0; h < traces[l]->cfg.num_heads; ++h) {
      const ShownHeadName n = NameShownHead(s, static_cast<int>(l), h);
      names.push_back({{"layer", l},
                       {"head", h},
                       {"text", n.text},
                       {"key", n.key},
                       {"kind", n.kind},
                       {"claimed", n.claimed},
                       {"measured_on", n.measured_on},
                       {"evidence", n.evidence}});
    }
  nlohmann::json knocked = nlohmann::json::array();
  for (const HeadRef& h : s.result.knocked_out) knocked.push_back(HeadName(h));
  nlohmann::json out{{"names", names},
                     {"attention", layers},
                     {"labels", labels},
                     {"labels_measured_on", on.English()},
                     {"knocked_out", knocked}};
  out.update(DumpHeadJobs(s));
  return out;
}

nlohmann::json CellJson(const AppState& s) {
  const HoverState* c = s.views.Find<HoverState>();
  if (!c) return nullptr;
  return {{"layer", c->layer}, {"head", c->head}, {"query", c->query}, {"key", c->key}, {"weight", c->weight}};
}

// --probe: whether the labels, the heads' jobs and the stored evidence have landed; the
// cell last hovered. Both are measured on their
// own tasks, and the lines they add move every switch under them: a driver waits for them
// before it clicks.
nlohmann::json ProbeModelView(const AppState& s) {
  const LabelsShown* t = s.views.Find<LabelsShown>();
  nlohmann::json tokens =
      t ? nlohmann::json{{"keys", t->keys}, {"queries", t->queries}, {"key_lines", t->key_lines}, {"cell", t->cell}}
        : nlohmann::json(nullptr);
  return {{"labels_measured", UsingLanguageModel(s) && s.result.validation_labels.value != nullptr},
          {"jobs", HeadJobsStatus(s)},
          {"evidence", UsingLanguageModel(s) && s.result.head_evidence.value != nullptr},
          {"cell", CellJson(s)},
          {"token_labels", tokens}};
}

ViewEntry ModelView() {
  ViewEntry v{"model-view", N_("Model view"), N_("Model view: every layer x head on the sentence"),
              "every layer x head as a small heatmap; click one to open it"};
  v.draw = &DrawModelView;
  v.dump = &DumpModelView;
  v.prime = &PrimeSentenceProfile;
  v.probe = &ProbeModelView;
  v.shows = "model_view_first_map";
  v.essentials = "model_view_first_map;model_view_last_map;model_view_knock_first;model_view_knock_last";
  return v;
}

}  // namespace mha::gui
