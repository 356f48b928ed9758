// Scores, masked scores and softmax weights side by side for one head, with and
// without the sqrt(d_k) scaling, per-row entropy and max weight, and the softmax
// temperature: the lesson's "volume knob". The numbers are CompareScaling's
// (mha/teach.hpp) at the configuration's temperature; the row the model uses
// equals the trace's scores and attn.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;
using dump::Matrix;

namespace {

// The view's own state (AppState::views).
struct SoftmaxState {
  Cached<ScalingComparison> cache;  // the selected head, scaled and unscaled
  // The weights map as last drawn (for --probe): its cells' size, and where it ends.
  float cell_w = 0, cell_h = 0, maps_bottom = 0;
};

std::string ScalingKey(const AppState& s, int head) { return GenKey(s) + " h" + std::to_string(head); }

const Cached<ScalingComparison>& ScalingCache(AppState& s) {
  auto& c = s.views.Get<SoftmaxState>().cache;
  if (!HasResults(s)) return NoTrace(c, s);
  ClampSelection(s);
  return Refresh(c, ScalingKey(s, s.choice.head), [&](ScalingComparison& v) {
    v = CompareScaling(s.result.trace, s.choice.head, s.result.trace.cfg.temperature);
  });
}

// Beside a big trace, on the recompute's task: the selected head's comparison, which
// took the window's first frame 0.1-0.5 s at 100 heads x 1024 tokens.
Primed PrimeSoftmax(const Trace& t, const Choice& c) {
  const int head = std::clamp(c.head, 0, std::max(0, t.cfg.num_heads - 1));
  auto v = std::make_shared<ScalingComparison>(CompareScaling(t, head, t.cfg.temperature));
  return [head, v](AppState& s) {
    ClampSelection(s);
    if (s.choice.head == head) Fill(s.views.Get<SoftmaxState>().cache, ScalingKey(s, head), std::move(*v));
  };
}

float AbsMax(const Mat& m) {
  float r = 0.0f;
  for (Eigen::Index k = 0; k < m.size(); ++k)
    if (std::isfinite(m.data()[k])) r = std::max(r, std::abs(m.data()[k]));
  return r;
}

// The bars' width: presented, just what their numbers (in `font`) and their headings
// need, so the maps get the rest of a projector's width; else about a fifth of the row.
float StatsWidth(bool present, ImFont* font, float row_w) {
  const float fs = ImGui::GetFontSize();
  if (!present || !font) return std::min(fs * 13.0f, std::max(fs * 8.0f, row_w * 0.22f));
  const float number = font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, "0.000 / 0.000").x + fs * 0.4f;
  const float half = std::max({number, ImGui::CalcTextSize(_("entropy")).x, ImGui::CalcTextSize(_("max weight")).x});
  return 2.0f * half + fs * 0.6f;
}

// Per-row entropy and max weight as bars beside the weights, one per matrix row; their
// numbers in `font`.
void RowStatsBars(const RowStats& st, const MatrixResult& m, int rows, float width, ImFont* font) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const float cell = (m.max.y - m.min.y) / std::max(rows, 1);
  const float x0 = ImGui::GetCursorScreenPos().x;
  const float half = (width - fs * 0.6f) * 0.5f;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const Palette& pal = Pal();
  // Column heads above the first row.
  dl->AddText(ImVec2(x0, m.min.y - fs * 1.25f), text, _("entropy"));
  dl->AddText(ImVec2(x0 + half + fs * 0.6f, m.min.y - fs * 1.25f), text, _("max weight"));
  const bool numbers = cell >= font->FontSize + 2.0f;
  for (int i = 0; i < rows; ++i) {
    const float y = m.min.y + i * cell, h = std::max(1.0f, cell - 2.0f);
    const double me = st.max_entropy[static_cast<std::size_t>(i)];
    const double e = st.entropy[static_cast<std::size_t>(i)];
    const double w = st.max_weight[static_cast<std::size_t>(i)];
    auto bar = [&](float x, double frac, const std::string& label) {
      dl->AddRectFilled(ImVec2(x, y + 1), ImVec2(x + half, y + 1 + h), pal.chip_bg);
      dl->AddRectFilled(ImVec2(x, y + 1), ImVec2(x + half * static_cast<float>(std::clamp(frac, 0.0, 1.0)), y + 1 + h),
                        pal.chip_border);
      if (numbers)
        dl->AddText(font, font->FontSize, ImVec2(x + fs * 0.2f, y + (cell - font->FontSize) * 0.5f), text,
                    label.c_str());
    };
    bar(x0, me > 0 ? e / me : 0.0, Sig(e, 3) + " / " + Sig(me, 3));
    bar(x0 + half + fs * 0.6f, w, Sig(w, 3));
  }
}

void VariantRow(AppState& s, const HeadAttention& a, bool used, float range, ImVec2 size) {
  const Trace& t = s.result.trace;
  const float fs = ImGui::GetFontSize();
  const auto& qtok = QueryTokens(t);
  const auto& ktok = KeyTokens(t);
  char head[512];
  if (a.scaled)
    std::snprintf(head, sizeof head,
                  _("With \xC3\xB7\xE2\x88\x9A"
                    "d_k: every q\xC2\xB7k \xC3\x97 %s"),
                  Sig(a.multiplier).c_str());
  else
    std::snprintf(head, sizeof head,
                  _("Without \xC3\xB7\xE2\x88\x9A"
                    "d_k: every q\xC2\xB7k \xC3\x97 %s"),
                  Sig(a.multiplier).c_str());
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(head);
  if (s.ui.font_bold) ImGui::PopFont();
  if (used) {
    const char* now = _("(what the model computes now: the heatmaps show this)");
    SameLineIfFits(ImGui::CalcTextSize(now).x);
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().ok_text);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(now);
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  }
  char stats[640];
  std::snprintf(stats, sizeof stats,
                _("score spread (std over the keys) %s   \xC2\xB7   mean entropy %s   \xC2\xB7   mean max weight %s"),
                Sig(a.score_std, 3).c_str(), Sig(a.stats.mean_entropy, 3).c_str(),
                Sig(a.stats.mean_max_weight, 3).c_str());
  Muted(stats);

  // Presented, the numbers that do not fit a cell in the regular font take the small
  // one, and so do the bars' (which then need less width).
  ImFont* small = s.ui.present && s.ui.font_small ? s.ui.font_small : ImGui::GetFont();
  float stats_w = StatsWidth(s.ui.present, s.ui.font_small, size.x);
  const float gap = fs * 1.2f;
  // The first map carries the query labels: it gets their width on top, so the three
  // maps have cells of the same size.
  float label_w = 0.0f;
  for (const auto& tok : qtok) label_w = std::max(label_w, ImGui::CalcTextSize(tok.c_str()).x);
  label_w = std::min(label_w, fs * 7.0f) + fs * 0.5f;
  // Cells wide enough for "-0.43" or "20.4" (three digits, a sign): the numbers are
  // what this view is for. Where three maps that wide and the bars do not fit side by
  // side (big text), they wrap onto more lines and the view scrolls; presented, the
  // three stay side by side (the comparison is the point on a projector) and a cell
  // too small for its number keeps its colour and tooltip.
  const float value_cell = ImGui::CalcTextSize("-20.4").x + 8.0f;
  const int kv = static_cast<int>(a.weights.cols());
  if (s.ui.present) {
    // Presented, the bars give way where beside them a cell could not hold a weight
    // ("0.00") even in the small font: the stats line above keeps their means.
    const float weight_w = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0.0f, "0.00").x + 4.0f;
    if ((size.x - stats_w - 3 * gap - label_w) / 3.0f < kv * weight_w) stats_w = 0.0f;
  }
  const bool bars = stats_w > 0.0f;
  float mw = std::max(fs * 4.0f, (size.x - stats_w - (bars ? 3 : 2) * gap - label_w) / 3.0f);
  const bool wrap = !s.ui.present && kv <= 24 && mw < kv * value_cell;
  if (wrap) mw = std::min(size.x - label_w - fs, kv * value_cell + 2.0f);
  const std::string key = s.views.Get<SoftmaxState>().cache.key + (a.scaled ? " s" : " u");
  const char* titles[3] = {_("scores"),
                           t.cfg.mask == Mask::Causal ? _("masked scores") : _("masked scores (no mask: the same)"),
                           _("softmax weights")};
  const Mat* mats[3] = {&a.scores, &a.masked_scores, &a.weights};
  // A title may reach into the gap after its map; one wider than that says less ("masked
  // scores", "weights": the whole title in its tooltip) before it is cut with "…" (the
  // report counts those). One line: at 200% text the maps need every line of height.
  const char* short_titles[3] = {_("scores"), _("masked scores"), _("weights")};
  const float title_w = mw + gap * 0.7f;
  std::string shown[3];
  for (int k = 0; k < 3; ++k) {
    shown[k] = ImGui::CalcTextSize(titles[k]).x <= title_w ? titles[k] : short_titles[k];
    const std::string cut = Ellipsize(shown[k], title_w);
    if (cut != shown[k]) ++s.ui.report.scaling_titles_cut;
    shown[k] = cut;
  }
  const float title_h = ImGui::GetTextLineHeightWithSpacing();
  MatrixResult last;
  const float line_start = ImGui::GetCursorPosX();
  for (int k = 0; k < 3; ++k) {
    // A map starts a new line where it would not fit beside the last one.
    const bool first_on_line =
        k == 0 || (wrap && ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x + gap + mw > line_start + size.x);
    if (!first_on_line) ImGui::SameLine(0, gap);
    ImGui::BeginGroup();
    if (first_on_line) ImGui::SetCursorPosX(ImGui::GetCursorPosX() + label_w);  // titles over the cells
    ImGui::TextUnformatted(shown[k].c_str());
    if (shown[k] != titles[k] && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", titles[k]);
    MatrixArgs m;
    m.id = std::string("scaling ") + (a.scaled ? "s" : "u") + std::to_string(k);
    m.key = key;
    m.data = mats[k]->data();
    m.rows = static_cast<int>(mats[k]->rows());
    m.cols = static_cast<int>(mats[k]->cols());
    m.row_labels = &qtok;
    m.col_labels = &ktok;
    m.show_row_labels = first_on_line;
    m.scale = k == 2 ? ColourScale::Sequential : ColourScale::Diverging;
    m.range = k == 2 ? 1.0f : range;
    m.size = ImVec2(first_on_line ? mw + label_w : mw, wrap ? kv * value_cell + fs * 4.0f : size.y - title_h);
    m.row_axis = _("query");
    m.col_axis = _("key");
    m.fixed_decimals = k == 2;
    if (k == 2) m.masked_by = a.masked_scores.data();  // masked keys grey, as in the heatmaps
    m.digits = 3;
    m.max_cell = std::max(fs * 2.6f, value_cell);
    m.count_values = true;
    // Presented, cells may be taller than wide: 3 maps side by side set the cells' width,
    // and the window's height is left to their rows.
    m.square = !s.ui.present;
    m.small_values = s.ui.present;
    // A lesson's revealed answer on the weights the model computes now.
    const TourOutline& o = s.ui.tour.outline;
    if (k == 2 && used && o.on && o.head == a.head) {
      m.answer_row = o.row;
      m.answer_col = o.col;
      m.pick_row = o.pick_row;
      m.pick_col = o.pick_col;
    }
    last = DrawMatrix(s, m);
    s.ui.report.scaling_values_shown += last.values_shown;
    s.ui.report.scaling_values_hidden += last.values_hidden;
    ImGui::EndGroup();
  }
  auto& st = s.views.Get<SoftmaxState>();
  st.cell_w = (last.max.x - last.min.x) / std::max(1, kv);
  st.cell_h = (last.max.y - last.min.y) / std::max<Eigen::Index>(1, a.weights.rows());
  st.maps_bottom = last.max.y;
  if (!bars) return;
  const bool beside =
      !wrap || ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x + gap + stats_w <= line_start + size.x;
  if (beside) ImGui::SameLine(0, gap);
  ImGui::BeginGroup();
  ImGui::TextUnformatted(" ");
  if (!beside) {  // on a line of their own: rows as tall as the weights' rows
    const float h = last.max.y - last.min.y;
    last.min.y = ImGui::GetCursorScreenPos().y + fs * 1.3f;
    last.max.y = last.min.y + h;
  }
  // The bars line up with the weights' rows (below the key labels).
  ImGui::SetCursorScreenPos(ImVec2(ImGui::GetCursorScreenPos().x, last.min.y));
  RowStatsBars(a.stats, last, static_cast<int>(a.weights.rows()), stats_w, small);
  ImGui::SetCursorScreenPos(ImVec2(ImGui::GetCursorScreenPos().x, last.max.y));
  ImGui::Dummy(ImVec2(stats_w, 1.0f));
  ImGui::EndGroup();
}

}  // namespace

void DrawSoftmaxView(AppState& s) {
  SectionTitle(
      s,
      _("Scores and softmax: why divide by \xE2\x88\x9A"
        "d_k"),
      _("Without the scaling, q\xC2\xB7k grows with d_k, the softmax saturates and one key takes almost all the "
        "weight (entropy near 0). \xE2\x88\x9A"
        "d_k and the temperature are the volume knob."),
      true);
  Config& c = s.choice.cfg;
  HeadPicker(s, "##scaling_head");
  // The row wraps at the view's edge at large text (SameLineIfFits).
  const char* divide =
      _("divide by \xE2\x88\x9A"
        "d_k");
  SameLineIfFits(ToggleWidth(divide), ImGui::GetFontSize() * 1.5f);
  s.dirty |= ImGui::Checkbox(divide, &c.scale);
  Probe(s, "scaling_scale");
  SameLineIfFits(
      ImGui::CalcTextSize(_("temperature T")).x + ImGui::GetStyle().ItemSpacing.x + ImGui::GetFontSize() * 10.0f,
      ImGui::GetFontSize() * 1.5f);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("temperature T"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10.0f);
  if (ImGui::SliderFloat("##temperature", &c.temperature, 0.05f, 20.0f, "%.3g", ImGuiSliderFlags_Logarithmic)) {
    c.temperature = std::clamp(c.temperature, Limits::kMinTemperature, 1e4f);
    s.dirty = true;
  }
  Probe(s, "temperature");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        _("Scores are divided by T before the softmax: T < 1 sharpens it, T > 1 flattens it. "
          "Ctrl+click to type a value."));
  ImGui::SameLine();
  if (ImGui::SmallButton("T = 1")) {
    c.temperature = 1.0f;
    s.dirty = true;
  }
  if (!HaveResultsToShow(s)) return;
  const auto& cache = ScalingCache(s);
  if (!cache.ok) {
    MessageBox(cache.error, Pal().error_bg, Pal().error_text);
    return;
  }
  const ScalingComparison& cmp = cache.value;
  const Trace& t = s.result.trace;
  const float range = std::max({AbsMax(cmp.with_scaling.scores), AbsMax(cmp.without_scaling.scores), 1e-6f});
  const float fs = ImGui::GetFontSize();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float text_h = 2.0f * ImGui::GetTextLineHeightWithSpacing();
  const float legend_h = ImGui::GetTextLineHeightWithSpacing() * 2.0f;
  // Cells big enough for the token labels (the view scrolls if the window is short).
  const float min_cell = t.seq <= 24 ? ImGui::CalcTextSize("-20.4").x + 8.0f : 4.0f;
  const float need = t.seq * min_cell + fs * 5.0f + ImGui::GetTextLineHeightWithSpacing();
  if (s.ui.present) {
    // Presented: the three maps (scores, masked scores, weights) of the scaling the
    // switch above picks, side by side, as large as the window allows; the switch flips
    // between the two rows the tab shows one under the other.
    VariantRow(s, t.cfg.scale ? cmp.with_scaling : cmp.without_scaling, true, range,
               ImVec2(avail.x, std::max(avail.y - text_h - legend_h, fs * 6.0f)));
    Probe(s, "scaling_presented");
  } else {
    const float each = std::max(need, (avail.y - 2 * text_h - legend_h) / 2.0f);
    VariantRow(s, cmp.with_scaling, t.cfg.scale, range, ImVec2(avail.x, each));
    Probe(s, "scaling_with");
    VariantRow(s, cmp.without_scaling, !t.cfg.scale, range, ImVec2(avail.x, each));
    Probe(s, "scaling_without");
  }
  const float lw = std::min(avail.x * 0.45f, fs * 22.0f);
  DrawScaleLegend(ColourScale::Diverging, range, lw, _("scores (both rows)"), t.cfg.mask == Mask::Causal);
  ImGui::SameLine(0, fs * 2.0f);
  DrawScaleLegend(ColourScale::Sequential, 1.0f, lw, _("weights"), false);
  Probe(s, "scaling_legend");
  char buf[640];
  std::snprintf(buf, sizeof buf,
                _("Entropy in nats: 0 = all weight on one key, ln(number of keys) = spread evenly. "
                  "head_dim = d_k = %d, \xE2\x88\x9A"
                  "d_k = %s."),
                t.cfg.head_dim(), Sig(std::sqrt(static_cast<double>(t.cfg.head_dim()))).c_str());
  Explanation(buf);
}

namespace {

json RowStatsJson(const RowStats& st) {
  return json{{"entropy", st.entropy},
              {"max_entropy", st.max_entropy},
              {"max_weight", st.max_weight},
              {"mean_entropy", st.mean_entropy},
              {"mean_max_weight", st.mean_max_weight}};
}

json HeadAttentionJson(const HeadAttention& a) {
  json j{{"scaled", a.scaled},
         {"temperature", a.temperature},
         {"multiplier", a.multiplier},
         {"score_std", a.score_std},
         {"stats", RowStatsJson(a.stats)}};
  if (a.scores.size() <= dump::kMaxDumpValues) {
    j["scores"] = Matrix(a.scores);
    j["masked_scores"] = Matrix(a.masked_scores);
    j["weights"] = Matrix(a.weights);
  }
  return j;
}

}  // namespace

json DumpSoftmaxView(AppState& s) {
  const auto& c = ScalingCache(s);
  if (!c.ok) return dump::Error(c.error);
  return {{"head", c.value.with_scaling.head},
          {"with_scaling", HeadAttentionJson(c.value.with_scaling)},
          {"without_scaling", HeadAttentionJson(c.value.without_scaling)}};
}

// --probe: the weights map's cells as last drawn (presented: as tall as the height allows) and
// where the maps end.
json ProbeSoftmaxView(const AppState& s) {
  const SoftmaxState* st = s.views.Find<SoftmaxState>();
  if (!st) return nullptr;
  return {{"cell_w", st->cell_w}, {"cell_h", st->cell_h}, {"maps_bottom", st->maps_bottom}};
}

ViewEntry SoftmaxView() {
  ViewEntry v{"softmax", N_("Softmax"),
              N_("Scores, softmax and the \xE2\x88\x9A"
                 "d_k scaling"),
              "scores, masked scores and weights, with and without sqrt(d_k)"};
  v.alias = "scaling";
  v.draw = &DrawSoftmaxView;
  v.dump = &DumpSoftmaxView;
  v.probe = &ProbeSoftmaxView;
  v.prime = &PrimeSoftmax;
  v.shows = "scaling_with";
  v.essentials = "scaling_presented;scaling_scale;temperature";
  return v;
}

}  // namespace mha::gui
