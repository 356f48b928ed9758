// Shape flow: the core's table of steps (shape with batch axis, parameters, FLOPs)
// and, beside it, a block diagram of the same steps. Hovering a row or a block
// highlights the step in both.
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
  } else if (s.result.tokens.empty() && s.files.input_path.empty()) {
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

std::vector<FlowRow> ShownFlow(const AppState& s, const Trace& t) {
  std::vector<FlowRow> flow = t.flow;
  for (FlowRow& r : flow) r.params = ParamsShown(r.params);
  if (!UsingTrainedModel(s)) return flow;
  const Positional pe = s.source.model->cfg.positional;
  const char* kind = pe == Positional::Learned      ? _("learned PE")
                     : pe == Positional::Sinusoidal ? _("sinusoidal PE")
                                                    : _("no PE");
  for (FlowRow& r : flow) {
    if (r.id != StepId::Input) continue;
    const std::string dims = "seq = " + std::to_string(t.seq) + ", d_model = " + std::to_string(t.cfg.d_model);
    if (s.source.layer == 0) {
      r.formula = pe == Positional::None ? "x = tok_embed[tokens]" : "x = tok_embed[tokens] + PE";
      r.params = dims + ", " + kind;
    } else {
      r.formula = i18n::Format(_("x = layer %d's output"), s.source.layer - 1);
      r.params = dims + ", " + i18n::Format(_("%s (added below layer 0)"), kind);
    }
  }
  return flow;
}

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

struct Block {
  ImVec2 a, b;  // rectangle
  std::string label;
  int step;                      // shape-flow row it stands for, -1 if none
  bool opaque = false;           // filled, to hide what lies behind (the attention card stack)
  std::string short_label = {};  // shown instead when `label` does not fit (a narrow diagram)
};

// The block diagram: x -> Q,K,V -> split -> attention per head -> concat -> W_O ->
// Add & Norm, with the residual path drawn beside it.
void DrawDiagram(AppState& s, const Trace& t, ImVec2 size) {
  const Palette& pal = Pal();
  const auto& flow = t.flow;
  const Config& c = t.cfg;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::Dummy(size);
  const bool pre = c.norm == Norm::Pre;
  const bool cross = t.in.cross();
  const float fs = ImGui::GetFontSize();
  // Groups: x, [LN], Q K V, split, attention (3 rows, no gaps), concat, W_O, Add;
  // the encoder block adds [LN], the feed-forward network and its Add.
  const bool encoder = c.block == mha::Block::Encoder;  // (Block here is a diagram box)
  const int groups = 7 + (pre ? 1 : 0) + (encoder ? 2 : 0);
  const int rows = groups + 2;
  const int gaps = groups - 1;
  const float rh = std::clamp((size.y - 2.0f - gaps * fs * 0.8f) / rows, fs * 1.05f, fs * 1.5f);
  const float gap = std::max(fs * (encoder ? 0.25f : 0.35f), (size.y - 2.0f - rows * rh) / gaps);
  const float resid = fs * 1.2f;  // left margin for the residual path
  const float x0 = o.x + resid, x1 = o.x + size.x - 1.0f;
  const float w = x1 - x0;
  const float cx = x0 + w * 0.5f;
  float y = o.y + 1.0f;
  auto next_row = [&](float height) {
    const float top = y;
    y += height + gap;
    return top;
  };
  auto step = [&](StepId id) { return FindStep(flow, id); };
  // A centred block `frac` of the width, wider if its label needs it (a narrow diagram).
  auto centred = [&](float top, float frac, std::string label, int st) {
    const float bw = std::clamp(ImGui::CalcTextSize(label.c_str()).x + fs * 0.8f, w * frac, w);
    return Block{ImVec2(cx - bw * 0.5f, top), ImVec2(cx + bw * 0.5f, top + rh), std::move(label), st};
  };

  std::vector<Block> blocks;
  // Inputs.
  const float y_in = next_row(rh);
  Block xb = cross ? Block{ImVec2(x0, y_in), ImVec2(x0 + w * 0.46f, y_in + rh), "x", step(StepId::Input)}
                   : centred(y_in, 0.5f, "x", step(StepId::Input));
  blocks.push_back(xb);
  Block mb{};
  if (cross) {
    mb = Block{ImVec2(x1 - w * 0.46f, y_in), ImVec2(x1, y_in + rh), _("memory m"), -1, false, "m"};
    blocks.push_back(mb);
  }
  const float q_src_x = (xb.a.x + xb.b.x) * 0.5f;
  float q_src_y = xb.b.y;
  if (pre) {
    const float yl = next_row(rh);
    Block ln{ImVec2(q_src_x - w * 0.25f, yl), ImVec2(q_src_x + w * 0.25f, yl + rh), "LayerNorm", step(StepId::PreNorm)};
    if (!cross) ln = centred(yl, 0.5f, "LayerNorm", step(StepId::PreNorm));
    blocks.push_back(ln);
    q_src_y = ln.b.y;
  }
  // Projections.
  const float yq = next_row(rh);
  const float pgap = fs * 0.4f, pw = (w - 2 * pgap) / 3.0f;
  const char* qkv[3] = {"Q", "K", "V"};
  const StepId qkv_steps[3] = {StepId::QProj, StepId::KProj, StepId::VProj};
  Block proj[3];
  for (int i = 0; i < 3; ++i) {
    const float bx = x0 + i * (pw + pgap);
    proj[i] = Block{ImVec2(bx, yq), ImVec2(bx + pw, yq + rh), qkv[i], step(qkv_steps[i])};
    blocks.push_back(proj[i]);
  }
  const float ys = next_row(rh);
  blocks.push_back(Block{ImVec2(x0, ys), ImVec2(x1, ys + rh),
                         i18n::Format(P_("split into %d head", "split into %d heads", c.num_heads), c.num_heads),
                         step(StepId::SplitHeads), false,
                         i18n::Format(P_("split: %d head", "split: %d heads", c.num_heads), c.num_heads)});
  // Attention per head: a stack of cards, one sub-row per step.
  const float ya = next_row(3 * rh);
  const int shadows = std::min(c.num_heads - 1, 3);
  const float d = fs * 0.3f;
  const float front_r = x1 - shadows * d;
  for (int k = shadows; k >= 1; --k) {
    const ImVec2 a(x0 + k * d, ya - k * d), b(front_r + k * d, ya + 3 * rh - k * d);
    dl->AddRectFilled(a, b, pal.block_bg, 4.0f);
    dl->AddRect(a, b, pal.block_border, 4.0f);
  }
  const float att_top = ya - shadows * d;
  blocks.push_back(Block{ImVec2(x0, ya), ImVec2(front_r, ya + rh),
                         c.scale ? "Q\xC2\xB7K^T / \xE2\x88\x9A"
                                   "d_k"
                                 : _("Q\xC2\xB7K^T (not scaled)"),
                         step(StepId::Scores), true, "Q\xC2\xB7K^T"});
  blocks.push_back(Block{ImVec2(x0, ya + rh), ImVec2(front_r, ya + 2 * rh),
                         c.mask == Mask::Causal ? _("mask, softmax") : "Softmax", step(StepId::Softmax), true});
  blocks.push_back(Block{ImVec2(x0, ya + 2 * rh), ImVec2(front_r, ya + 3 * rh), _("weights \xC3\x97 V"),
                         step(StepId::Context), true});
  const float yc = next_row(rh);
  blocks.push_back(Block{ImVec2(x0, yc), ImVec2(x1, yc + rh), _("concat heads"), step(StepId::Concat)});
  const float yo = next_row(rh);
  const Block wo = centred(yo, 0.6f, "\xC3\x97 W_O", step(StepId::OutProj));
  blocks.push_back(wo);
  const float yn = next_row(rh);
  const Block add =
      centred(yn, 0.6f, c.norm == Norm::Post ? "Add & Norm" : _("Add (residual)"), step(StepId::Residual));
  blocks.push_back(add);
  // The encoder block: position-wise feed-forward network, then its own residual.
  Block ffn{}, add2{};
  if (encoder) {
    // Pre-LN: LN2 shares the FFN's box, so the diagram keeps fitting the panel.
    const float yf = next_row(rh);
    const char* act = c.activation == Activation::Gelu ? "GELU" : "ReLU";
    ffn = centred(yf, 0.8f, i18n::Format(pre ? _("LN, feed-forward, %s") : _("feed-forward, %s"), act),
                  step(StepId::FfnUp));
    ffn.short_label = std::string(pre ? "LN, FFN, " : "FFN, ") + act;
    blocks.push_back(ffn);
    const float yn2 = next_row(rh);
    add2 = centred(yn2, 0.6f, c.norm == Norm::Post ? "Add & Norm" : _("Add (residual)"), step(StepId::FfnResidual));
    blocks.push_back(add2);
  }

  // Arrows.
  const ImU32 ac = pal.block_border;
  const float th = 1.5f, head = fs * 0.26f;
  auto line = [&](ImVec2 a, ImVec2 b) { dl->AddLine(a, b, ac, th); };
  auto down = [&](float x, float top, float bottom) {
    line(ImVec2(x, top), ImVec2(x, bottom - head));
    dl->AddTriangleFilled(ImVec2(x - head, bottom - head * 1.5f), ImVec2(x + head, bottom - head * 1.5f),
                          ImVec2(x, bottom), ac);
  };
  // Sources to projections: Q from x (or LN(x)); K and V from x, LN(x) or the memory.
  const float mid = yq - gap * 0.5f;
  auto feed = [&](float sx, float sy, int i) {
    const float px = (proj[i].a.x + proj[i].b.x) * 0.5f;
    line(ImVec2(sx, sy), ImVec2(sx, mid));
    line(ImVec2(sx, mid), ImVec2(px, mid));
    down(px, mid, yq);
  };
  feed(q_src_x, q_src_y, 0);
  const float kv_x = cross ? (mb.a.x + mb.b.x) * 0.5f : q_src_x;
  const float kv_y = cross ? mb.b.y : q_src_y;
  feed(kv_x, kv_y, 1);
  feed(kv_x, kv_y, 2);
  if (pre) down(q_src_x, xb.b.y, blocks[cross ? 2 : 1].a.y);
  down(cx, yq + rh, ys);
  down(cx, ys + rh, att_top);
  down(cx, ya + 3 * rh, yc);
  down(cx, yc + rh, yo);
  down(cx, yo + rh, yn);
  // Residual: from x down the left margin into the Add block.
  {
    const float rx = o.x + resid * 0.45f;
    const float y_from = (xb.a.y + xb.b.y) * 0.5f, y_to = (add.a.y + add.b.y) * 0.5f;
    line(ImVec2(xb.a.x, y_from), ImVec2(rx, y_from));
    line(ImVec2(rx, y_from), ImVec2(rx, y_to));
    line(ImVec2(rx, y_to), ImVec2(add.a.x - head, y_to));
    dl->AddTriangleFilled(ImVec2(add.a.x - head * 1.5f, y_to - head), ImVec2(add.a.x - head * 1.5f, y_to + head),
                          ImVec2(add.a.x, y_to), ac);
  }
  if (encoder) {
    down(cx, add.b.y, ffn.a.y);
    down(cx, ffn.b.y, add2.a.y);
    // The FFN's residual: from the first Add down the right margin into the second.
    const float rx = x1 - resid * 0.45f;
    const float y_from = (add.a.y + add.b.y) * 0.5f, y_to = (add2.a.y + add2.b.y) * 0.5f;
    line(ImVec2(add.b.x, y_from), ImVec2(rx, y_from));
    line(ImVec2(rx, y_from), ImVec2(rx, y_to));
    line(ImVec2(rx, y_to), ImVec2(add2.b.x + head, y_to));
    dl->AddTriangleFilled(ImVec2(add2.b.x + head * 1.5f, y_to - head), ImVec2(add2.b.x + head * 1.5f, y_to + head),
                          ImVec2(add2.b.x, y_to), ac);
  }

  // Hover: a block stands for one row of the table.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered())
    for (const Block& b : blocks)
      if (b.step >= 0 && mouse.x >= b.a.x && mouse.x < b.b.x && mouse.y >= b.a.y && mouse.y < b.b.y) {
        s.ui.hover_step_next = b.step;
        s.ui.hover_from_diagram_next = true;
        const FlowRow& r = flow[static_cast<std::size_t>(b.step)];
        ImGui::SetTooltip(_("%s\n%s\n%s\nClick to see its values."), r.step.c_str(), r.formula.c_str(),
                          ShapeString(r.shape).c_str());
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) InspectFlowRow(s, r);
      }

  // Blocks on top of the arrows.
  for (const Block& b : blocks) {
    const bool hot = b.step >= 0 && b.step == s.ui.hover_step;
    if (hot || b.opaque) dl->AddRectFilled(b.a, b.b, hot ? pal.highlight_bg : pal.block_bg, 4.0f);
    dl->AddRect(b.a, b.b, hot ? pal.highlight : pal.block_border, 4.0f, 0, hot ? 2.0f : 1.0f);
    const float room = b.b.x - b.a.x - fs * 0.3f;
    const bool use_short = !b.short_label.empty() && ImGui::CalcTextSize(b.label.c_str()).x > room;
    const std::string label = Ellipsize(use_short ? b.short_label : b.label, room);
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(std::round((b.a.x + b.b.x - ts.x) * 0.5f), std::round((b.a.y + b.b.y - ts.y) * 0.5f)),
                ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
  }
}

}  // namespace

float FlowPanelHeight(const AppState& s) {
  const ImGuiStyle& st = ImGui::GetStyle();
  // Header, the steps and the total; the attention layer's 11 steps until a trace exists.
  const std::size_t steps = s.result.trace.flow.empty() ? 11 : s.result.trace.flow.size();
  return ImGui::GetTextLineHeightWithSpacing() + FlowTableHeight(steps) + 2.0f * st.WindowPadding.y;
}

void DrawFlowPanel(AppState& s) {
  const bool folded = s.splitters.flow_collapsed || s.ui.flow_folded_for_room;
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
      s.splitters.flow_height = FlowPanelHeight(s) / (s.ui.content_scale * s.ui.text_size / 100.0f);
    } else {
      s.splitters.flow_collapsed = !s.splitters.flow_collapsed;
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
  const Trace& t = s.result.trace;
  const std::vector<FlowRow> flow = ShownFlow(s, t);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float fs = ImGui::GetFontSize();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  // The diagram takes what the table's columns leave, between a floor where its
  // block labels still fit and its preferred width.
  const float table_need = FitColumns(s, flow, FLT_MAX, avail.y).need_w;
  const float diagram_max = std::min(fs * 15.0f, avail.x * 0.34f);
  const float diagram_min = std::min(fs * 8.0f, diagram_max);
  const float diagram_w = std::clamp(avail.x - spacing - table_need, diagram_min, diagram_max);
  const float table_w = avail.x - diagram_w - spacing;
  s.ui.report.flow_diagram_w = diagram_w;
  ImGui::BeginChild("##flow_table", ImVec2(table_w, avail.y), false);
  DrawTable(s, flow, ImGui::GetContentRegionAvail().y, FindFailure(s));
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##flow_diagram", ImVec2(diagram_w, avail.y), false, ImGuiWindowFlags_NoScrollbar);
  DrawDiagram(s, t, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
}

}  // namespace mha::gui
