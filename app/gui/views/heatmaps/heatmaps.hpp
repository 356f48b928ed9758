// The Heatmaps view's grid of attention maps (grid.cpp), which presentation mode
// also draws full-window.
#pragma once

#include "gui/state/app_state.hpp"

namespace mha::gui {

void DrawHeatmapsPanel(AppState& s);

// Presentation mode on or off (F11, Esc, the View menu, --present), keeping what the
// teacher selected: an enlarged head (say, one clicked in the Model view) is presented
// alone, the grid of every head as all heads; back from one map, that map stays
// enlarged. The model and layer are the views' own, so they stay too.
void SetPresentation(AppState& s, bool on);

}  // namespace mha::gui
