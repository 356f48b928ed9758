// Shape flow: the core's table of steps (shape with batch axis, parameters, FLOPs)
// and, beside it, a block diagram of the same steps. Hovering a row or a block
// highlights the step in both.
#include <algorithm>
#include <string>
#include <vector>

#include "gui/panels.hpp"
#include "gui/theme.hpp"
#include "gui/widgets.hpp"

namespace mha::gui {
namespace {

int FlowIndex(const std::vector<FlowRow>& flow, const char* step) {
  for (std::size_t i = 0; i < flow.size(); ++i)
    if (flow[i].step == step) return static_cast<int>(i);
  return -1;
}

void DrawTable(AppState& s, const std::vector<FlowRow>& flow, float height) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_BordersOuterH |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("shape_flow", 5, flags, ImVec2(0.0f, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("step", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("computes", ImGuiTableColumnFlags_WidthStretch, 1.35f);
  ImGui::TableSetupColumn("shape (batch, ...)", ImGuiTableColumnFlags_WidthStretch, 0.95f);
  ImGui::TableSetupColumn("parameters", ImGuiTableColumnFlags_WidthStretch, 1.35f);
  ImGui::TableSetupColumn("FLOPs", ImGuiTableColumnFlags_WidthStretch, 0.75f);
  ImGui::TableHeadersRow();
  long long total_flops = 0, total_params = 0;
  for (std::size_t i = 0; i < flow.size(); ++i) {
    const FlowRow& r = flow[i];
    total_flops += r.flops;
    total_params += r.param_count;
    ImGui::TableNextRow();
    const bool hot = s.ui.hover_step == static_cast<int>(i);
    if (hot) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, Pal().highlight_bg);
    ImGui::TableSetColumnIndex(0);
    ImGui::PushID(static_cast<int>(i));
    ImGui::Selectable(r.step.c_str(), false, ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap);
    ImGui::PopID();
    if (ImGui::IsItemHovered()) {
      s.ui.hover_step_next = static_cast<int>(i);
      ImGui::SetTooltip("%s\n%s\nresult \"%s\" %s\n%s learned numbers, %s FLOPs (a multiply-add counts as 2)",
                        r.step.c_str(), r.formula.c_str(), r.tensor.c_str(), ShapeString(r.shape).c_str(),
                        Thousands(r.param_count).c_str(), Thousands(r.flops).c_str());
    }
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(r.formula.c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(ShapeString(r.shape).c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::TextUnformatted(r.params.c_str());
    ImGui::TableSetColumnIndex(4);
    const std::string f = Thousands(r.flops);
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(f.c_str()).x);
    ImGui::TextUnformatted(f.c_str());
  }
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted("total");
  ImGui::TableSetColumnIndex(3);
  ImGui::Text("%s learned numbers", Thousands(total_params).c_str());
  ImGui::TableSetColumnIndex(4);
  const std::string f = Thousands(total_flops);
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(f.c_str()).x);
  ImGui::TextUnformatted(f.c_str());
  if (s.ui.font_bold) ImGui::PopFont();
  ImGui::EndTable();
}

struct Block {
  ImVec2 a, b;        // rectangle
  std::string label;
  int step;           // shape-flow row it stands for, -1 if none
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
  // Rows: x, [LN], QKV, split, attention (3 sub-rows), concat, W_O, Add & Norm.
  const int rows = 6 + (pre ? 1 : 0) + 3;
  const float fs = ImGui::GetFontSize();
  const float gap = std::max(4.0f, std::min(fs * 0.75f, (size.y - rows * fs * 1.35f) / (rows + 1)));
  const float rh = std::min(fs * 1.6f, (size.y - gap * (rows + 1)) / rows);
  const float resid_w = fs * 1.6f;  // right margin for the residual path
  const float x0 = o.x + fs * 0.4f, x1 = o.x + size.x - resid_w;
  const float w = x1 - x0;
  float y = o.y + gap * 0.5f;

  std::vector<Block> blocks;
  auto row = [&](float height) {
    const float top = y;
    y += height + gap;
    return top;
  };
  auto step = [&](const char* name) { return FlowIndex(flow, name); };

  const float yx = row(rh);
  if (cross) {
    blocks.push_back({ImVec2(x0, yx), ImVec2(x0 + w * 0.48f, yx + rh), "x (queries)", step("input")});
    blocks.push_back({ImVec2(x0 + w * 0.52f, yx), ImVec2(x1, yx + rh), "memory m", -1});
  } else {
    blocks.push_back({ImVec2(x0 + w * 0.2f, yx), ImVec2(x1 - w * 0.2f, yx + rh), "x", step("input")});
  }
  if (pre) {
    const float yl = row(rh);
    blocks.push_back({ImVec2(x0 + w * 0.2f, yl), ImVec2(x1 - w * 0.2f, yl + rh), "LayerNorm", step("pre-LayerNorm")});
  }
  const float yq = row(rh);
  const float third = (w - 2 * fs * 0.4f) / 3.0f;
  const char* names[3] = {"Q = xW_Q", "K = mW_K", "V = mW_V"};
  const char* steps[3] = {"Q projection", "K projection", "V projection"};
  if (!cross) {
    names[1] = "K = xW_K";
    names[2] = "V = xW_V";
  }
  for (int i = 0; i < 3; ++i) {
    const float bx = x0 + i * (third + fs * 0.4f);
    blocks.push_back({ImVec2(bx, yq), ImVec2(bx + third, yq + rh), names[i], step(steps[i])});
  }
  const float ys = row(rh);
  blocks.push_back({ImVec2(x0, ys), ImVec2(x1, ys + rh), "split into " + std::to_string(c.num_heads) + " heads",
                    step("split heads")});
  // Attention per head: a stack of cards, one sub-row per step.
  const float ya = row(3 * rh);
  const float card = fs * 0.28f;
  const int shadows = std::min(c.num_heads - 1, 3);
  for (int k = shadows; k >= 1; --k) {
    const ImVec2 a(x0 + k * card, ya - k * card * 0.6f), b(x1 - (shadows - k) * 0.0f + 0.0f, ya + 3 * rh - k * card * 0.6f);
    dl->AddRectFilled(ImVec2(a.x, a.y), ImVec2(std::min(b.x, x1 + k * card * 0.0f), b.y), pal.block_bg, 4.0f);
    dl->AddRect(ImVec2(a.x, a.y), ImVec2(b.x, b.y), pal.block_border, 4.0f);
  }
  const std::string sc = c.scale ? "scores = QK\xE1\xB5\x80 / \xE2\x88\x9A" "d_k" : "scores = QK\xE1\xB5\x80";
  blocks.push_back({ImVec2(x0, ya), ImVec2(x1 - shadows * card, ya + rh),
                    c.scale ? "Q\xC2\xB7K^T / \xE2\x88\x9A" "d_k" : "Q\xC2\xB7K^T (no scaling)", step("scores")});
  blocks.push_back({ImVec2(x0, ya + rh), ImVec2(x1 - shadows * card, ya + 2 * rh),
                    c.mask == Mask::Causal ? "causal mask, softmax" : "softmax", step("softmax")});
  blocks.push_back({ImVec2(x0, ya + 2 * rh), ImVec2(x1 - shadows * card, ya + 3 * rh), "weights \xC3\x97 V",
                    step("context")});
  const float yc = row(rh);
  blocks.push_back({ImVec2(x0, yc), ImVec2(x1, yc + rh), "concat heads", step("concat")});
  const float yo = row(rh);
  blocks.push_back({ImVec2(x0 + w * 0.15f, yo), ImVec2(x1 - w * 0.15f, yo + rh), "\xC3\x97 W_O", step("output projection")});
  const float yn = row(rh);
  const int out_step = std::max(step("residual + LayerNorm"), step("residual"));
  blocks.push_back({ImVec2(x0 + w * 0.15f, yn), ImVec2(x1 - w * 0.15f, yn + rh),
                    c.norm == Norm::Post ? "Add & Norm" : "Add (residual)", out_step});

  // Hover: a block stands for one row of the table.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool panel_hovered = ImGui::IsWindowHovered();
  for (const Block& b : blocks)
    if (panel_hovered && b.step >= 0 && mouse.x >= b.a.x && mouse.x < b.b.x && mouse.y >= b.a.y && mouse.y < b.b.y) {
      s.ui.hover_step_next = b.step;
      ImGui::SetTooltip("%s\n%s  %s", flow[b.step].step.c_str(), flow[b.step].formula.c_str(),
                        ShapeString(flow[b.step].shape).c_str());
    }

  // Arrows between rows, down the middle (and from x to each of Q, K, V).
  const ImU32 arrow = pal.block_border;
  auto down = [&](float x, float ya_, float yb_) {
    dl->AddLine(ImVec2(x, ya_), ImVec2(x, yb_ - 1), arrow, 1.5f);
    const float h = fs * 0.28f;
    dl->AddTriangleFilled(ImVec2(x - h, yb_ - h * 1.4f), ImVec2(x + h, yb_ - h * 1.4f), ImVec2(x, yb_), arrow);
  };
  const float cx = (x0 + x1) * 0.5f;
  for (std::size_t i = 0; i + 1 < blocks.size(); ++i) (void)i;
  // x (or LN) -> Q, K, V
  const float y_src = pre ? blocks[cross ? 2 : 1].b.y : blocks[0].b.y;
  for (int i = 0; i < 3; ++i) {
    const Block& q = blocks[(cross ? 2 : 1) + (pre ? 1 : 0) + i];
    const float qx = (q.a.x + q.b.x) * 0.5f;
    if (cross && i > 0) {
      const float mx = (blocks[1].a.x + blocks[1].b.x) * 0.5f;
      dl->AddLine(ImVec2(mx, blocks[1].b.y), ImVec2(mx, blocks[1].b.y + gap * 0.5f), arrow, 1.5f);
      dl->AddLine(ImVec2(mx, blocks[1].b.y + gap * 0.5f), ImVec2(qx, blocks[1].b.y + gap * 0.5f), arrow, 1.5f);
      down(qx, blocks[1].b.y + gap * 0.5f, q.a.y);
    } else {
      const float sx = cross ? (blocks[0].a.x + blocks[0].b.x) * 0.5f : cx;
      const float mid = y_src + gap * 0.5f;
      dl->AddLine(ImVec2(sx, y_src), ImVec2(sx, mid), arrow, 1.5f);
      dl->AddLine(ImVec2(sx, mid), ImVec2(qx, mid), arrow, 1.5f);
      down(qx, mid, q.a.y);
    }
  }
  if (pre) down(cross ? (blocks[0].a.x + blocks[0].b.x) * 0.5f : cx, blocks[0].b.y, blocks[cross ? 2 : 1].a.y);
  down(cx, yq + rh, ys);
  down(cx, ys + rh, ya - shadows * card * 0.6f);
  down(cx, ya + 3 * rh, yc);
  down(cx, yc + rh, yo);
  down(cx, yo + rh, yn);
  // Residual: from x around the right side into Add & Norm.
  {
    const float rx = x1 + resid_w * 0.55f;
    const Block& xb = blocks[0];
    const float xr = cross ? xb.b.x : xb.b.x;
    const float ymid = (xb.a.y + xb.b.y) * 0.5f;
    const float yadd = yn + rh * 0.5f;
    const float xadd = x1 - w * 0.15f;
    dl->AddLine(ImVec2(xr, ymid), ImVec2(rx, ymid), arrow, 1.5f);
    dl->AddLine(ImVec2(rx, ymid), ImVec2(rx, yadd), arrow, 1.5f);
    dl->AddLine(ImVec2(rx, yadd), ImVec2(xadd + 1, yadd), arrow, 1.5f);
    const float h = fs * 0.28f;
    dl->AddTriangleFilled(ImVec2(xadd + h * 1.4f, yadd - h), ImVec2(xadd + h * 1.4f, yadd + h), ImVec2(xadd, yadd), arrow);
  }

  // Blocks on top of the arrows.
  for (const Block& b : blocks) {
    const bool hot = b.step >= 0 && b.step == s.ui.hover_step;
    dl->AddRectFilled(b.a, b.b, hot ? pal.highlight_bg : pal.block_bg, 4.0f);
    dl->AddRect(b.a, b.b, hot ? pal.highlight : pal.block_border, 4.0f, 0, hot ? 2.0f : 1.0f);
    const std::string label = Ellipsize(b.label, b.b.x - b.a.x - fs * 0.4f);
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2((b.a.x + b.b.x - ts.x) * 0.5f, (b.a.y + b.b.y - ts.y) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text),
                label.c_str());
  }
  // "x H" badge on the attention stack.
  const std::string badge = "\xC3\x97 " + std::to_string(c.num_heads) + " heads";
  const ImVec2 bs = ImGui::CalcTextSize(badge.c_str());
  const ImVec2 bp(x1 - bs.x - fs * 0.3f, ya - shadows * card * 0.6f - bs.y - 2);
  if (bp.y > ys + rh) dl->AddText(bp, pal.muted_text, badge.c_str());
  (void)sc;
}

}  // namespace

void DrawFlowPanel(AppState& s) {
  SectionTitle(s, "Shape flow",
               "Every step of the layer with its output shape (batch axis first), its learned parameters and its FLOPs.");
  if (!s.result.ok) {
    ImGui::Spacing();
    MessageBox(s.result.error.empty() ? "Nothing computed yet." : "Nothing to show: " + s.result.error,
               Pal().error_bg, Pal().error_text);
    return;
  }
  const Trace& t = s.result.trace;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float diagram_w = std::min(ImGui::GetFontSize() * 15.0f, avail.x * 0.34f);
  const float table_w = avail.x - diagram_w - ImGui::GetStyle().ItemSpacing.x;
  ImGui::BeginChild("##flow_table", ImVec2(table_w, avail.y), false);
  DrawTable(s, t.flow, ImGui::GetContentRegionAvail().y);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##flow_diagram", ImVec2(diagram_w, avail.y), false, ImGuiWindowFlags_NoScrollbar);
  DrawDiagram(s, t, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
}

}  // namespace mha::gui
