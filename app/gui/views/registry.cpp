// What the registry's table drives: the tab bar, the View menu, --view's names and
// help, and --dump-state's "views".
#include "gui/views/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include <imgui_internal.h>
#include <nlohmann/json.hpp>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/state/view_caches.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

// The views, in tab order: one line each. Each view's own file defines `ViewEntry
// NAME()`, its names, drawing, dump and hooks (views/registry.hpp).
#define MHAVIZ_VIEWS(X)                        \
  X(HeatmapsView)   /* views/heatmaps/ */      \
  X(ShapeFlowView)  /* views/shape_flow.cpp */ \
  X(QueryView)      /* views/query.cpp */      \
  X(SoftmaxView)    /* views/softmax.cpp */    \
  X(LayerNormView)  /* views/layernorm.cpp */  \
  X(MetricsView)    /* views/metrics.cpp */    \
  X(CountsView)     /* views/counts.cpp */     \
  X(GqaView)        /* views/gqa.cpp */        \
  X(CrossView)      /* views/cross.cpp */      \
  X(ExamplesView)   /* views/examples.cpp */   \
  X(InspectView)    /* views/inspect.cpp */    \
  X(TrainView)      /* views/train/ */         \
  X(HeadView)       /* views/head_view.cpp */  \
  X(ModelView)      /* views/model_view/ */    \
  X(ImportanceView) /* views/importance/ */    \
  X(ProofView)      /* views/proof.cpp */      \
  X(PatchView)      /* views/patch.cpp */      \
  X(NextView)       /* views/next.cpp */       \
  X(GenerateView)   /* views/generate/ */      \
  X(FlashView)      /* views/flash.cpp */      \
  X(CostView)       /* views/cost/ */

#define MHAVIZ_DECLARE_VIEW(f) ViewEntry f();
MHAVIZ_VIEWS(MHAVIZ_DECLARE_VIEW)
#undef MHAVIZ_DECLARE_VIEW

const std::vector<ViewEntry>& Views() {
#define MHAVIZ_VIEW_ENTRY(f) f(),
  static const std::vector<ViewEntry> views = {MHAVIZ_VIEWS(MHAVIZ_VIEW_ENTRY)};
#undef MHAVIZ_VIEW_ENTRY
  return views;
}

namespace {

void DrawView(AppState& s, const ViewEntry& v) {
  if (!v.scrolls) {
    const ImVec2 a = ImGui::GetCursorScreenPos(), size = ImGui::GetContentRegionAvail();
    v.draw(s);
    VeilLastValid(s, a, ImVec2(a.x + size.x, a.y + size.y));
    return;
  }
  // Teaching views scroll when the window is small; the heatmaps fit themselves.
  // No horizontal scrolling: the views fit the width (wide tables scroll themselves).
  // One child per view, so each keeps its own scroll position.
  ImGui::BeginChild(v.name, ImVec2(0, 0), false);
  v.draw(s);
  const ImVec2 a = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  ImGui::EndChild();
  if (v.veil) VeilLastValid(s, a, ImVec2(a.x + size.x, a.y + size.y));
}

// The probes the view's presented form must show: its `essentials`, else `shows`.
std::vector<std::string> Essentials(const ViewEntry& v) {
  std::vector<std::string> out;
  const std::string list = v.essentials ? v.essentials : v.shows ? v.shows : "";
  for (std::size_t a = 0; a < list.size();) {
    const std::size_t b = std::min(list.find(';', a), list.size());
    if (b > a) out.push_back(list.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

// "head-count" -> "head_count_view": the view's key in --dump-state's "views".
std::string DumpKey(const ViewEntry& v) {
  std::string key = v.name;
  for (char& c : key)
    if (c == '-') c = '_';
  return key + "_view";
}

}  // namespace

// While the configuration cannot run, a view shows the last valid results under a veil
// of the window's background (the error and its fixes sit above the tabs, undimmed).
// The veil is a window of its own, just above the main one, so it covers what the
// view draws in nested child windows (tables, maps) too, while popups and tooltips
// stay above it and readable. It takes no input: the view still answers the mouse.
void VeilLastValid(AppState& s, ImVec2 a, ImVec2 b) {
  if (!ShowingLastValid(s)) return;
  ImGuiWindow* main = ImGui::GetCurrentWindow()->RootWindow;
  ImGui::SetNextWindowPos(a);
  ImGui::SetNextWindowSize(ImVec2(b.x - a.x, b.y - a.y));
  ImGui::Begin("##last_valid_veil", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoInputs | ImGuiWindowFlags_NoBackground |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav |
                   ImGuiWindowFlags_NoMove);
  ImGuiWindow* veil = ImGui::GetCurrentWindow();
  ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  bg.w = 0.55f;
  veil->DrawList->PushClipRect(a, b, false);
  veil->DrawList->AddRectFilled(a, b, ImGui::ColorConvertFloat4ToU32(bg));
  veil->DrawList->PopClipRect();
  ImGui::End();
  ImGui::BringWindowToDisplayBack(veil);
  ImGui::BringWindowToDisplayBack(main);
  s.ui.probe["last_valid_veil"] = {a.x, a.y, b.x - a.x, b.y - a.y};
}

const ViewEntry* FindView(const std::string& name) {
  for (const ViewEntry& v : Views())
    if (name == v.name || (v.alias && name == v.alias)) return &v;
  return nullptr;
}

const char* ViewTitle(const ViewEntry& v) { return _(v.tab); }
const char* ViewMenuTitle(const ViewEntry& v) { return _(v.menu); }

std::string ViewNamesJoined() {
  std::string names, aliases;
  for (const ViewEntry& v : Views()) {
    names += (names.empty() ? "" : ", ") + std::string(v.name);
    if (v.alias) aliases += (aliases.empty() ? "" : ", ") + std::string(v.alias);
  }
  return aliases.empty() ? names : names + " (and the old names " + aliases + ")";
}

void UpdateViews(AppState& s) {
  for (const ViewEntry& v : Views())
    if (v.update) v.update(s);
}

std::vector<PrimeHook> ViewPrimers() {
  std::vector<PrimeHook> out;
  for (const ViewEntry& v : Views())
    if (v.prime) out.push_back(v.prime);
  return out;
}

bool ViewsAnimating(const AppState& s) {
  for (const ViewEntry& v : Views())
    if (v.animating && v.animating(s)) return true;
  return false;
}

void ViewsProbeJson(const AppState& s, nlohmann::json& j) {
  for (const ViewEntry& v : Views())
    if (v.probe) j[v.name] = v.probe(s);
}

void DeclareViewFlags(CLI::App& app, const std::string& group, ViewFlagActions& actions) {
  for (const ViewEntry& v : Views())
    if (v.flags) v.flags(app, group, actions);
}

const ViewEntry& ShownView(const AppState& s) {
  const ViewEntry* v = FindView(s.choice.view);
  return v ? *v : Views().front();
}

namespace {

// The width every tab needs at `padding`, side by side.
float TabsWidth(ImVec2 padding) {
  float w = 0.0f;
  for (const ViewEntry& v : Views())
    w += ImGui::CalcTextSize(ViewTitle(v)).x + 2.0f * padding.x + ImGui::GetStyle().ItemInnerSpacing.x;
  return w;
}

void DrawViewTabs(AppState& s, ImVec2 padding) {
  // The bar keeps the padding it began with for drawing the labels, and each tab is
  // measured with the padding current at its BeginTabItem: both get the same.
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, padding);
  const bool bar = ImGui::BeginTabBar("##views", ImGuiTabBarFlags_FittingPolicyResizeDown | ImGuiTabBarFlags_NoTooltip);
  ImGui::PopStyleVar();
  if (!bar) return;
  for (const ViewEntry& v : Views()) {
    const bool want = s.ui.select_view && s.choice.view == v.name;
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, padding);
    // The id is the view's name, so switching the language keeps the open tab.
    const std::string label = std::string(ViewTitle(v)) + "###" + v.name;
    const bool open = ImGui::BeginTabItem(label.c_str(), nullptr, want ? ImGuiTabItemFlags_SetSelected : 0);
    ImGui::PopStyleVar();
    Probe(s, (std::string("tab ") + v.name).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ViewMenuTitle(v));
    if (!open) continue;
    // A tab asked for (menu, flag, shape-flow click) opens a frame later: until
    // then the old tab is drawn and must not claim the selection back.
    if (!s.ui.select_view)
      s.choice.view = v.name;
    else if (want)
      s.ui.select_view = false;
    DrawView(s, v);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

// Big text in a narrow window: the tabs as buttons that wrap onto a second line, each
// label whole (a tab bar would cut them to "H..." or hide them behind arrows), in the
// small font so that they take two lines rather than three and leave the view room.
void DrawViewButtons(AppState& s, ImVec2 padding) {
  if (s.ui.font_small) ImGui::PushFont(s.ui.font_small);
  // One row if it can be had: a second row of buttons costs the views (the heatmaps'
  // cells) a line of height, so the padding and the gaps tighten first (to a few pixels,
  // the buttons' colours still tell them apart), and only then do the buttons wrap.
  ImVec2 spacing(ImGui::GetStyle().ItemInnerSpacing.x, ImGui::GetStyle().ItemInnerSpacing.y);
  {
    float text = 0.0f;
    for (const ViewEntry& v : Views()) text += ImGui::CalcTextSize(ViewTitle(v)).x;
    const float n = static_cast<float>(Views().size());
    const float avail = ImGui::GetContentRegionAvail().x;
    // (a pixel per button for the layout's rounding)
    if (text + n * (2.0f * padding.x + 1.0f) + (n - 1.0f) * spacing.x > avail) {
      spacing.x = std::min(spacing.x, 3.0f);
      const float tight = (avail - text - n - (n - 1.0f) * spacing.x) / (2.0f * n);
      padding.x = std::clamp(tight, 2.0f, padding.x);
      // Two rows, then: each as low as its text, so the second costs the views little.
      if (tight < 2.0f) {
        padding.y = 1.0f;
        spacing.y = std::min(spacing.y, 2.0f);
      }
    }
  }
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, padding);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, spacing);
  for (std::size_t i = 0; i < Views().size(); ++i) {
    const ViewEntry& v = Views()[i];
    const bool on = s.choice.view == v.name;
    const float w = ImGui::CalcTextSize(ViewTitle(v)).x + 2.0f * padding.x;
    if (i > 0) {
      ImGui::SameLine();
      if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
    }
    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(on ? ImGuiCol_TabActive : ImGuiCol_Tab));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImGui::GetStyleColorVec4(ImGuiCol_TabHovered));
    if (ImGui::Button((std::string(ViewTitle(v)) + "##" + v.name).c_str())) s.choice.view = v.name;
    ImGui::PopStyleColor(2);
    Probe(s, (std::string("tab ") + v.name).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ViewMenuTitle(v));
  }
  ImGui::PopStyleVar(2);
  if (s.ui.font_small) ImGui::PopFont();
  ImGui::Separator();
  DrawView(s, ShownView(s));
  s.ui.select_view = true;  // should the tabs come back (smaller text), they open this view
}

}  // namespace

void DrawResultsArea(AppState& s) {
  DrawConfigError(s);  // over every view: the views keep the last valid results
  // Every view in sight at a glance, never behind the tab bar's scroll arrows: short
  // labels and tighter padding; where even those do not fit, buttons that wrap.
  const ImVec2 padding(ImGui::GetStyle().FramePadding.x * 0.6f, ImGui::GetStyle().FramePadding.y);
  if (TabsWidth(padding) <= ImGui::GetContentRegionAvail().x)
    DrawViewTabs(s, padding);
  else
    DrawViewButtons(s, padding);
  s.ui.report.views_busy += s.ui.matrices.Filling();
  s.ui.matrices.EndFrame();
}

void DrawViewMenuItems(AppState& s) {
  for (const ViewEntry& v : Views()) {
    if (ImGui::MenuItem((std::string(ViewMenuTitle(v)) + "##" + v.name).c_str(), nullptr, s.choice.view == v.name)) {
      s.choice.view = v.name;
      s.ui.select_view = true;
    }
  }
}

std::string TeachViewsJson(AppState& s) {
  nlohmann::json j;
  j["view"] = ShownView(s).name;
  ClampSelection(s);
  j["head"] = s.choice.head;
  j["last_valid"] = ShowingLastValid(s);  // the views show the last valid configuration's results
  j["query"] = s.choice.query;
  nlohmann::json list = nlohmann::json::array();
  for (const ViewEntry& v : Views())
    list.push_back({{"name", v.name},
                    {"tab", v.tab},
                    {"shows", v.shows ? nlohmann::json(v.shows) : nlohmann::json()},
                    {"essentials", Essentials(v)}});
  j["registry"] = list;
  for (const ViewEntry& v : Views())
    if (v.dump) j[DumpKey(v)] = v.dump(s);
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mha::gui
