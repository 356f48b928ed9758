// Status bar: how long the last recompute took and what it had to redo, how long
// the last frame took, and what is being computed.
#include <cstdio>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

void DrawStatusBar(AppState& s) {
  const Timing& tm = s.timing;
  const float gap = ImGui::GetFontSize() * 1.5f;
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::Text(_("recompute %.2f ms"), tm.last_recompute_ms);
  if (s.result.ok) {
    ImGui::SameLine();
    ImGui::Text("(%s)", s.result.reuse.c_str());
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("What the last recompute had to redo. Everything after Q, K and V (scores, softmax,\n"
                      "attn V, W_O, the norm) is recomputed on every change; Q, K and V only where their\n"
                      "input or weights changed. A new num_heads keeps them: the projections do not\n"
                      "depend on how many heads they are cut into."));
  ImGui::SameLine(0, gap);
  ImGui::Text(_("frame %.1f ms"), tm.last_frame_ms);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("of which uploading heatmap textures: %.2f ms"), tm.last_upload_ms);
  if (s.result.ok) {
    const Trace& t = s.result.trace;
    const Config& c = t.cfg;
    ImGui::SameLine(0, gap);
    char heads[64], kv[64] = "";
    std::snprintf(heads, sizeof heads, P_("%d head", "%d heads", c.num_heads), c.num_heads);
    if (c.kv_heads() != c.num_heads)
      std::snprintf(kv, sizeof kv, P_(", %d K/V head", ", %d K/V heads", c.kv_heads()), c.kv_heads());
    ImGui::Text(_("%s  seq %d%s  d_model %d  %s x head_dim %d%s  seed %llu"),
                t.in.cross() ? _("cross-attention") : _("self-attention"), t.seq,
                t.in.cross() ? (" x " + std::to_string(t.seq_kv)).c_str() : "", c.d_model, heads, c.head_dim(), kv,
                static_cast<unsigned long long>(c.seed));
  }
  ImGui::PopStyleColor();
}

}  // namespace mha::gui
