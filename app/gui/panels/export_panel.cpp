// Export: where the heatmaps (Ctrl+S) and window screenshots go, and how it went.
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

void DrawExportPanel(AppState& s) {
  // The button on the title's line: in a 1280 x 800 window the options below it are
  // under the fold (they keep their last values).
  SectionTitle(s, _("Export"));
  ImGui::SameLine(0.0f, ImGui::GetFontSize());
  const char* what = s.ui.exports.notebook    ? _("Export notebook  (Ctrl+S)")
                     : s.ui.exports.head_view ? _("Export head view  (Ctrl+S)")
                                              : _("Export heatmaps  (Ctrl+S)");
  if (ImGui::Button((std::string(what) + "###export").c_str())) {
    s.ui.pending.export_png = true;  // the extension decides PNG or SVG
  }
  Probe(s, "export");
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextWrapped(_("Heatmaps or the head view for slides: .png, or .svg with one shape per cell or line."));
  ImGui::PopStyleColor();
  const float lw = ImGui::CalcTextSize("num_kv_heads").x + ImGui::GetStyle().ItemSpacing.x * 2;
  FormLabel(_("file"), lw);
  ImGui::InputTextWithHint("##export_path",
                           s.ui.exports.notebook ? _("attention.ipynb") : _("attention.png or attention.svg"),
                           s.ui.exports.path.data(), s.ui.exports.path.size());
  Probe(s, "export_path");
  FormLabel(_("picture"), lw);
  int view = s.ui.exports.notebook ? 2 : s.ui.exports.head_view ? 1 : 0;
  ImGui::RadioButton(_("heatmaps"), &view, 0);
  Probe(s, "export_view_heatmaps");
  ImGui::SameLine();
  ImGui::RadioButton(_("head view"), &view, 1);
  Probe(s, "export_view_head");
  HelpMarker(
      _("The head view: the tokens in two columns and a line from each query to each key, opacity = weight, "
        "the heads switched on in the Head view in their colours."));
  // The notebook on its own line: in Korean at 150 % the three do not fit on one.
  ImGui::Dummy(ImVec2(lw - ImGui::GetStyle().ItemSpacing.x, 0));
  ImGui::SameLine(lw);
  ImGui::RadioButton(_("Jupyter notebook"), &view, 2);
  Probe(s, "export_view_notebook");
  HelpMarker(
      _("The current sentence and weights as a notebook of the lessons' PyTorch code (and the .npz it reads, "
        "beside it): it recomputes every step, checks nn.MultiheadAttention against the app's numbers and "
        "draws the heatmaps. The same as mhaviz export --notebook."));
  s.ui.exports.head_view = view == 1;
  s.ui.exports.notebook = view == 2;
  // A notebook is not a picture: the picture's options are greyed out for it.
  ImGui::BeginDisabled(s.ui.exports.notebook);
  // What shapes heatmaps only is greyed out for the head view (as export refuses it).
  ImGui::BeginDisabled(s.ui.exports.head_view);
  FormLabel(_("heads"), lw);
  int sel = s.ui.exports.selected_only ? 1 : 0;
  ImGui::RadioButton(_("all + mean"), &sel, 0);
  ImGui::SameLine();
  ImGui::RadioButton(_("enlarged"), &sel, 1);
  HelpMarker(_("Click a head in the heatmaps to enlarge it; that is the head exported with this option."));
  s.ui.exports.selected_only = sel == 1;
  ImGui::EndDisabled();
  FormLabel(_("resolution"), lw);
  ImGui::SliderInt("##scale", &s.ui.exports.scale, 1, 4, "x%d");
  ImGui::BeginDisabled(s.ui.exports.head_view);
  ImGui::Dummy(ImVec2(lw - ImGui::GetStyle().ItemSpacing.x, 0));
  ImGui::SameLine(lw);
  ImGui::Checkbox(_("weights in cells"), &s.ui.exports.values);
  // For slides: the same choices as mhaviz export's --columns, --no-header, --fit 16:9
  // and --color-scale (the heatmaps' own scale, so the slide matches the screen).
  FormLabel(_("columns"), lw);
  ImGui::SliderInt("##columns", &s.ui.exports.columns, 0, 8, s.ui.exports.columns == 0 ? _("auto") : _("%d per row"));
  Probe(s, "export_columns");
  ImGui::EndDisabled();
  ImGui::Dummy(ImVec2(lw - ImGui::GetStyle().ItemSpacing.x, 0));
  ImGui::SameLine(lw);
  ImGui::Checkbox(_("header"), &s.ui.exports.header);
  HelpMarker(_("The title, sentence and configuration above the maps. Off: the maps alone."));
  ImGui::SameLine();
  ImGui::BeginDisabled(s.ui.exports.head_view);
  ImGui::Checkbox(_("fit 16:9"), &s.ui.exports.fit_16_9);
  Probe(s, "export_fit");
  HelpMarker(_("A canvas of exactly 16:9 (a slide): the columns are chosen to fill it, the figure centred."));
  FormLabel(_("colours"), lw);
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::BeginCombo("##export_scale", render::ColourScaleLabel(s.ui.colour_scale))) {
    for (render::ColourScale sc : render::kColourScales) {
      if (ImGui::Selectable(render::ColourScaleLabel(sc), sc == s.ui.colour_scale)) s.ui.colour_scale = sc;
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", render::ColourScaleHelp(sc));
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("The heatmaps' colour scale: the export uses the one on screen."));
  ImGui::EndDisabled();
  ImGui::EndDisabled();
  ImGui::Spacing();
  FormLabel(_("screenshot"), lw);
  ImGui::InputTextWithHint("##shot_path", "mhaviz-window.png", s.ui.exports.screenshot_path.data(),
                           s.ui.exports.screenshot_path.size());
  if (ImGui::Button(_("Save window screenshot"))) {
    std::string p = s.ui.exports.screenshot_path.data();
    if (p.empty()) p = "mhaviz-window.png";
    s.ui.pending.screenshot = p;
  }
  if (!s.ui.exports.message.empty())
    MessageBox(s.ui.exports.message, s.ui.exports.message_ok ? Pal().chip_bg : Pal().error_bg,
               s.ui.exports.message_ok ? Pal().ok_text : Pal().error_text);
}

}  // namespace mha::gui
