// The encoder block switch in Configuration: "attention only" or the full
// Transformer encoder block (attention, then a position-wise feed-forward network
// with its own residual + LayerNorm). The FFN's rows then appear in the shape
// flow, because the flow table is the trace's own.
#include <algorithm>
#include <cstdio>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

void DrawBlockControls(AppState& s) {
  Config& c = s.choice.cfg;
  const float lw = ImGui::CalcTextSize("num_kv_heads").x + ImGui::GetStyle().ItemSpacing.x * 2;
  FormLabel(_("layer"), lw);
  const char* kinds[2] = {_("attention only"), _("encoder block (+ FFN)")};
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("(?)").x -
                          ImGui::GetStyle().ItemSpacing.x);
  int block = static_cast<int>(c.block);
  if (ImGui::Combo("##block", &block, kinds, 2)) {
    c.block = static_cast<Block>(block);
    s.dirty = true;
  }
  Probe(s, "block");
  HelpMarker(
      _("Encoder block: after attention, a position-wise feed-forward network FFN(x) = act(x W1 + b1) W2 + b2 "
        "(d_model -> d_ff -> d_model, each token on its own) with its own residual + LayerNorm, as in the "
        "Transformer encoder. Its steps appear in the shape flow."));
  if (c.block != Block::Encoder) return;

  FormLabel(_("d_ff"), lw);
  int d_ff = c.ffn_dim();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("4 x d_model").x -
                          2 * ImGui::GetStyle().FramePadding.x - ImGui::GetStyle().ItemSpacing.x);
  if (ImGui::SliderInt("##d_ff", &d_ff, 1, std::clamp(8 * c.d_model, 16, Limits::kMaxDFf), "%d",
                       ImGuiSliderFlags_AlwaysClamp)) {
    c.d_ff = d_ff == 4 * c.d_model ? 0 : d_ff;  // 0 follows d_model
    s.dirty = true;
  }
  Probe(s, "d_ff");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("The FFN's hidden width. Ctrl+click to type a value."));
  ImGui::SameLine();
  ImGui::BeginDisabled(c.d_ff == 0);
  if (ImGui::Button(_("4 x d_model"))) {
    c.d_ff = 0;
    s.dirty = true;
  }
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(_("d_ff = 4 x d_model, as in Vaswani et al. 2017 (512 -> 2048), following d_model."));

  FormLabel(_("activation"), lw);
  int act = static_cast<int>(c.activation);
  bool a = ImGui::RadioButton(_("ReLU"), &act, static_cast<int>(Activation::Relu));
  ImGui::SameLine();
  a |= ImGui::RadioButton(_("GELU"), &act, static_cast<int>(Activation::Gelu));
  HelpMarker(_("ReLU: max(0, x), the original Transformer. GELU: x \xC2\xB7 \xCE\xA6(x), BERT and GPT."));
  if (a) {
    c.activation = static_cast<Activation>(act);
    s.dirty = true;
  }
  if (s.choice.files.weights && s.choice.files.weights->ffn_W1.size() == 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped(_("W1, W2: seeded (seed %llu), since %s has no FFN weights."),
                       static_cast<unsigned long long>(c.seed), s.choice.files.weights_path.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace mha::gui
