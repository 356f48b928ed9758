// The left column's Model panel: where the weights come from (seeded, the positional
// heads, mhaviz-small, a trained model), the layer shown and what the model is; and
// the banner over the results naming the knocked-out heads.
#include <cstdio>
#include <string>

#include <imgui.h>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

void DrawModelSourcePanel(AppState& s) {
  SectionTitle(s, _("Model"), _("where the weights come from"), true);
  // The positional heads may also come from the Lesson or Head metrics view, or a flag.
  if (s.choice.source.kind != ModelSourceKind::Trained)
    s.choice.source.kind = UsesPositionalHeadsExample(s) ? ModelSourceKind::PositionalHeads : ModelSourceKind::Seeded;
  std::string current;
  switch (s.choice.source.kind) {
    case ModelSourceKind::Seeded:
      current = s.choice.files.weights_path.empty() ? i18n::Format(_("Seeded random weights (seed %llu)"),
                                                                   static_cast<unsigned long long>(s.choice.cfg.seed))
                                                    : _("Weights from ") + SourceShown(s.choice.files.weights_path);
      break;
    case ModelSourceKind::PositionalHeads: current = _("Four positional heads (hand-built)"); break;
    case ModelSourceKind::Trained:
      // The shipped model by its name (which already says "trained"); another checkpoint by its path.
      current = s.choice.source.lm ? std::string(_(kSmallModelName))
                                   : i18n::Format(_("Trained: %s"), s.choice.source.name.c_str());
      break;
  }
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::BeginCombo("##model_source", current.c_str())) {
    if (ImGui::Selectable(_("Seeded random weights"), s.choice.source.kind == ModelSourceKind::Seeded))
      UseSeededSource(s);
    Probe(s, "source_seeded");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(_("Untrained weights drawn from the seed: any sentence, noisy heads."));
    if (ImGui::Selectable(_("Four positional heads (hand-built)"),
                          s.choice.source.kind == ModelSourceKind::PositionalHeads))
      UsePositionalHeadsSource(s);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(_("Heads built by hand to attend to the previous, the same, the first and the next word."));
    // kSmallModelName, marked for xgettext here: lm_source.hpp keeps the English key.
    static_cast<void>(N_("mhaviz-small (trained)"));
    if (ImGui::Selectable((std::string(_(kSmallModelName)) + "##small").c_str(), UsingLanguageModel(s)))
      UseSmallModel(s);
    Probe(s, "source_small");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          _("The bilingual language model mhaviz ships (2 layers x 8 heads, d_model 128): type any "
            "English or Korean sentence."));
    std::string trained;
    if (TrainedModelAvailable(s, &trained)) {
      if (ImGui::Selectable(i18n::Format(_("Trained: %s"), trained.c_str()).c_str(),
                            s.choice.source.kind == ModelSourceKind::Trained))
        ShowTrainedModel(s);
    } else {
      ImGui::TextDisabled(_("Trained model: train one in the Train tab, or load a checkpoint there"));
    }
    ImGui::EndCombo();
  }
  Probe(s, "model_source");
  if (!s.result.source_error.empty()) MessageBox(s.result.source_error, Pal().error_bg, Pal().error_text);
  if (!UsingTrainedModel(s)) return;

  const ModelConfig& c = s.choice.source.model->cfg;
  if (c.num_layers > 1) {
    FormLabel(_("layer"),
              ImGui::CalcTextSize(_("layer")).x + ImGui::CalcTextSize(" ").x + ImGui::GetStyle().ItemSpacing.x);
    s.dirty |= ImGui::SliderInt("##source_layer", &s.choice.layer, 0, c.num_layers - 1, _("layer %d"));
    Probe(s, "source_layer");
    HelpMarker(
        _("Which layer the shape flow, the heatmaps and the teaching views show. Layer 0 reads the token "
          "embeddings; each later layer reads the layer below's output."));
  }
  char buf[1024];
  if (s.choice.source.lm) {
    std::snprintf(buf, sizeof buf,
                  _("Every view shows this model: %d layers x %d heads, d_model %d, on the typed sentence cut into its "
                    "%d SentencePiece pieces (<s> first; _ starts a word), at most %d pieces (its context)."),
                  c.num_layers, c.layer.num_heads, c.layer.d_model, c.vocab_size(), c.max_seq);
  } else {
    std::snprintf(buf, sizeof buf,
                  _("Every view shows this model: %d layer(s) x %d head(s), d_model %d, on the token ids in the "
                    "sentence field (its vocabulary: %s). Configuration sets the next model to train."),
                  c.num_layers, c.layer.num_heads, c.layer.d_model, VocabRange(c).c_str());
  }
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextWrapped("%s", buf);
  ImGui::PopStyleColor();
}

void DrawKnockoutBanner(AppState& s) {
  const std::string heads = KnockoutText(s, true);
  if (heads.empty()) return;
  const std::string text = i18n::Format(
      s.result.knocked_out.size() == 1
          ? _("Knocked out: %s. Every view shows the model without this head: its context is replaced before W_O (its "
              "own attention is still drawn).")
          : _("Knocked out: %s. Every view shows the model without these heads: their context is replaced before W_O "
              "(their own attention is still drawn)."),
      heads.c_str());
  MessageBox(text, Pal().notice_bg, Pal().notice_text);
  Probe(s, "knockout_banner");
  if (ImGui::SmallButton(_("Put every head back"))) SetKnockedOut(s, {});
  Probe(s, "knockout_restore");
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
