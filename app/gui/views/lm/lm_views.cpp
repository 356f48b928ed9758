#include "gui/views/lm/lm_views.hpp"

#include <imgui.h>

#include "gui/draw/widgets.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "render/head_view.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

ImU32 HeadColour(int h, float alpha) {
  const render::Rgb c = render::HeadColour(h);  // the export's colours too
  return IM_COL32(c[0], c[1], c[2], static_cast<int>(alpha * 255.0f + 0.5f));
}

void LayerSelector(AppState& s, const char* id) {
  if (!UsingTrainedModel(s) || s.choice.source.model->cfg.num_layers < 2) return;
  const int n = s.choice.source.model->cfg.num_layers;
  int layer = s.choice.layer;
  ImGui::SetNextItemWidth(ImGui::CalcTextSize(_("layer %d")).x * 2.5f);
  if (ImGui::SliderInt(id, &layer, 0, n - 1, _("layer %d"))) {
    s.choice.layer = layer;
    s.dirty = true;
  }
  ImGui::SameLine();
  ImGui::TextDisabled(_("of %d (the model source's layer: every view follows it)"), n);
}

void UseSmallModelButton(AppState& s, const char* probe) {
  if (ImGui::Button(_("Use mhaviz-small"))) UseSmallModel(s);
  Probe(s, probe);
  if (!s.result.source_error.empty()) MessageBox(s.result.source_error, Pal().error_bg, Pal().error_text);
}

}  // namespace mha::gui
