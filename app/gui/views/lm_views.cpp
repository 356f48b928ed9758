#include "gui/views/lm_views.hpp"

#include <imgui.h>

#include "gui/app_state.hpp"
#include "gui/widgets.hpp"

namespace mha::gui {

ImU32 HeadColour(int h, float alpha) {
  // Tableau's 10 plus two: distinct on light and dark backgrounds.
  static constexpr unsigned char kRgb[12][3] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},
                                                {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                                                {188, 189, 34},  {23, 190, 207}, {0, 0, 128},   {128, 128, 0}};
  const auto* c = kRgb[h % 12];
  return IM_COL32(c[0], c[1], c[2], static_cast<int>(alpha * 255.0f + 0.5f));
}

void LayerSelector(AppState& s, const char* id) {
  if (!UsingTrainedModel(s) || s.source.model->cfg.num_layers < 2) return;
  const int n = s.source.model->cfg.num_layers;
  int layer = s.source.layer;
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("layer 00").x * 2.5f);
  if (ImGui::SliderInt(id, &layer, 0, n - 1, "layer %d")) {
    s.source.layer = layer;
    s.dirty = true;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("of %d (the model source's layer: every view follows it)", n);
}

}  // namespace mha::gui
