// Colours and sizes of the app, light (default: projectors wash out dark themes)
// or dark.
#pragma once

#include <imgui.h>

#include "render/colormap.hpp"

namespace mha::gui {

// An opaque colour of render/colormap.hpp (the colour scales, the masked grey, text on a cell).
inline ImU32 Col32(render::Rgb c) { return IM_COL32(c[0], c[1], c[2], 255); }

struct Palette {
  ImU32 accent;     // buttons, active controls, diagram arrows
  ImU32 highlight;  // hovered shape-flow step (table row and diagram block)
  ImU32 highlight_bg;
  ImU32 block_bg;  // diagram blocks
  ImU32 block_border;
  ImU32 chip_bg;  // token chips
  ImU32 chip_border;
  ImU32 chip_text;
  ImU32 error_bg;
  ImU32 error_text;
  ImU32 notice_bg;
  ImU32 notice_text;
  ImU32 ok_text;
  ImU32 muted_text;
  ImU32 grid_line;  // between heatmap cells
};

// A cell's background for an effect of size t in [0, 1] (a knock-out's drop, a patch's
// recovery): the same red in the Proof and Patch views, strong enough on a projector;
// `negative` gives blue (a patch that moves further away).
inline ImU32 EffectColour(float t, bool negative = false) {
  const ImVec4 c = negative ? ImVec4(0.2f, 0.4f, 0.85f, 0.85f * t) : ImVec4(0.85f, 0.25f, 0.2f, 0.85f * t);
  return ImGui::ColorConvertFloat4ToU32(c);
}

// Sets ImGui's style for `dark` at `scale` (content scale x text size).
void ApplyTheme(bool dark, float scale);
const Palette& Pal();

}  // namespace mha::gui
