// The whole window for one frame.
#pragma once

#include "gui/state/app_state.hpp"

namespace mha::gui {

// Lays out and draws every panel between ImGui::NewFrame and ImGui::Render, runs
// Recompute once if the choice changed, and carries out pending exports.
void DrawFrame(AppState& s);

}  // namespace mha::gui
