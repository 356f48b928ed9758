// What the head view, the model view and the next-token panel share: the heads'
// colours and the layer selector (their UI state, LmViewsUi, is in state/app_state.hpp);
// and what the views that need a trained model offer without one.
#pragma once

#include <array>
#include <vector>

#include <imgui.h>

#include "mha/config.hpp"

namespace mha::gui {

struct AppState;

// One colour per head (head view lines and toggles, model view frames), 12 then repeating.
ImU32 HeadColour(int h, float alpha = 1.0f);
// "layer" slider over the trained model's layers (the model source's own), when it has
// more than one; else nothing.
void LayerSelector(AppState& s, const char* id);
// For a view that needs a trained model and has none: the "Use mhaviz-small" button
// (its probe named `probe`), which makes the shipped model the source, and why that
// model did not load when it did not.
void UseSmallModelButton(AppState& s, const char* probe);

}  // namespace mha::gui
