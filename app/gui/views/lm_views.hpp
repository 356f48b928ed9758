// What the head view, the model view and the next-token panel share: their UI state,
// the heads' colours and the layer selector.
#pragma once

#include <array>
#include <vector>

#include <imgui.h>

#include "mha/config.hpp"

namespace mha::gui {

struct AppState;

struct LmViewsUi {
  std::array<bool, Limits::kMaxHeads> head_off{};  // head view: heads switched off
  int hover_query = -1, hover_key = -1;            // head view: the token hovered (its lines alone)
};

// One colour per head (head view lines and toggles, model view frames), 12 then repeating.
ImU32 HeadColour(int h, float alpha = 1.0f);
// "layer" slider over the trained model's layers (the model source's own), when it has
// more than one; else nothing.
void LayerSelector(AppState& s, const char* id);

}  // namespace mha::gui
