// Small pieces the teaching views share: the head picker, and numbers as text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/draw/view_widgets.hpp"

#include <cstdlib>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"
#include "render/head_view_render.hpp"

namespace mha::gui {

bool HaveResultsToShow(const AppState& s) {
  if (HasResults(s)) return true;
  Muted(_("The results appear here once the configuration above can run."));
  return false;
}

bool HeadPicker(AppState& s, const char* id, float width) {
  if (!HasResults(s)) return false;
  const Trace& t = s.result.trace;
  ClampSelection(s);
  bool changed = false;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("head"));
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
  if (ImGui::BeginCombo(id, name(s.choice.head))) {
    for (int h = 0; h < t.cfg.num_heads; ++h)
      if (ImGui::Selectable(name(h), h == s.choice.head)) {
        s.choice.head = h;
        changed = true;
      }
    ImGui::EndCombo();
  }
  Probe(s, id);
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::PushID(id);
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) {
    s.choice.head = (s.choice.head + t.cfg.num_heads - 1) % t.cfg.num_heads;
    changed = true;
  }
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) {
    s.choice.head = (s.choice.head + 1) % t.cfg.num_heads;
    changed = true;
  }
  ImGui::PopID();
  return changed;
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
  if (b < 1024)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  else if (b < 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else if (b < 1024LL * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024.0));
  else if (b < 1024LL * 1024 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024.0 * 1024.0));
  else
    std::snprintf(buf, sizeof buf, "%.1f TiB", b / (1024.0 * 1024.0 * 1024.0 * 1024.0));
  return buf;
}

const char* PatternShown(HeadPattern p) {
  switch (p) {
    case HeadPattern::Self: return _("self");
    case HeadPattern::Previous: return _("previous");
    case HeadPattern::Next: return _("next");
    case HeadPattern::First: return _("first token");
    case HeadPattern::Spread: return _("no clear pattern");
  }
  return ToString(p);
}

std::string HeadPatternText(const std::string& label) {
  if (label == "previous-token") return _("previous-token");
  if (label == "self") return _("self");
  if (label == "first") return _("first");
  if (label == "reverse") return _("reverse");
  if (label == "next") return _("next");
  if (label == "induction") return _("induction");
  if (label == "sorted") return _("sorted");
  if (label == "spread") return _("spread");
  if (label.size() > 5 && label.compare(label.size() - 5, 5, "-back") == 0) {
    char b[64];
    // TRANSLATORS: a head that attends to the token %d places back ("2-back").
    std::snprintf(b, sizeof b, _("%d-back"), std::atoi(label.c_str()));
    return b;
  }
  return label;
}

ImU32 HeadColour(int h, float alpha) {
  const render::Rgb c = render::HeadColour(h);  // the export's colours too
  return IM_COL32(c[0], c[1], c[2], static_cast<int>(alpha * 255.0f + 0.5f));
}

}  // namespace mha::gui
