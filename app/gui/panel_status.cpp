// Status bar: how long the last recompute took and what it had to redo, how long
// the last frame took, and what is being computed.
#include <cstdio>
#include <string>

#include "gui/panels.hpp"
#include "gui/theme.hpp"
#include "gui/widgets.hpp"

namespace mha::gui {

// What the last recompute redid, in the lesson's words: a new head count keeps Q, K
// and V (it only cuts them differently), a new word re-projects its own row.
std::string ReuseText(const LiveReport& r, const Trace& t) {
  std::string s;
  if (r.weights == LiveReport::Weights::New) s = "new weights, ";
  else if (r.weights == LiveReport::Weights::KvOnly) s = "new W_K, W_V, ";
  const Trace::Reuse& u = t.reuse;
  const bool cross = t.in.cross();
  if (u.resplit && u.q_rows == 0 && u.kv_rows == 0)
    return s + "Q, K, V kept and re-split into " + std::to_string(t.cfg.num_heads) + " heads";
  if (u.q_rows == 0 && u.kv_rows == 0) return s + "Q, K, V kept";
  if (u.q_rows == t.seq && u.kv_rows == t.seq_kv) return s + "Q, K, V computed";
  if (!cross)
    return s + "Q, K, V of " + std::to_string(u.q_rows) + " of " + std::to_string(t.seq) + " rows re-projected";
  return s + "Q: " + std::to_string(u.q_rows) + " of " + std::to_string(t.seq) + " rows, K, V: " +
         std::to_string(u.kv_rows) + " of " + std::to_string(t.seq_kv) + " rows re-projected";
}

void DrawStatusBar(AppState& s) {
  const Timing& tm = s.timing;
  const float gap = ImGui::GetFontSize() * 1.5f;
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::Text("recompute %.2f ms", tm.last_recompute_ms);
  if (s.result.ok) {
    ImGui::SameLine();
    ImGui::TextUnformatted(("(" + ReuseText(s.live.report(), s.result.trace) + ")").c_str());
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("What the last recompute had to redo. Everything after Q, K and V (scores, softmax,\n"
                      "attn V, W_O, the norm) is recomputed on every change; Q, K and V only where their\n"
                      "input or weights changed. A new num_heads keeps them: the projections do not\n"
                      "depend on how many heads they are cut into.");
  ImGui::SameLine(0, gap);
  ImGui::Text("frame %.1f ms", tm.last_frame_ms);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("of which uploading heatmap textures: %.2f ms", tm.last_upload_ms);
  if (s.result.ok) {
    const Trace& t = s.result.trace;
    const Config& c = t.cfg;
    ImGui::SameLine(0, gap);
    ImGui::Text("%s-attention  seq %d%s  d_model %d  %d heads x head_dim %d%s  seed %llu",
                t.in.cross() ? "cross" : "self", t.seq,
                t.in.cross() ? (" x " + std::to_string(t.seq_kv)).c_str() : "", c.d_model, c.num_heads, c.head_dim(),
                c.kv_heads() != c.num_heads ? (", " + std::to_string(c.kv_heads()) + " K/V heads").c_str() : "",
                static_cast<unsigned long long>(c.seed));
  }
  ImGui::PopStyleColor();
}

}  // namespace mha::gui
