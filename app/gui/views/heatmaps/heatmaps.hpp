// The Heatmaps view's grid of attention maps (grid.cpp), which presentation mode
// also draws full-window.
#pragma once

#include "gui/state/app_state.hpp"

namespace mha::gui {

void DrawHeatmapsPanel(AppState& s);

}  // namespace mha::gui
