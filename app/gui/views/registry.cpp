// What the registry's table drives: the tab bar, the View menu, --view's names and
// help, and --dump-state's "views".
#include "gui/views/registry.hpp"

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "gui/panels.hpp"
#include "gui/teach_views.hpp"
#include "gui/widgets.hpp"

namespace mha::gui {
namespace {

void DrawView(AppState& s, const ViewEntry& v) {
  if (!v.scrolls) {
    v.draw(s);
    return;
  }
  // Teaching views scroll when the window is small; the heatmaps fit themselves.
  // No horizontal scrolling: the views fit the width (wide tables scroll themselves).
  // One child per view, so each keeps its own scroll position.
  ImGui::BeginChild(v.name, ImVec2(0, 0), false);
  v.draw(s);
  ImGui::EndChild();
}

// "head-count" -> "head_count_view": the view's key in --dump-state's "views".
std::string DumpKey(const ViewEntry& v) {
  std::string key = v.name;
  for (char& c : key)
    if (c == '-') c = '_';
  return key + "_view";
}

}  // namespace

const char* ViewName(View v) { return ViewInfo(v).name; }
const char* ViewTitle(View v) { return ViewInfo(v).tab; }
const char* ViewMenuTitle(View v) { return ViewInfo(v).menu; }

int ViewIndexByName(const std::string& name) {
  for (const ViewEntry& v : kViews)
    if (name == v.name) return static_cast<int>(v.id);
  return -1;
}

std::string ViewNamesJoined() {
  std::string names;
  for (const ViewEntry& v : kViews) names += (names.empty() ? "" : ", ") + std::string(v.name);
  return names;
}

std::string ViewFlagHelp() {
  std::string out = "  --view NAME         start on a view (default heatmaps):\n";
  for (const ViewEntry& v : kViews) {
    char line[256];
    std::snprintf(line, sizeof line, "                      %-12s%s\n", v.name, v.help);
    out += line;
  }
  return out;
}

void DrawResultsArea(AppState& s) {
  DrawConfigError(s);  // over every view: the views keep the last valid results
  if (ImGui::BeginTabBar("##views", ImGuiTabBarFlags_FittingPolicyScroll | ImGuiTabBarFlags_NoTooltip)) {
    for (const ViewEntry& v : kViews) {
      const bool want = s.teach.select_view && s.teach.view == v.id;
      const bool open = ImGui::BeginTabItem(v.tab, nullptr, want ? ImGuiTabItemFlags_SetSelected : 0);
      Probe(s, (std::string("tab ") + v.name).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.menu);
      if (!open) continue;
      // A tab asked for (menu, flag, shape-flow click) opens a frame later: until
      // then the old tab is drawn and must not claim the selection back.
      if (!s.teach.select_view) s.teach.view = v.id;
      else if (want) s.teach.select_view = false;
      DrawView(s, v);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  s.teach.textures.EndFrame();
}

void DrawViewMenuItems(AppState& s) {
  for (const ViewEntry& v : kViews) {
    if (ImGui::MenuItem(v.menu, nullptr, s.teach.view == v.id)) {
      s.teach.view = v.id;
      s.teach.select_view = true;
    }
  }
}

std::string TeachViewsJson(AppState& s) {
  nlohmann::json j;
  j["view"] = ViewName(s.teach.view);
  ClampTeachSelection(s);
  j["head"] = s.teach.head;
  j["query"] = s.teach.query;
  for (const ViewEntry& v : kViews)
    if (v.dump) j[DumpKey(v)] = v.dump(s);
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mha::gui
