// The results area: a tab per view (the heatmaps, then the teaching views, one
// idea of the lesson each), the View menu's entries for them, and the shared head /
// query pickers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/matrix_view.hpp"
#include "gui/panels.hpp"
#include "gui/teach_views.hpp"
#include "gui/teach_widgets.hpp"
#include "gui/theme.hpp"
#include "gui/widgets.hpp"

namespace mha::gui {
namespace {

void DrawView(AppState& s, View v) {
  if (v == View::Heatmaps) {
    DrawCrossBanner(s);
    DrawHeatmapsPanel(s);
    return;
  }
  // Teaching views scroll when the window is small; the heatmaps fit themselves.
  // No horizontal scrolling: the views fit the width (wide tables scroll themselves).
  // One child per view, so each keeps its own scroll position.
  ImGui::BeginChild(ViewName(v), ImVec2(0, 0), false);
  switch (v) {
    case View::Query: DrawQueryView(s); break;
    case View::Scaling: DrawScalingView(s); break;
    case View::Heads: DrawHeadsView(s); break;
    case View::HeadCount: DrawHeadCountView(s); break;
    case View::Gqa: DrawGqaView(s); break;
    case View::Cross: DrawCrossView(s); break;
    case View::Lesson: DrawLessonView(s); break;
    case View::Inspector: DrawInspectorView(s); break;
    default: break;
  }
  ImGui::EndChild();
}

}  // namespace

void DrawResultsArea(AppState& s) {
  if (ImGui::BeginTabBar("##views", ImGuiTabBarFlags_FittingPolicyScroll | ImGuiTabBarFlags_NoTooltip)) {
    for (int i = 0; i < kViewCount; ++i) {
      const View v = static_cast<View>(i);
      const bool want = s.teach.select_view && s.teach.view == v;
      const bool open = ImGui::BeginTabItem(ViewTitle(v), nullptr, want ? ImGuiTabItemFlags_SetSelected : 0);
      Probe(s, (std::string("tab ") + ViewName(v)).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ViewMenuTitle(v));
      if (!open) continue;
      // A tab asked for (menu, flag, shape-flow click) opens a frame later: until
      // then the old tab is drawn and must not claim the selection back.
      if (!s.teach.select_view) s.teach.view = v;
      else if (want) s.teach.select_view = false;
      DrawView(s, v);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  s.teach.textures.EndFrame();
}

void DrawViewMenuItems(AppState& s) {
  for (int i = 0; i < kViewCount; ++i) {
    const View v = static_cast<View>(i);
    if (ImGui::MenuItem(ViewMenuTitle(v), nullptr, s.teach.view == v)) {
      s.teach.view = v;
      s.teach.select_view = true;
    }
  }
}

bool HeadPicker(AppState& s, const char* id, float width) {
  if (!s.result.ok) return false;
  const Trace& t = s.result.trace;
  ClampTeachSelection(s);
  bool changed = false;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("head");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(width > 0 ? width : ImGui::GetFontSize() * 9.0f);
  char label[64];
  auto name = [&](int h) {
    if (t.cfg.kv_heads() != t.cfg.num_heads)
      std::snprintf(label, sizeof label, "%d  (K/V head %d)", h, t.KvHeadOf(h));
    else
      std::snprintf(label, sizeof label, "%d", h);
    return label;
  };
  if (ImGui::BeginCombo(id, name(s.teach.head))) {
    for (int h = 0; h < t.cfg.num_heads; ++h)
      if (ImGui::Selectable(name(h), h == s.teach.head)) {
        s.teach.head = h;
        changed = true;
      }
    ImGui::EndCombo();
  }
  Probe(s, id);
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::PushID(id);
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) {
    s.teach.head = (s.teach.head + t.cfg.num_heads - 1) % t.cfg.num_heads;
    changed = true;
  }
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) {
    s.teach.head = (s.teach.head + 1) % t.cfg.num_heads;
    changed = true;
  }
  ImGui::PopID();
  return changed;
}

void DrawCrossBanner(AppState& s) {
  if (!s.result.ok || !s.result.trace.in.cross()) return;
  const auto& c = SourcesCache(s);
  if (!c.ok) return;
  const AttentionSources& src = c.value;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Cross-attention (encoder-decoder): rows are the sentence's %d tokens (queries), columns the "
                "memory's %d tokens (keys and values), so each map is %d x %d. The Cross-attention tab compares "
                "it with self-attention.",
                src.seq, src.seq_kv, src.seq, src.seq_kv);
  MessageBox(buf, Pal().notice_bg, Pal().notice_text);
  Probe(s, "cross_banner");
}

std::string Sig(double v, int digits) {
  char buf[48];
  if (!std::isfinite(v)) return v < 0 ? "-\xE2\x88\x9E" : "\xE2\x88\x9E";
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string VecString(const Eigen::Ref<const RowVec>& v, int max_shown, int digits) {
  std::string out = "[";
  const auto idx = ElidedIndices(static_cast<int>(v.size()), max_shown);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (k) out += ", ";
    out += idx[k] < 0 ? "\xE2\x80\xA6" : Sig(v[idx[k]], digits);
  }
  return out + "]";
}

void Muted(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

std::string Bytes(std::int64_t b) {
  char buf[64];
  if (b < 1024) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  else if (b < 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024.0));
  return buf;
}

}  // namespace mha::gui
