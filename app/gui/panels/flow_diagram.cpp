// The shape flow's block diagram: x -> Q, K, V -> split -> attention per head ->
// concat -> W_O -> Add & Norm (and the encoder block's FFN), the residual path beside
// it. Each block stands for a row of the shape-flow table: hovering one highlights
// the row, clicking it opens the step's values in the inspector.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

struct Block {
  ImVec2 a, b;  // rectangle
  std::string label;
  int step;                      // shape-flow row it stands for, -1 if none
  bool opaque = false;           // filled, to hide what lies behind (the attention card stack)
  std::string short_label = {};  // shown instead when `label` does not fit (a narrow diagram)
};

}  // namespace

// The block diagram: x -> Q,K,V -> split -> attention per head -> concat -> W_O ->
// Add & Norm, with the residual path drawn beside it.
namespace {

// A residual path: from a block's side at (x_from, y_from) along a margin at x = rx,
// into the side of the Add block at (x_to, y_to), with its arrow head.
void Residual(ImDrawList* dl, ImU32 ac, float th, float head, float x_from, float rx, float y_from, float x_to,
              float y_to) {
  const float dir = x_to > rx ? 1.0f : -1.0f;  // into the block from the left or from the right
  dl->AddLine(ImVec2(x_from, y_from), ImVec2(rx, y_from), ac, th);
  dl->AddLine(ImVec2(rx, y_from), ImVec2(rx, y_to), ac, th);
  dl->AddLine(ImVec2(rx, y_to), ImVec2(x_to - dir * head, y_to), ac, th);
  dl->AddTriangleFilled(ImVec2(x_to - dir * head * 1.5f, y_to - head), ImVec2(x_to - dir * head * 1.5f, y_to + head),
                        ImVec2(x_to, y_to), ac);
}

// The attention per head: a stack of cards (the heads behind as shadows), one sub-row
// per step: scores, softmax, weights x V.
void AttentionCards(ImDrawList* dl, const Config& c, const std::vector<FlowRow>& flow, float x0, float x1, float ya,
                    float rh, int shadows, float d, std::vector<Block>& blocks) {
  const Palette& pal = Pal();
  auto step = [&](StepId id) { return FindStep(flow, id); };
  const float front_r = x1 - shadows * d;
  for (int k = shadows; k >= 1; --k) {
    const ImVec2 a(x0 + k * d, ya - k * d), b(front_r + k * d, ya + 3 * rh - k * d);
    dl->AddRectFilled(a, b, pal.block_bg, 4.0f);
    dl->AddRect(a, b, pal.block_border, 4.0f);
  }
  blocks.push_back(Block{ImVec2(x0, ya), ImVec2(front_r, ya + rh),
                         c.scale ? "Q\xC2\xB7K^T / \xE2\x88\x9A"
                                   "d_k"
                                 : _("Q\xC2\xB7K^T (not scaled)"),
                         step(StepId::Scores), true, "Q\xC2\xB7K^T"});
  blocks.push_back(Block{ImVec2(x0, ya + rh), ImVec2(front_r, ya + 2 * rh),
                         c.mask == Mask::Causal ? _("mask, softmax") : "Softmax", step(StepId::Softmax), true});
  blocks.push_back(Block{ImVec2(x0, ya + 2 * rh), ImVec2(front_r, ya + 3 * rh), _("weights \xC3\x97 V"),
                         step(StepId::Context), true});
}

// The blocks on top of the arrows; hovering one lights up its row of the table, and a
// click opens its values in the Inspect view.
void DrawBlocks(AppState& s, const std::vector<FlowRow>& flow, const std::vector<Block>& blocks) {
  const Palette& pal = Pal();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
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

void DrawFlowDiagram(AppState& s, const Trace& t, const std::vector<FlowRow>& flow, ImVec2 size) {
  const Palette& pal = Pal();
  const Config& c = t.cfg;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const bool pre = c.norm == Norm::Pre;
  const bool cross = t.in.cross();
  const float fs = ImGui::GetFontSize();
  // Groups: x, [LN], Q K V, split, attention (3 rows, no gaps), concat, W_O, Add;
  // the encoder block adds [LN], the feed-forward network and its Add.
  const bool encoder = c.block == mha::Block::Encoder;  // (Block here is a diagram box)
  const int groups = 7 + (pre ? 1 : 0) + (encoder ? 2 : 0);
  const int rows = groups + 2;
  const int gaps = groups - 1;
  // The attention cards' shadows rise above the stack: its gap makes room for them.
  const int shadows = std::min(c.num_heads - 1, 3);
  const float d = fs * 0.3f;
  // Too short a panel (large text, a small window): the diagram keeps the height its
  // labels need, and the panel scrolls, rather than drawing its blocks over each other.
  const float min_gap = fs * (encoder ? 0.25f : 0.35f);
  const float height = std::max(size.y, rows * fs * 1.05f + gaps * min_gap + shadows * d + 2.0f);
  ImGui::Dummy(ImVec2(size.x, height));
  const float rh = std::clamp((height - 2.0f - shadows * d - gaps * fs * 0.8f) / rows, fs * 1.05f, fs * 1.5f);
  const float gap = std::max(min_gap, (height - 2.0f - shadows * d - rows * rh) / gaps);
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
  y += shadows * d;
  const float ya = next_row(3 * rh);
  const float att_top = ya - shadows * d;
  AttentionCards(dl, c, flow, x0, x1, ya, rh, shadows, d, blocks);
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
  // Residual: from x down the left margin into the Add block; the FFN's from the first
  // Add down the right margin into the second.
  Residual(dl, ac, th, head, xb.a.x, o.x + resid * 0.45f, (xb.a.y + xb.b.y) * 0.5f, add.a.x,
           (add.a.y + add.b.y) * 0.5f);
  if (encoder) {
    down(cx, add.b.y, ffn.a.y);
    down(cx, ffn.b.y, add2.a.y);
    Residual(dl, ac, th, head, add.b.x, x1 - resid * 0.45f, (add.a.y + add.b.y) * 0.5f, add2.b.x,
             (add2.a.y + add2.b.y) * 0.5f);
  }

  DrawBlocks(s, flow, blocks);
}

}  // namespace mha::gui
