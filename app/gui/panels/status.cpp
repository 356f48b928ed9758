// Status bar: how long the last recompute took and what it had to redo, how long
// the last frame took, and what is being computed.
#include <cstdio>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/recompute.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

void DrawWeightsBadge(AppState& s) {
  const WeightsProvenance w = DescribeWeights(s);
  const bool random = w.kind == "random", trained = w.kind == "trained";
  const ImVec2 pad(ImGui::GetFontSize() * 0.35f, ImGui::GetStyle().FramePadding.y);
  const ImVec2 ts = ImGui::CalcTextSize(w.shown.c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 size(ts.x + 2 * pad.x, ts.y + 2 * pad.y);
  const ImU32 bg = random ? Pal().notice_bg : Pal().chip_bg;
  const ImU32 fg = random ? Pal().notice_text : trained ? Pal().ok_text : ImGui::GetColorU32(ImGuiCol_Text);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + size.x, p.y + size.y), bg, 3.0f);
  dl->AddText(ImVec2(p.x + pad.x, p.y + pad.y), fg, w.shown.c_str());
  ImGui::Dummy(size);
  Probe(s, "weights_badge");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", random ? _("These weights were drawn from the seed and never trained: whatever pattern a "
                                       "head shows here is chance, not something it learned. Pick mhaviz-small under "
                                       "Model for trained heads.")
                            : trained ? _("Weights learned by training; the layer shown.")
                                      : _("Weights set by hand or loaded from a file, not trained here."));
}

void DrawStatusBar(AppState& s) {
  const Timing& tm = s.ui.timing;
  const float gap = ImGui::GetFontSize() * 1.5f;
  char buf[512];
  std::snprintf(buf, sizeof buf, _("recompute %.2f ms"), tm.last_recompute_ms);
  const std::string recompute = buf;
  std::string reuse = WorkerBusy(s) ? WorkerText(s)
                      : s.result.ok ? "(" + (s.result.reuse_shown.empty() ? s.result.reuse : s.result.reuse_shown) + ")"
                                    : std::string();
  std::snprintf(buf, sizeof buf, _("frame %.1f ms"), tm.last_frame_ms);
  std::string frame = buf;
  std::string config;
  if (s.result.ok) {
    const Trace& t = s.result.trace;
    const Config& c = t.cfg;
    char heads[64], kv[64] = "";
    std::snprintf(heads, sizeof heads, P_("%d head", "%d heads", c.num_heads), c.num_heads);
    if (c.kv_heads() != c.num_heads)
      std::snprintf(kv, sizeof kv, P_(", %d K/V head", ", %d K/V heads", c.kv_heads()), c.kv_heads());
    std::snprintf(buf, sizeof buf, _("%s  seq %d%s  d_model %d  %s x head_dim %d%s  seed %llu"),
                  t.in.cross() ? _("cross-attention") : _("self-attention"), t.seq,
                  t.in.cross() ? (" x " + std::to_string(t.seq_kv)).c_str() : "", c.d_model, heads, c.head_dim(), kv,
                  static_cast<unsigned long long>(c.seed));
    config = buf;
  }
  // One line, never cut at the window's edge (1280 px: "head_dir"): the recompute time
  // and the configuration stay whole; the recompute's explanation gets what is left
  // ("...", whole in its tooltip), and the frame time goes where there is no room.
  const float space = ImGui::CalcTextSize(" ").x;
  auto w = [](const std::string& t) { return t.empty() ? 0.0f : ImGui::CalcTextSize(t.c_str()).x; };
  const float avail = ImGui::GetContentRegionAvail().x;
  float need = w(recompute) + (config.empty() ? 0.0f : gap + w(config)) + gap + w(frame);
  if (need > avail) {
    frame.clear();
    need = w(recompute) + (config.empty() ? 0.0f : gap + w(config));
  }
  const std::string reuse_full = reuse;
  if (!reuse.empty()) {
    const float room = avail - need - space - 2.0f;
    reuse = room >= ImGui::GetFontSize() * 4.0f ? Ellipsize(reuse, room) : std::string();
  }
  if (!config.empty() && need > avail) config = Ellipsize(config, std::max(avail - w(recompute) - gap, 1.0f));
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextUnformatted(recompute.c_str());
  const char* why =
      _("What the last recompute had to redo. Everything after Q, K and V (scores, softmax,\n"
        "attn V, W_O, the norm) is recomputed on every change; Q, K and V only where their\n"
        "input or weights changed. A new num_heads keeps them: the projections do not\n"
        "depend on how many heads they are cut into.");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s%s%s", reuse_full.c_str(), reuse_full.empty() ? "" : "\n", why);
  if (!reuse.empty()) {
    ImGui::SameLine();
    ImGui::TextUnformatted(reuse.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", reuse_full.c_str(), why);
  }
  if (!frame.empty()) {
    ImGui::SameLine(0, gap);
    ImGui::TextUnformatted(frame.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("of which uploading heatmap textures: %.2f ms"), tm.last_upload_ms);
  }
  if (!config.empty()) {
    ImGui::SameLine(0, gap);
    ImGui::TextUnformatted(config.c_str());
  }
  Probe(s, "status_end");  // the last item: its right edge is the line's
  ImGui::PopStyleColor();
}

}  // namespace mha::gui
