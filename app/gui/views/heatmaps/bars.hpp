// Around the heatmap grid (views/heatmaps/grid.cpp): the colour bar and the colour
// scale picker, and presentation mode's header (where the weights come from, the map
// the arrow keys are on and what its head does against chance, the layouts, the keys).
#pragma once

#include <string>

#include <imgui.h>

#include "gui/state/app_state.hpp"
#include "render/colormap.hpp"

namespace mha::gui {

// The colour bar at a (size: its column), titled with the scale in use; with the
// causal mask's grey below it when masked_legend.
void DrawColourBar(ImVec2 a, ImVec2 size, bool masked_legend, render::ColourScale scale);
// The colour scale picker, on one line; and, for long sentences on the fixed scale,
// why every map looks alike and the scale that helps.
void ScaleControls(AppState& s, const Trace& t);
// "previous 0.81 (chance 0.07)" for head h of the shown trace; *claimed: a pattern
// above chance. Empty for the mean or while the summaries cannot be had.
std::string HeadLabel(AppState& s, int h, bool* claimed);
// Presentation mode's row over the maps: the layouts and the keys.
void PresentBar(AppState& s);

}  // namespace mha::gui
