// What the app reports for tests, benchmarks and bug reports: --probe, --dump-state
// and --stats (run.cpp writes them).
#include "gui/automation/reports.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/sources/lm_source.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/state/settings.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/fonts.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "io/files.hpp"
#include "options/timing.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The num_heads and d_model the Configuration panel shows: a language model's own (its
// shape is fixed, the panel greys them out), else the configuration's, which for a
// Train view run is the shape of the next run.
void ShownShape(const AppState& s, nlohmann::json& j) {
  const bool fixed = UsingTrainedModel(s) && s.choice.source.lm;
  j["num_heads"] = fixed ? s.choice.source.lm->model.cfg.layer.num_heads : s.choice.cfg.num_heads;
  j["d_model"] = fixed ? s.choice.source.lm->model.cfg.layer.d_model : s.choice.cfg.d_model;
}

// Presentation mode: on or off, the view presented (its registry name), the head its
// header names (the heatmaps' map under the arrow keys, num_heads for their mean;
// another view's selected head), the heatmaps' layout and the header in words.
nlohmann::json PresentJson(const AppState& s) {
  const std::string view = ShownView(s).name;
  return {{"on", s.ui.present},
          {"view", view},
          {"layout", s.ui.present_layout},
          {"head", view == "heatmaps" ? s.ui.present_head : s.choice.head},
          {"header", s.ui.report.present_header},
          {"head_name", s.ui.report.present_name}};
}

// What the heatmap grid and the shape-flow table laid out in the last frame.
nlohmann::json LayoutJson(const LayoutReport& r) {
  return {{"heatmaps",
           {{"maps", r.maps},
            {"grid_cols", r.grid_cols},
            {"grid_rows", r.grid_rows},
            {"cell_w", r.cell_w},
            {"cell_h", r.cell_h},
            {"row_labels", r.row_labels},
            {"key_labels", r.key_labels},
            {"label_px", r.label_px},
            {"label_font_loaded", r.label_font},
            {"values", r.values},
            {"values_px", r.values_px},
            {"scroll", r.scroll},
            {"key_label_overlaps", r.key_label_overlaps},
            {"content_h", r.content_h},
            {"view_h", r.view_h}}},
          {"flow",
           {{"table_w", r.flow_table_w},
            {"columns_w", r.flow_columns_w},
            {"diagram_w", r.flow_diagram_w},
            {"params_small_font", r.flow_params_small},
            {"scroll_x", r.flow_scroll_x},
            {"shortened", r.flow_shortened},
            {"input", r.flow_input}}},
          {"scaling",
           {{"values_shown", r.scaling_values_shown},
            {"values_hidden", r.scaling_values_hidden},
            {"titles_cut", r.scaling_titles_cut}}},
          {"matrices", {{"hangul_rotated", r.matrix_hangul_rotated}, {"hangul_upright", r.matrix_hangul_upright}}}};
}

// Where the weights come from, as the marker on the heatmaps says it.
nlohmann::json WeightsJson(const AppState& s) {
  const WeightsProvenance w = DescribeWeights(s);
  return {{"kind", w.kind}, {"text", w.text}};
}

// The tabs (by view name) and the menus as shown, in the interface's language.
nlohmann::json ShownLabels(const AppState& s) {
  nlohmann::json tabs = nlohmann::json::object(), menus = nlohmann::json::array();
  for (const ViewEntry& v : Views()) tabs[v.name] = ViewTitle(v);
  for (const std::string& m : s.ui.menu_labels) menus.push_back(m);
  return {{"tabs", tabs}, {"menus", menus}};
}

// Every character the translations use, looked up in each font the interface draws
// text with (the bold headings and the small tab buttons load only some ranges): the
// ones a font lacks would be drawn as its fallback, a box or '?'.
nlohmann::json CatalogGlyphs(const AppState& s) {
  nlohmann::json missing = nlohmann::json::object();
  const std::pair<const char*, ImFont*> fonts[] = {
      {"regular", ImGui::GetIO().FontDefault}, {"bold", s.ui.font_bold}, {"small", s.ui.font_small}};
  for (const auto& [name, font] : fonts) {
    nlohmann::json list = nlohmann::json::array();
    for (const char32_t c : i18n::CatalogCharacters()) {
      const ImFontGlyph* g = font ? font->FindGlyphNoFallback(static_cast<ImWchar>(c)) : nullptr;
      if (!g) list.push_back(static_cast<unsigned>(c));
    }
    missing[name] = list;
  }
  return {{"characters", i18n::CatalogCharacters().size()}, {"missing", missing}};
}

// The recompute worker and the frame budget: what a test of "the window never waits"
// reads (the window thread's CPU time per frame, over kFrameBudgetMs).
nlohmann::json WorkerJson(const AppState& s) {
  static const char* const kPhases[] = {"idle", "capture", "run", "upload"};
  nlohmann::json over = nlohmann::json::array();
  for (const auto& f : s.ui.timing.over_budget) over.push_back({{"frame", static_cast<int>(f[0])}, {"ms", f[1]}});
  return {{"phase", kPhases[static_cast<int>(s.recompute.worker.phase)]},
          {"jobs", s.recompute.worker.jobs},
          {"budget_ms", kFrameBudgetMs},
          {"frames_over_budget", s.ui.timing.frames_over_budget},
          {"over_budget", over},
          {"work_bin_ms", Timing::kWorkBinMs},
          {"work_hist", s.ui.timing.work_hist},
          {"slowest_frame_ms", s.ui.timing.slowest_frame_ms},
          {"slowest_frame", s.ui.timing.slowest_frame},
          {"last_recompute_ms", s.ui.timing.last_recompute_ms},
          {"views_busy", s.ui.report.views_busy}};
}

}  // namespace

nlohmann::json ProbeJson(const AppState& s, int frame, int win_w, int win_h) {
  nlohmann::json j;
  j["frame"] = frame;
  j["knocked_out"] = KnockoutText(s);
  j["generation"] = s.result.generation;
  j["window"] = {win_w, win_h};
  nlohmann::json w = nlohmann::json::object();
  for (const auto& [name, r] : s.ui.probe) w[name] = {r[0], r[1], r[2], r[3]};
  j["widgets"] = w;
  j["layout"] = LayoutJson(s.ui.report);
  j["sentence"] = s.choice.sentence;
  ShownShape(s, j);
  j["ok"] = s.result.ok;
  j["error"] = s.result.error;
  j["tokens"] = s.result.tokens;
  j["reuse"] = s.result.ok ? s.result.reuse : std::string();
  j["enlarged"] = s.ui.enlarged;
  j["present"] = PresentJson(s);
  j["worker"] = WorkerJson(s);
  j["colour_scale"] = render::ToString(s.ui.colour_scale);
  j["font_px"] = ImGui::GetFontSize();
  j["text_size"] = s.ui.text_size;
  j["export_message"] = s.ui.exports.message;
  j["export_path"] = std::string(s.ui.exports.path.data());
  j["export_notebook"] = s.ui.exports.notebook;
  j["focused_text"] = ImGui::GetIO().WantTextInput;
  j["view"] = s.choice.view;
  j["weights"] = WeightsJson(s);
  ViewsProbeJson(s, j);  // each view's own entry (the Train view's "train")
  // The lesson tour playing (an empty object when none plays).
  j["lesson"] = TourProbeJson(s);
  j["language"] = i18n::Code(i18n::Current());
  j["labels"] = ShownLabels(s);
  return j;
}

std::string DumpStateJson(AppState& s, int frames) {
  nlohmann::json j;
  j["frames"] = frames;
  j["sentence"] = s.choice.sentence;
  j["memory"] = s.choice.cross ? s.choice.memory : std::string();
  j["ok"] = s.result.ok;
  j["error"] = s.result.error;
  j["error_shown"] = ShownConfigError(s);
  j["generation"] = s.result.generation;
  j["recomputes"] = s.ui.timing.recompute_ms.size();
  j["worker"] = WorkerJson(s);
  j["reuse"] = s.result.ok ? s.result.reuse : std::string();
  {
    // The heads every view shows knocked out (gui --ablate, the Model view's switches).
    nlohmann::json heads = nlohmann::json::array();
    for (const HeadRef& h : s.result.knocked_out)
      heads.push_back({{"layer", h.layer}, {"head", h.head}, {"name", HeadName(h)}});
    j["knocked_out"] = {{"heads", heads}, {"text", KnockoutText(s)}};
  }
  j["enlarged"] = s.ui.enlarged;
  j["present"] = PresentJson(s);
  j["colour_scale"] = render::ToString(s.ui.colour_scale);
  j["text_size"] = s.ui.text_size;
  j["weights"] = WeightsJson(s);
  j["export_message"] = s.ui.exports.message;
  std::vector<std::string> notices;
  for (const Notice& n : s.ui.notices) notices.push_back(n.English());
  j["notices"] = notices;
  j["font_notice"] = s.ui.font_notice;
  j["font_path"] = s.ui.font_path;
  j["catalog_glyphs"] = CatalogGlyphs(s);
  // The interface's language and the labels as the window showed them (the keys stay
  // English: "view", the views' names and every JSON key).
  j["language"] = i18n::Code(i18n::Current());
  j["labels"] = ShownLabels(s);
  j["shown_text"] = s.ui.shown_text;
  // Which glyph each token's characters are drawn with (0xFFFD: the replacement box).
  nlohmann::json drawn = nlohmann::json::array();
  nlohmann::json box_notes = nlohmann::json::array();
  for (const auto& tok : s.result.tokens) {
    drawn.push_back(DrawnCodepoints(tok));
    box_notes.push_back(BoxNote(tok));  // the chip's tooltip says which character a box is
  }
  j["drawn"] = drawn;
  j["sentence_field_drawn"] = FieldCodepoints(s.ui.sentence_buf.data());
  j["box_notes"] = box_notes;
  const AtlasStats atlas = LastAtlasStats();
  j["font_atlas"] = {
      {"width", atlas.width}, {"height", atlas.height}, {"glyphs", atlas.glyphs}, {"build_ms", atlas.build_ms}};
  j["content_scale"] = s.ui.content_scale;
  j["font_px"] = ImGui::GetFontSize();
  j["layout"] = LayoutJson(s.ui.report);
  j["settings"] = nlohmann::json::parse(AppSettingsJson(s, 0, 0));
  // What each teaching view shows, from the caches the views draw.
  j["views"] = nlohmann::json::parse(TeachViewsJson(s));
  if (s.result.ok) {
    const Trace& t = s.result.trace;
    if (static_cast<double>(t.cfg.num_heads) * t.seq * t.seq_kv <= dump::kMaxDumpWeights) {
      j["trace"] = nlohmann::json::parse(io::TraceJson(t, English(s.result.notices)));
    } else {  // tens of MB of JSON helps nobody: the tokens and sizes only
      j["trace"] = {
          {"tokens", t.in.tokens},
          {"config",
           {{"num_heads", t.cfg.num_heads}, {"d_model", t.cfg.d_model}, {"seq", t.seq}, {"seq_kv", t.seq_kv}}},
          {"attention", dump::kWeightsLeftOut}};
    }
  }
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json StatsJson(const AppState& s, int frame, int fb_w, int fb_h, const char* gl_renderer) {
  using options::Median;
  // The first frames build the font atlas and upload textures: leave them out.
  std::vector<double> frames(s.ui.timing.frame_ms.begin() + std::min<std::size_t>(2, s.ui.timing.frame_ms.size()),
                             s.ui.timing.frame_ms.end());
  nlohmann::json j;
  j["frames"] = frame;
  j["median_frame_ms"] = Median(frames);
  j["median_recompute_ms"] = Median(s.ui.timing.recompute_ms);
  j["median_upload_ms"] = Median(s.ui.timing.upload_ms);
  auto skip2 = [](const std::vector<double>& v) {
    return std::vector<double>(v.begin() + std::min<std::size_t>(2, v.size()), v.end());
  };
  // Where a frame's time goes: building the UI (incl. any recompute and texture
  // upload), submitting the draw lists, and presenting (where llvmpipe rasterises).
  j["median_ui_ms"] = Median(skip2(s.ui.timing.ui_ms));
  j["median_draw_ms"] = Median(skip2(s.ui.timing.draw_ms));
  j["median_swap_ms"] = Median(skip2(s.ui.timing.swap_ms));
  // CPU time of all the process's threads (llvmpipe rasterises on its own
  // threads) per frame: less disturbed than wall time when the machine is busy.
  j["median_frame_cpu_ms"] = Median(skip2(s.ui.timing.cpu_ms));
  j["median_triangles"] = Median(skip2(s.ui.timing.triangles));
  j["recomputes"] = s.ui.timing.recompute_ms.size();
  j["churn"] = s.ui.churn;
  j["framebuffer"] = {fb_w, fb_h};
  j["seq"] = s.result.ok ? s.result.trace.seq : 0;
  ShownShape(s, j);
  j["ok"] = s.result.ok;
  j["gl_renderer"] = gl_renderer;
  return j;
}

}  // namespace mha::gui
