// Around the heatmap grid (views/heatmaps/grid.cpp): the colour bar and the colour
// scale picker, and presentation mode's row of layouts and keys.
#pragma once

#include <string>

#include <imgui.h>

#include "gui/state/app_state.hpp"
#include "render/colormap.hpp"

namespace mha::gui {

// The colour bar at a (size: its column), titled with the scale in use (the fixed
// scale: "share" when the maps show what each key adds); with the causal mask's grey
// below it when masked_legend.
void DrawColourBar(ImVec2 a, ImVec2 size, bool masked_legend, render::ColourScale scale, bool shares = false);
// The colour scale picker, on one line; and, for long sentences on the fixed scale,
// why every map looks alike and the scale that helps.
void ScaleControls(AppState& s, const Trace& t);
// Presentation mode's row over the maps: the layouts and the keys.
void PresentBar(AppState& s);

}  // namespace mha::gui
