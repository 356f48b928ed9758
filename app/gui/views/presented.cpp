// Presentation mode (F11, --present) for whichever view is open: the view takes the
// window under a one-line header that says what is shown; the view's explanations fold
// behind the header's "?"; the arrow keys step heads and PgUp / PgDn the view's own
// sequence. A view with a presented form of its own (its registry entry's `presented`)
// draws that; every other view draws its usual form, which wraps its controls already.
#include <algorithm>
#include <string>

#include <imgui.h>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/heatmaps/bars.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

int HeadsShown(const AppState& s) {
  return s.result.generation > 0 ? s.result.trace.cfg.num_heads : s.choice.cfg.num_heads;
}

bool IsHeatmaps(const ViewEntry& v) { return std::string(v.name) == "heatmaps"; }

// The head the header names: the heatmaps' map under the arrow keys (their mean is
// num_heads), every other view's selected head; -1 for a view without heads.
int HeaderHead(const AppState& s, const ViewEntry& v) {
  if (IsHeatmaps(v)) return s.ui.present_head;
  return v.heads ? s.choice.head : -1;
}

// One part of the header, on its line while it fits (else cut with "..."; the whole
// header is the tooltip), in `colour`.
void HeaderPart(const std::string& text, ImU32 colour, float reserve) {
  const float fs = ImGui::GetFontSize();
  ImGui::SameLine(0, fs * 0.8f);
  const float room = ImGui::GetContentRegionAvail().x - reserve;
  if (room < fs * 2.0f) return;
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::TextUnformatted(Ellipsize(text, room).c_str());
  ImGui::PopStyleColor();
}

// Under the "?" (the last item), its right edge on the button's: a popup opened at the
// mouse would start at the window's right edge and run past it on its first frame.
void HelpPopup(AppState& s) {
  const ImVec2 under(ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y + ImGui::GetStyle().ItemSpacing.y);
  ImGui::SetNextWindowPos(under, ImGuiCond_Always, ImVec2(1.0f, 0.0f));
  if (!ImGui::BeginPopup("##present_help")) return;
  ImGui::PushTextWrapPos(std::min(ImGui::GetFontSize() * 36.0f, ImGui::GetIO().DisplaySize.x * 0.8f));
  for (const std::string& p : s.ui.present_help) {
    ImGui::TextUnformatted(p.c_str());
    ImGui::Spacing();
  }
  ImGui::Separator();
  ImGui::TextDisabled("%s", _("\xE2\x86\x90 \xE2\x86\x92 heads   PgUp / PgDn steps   F11 or Esc leaves"));
  ImGui::PopTextWrapPos();
  Probe(s, "present_help_text");
  ImGui::EndPopup();
}

// The header: the view's name, where the weights come from (with the layer), the head
// and what it does against chance, the knocked-out heads; "?" at the line's end.
void PresentHeader(AppState& s, const ViewEntry& v) {
  const float fs = ImGui::GetFontSize();
  const float help_w = ButtonWidth("?") + fs * 0.5f;
  const ImVec2 start = ImGui::GetCursorScreenPos();
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(ViewTitle(v));
  if (s.ui.font_bold) ImGui::PopFont();
  std::string words = std::string(ViewTitle(v)) + " | " + DescribeWeights(s).text;
  ImGui::SameLine(0, fs * 0.8f);
  DrawWeightsBadge(s);
  const int H = HeadsShown(s), h = HeaderHead(s, v);
  if (h >= 0 && H > 0) {
    const std::string head =
        h >= H ? i18n::Format(P_("mean of %d head", "mean of %d heads", H), H) : i18n::Format(_("head %d"), h);
    HeaderPart(head, ImGui::GetColorU32(ImGuiCol_Text), help_w);
    words += " | " + head;
    bool claimed = false;
    const std::string label = h < H ? HeadLabel(s, h, &claimed) : std::string();
    if (!label.empty()) {
      HeaderPart(label, claimed ? Pal().ok_text : Pal().muted_text, help_w);
      words += " | " + label;
    }
  }
  const std::string out = KnockoutText(s, true);
  if (!out.empty()) {
    const std::string line = i18n::Format(_("knocked out: %s"), out.c_str());
    HeaderPart(line, Pal().notice_text, help_w);
    words += " | " + line;
  }
  const ImVec2 end(ImGui::GetItemRectMax().x, start.y + ImGui::GetFrameHeight());
  s.ui.probe["present_header"] = {start.x, start.y, end.x - start.x, end.y - start.y};
  if (ImGui::IsMouseHoveringRect(start, end)) ImGui::SetTooltip("%s", words.c_str());
  s.ui.report.present_header = words;
  // "?" at the line's right end: the explanations the view folded, and the keys.
  ImGui::SameLine(std::max(ImGui::GetContentRegionMax().x - ButtonWidth("?"), ImGui::GetCursorPosX()));
  if (ImGui::Button("?##present_help")) ImGui::OpenPopup("##present_help");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("What this view shows, and its shortcuts"));
  Probe(s, "present_help");
  HelpPopup(s);
}

void DrawPresentedContent(AppState& s, const ViewEntry& v) {
  void (*draw)(AppState&) = v.presented ? v.presented : v.draw;
  const ImVec2 a = ImGui::GetCursorScreenPos(), size = ImGui::GetContentRegionAvail();
  // The explanations go behind "?": this frame's are shown from the next one.
  s.ui.present_help_next.clear();
  FoldExplanations(&s.ui.present_help_next);
  if (v.scrolls) {
    ImGui::BeginChild((std::string("##present_") + v.name).c_str(), ImVec2(0, 0), false);
    draw(s);
    ImGui::EndChild();
  } else {
    ImGui::BeginGroup();
    draw(s);
    ImGui::EndGroup();
  }
  FoldExplanations(nullptr);
  s.ui.present_help.swap(s.ui.present_help_next);
  s.ui.probe["present_content"] = {a.x, a.y, size.x, size.y};
  if (v.veil) VeilLastValid(s, a, ImVec2(a.x + size.x, a.y + size.y));
}

}  // namespace

void DrawPresentedView(AppState& s) {
  const ViewEntry& v = ShownView(s);
  DrawConfigError(s);
  PresentHeader(s, v);
  DrawPresentedContent(s, v);
  s.ui.report.views_busy += s.ui.matrices.Filling();
  s.ui.matrices.EndFrame();
}

void PresentedStepHeads(AppState& s, int dir) {
  const ViewEntry& v = ShownView(s);
  const int H = HeadsShown(s);
  if (H <= 0) return;
  if (IsHeatmaps(v)) {  // the heatmaps' maps, their mean last
    s.ui.present_head = (s.ui.present_head + dir + H + 1) % (H + 1);
    return;
  }
  if (!v.heads) return;
  s.choice.head = (std::clamp(s.choice.head, 0, H - 1) + dir + H) % H;
  s.ui.present_head = s.choice.head;
}

void PresentedStepSequence(AppState& s, int dir) {
  const ViewEntry& v = ShownView(s);
  if (v.step) v.step(s, dir);
}

}  // namespace mha::gui
