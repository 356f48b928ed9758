// One frame of the window: the layout, the keyboard shortcuts, and the one place
// where the core runs (between the panels that edit the choice and the panels
// that show the result, so an edit shows in the same frame).
#include "gui/main/frame.hpp"

#include <algorithm>

#include <imgui.h>
#include <imgui_internal.h>

#include "gui/draw/widgets.hpp"
#include "gui/main/tour_editor.hpp"
#include "gui/main/tour_play.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/exports.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/sources/recompute.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/heatmaps/heatmaps.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// A menu's label as shown, with its English name as the ImGui id (an open menu stays
// open when the language switches), recorded for --dump-state's "labels".
std::string MenuLabel(AppState& s, const char* shown, const char* id) {
  s.ui.menu_labels.push_back(shown);
  return std::string(shown) + "###menu-" + id;
}

float UiScale(const AppState& s) { return s.ui.content_scale * s.ui.text_size / 100.0f; }

// Presentation mode's keys: the arrows step heads (the heatmaps' mean last), PgUp /
// PgDn the view's own sequence, + and - step num_heads through the values that divide
// d_model.
void PresentKeys(AppState& s, bool tour) {
  const ImGuiIO& io = ImGui::GetIO();
  constexpr int kRight = 262, kLeft = 263, kPageUp = 266, kPageDown = 267, kEqual = 61, kMinus = 45, kKpSub = 333,
                kKpAdd = 334;
  if (!tour && ImGui::IsKeyPressed(kRight)) PresentedStepHeads(s, 1);  // a lesson's arrows step the lesson
  if (!tour && ImGui::IsKeyPressed(kLeft)) PresentedStepHeads(s, -1);
  if (ImGui::IsKeyPressed(kPageDown)) PresentedStepSequence(s, 1);
  if (ImGui::IsKeyPressed(kPageUp)) PresentedStepSequence(s, -1);
  if (io.KeyCtrl) return;  // Ctrl+= / Ctrl+- are the text size
  Config& c = s.choice.cfg;
  int dir = 0;
  if (ImGui::IsKeyPressed(kEqual) || ImGui::IsKeyPressed(kKpAdd)) dir = 1;
  if (ImGui::IsKeyPressed(kMinus) || ImGui::IsKeyPressed(kKpSub)) dir = -1;
  if (dir == 0) return;
  const int h = StepHeads(c.d_model, c.num_heads, dir);
  if (h != c.num_heads) {
    c.num_heads = h;
    s.dirty = true;
  }
}

void Shortcuts(AppState& s) {
  const ImGuiIO& io = ImGui::GetIO();
  // GLFW key codes are ImGui 1.86's key indices.
  constexpr int kKeyS = 83, kKeyQ = 81, kKeyEqual = 61, kKeyMinus = 45, kKey0 = 48, kKeyF11 = 300;
  if (io.KeyCtrl && ImGui::IsKeyPressed(kKeyS, false)) s.ui.pending.export_png = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed(kKeyQ, false)) s.ui.quit = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed(kKeyEqual, false)) {
    s.ui.text_size = std::min(s.ui.text_size + 25, kMaxTextSize);
    s.ui.fonts_dirty = true;
  }
  if (io.KeyCtrl && ImGui::IsKeyPressed(kKeyMinus, false)) {
    s.ui.text_size = std::max(s.ui.text_size - 25, kMinTextSize);
    s.ui.fonts_dirty = true;
  }
  if (io.KeyCtrl && ImGui::IsKeyPressed(kKey0, false)) {
    s.ui.text_size = 100;
    s.ui.fonts_dirty = true;
  }
  if (ImGui::IsKeyPressed(kKeyF11, false)) SetPresentation(s, !s.ui.present);
  const bool tour = TourKeys(s);
  if (s.ui.present && !io.WantTextInput) PresentKeys(s, tour);
  if (!tour && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    if (s.ui.present && !io.WantTextInput) {
      SetPresentation(s, false);
    } else if (io.WantTextInput) {
      // Leave the text field but keep what was typed: ImGui's own Escape reverts
      // the field, which in a live app would silently undo the computation shown.
      // Deactivating it here, before the field is drawn, means it never sees the key.
      ImGui::ClearActiveID();
    } else {
      s.ui.enlarged = -1;
    }
  }
}

void MenuBar(AppState& s) {
  s.ui.menu_labels.clear();
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu(MenuLabel(s, _("File"), "file").c_str())) {
    if (ImGui::MenuItem(_("Export heatmaps"), "Ctrl+S")) s.ui.pending.export_png = true;
    if (ImGui::MenuItem(_("Export notebook"))) s.ui.pending.export_notebook = true;
    if (ImGui::MenuItem(_("Save window screenshot"))) {
      std::string p = s.ui.exports.screenshot_path.data();
      s.ui.pending.screenshot = p.empty() ? "mhaviz-window.png" : p;
    }
    ImGui::Separator();
    if (ImGui::MenuItem(_("Quit"), "Ctrl+Q")) s.ui.quit = true;
    ImGui::EndMenu();
  }
  const bool view_open = ImGui::BeginMenu(MenuLabel(s, _("View"), "view").c_str());
  Probe(s, "menu view");
  if (view_open) {
    // The window's settings first, the views after: at a large text size the list of
    // views scrolls, and the settings stay in reach.
    if (ImGui::MenuItem(_("Present: the open view fills the window"), "F11", s.ui.present))
      SetPresentation(s, !s.ui.present);
    // The Heatmaps view's switch, also where its panel is too short to show it.
    if (ImGui::MenuItem(_("Heatmaps: what each key adds (value-weighted norms)"), nullptr, s.choice.heatmap_norms))
      s.choice.heatmap_norms = !s.choice.heatmap_norms;
    ImGui::Separator();
    // The sizes in a menu of their own, which keeps the View menu short.
    char size_label[64];
    std::snprintf(size_label, sizeof size_label, _("Text size %d%%"), s.ui.text_size);
    const bool size_open = ImGui::BeginMenu((std::string(size_label) + "###text size").c_str());
    Probe(s, "menu text size");
    if (size_open) {
      for (int pct : {75, 100, 125, 150, 175, 200, 250, 300}) {
        char label[64];
        std::snprintf(label, sizeof label, _("Text size %d%%"), pct);
        if (ImGui::MenuItem(label, pct == 100 ? "Ctrl+0" : nullptr, s.ui.text_size == pct)) {
          s.ui.text_size = pct;
          s.ui.fonts_dirty = true;
        }
      }
      ImGui::TextDisabled("%s", _("Ctrl+= / Ctrl+- change the text size"));
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem(_("Dark theme"), nullptr, s.ui.dark)) {
      s.ui.dark = !s.ui.dark;
      s.ui.fonts_dirty = true;  // re-applies the style at the current scale
    }
    ImGui::Separator();
    // Each language named in itself, so a learner who reads only one finds it.
    const bool lang_open = ImGui::BeginMenu(MenuLabel(s, _("Language"), "language").c_str());
    Probe(s, "menu language");
    if (lang_open) {
      for (const auto& [code, name] :
           {std::pair<const char*, const char*>{"en", "English"}, {"ko", "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4"}}) {
        if (ImGui::MenuItem(name, nullptr, std::string(i18n::Code(i18n::Current())) == code)) {
          s.ui.lang_request = code;  // switched before the next frame
          s.ui.lang_chosen = code;   // and remembered in the settings file
        }
        Probe(s, (std::string("language ") + code).c_str());
      }
      ImGui::EndMenu();
    }
    ImGui::Separator();
    DrawViewMenuItems(s);
    ImGui::EndMenu();
  }
  const bool lesson_open = ImGui::BeginMenu(MenuLabel(s, _("Lesson"), "lesson").c_str());
  Probe(s, "menu lesson");
  if (lesson_open) {
    DrawTourMenu(s);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu(MenuLabel(s, _("Help"), "help").c_str())) {
    ImGui::TextUnformatted(_("mhaviz: multi-head self-attention, every step, live."));
    ImGui::Separator();
    ImGui::TextUnformatted(_("Type a sentence; every change recomputes the layer at once."));
    ImGui::TextUnformatted(_("Hover a shape-flow row or diagram block to see it in both."));
    ImGui::TextUnformatted(_("Hover a heatmap cell for its query, key, weight and score."));
    ImGui::TextUnformatted(_("Click a head to enlarge it; Esc goes back."));
    ImGui::TextUnformatted(_("Ctrl+S exports the heatmaps; Ctrl+= / Ctrl+- text size; Ctrl+Q quits."));
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

// A draggable bar between two panes; returns the drag delta along its axis.
float Splitter(const char* id, ImVec2 size, bool vertical) {
  ImGui::InvisibleButton(id, size);
  if (ImGui::IsItemHovered() || ImGui::IsItemActive())
    ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
  if (ImGui::IsItemActive()) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddRectFilled(a, b, Pal().block_border);
  }
  if (ImGui::IsItemDeactivated()) ImGui::MarkIniSettingsDirty();
  if (!ImGui::IsItemActive()) return 0.0f;
  return vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y;
}

// Presentation mode: the side panel, the shape flow and the tabs give way, and the
// open view takes the window (under the menu bar, which has the way back).
void DrawPresentation(AppState& s) {
  if (!WorkerBusy(s)) UpdateViews(s);
  StepRecompute(s);
  if (!WorkerBusy(s)) StepExports(s);
  // After the recompute: the outline is the answer on the result the view draws.
  s.ui.tour.outline = TourRevealOutline(s);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  SetResultsRect(s, p, ImVec2(p.x + avail.x, p.y + avail.y));
  if (WorkerBusy(s)) {  // the last result's picture while the worker computes the next
    DrawWorkerPicture(s, p, ImVec2(p.x + avail.x, p.y + avail.y));
    return;
  }
  const bool tour = s.ui.tour.active;
  const float band = tour ? TourBandHeight(s) : 0.0f;
  ImGui::BeginChild("##present", ImVec2(avail.x, avail.y - band), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawPresentedView(s);
  ImGui::EndChild();
  Probe(s, "present");
  if (!tour) return;
  // The lesson's caption and question under the view, on the notice colour's band.
  ImGui::PushStyleColor(ImGuiCol_ChildBg, Pal().highlight_bg);
  ImGui::BeginChild("##lesson_band", ImVec2(avail.x, 0), true);
  DrawTourBand(s);
  ImGui::EndChild();
  ImGui::PopStyleColor();
  Probe(s, "lesson_band");
}

}  // namespace

void DrawFrame(AppState& s) {
  s.ui.hover_step = s.ui.hover_step_next;
  s.ui.hover_step_next = -1;
  s.ui.hover_from_diagram = s.ui.hover_from_diagram_next;
  s.ui.hover_from_diagram_next = false;
  s.ui.hover_token = s.ui.hover_token_next;
  s.ui.hover_token_next = -1;
  s.ui.probe.clear();  // only what is on screen this frame
  s.ui.report = LayoutReport{};
  s.ui.tour.outline = {};  // a lesson's reveal is drawn only on the presented step
  Shortcuts(s);

  const float scale = UiScale(s);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  const ImGuiWindowFlags root_flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                      ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                      ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoScrollWithMouse |
                                      // glClear already paints WindowBg: no second full-window fill.
                                      ImGuiWindowFlags_NoBackground;
  ImGui::Begin("mhaviz", nullptr, root_flags);
  MenuBar(s);
  if (!s.ui.notices.empty() || !s.ui.font_notice.empty()) {
    for (std::size_t i = 0; i < s.ui.notices.size();) {
      MessageBox(s.ui.notices[i].Shown(), Pal().notice_bg, Pal().notice_text);
      ImGui::PushID(static_cast<int>(i));
      const bool dismiss = ImGui::SmallButton(_("Dismiss"));
      ImGui::PopID();
      if (dismiss)
        s.ui.notices.erase(s.ui.notices.begin() + static_cast<long>(i));
      else
        ++i;
    }
    if (!s.ui.font_notice.empty()) MessageBox(s.ui.font_notice, Pal().notice_bg, Pal().notice_text);
  }

  if (s.ui.tour.active && !s.ui.present) DrawTourReturn(s);
  if (s.ui.present) {
    DrawPresentation(s);
    ImGui::End();
    return;
  }
  const ImGuiStyle& st = ImGui::GetStyle();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float status_h = ImGui::GetTextLineHeightWithSpacing() + st.ItemSpacing.y;
  const float main_h = std::max(avail.y - status_h, 100.0f);
  const float split = std::max(4.0f, st.ItemSpacing.x);

  // Left column: the inputs.
  float left = s.ui.splitters.left_width > 0 ? s.ui.splitters.left_width * scale
                                             : std::clamp(avail.x * 0.28f, 360.0f * scale, 540.0f * scale);
  {
    const float hi = std::max(avail.x - 400.0f * scale, avail.x * 0.25f);
    left = std::clamp(left, std::min({280.0f * scale, avail.x * 0.5f, hi}), hi);
  }
  // Always a scrollbar: one appearing would narrow the column and re-wrap its text,
  // moving every widget under the pointer.
  ImGui::BeginChild("##inputs", ImVec2(left, main_h), true, ImGuiWindowFlags_AlwaysVerticalScrollbar);
  DrawModelSourcePanel(s);
  ImGui::Separator();
  DrawSentencePanel(s);
  ImGui::Separator();
  DrawControlsPanel(s);
  ImGui::Separator();
  DrawExportPanel(s);
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  const float dx = Splitter("##split_v", ImVec2(split, main_h), true);
  Probe(s, "split_v");
  if (dx != 0.0f) s.ui.splitters.left_width = (left + dx) / scale;

  // The one place the core runs (a view's work, such as a training run's newest
  // snapshot, may set `dirty`); views and exports wait while the worker runs.
  if (!WorkerBusy(s)) UpdateViews(s);
  StepRecompute(s);
  if (!WorkerBusy(s)) StepExports(s);

  // Right column: the results.
  ImGui::SameLine(0, 0);
  const float right = std::max(ImGui::GetContentRegionAvail().x, 100.0f);
  {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    SetResultsRect(s, p, ImVec2(p.x + right, p.y + main_h));
    if (WorkerBusy(s)) {  // the last result's picture while the worker computes the next
      DrawWorkerPicture(s, p, ImVec2(p.x + right, p.y + main_h));
      DrawStatusBar(s);
      ImGui::End();
      return;
    }
  }
  // Default: tall enough for the whole table (header, the steps, total) and no
  // taller, so the heatmaps get the rest; up to 45%.
  const float table_h = FlowPanelHeight(s);
  // A bigger text size is for reading the heatmaps from afar: by default they get
  // more of the height (the table scrolls): 45% at 100%, 27% at 150%, 15% from 200%.
  const float share = std::clamp(0.45f - 0.0035f * static_cast<float>(s.ui.text_size - 100), 0.15f, 0.45f);
  float flow = s.ui.splitters.flow_height > 0 ? s.ui.splitters.flow_height * scale : std::min(table_h, main_h * share);
  // ... but never so thin that no step of the table shows (its title, header and four
  // rows), which would read as broken.
  const float flow_floor = std::min(ImGui::GetTextLineHeightWithSpacing() * 7.0f, main_h * 0.45f);
  flow = std::clamp(flow, std::min(std::max(120.0f * scale, flow_floor), main_h * 0.45f), main_h * 0.75f);
  // Big text in a small window (200% at 1280 x 800): by default the table folds to
  // its title line, which is better than a sliver; "Show" brings it back.
  s.ui.flow_folded_for_room =
      s.ui.splitters.flow_height <= 0 && !s.ui.splitters.flow_collapsed && main_h < ImGui::GetFontSize() * 22.0f;
  if (s.ui.splitters.flow_collapsed || s.ui.flow_folded_for_room)
    flow = ImGui::GetFrameHeight() + 2 * st.WindowPadding.y;
  ImGui::BeginGroup();
  ImGui::BeginChild("##flow", ImVec2(right, flow), true, ImGuiWindowFlags_NoScrollbar);
  DrawFlowPanel(s);
  ImGui::EndChild();
  const float dy = Splitter("##split_h", ImVec2(right, split), false);
  Probe(s, "split_h");
  if (dy != 0.0f && !s.ui.splitters.flow_collapsed) s.ui.splitters.flow_height = (flow + dy) / scale;
  ImGui::BeginChild("##heatmaps", ImVec2(right, main_h - flow - split), true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawKnockoutBanner(s);  // the ablated model is what every tab shows
  DrawResultsArea(s);     // the heatmaps and the teaching views, as tabs
  ImGui::EndChild();
  ImGui::EndGroup();

  DrawStatusBar(s);
  ImGui::End();
  DrawTourEditor(s);  // a window of its own, over the layout (not over a presented view)
}

}  // namespace mha::gui
