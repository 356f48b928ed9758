// Shape flow: the core's table of steps (shape with batch axis, parameters, FLOPs)
// and, beside it, a block diagram of the same steps (flow_diagram.cpp). Hovering a row
// or a block highlights the step in both.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui_internal.h>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// English, translated where measured and drawn (FlowHeader).
const char* const kFlowHeaders[5] = {N_("step"), N_("computes"), N_("shape (batch, ...)"), N_("parameters"),
                                     N_("FLOPs")};
// The shape column's header where space is short (the panel's subtitle says the batch
// axis comes first).
const char* const kShortShapeHeader = N_("shape");
// The steps' names as the core writes them (trace.cpp), listed for xgettext; each row's
// name is translated where it is measured and drawn.
[[maybe_unused]] const char* const kStepNames[] = {N_("input"),
                                                   N_("Q projection"),
                                                   N_("K projection"),
                                                   N_("V projection"),
                                                   N_("split heads"),
                                                   N_("scores"),
                                                   N_("softmax"),
                                                   N_("context"),
                                                   N_("concat"),
                                                   N_("output projection"),
                                                   N_("residual"),
                                                   N_("residual + LayerNorm"),
                                                   N_("pre-LayerNorm"),
                                                   N_("residual 2"),
                                                   N_("residual + LayerNorm 2"),
                                                   N_("pre-LayerNorm 2"),
                                                   N_("FFN expand + GELU"),
                                                   N_("FFN expand + ReLU"),
                                                   N_("FFN contract")};

// The table's cell padding: tighter than the style's, so the whole table fits
// a 1280 x 800 window.
ImVec2 FlowCellPadding() {
  const ImVec2 p = ImGui::GetStyle().CellPadding;
  return ImVec2(std::round(p.x * 0.7f), std::round(p.y * 0.67f));
}

float FlowRowHeight() { return ImGui::GetTextLineHeight() + 2.0f * FlowCellPadding().y; }

// Height of the whole table: header, the steps, the total, the outer border lines.
float FlowTableHeight(std::size_t steps) { return FlowRowHeight() * static_cast<float>(steps + 2) + 2.0f; }

// Horizontal space a column takes besides its text (the gap between columns).
float ColumnPadding() { return 2.0f * FlowCellPadding().x; }

float TableWidth(const std::array<float, 5>& w) {
  float total = 0.0f;
  for (float x : w) total += x + ColumnPadding();
  return total;
}

bool Ascii(const std::string& t) {
  return std::all_of(t.begin(), t.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// As ImGui::CalcTextSize measures it (rounded up to whole pixels), in `font`.
float TextWidth(ImFont* font, const std::string& text) {
  return std::ceil(font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, text.c_str()).x);
}

// How the table's columns share `avail_w` (and `height`: a vertical scrollbar takes
// width when the rows do not fit). Every column as wide as its text if that fits.
// Otherwise the shape column's header drops "(batch, ...)", and the "parameters"
// column, the longest and a detail beside the shapes, switches to the small font (if
// it has the glyphs) and takes the width left, entries that still do not fit ending
// in "..." (the row's tooltip has them in full). Only below a floor of 6 em does the
// table scroll sideways.
struct ColumnFit {
  std::array<float, 5> w{};
  const char* shape_header = _(kFlowHeaders[2]);
  ImFont* params_font = nullptr;  // the font of the "parameters" column
  bool params_small = false;      // ... which is the small font
  bool scroll_x = false;
  float need_w = 0.0f;  // width the table would like (all text at full size)
};

ColumnFit FitColumns(const AppState& s, const std::vector<FlowRow>& flow, float avail_w, float height) {
  ColumnFit f;
  ImFont* regular = ImGui::GetFont();
  ImFont* bold = s.ui.font_bold ? s.ui.font_bold : regular;
  f.params_font = regular;
  long long flops = 0, params = 0;
  for (int c = 0; c < 5; ++c) f.w[c] = TextWidth(regular, _(kFlowHeaders[c]));
  for (const FlowRow& r : flow) {
    f.w[0] = std::max(f.w[0], TextWidth(regular, _(r.step.c_str())));
    f.w[1] = std::max(f.w[1], TextWidth(regular, r.formula));
    f.w[2] = std::max(f.w[2], TextWidth(regular, ShapeString(r.shape)));
    f.w[3] = std::max(f.w[3], TextWidth(regular, r.params));
    f.w[4] = std::max(f.w[4], TextWidth(regular, Thousands(r.flops)));
    flops += r.flops;
    params += r.param_count;
  }
  // The total row, in bold.
  const std::string total_params = i18n::Format(_("%s learned numbers"), Thousands(params).c_str());
  f.w[0] = std::max(f.w[0], TextWidth(bold, _("total")));
  f.w[3] = std::max(f.w[3], TextWidth(bold, total_params));
  f.w[4] = std::max(f.w[4], TextWidth(bold, Thousands(flops)));
  const float scrollbar = FlowTableHeight(flow.size()) > height + 0.5f ? ImGui::GetStyle().ScrollbarSize : 0.0f;
  f.need_w = TableWidth(f.w) + scrollbar;
  if (f.need_w <= avail_w) return f;

  f.shape_header = _(kShortShapeHeader);
  float shape_w = TextWidth(regular, _(kShortShapeHeader));
  for (const FlowRow& r : flow) shape_w = std::max(shape_w, TextWidth(regular, ShapeString(r.shape)));
  f.w[2] = shape_w;
  const float room = avail_w - scrollbar - (TableWidth(f.w) - f.w[3]);  // for the parameters' text
  if (room >= f.w[3]) return f;
  bool ascii = s.ui.font_small != nullptr;
  for (const FlowRow& r : flow) ascii = ascii && Ascii(r.params);
  if (ascii) {
    f.params_font = s.ui.font_small;
    f.params_small = true;
  }
  float pw = std::max(TextWidth(regular, _(kFlowHeaders[3])), TextWidth(f.params_font, total_params));
  for (const FlowRow& r : flow) pw = std::max(pw, TextWidth(f.params_font, r.params));
  const float floor = std::min(pw, ImGui::GetFontSize() * 6.0f);
  f.w[3] = std::clamp(room, floor, pw);
  f.scroll_x = room < floor - 0.5f;
  return f;
}

// Text of `font` in a cell `width` pixels wide, shortened with "..." if it does not
// fit. Returns true if shortened.
bool CellText(ImFont* font, const std::string& text, float width) {
  ImGui::PushFont(font);
  const bool fits = ImGui::CalcTextSize(text.c_str()).x <= width + 1.0f;  // (rounding: the padding has room)
  ImGui::TextUnformatted(fits ? text.c_str() : Ellipsize(text, width).c_str());
  ImGui::PopFont();
  return !fits;
}

// The step an invalid configuration cannot get past, and why, in the lesson's
// arithmetic; shown in that step's row of the last valid table.
struct FlowFailure {
  bool on = false;
  StepId step = StepId::SplitHeads;
  std::string text;
};

FlowFailure FindFailure(const AppState& s) {
  FlowFailure f;
  if (s.result.ok) return f;
  f.on = true;
  const Config& c = s.choice.cfg;
  char buf[480];
  if (c.num_heads > 0 && c.d_model > 0 && (c.num_heads > c.d_model || c.d_model % c.num_heads != 0)) {
    std::snprintf(buf, sizeof buf, _("%d / %d = %.4g is not a whole number: no head_dim"), c.d_model, c.num_heads,
                  static_cast<double>(c.d_model) / c.num_heads);
    f.text = buf;
  } else if (c.num_heads > 0 && (c.kv_heads() > c.num_heads || c.num_heads % c.kv_heads() != 0)) {
    std::snprintf(buf, sizeof buf, _("%d query heads cannot share %d K/V heads evenly"), c.num_heads, c.kv_heads());
    f.text = buf;
  } else if (s.result.tokens.empty() && s.choice.files.input_path.empty()) {
    f.step = StepId::Input;
    f.text = _("no tokens: the sentence is empty");
  } else {
    f.step = StepId::Input;
    f.text = _("cannot run: see the message over the results");
  }
  return f;
}

// The trace's table, with the input row a trained model's: its layers run without PE
// (the model adds its own, learned or sinusoidal, to the embeddings below layer 0),
// so the layer's own row would say "no PE" of a model that has positions.
// The core's notes in the parameters column, as the window shows them (numbers and
// identifiers kept); a note not listed here stays as the core wrote it.
std::string ParamsShown(const std::string& p) {
  if (i18n::Current() == i18n::Lang::kEnglish) return p;
  int a = 0, b = 0, c = 0;
  char rest[32] = "";
  if (p == "pre-LN: the norm came before attention") return _("pre-LN: the norm came before attention");
  if (p == "pre-LN: the norm came before the FFN") return _("pre-LN: the norm came before the FFN");
  if (p == "no LayerNorm") return _("no LayerNorm");
  if (std::sscanf(p.c_str(), "over the %d keys of each row%31[^\n]", &a, rest) >= 1) {
    if (!rest[0]) return i18n::Format(P_("over the %d key of each row", "over the %d keys of each row", a), a);
    if (std::string(rest) == ", tile by tile; attn not kept")
      return i18n::Format(P_("over the %d key of each row, tile by tile; attn not kept",
                             "over the %d keys of each row, tile by tile; attn not kept", a),
                          a);
  }
  if (std::sscanf(p.c_str(), "weighted sum of %d value rows%31s", &a, rest) == 1)
    return i18n::Format(P_("weighted sum of %d value row", "weighted sum of %d value rows", a), a);
  if (std::sscanf(p.c_str(), "%d heads x head_dim %d (K, V alike%31s", &a, &b, rest) == 3 ||
      std::sscanf(p.c_str(), "%d head x head_dim %d (K, V alike%31s", &a, &b, rest) == 3)
    return i18n::Format(P_("%d head x head_dim %d (K, V alike)", "%d heads x head_dim %d (K, V alike)", a), a, b);
  if (std::sscanf(p.c_str(), "%d query heads, %d K/V head%*[s] x head_dim %d", &a, &b, &c) == 3 ||
      std::sscanf(p.c_str(), "%d query heads, %d K/V head x head_dim %d", &a, &b, &c) == 3)
    return i18n::Format(
        P_("%d query heads, %d K/V head x head_dim %d", "%d query heads, %d K/V heads x head_dim %d", b), a, b, c);
  return p;
}

}  // namespace

std::vector<FlowRow> ShownFlow(const AppState& s, const Trace& t) {
  std::vector<FlowRow> flow = t.flow;
  for (FlowRow& r : flow) r.params = ParamsShown(r.params);
  // B sentences of the same length at once: every step runs on each, so the batch axis
  // and the FLOPs scale by B and the parameters are shared.
  const int batch = std::max(1, s.ui.flow_batch);
  if (batch > 1)
    for (FlowRow& r : flow) {
      if (!r.shape.empty()) r.shape[0] *= batch;
      r.flops *= batch;
    }
  if (!UsingTrainedModel(s)) return flow;
  const Positional pe = s.choice.source.model->cfg.positional;
  const char* kind = pe == Positional::Learned      ? _("learned PE")
                     : pe == Positional::Sinusoidal ? _("sinusoidal PE")
                                                    : _("no PE");
  for (FlowRow& r : flow) {
    if (r.id != StepId::Input) continue;
    const std::string dims = "seq = " + std::to_string(t.seq) + ", d_model = " + std::to_string(t.cfg.d_model);
    if (s.choice.layer == 0) {
      r.formula = pe == Positional::None ? "x = tok_embed[tokens]" : "x = tok_embed[tokens] + PE";
      r.params = dims + ", " + kind;
    } else {
      r.formula = i18n::Format(_("x = layer %d's output"), s.choice.layer - 1);
      r.params = dims + ", " + i18n::Format(_("%s (added below layer 0)"), kind);
    }
  }
  return flow;
}

namespace {

void DrawTable(AppState& s, const std::vector<FlowRow>& flow, float height, const FlowFailure& fail) {
  // Rows are told apart by lines, not stripes: every filled pixel costs on a
  // software rasteriser.
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const ColumnFit fit = FitColumns(s, flow, avail_w, height);
  const auto& w = fit.w;
  const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_BordersOuterH |
                                ImGuiTableFlags_ScrollY | (fit.scroll_x ? ImGuiTableFlags_ScrollX : 0) |
                                ImGuiTableFlags_SizingFixedFit;
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, FlowCellPadding());
  const bool open = ImGui::BeginTable("shape_flow", 5, flags, ImVec2(0.0f, height));
  ImGui::PopStyleVar();
  if (!open) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (int c = 0; c < 5; ++c)
    ImGui::TableSetupColumn(c == 2 ? fit.shape_header : _(kFlowHeaders[c]), ImGuiTableColumnFlags_WidthFixed, w[c]);
  LayoutReport& rep = s.ui.report;
  rep.flow_table_w = avail_w;
  rep.flow_columns_w = TableWidth(w);
  rep.flow_params_small = fit.params_small;
  rep.flow_scroll_x = fit.scroll_x;
  rep.flow_shortened = 0;
  for (const FlowRow& r : flow)
    if (r.id == StepId::Input) rep.flow_input = r.formula + " | " + r.params;
  ImGui::TableHeadersRow();
  long long total_flops = 0, total_params = 0;
  for (std::size_t i = 0; i < flow.size(); ++i) {
    const FlowRow& r = flow[i];
    total_flops += r.flops;
    total_params += r.param_count;
    ImGui::TableNextRow();
    // An invalid configuration: the last valid table, dimmed, with the failing step
    // saying why in its own row.
    const bool failing = fail.on && r.id == fail.step;
    if (fail.on && !failing) ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 0.45f);
    if (failing) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, Pal().error_bg);
    const bool hot = s.ui.hover_step == static_cast<int>(i);
    if (hot) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, Pal().highlight_bg);
    ImGui::TableSetColumnIndex(0);
    ImGui::PushID(static_cast<int>(i));
    // The row's own highlight (shared with the diagram) replaces ImGui's hover colour.
    ImGui::PushStyleColor(ImGuiCol_HeaderHovered, Pal().highlight_bg);
    ImGui::PushStyleColor(ImGuiCol_HeaderActive, Pal().highlight_bg);
    ImGui::Selectable((std::string(_(r.step.c_str())) + "##" + r.step).c_str(), false,
                      ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap);
    ImGui::PopStyleColor(2);
    ImGui::PopID();
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) InspectFlowRow(s, r);  // its values in the inspector
    Probe(s, ("flow " + r.tensor + " " + std::to_string(i)).c_str());
    // Hovering a diagram block brings its row into view.
    if (hot && s.ui.hover_from_diagram && !ImGui::IsItemVisible()) ImGui::SetScrollHereY(0.5f);
    if (ImGui::IsItemHovered()) {
      s.ui.hover_step_next = static_cast<int>(i);
      ImGui::SetTooltip(_("%s\n%s\nresult \"%s\" %s\n%s\n%s learned numbers, %s FLOPs (a multiply-add counts as 2)\n"
                          "Click to see its values in the tensor inspector."),
                        r.step.c_str(), r.formula.c_str(), r.tensor.c_str(), ShapeString(r.shape).c_str(),
                        r.params.c_str(), Thousands(r.param_count).c_str(), Thousands(r.flops).c_str());
    }
    ImGui::TableSetColumnIndex(1);
    if (failing) {
      // The message spans the columns to its right (they hold the last valid values).
      const ImVec2 at = ImGui::GetCursorScreenPos();
      ImGui::PushClipRect(at, ImVec2(at.x + avail_w, at.y + ImGui::GetTextLineHeight()), false);
      ImGui::PushStyleColor(ImGuiCol_Text, Pal().error_text);
      ImGui::TextUnformatted(fail.text.c_str());
      ImGui::PopStyleColor();
      ImGui::PopClipRect();
      Probe(s, "flow_error");
      continue;
    }
    ImGui::TextUnformatted(r.formula.c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(ShapeString(r.shape).c_str());
    ImGui::TableSetColumnIndex(3);
    rep.flow_shortened += CellText(fit.params_font, r.params, w[3]);
    ImGui::TableSetColumnIndex(4);
    const std::string f = Thousands(r.flops);
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(f.c_str()).x);
    ImGui::TextUnformatted(f.c_str());
    if (fail.on) ImGui::PopStyleVar();
  }
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(_("total"));
  ImGui::TableSetColumnIndex(3);
  // In bold, unless the column is in the small font (which has no bold).
  rep.flow_shortened += CellText(fit.params_small ? fit.params_font : ImGui::GetFont(),
                                 i18n::Format(_("%s learned numbers"), Thousands(total_params).c_str()), w[3]);
  ImGui::TableSetColumnIndex(4);
  const std::string f = Thousands(total_flops);
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(f.c_str()).x);
  ImGui::TextUnformatted(f.c_str());
  if (s.ui.font_bold) ImGui::PopFont();
  ImGui::EndTable();
}

}  // namespace

float FlowPanelHeight(const AppState& s) {
  const ImGuiStyle& st = ImGui::GetStyle();
  // Header, the steps and the total; the attention layer's 11 steps until a trace exists.
  const std::size_t steps = s.result.trace.flow.empty() ? 11 : s.result.trace.flow.size();
  return ImGui::GetTextLineHeightWithSpacing() + FlowTableHeight(steps) + 2.0f * st.WindowPadding.y;
}

void DrawFlowPanel(AppState& s) {
  const bool folded = s.ui.splitters.flow_collapsed || s.ui.flow_folded_for_room;
  const char* toggle = folded ? _("Show") : _("Hide");
  const float tw = ImGui::CalcTextSize(toggle).x + 2 * ImGui::GetStyle().FramePadding.x;
  const float right = ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - tw;
  SectionTitle(s, _("Shape flow"));
  if (!folded) {
    // One line that stops short of the button (big text: cut with "...", whole in the
    // tooltip), so the subtitle never runs under it or pushes the table down.
    const char* kSubtitle = _("each step's output shape (batch axis first), learned parameters and FLOPs");
    ImGui::SameLine(0.0f, ImGui::GetFontSize() * 0.8f);
    const float room = right - ImGui::GetCursorPosX() - ImGui::GetFontSize() * 0.8f;
    const std::string sub = Ellipsize(kSubtitle, room);
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextUnformatted(sub.c_str());
    ImGui::PopStyleColor();
    if (sub != kSubtitle && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kSubtitle);
    Probe(s, "flow_subtitle");
  }
  ImGui::SameLine(right);
  if (ImGui::SmallButton(toggle)) {
    if (s.ui.flow_folded_for_room) {
      // Shown on request: a height of its own (in unscaled pixels), so it stays.
      s.ui.splitters.flow_height = FlowPanelHeight(s) / (s.ui.content_scale * s.ui.text_size / 100.0f);
    } else {
      s.ui.splitters.flow_collapsed = !s.ui.splitters.flow_collapsed;
    }
    ImGui::MarkIniSettingsDirty();
  }
  Probe(s, "flow_toggle");
  if (folded) return;
  if (!s.result.ok && s.result.generation == 0) {
    ImGui::Spacing();
    MessageBox(_("Nothing to show until the problem described under Attention weights is fixed."), Pal().error_bg,
               Pal().error_text);
    return;
  }
  DrawFlowBody(s, ImGui::GetContentRegionAvail());
}

void DrawFlowBody(AppState& s, ImVec2 avail) {
  const Trace& t = s.result.trace;
  const std::vector<FlowRow> flow = ShownFlow(s, t);
  const float fs = ImGui::GetFontSize();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  // The diagram takes what the table's columns leave, between a floor where its
  // block labels still fit and its preferred width.
  const float table_need = FitColumns(s, flow, FLT_MAX, avail.y).need_w;
  const float diagram_max = std::min(fs * 15.0f, avail.x * 0.34f);
  const float diagram_min = std::min(fs * 8.0f, diagram_max);
  // Presented, the table is what the class reads: where the diagram beside it would cut
  // its cells short ("…": the parameters, the total), the diagram gives way.
  const bool diagram = !s.ui.present || avail.x - spacing - diagram_min >= table_need;
  const float diagram_w = diagram ? std::clamp(avail.x - spacing - table_need, diagram_min, diagram_max) : 0.0f;
  const float table_w = diagram ? avail.x - diagram_w - spacing : avail.x;
  s.ui.report.flow_diagram_w = diagram_w;
  ImGui::BeginChild("##flow_table", ImVec2(table_w, avail.y), false);
  DrawTable(s, flow, ImGui::GetContentRegionAvail().y, FindFailure(s));
  ImGui::EndChild();
  if (!diagram) return;
  ImGui::SameLine();
  ImGui::BeginChild("##flow_diagram", ImVec2(diagram_w, avail.y), false, ImGuiWindowFlags_NoScrollbar);
  DrawFlowDiagram(s, t, flow, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
}

}  // namespace mha::gui
