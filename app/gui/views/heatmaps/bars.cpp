// Around the heatmap grid: the colour bar, the colour scale picker and presentation
// mode's header (bars.hpp).
#include "gui/views/heatmaps/bars.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "gui/draw/pytorch_copy.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/heatmaps/heatmaps.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

// The colour bar, titled with the scale in use: the fixed scale's ticks are weights (or
// shares), a relative scale's run from 0 to the map's or row's largest value.
void DrawColourBar(ImVec2 a, ImVec2 size, bool masked_legend, render::ColourScale scale, bool shares) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const bool fixed = scale == render::ColourScale::Fixed;
  const char* title = fixed                               ? (shares ? _("share") : _("weight"))
                      : scale == render::ColourScale::Map ? _("\xC3\xB7 map max")
                                                          : _("\xC3\xB7 row max");
  dl->AddText(ImVec2(a.x, a.y), ImGui::GetColorU32(ImGuiCol_Text), title);
  const float top = a.y + fs * 1.6f, bottom = a.y + size.y - fs * 0.6f;
  const float x0 = a.x, x1 = a.x + fs * 1.0f;
  constexpr int kSteps = 64;
  for (int k = 0; k < kSteps; ++k) {
    // Top is 1, bottom is 0.
    const float v0 = 1.0f - static_cast<float>(k) / kSteps, v1 = 1.0f - static_cast<float>(k + 1) / kSteps;
    const ImU32 u0 = Col32(render::Colormap(v0)), u1 = Col32(render::Colormap(v1));
    const float y0 = top + (bottom - top) * k / kSteps, y1 = top + (bottom - top) * (k + 1) / kSteps;
    dl->AddRectFilledMultiColor(ImVec2(x0, y0), ImVec2(x1, y1 + 0.5f), u0, u0, u1, u1);
  }
  dl->AddRect(ImVec2(x0 - 1, top - 1), ImVec2(x1 + 1, bottom + 1), Pal().block_border);
  // Ticks every 0.25, or fewer where the bar is too short for their labels.
  const int parts = bottom - top >= 4.0f * fs ? 4 : bottom - top >= 2.0f * fs ? 2 : 1;
  for (int k = 0; k <= parts; ++k) {
    const float v = 1.0f - static_cast<float>(k) / parts;
    const float y = top + (bottom - top) * k / static_cast<float>(parts);
    char buf[64];
    if (fixed)
      std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
    else
      std::snprintf(buf, sizeof buf, "%s", k == 0 ? _("max") : k == parts ? "0" : "");
    dl->AddLine(ImVec2(x1, y), ImVec2(x1 + fs * 0.3f, y), ImGui::GetColorU32(ImGuiCol_Text));
    dl->AddText(ImVec2(x1 + fs * 0.4f, y - fs * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), buf);
  }
  if (masked_legend) {
    // The causal mask's cells: the exporter's grey, outside the colour scale.
    const float y = bottom + fs * 1.2f;
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + fs), Col32(render::kMaskedColour));
    dl->AddRect(ImVec2(x0 - 1, y - 1), ImVec2(x1 + 1, y + fs + 1), Pal().block_border);
    dl->AddText(ImVec2(x1 + fs * 0.4f, y), ImGui::GetColorU32(ImGuiCol_Text), _("masked"));
  }
}

// The colour scale picker, on one line; and, for long sentences on the fixed scale,
// why every map looks alike and the scale that helps.
void ScaleControls(AppState& s, const Trace& t) {
  // On the title's line if it fits, else on its own.
  const ImGuiStyle& st = ImGui::GetStyle();
  float need = ImGui::CalcTextSize(_("colour")).x;
  for (render::ColourScale sc : render::kColourScales)
    need += st.ItemSpacing.x + ImGui::GetFrameHeight() + st.ItemInnerSpacing.x +
            ImGui::CalcTextSize(render::ColourScaleLabel(sc)).x;
  if (ImGui::GetContentRegionAvail().x < need) ImGui::NewLine();
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled(_("colour"));
  for (render::ColourScale sc : render::kColourScales) {
    ImGui::SameLine();
    if (ImGui::RadioButton(render::ColourScaleLabel(sc), s.ui.colour_scale == sc)) s.ui.colour_scale = sc;
    Probe(s, (std::string("scale ") + render::ToString(sc)).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", render::ColourScaleHelp(sc));
  }
  if (!s.ui.present) {
    CopyAsPyTorchButton(s, notebook::Snippet::Heatmaps, "copy_pytorch");
  }
  if (t.seq_kv >= 24 && s.ui.colour_scale == render::ColourScale::Fixed) {
    ImGui::SameLine();
    if (ImGui::SmallButton(_("use per row"))) s.ui.colour_scale = render::ColourScale::Row;
    Probe(s, "use per row");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(_("An even spread over %d keys is 1/%d = %.3f per cell: on the fixed scale every map is "
                          "nearly one dark colour."),
                        t.seq_kv, t.seq_kv, 1.0 / t.seq_kv);
    if (s.ui.present) return;  // the room is the map's: the tooltip says why
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped(_("Each row shares 1 among %d keys: an even spread is 1/%d = %.3f per cell, so on the fixed "
                         "scale every map is nearly one dark colour. The per-row scale makes each query's strongest "
                         "key the brightest."),
                       t.seq_kv, t.seq_kv, 1.0 / t.seq_kv);
    ImGui::PopStyleColor();
  }
}

// Presentation mode's row over the maps, under the header every presented view has
// (views/presented.cpp): the layouts, and the keys (on a line of their own when they
// do not fit).
void PresentBar(AppState& s) {
  const float fs = ImGui::GetFontSize();
  const char* const kLayouts[] = {_("one map"), "2 \xC3\x97 2", _("all heads")};
  for (int k = 0; k < 3; ++k) {
    if (k) ImGui::SameLine();
    if (ImGui::RadioButton(kLayouts[k], s.ui.present_layout == k)) s.ui.present_layout = k;
    Probe(s, (std::string("present ") + std::to_string(k)).c_str());
  }
  const char* keys = _("\xE2\x86\x90 \xE2\x86\x92 heads   + / - num_heads   F11 or Esc leaves");
  ImGui::SameLine(0, fs * 1.5f);
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(keys).x) ImGui::NewLine();
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(keys);
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  Probe(s, "present_keys");
}

void SetPresentation(AppState& s, bool on) {
  if (on == s.ui.present) return;
  s.ui.present = on;
  const int H = s.result.generation > 0 ? s.result.trace.cfg.num_heads : s.choice.cfg.num_heads;
  if (on) {
    const bool one = s.ui.enlarged >= 0;
    s.ui.present_layout = one ? 0 : 2;
    s.ui.present_head = std::clamp(one ? s.ui.enlarged : s.choice.head, 0, H);
    return;
  }
  // Another view stepped s.choice.head itself; the heatmaps keep what they enlarged.
  if (s.choice.view != "heatmaps") return;
  s.ui.enlarged = s.ui.present_layout == 0 ? std::clamp(s.ui.present_head, 0, H) : -1;
  if (s.ui.present_head < H) s.choice.head = s.ui.present_head;
}

}  // namespace mha::gui
