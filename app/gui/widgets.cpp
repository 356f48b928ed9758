#include "gui/widgets.hpp"

#include "gui/theme.hpp"

namespace mha::gui {

void SectionTitle(const AppState& s, const char* title, const char* subtitle, bool inline_subtitle) {
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(title);
  if (s.ui.font_bold) ImGui::PopFont();
  if (subtitle) {
    if (inline_subtitle) ImGui::SameLine(0.0f, ImGui::GetFontSize() * 0.8f);
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(subtitle);
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  }
}

void MessageBox(const std::string& text, ImU32 bg, ImU32 fg) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float w = ImGui::GetContentRegionAvail().x;
  const float wrap = w - 2 * st.FramePadding.x;
  const ImVec2 ts = ImGui::CalcTextSize(text.c_str(), nullptr, false, wrap);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 size(w, ts.y + 2 * st.FramePadding.y);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + size.x, p.y + size.y), bg, st.FrameRounding);
  dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(p.x + st.FramePadding.x, p.y + st.FramePadding.y), fg,
              text.c_str(), nullptr, wrap);
  ImGui::Dummy(size);
}

void HelpMarker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void Probe(AppState& s, const char* name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  s.ui.probe[name] = {a.x, a.y, b.x - a.x, b.y - a.y};
}

void FormLabel(const char* label, float label_width) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine(label_width);
  ImGui::SetNextItemWidth(-1.0f);
}

std::string Ellipsize(const std::string& text, float max_width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= max_width) return text;
  const char* ell = "\xE2\x80\xA6";  // …
  const float ell_w = ImGui::CalcTextSize(ell).x;
  std::size_t n = text.size();
  while (n > 0) {
    --n;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;  // lead byte
    if (ImGui::CalcTextSize(text.c_str(), text.c_str() + n).x + ell_w <= max_width) break;
  }
  return text.substr(0, n) + ell;
}

void AddTextVertical(ImDrawList* dl, ImVec2 bottom_left, ImU32 col, const char* text) {
  // Draw horizontally, then rotate the new vertices: offset (x, y) from the draw
  // origin becomes (y, -x) from bottom_left, so left-to-right reads bottom-to-top.
  // The origin is the clip rectangle's corner because AddText drops glyphs outside
  // the clip rectangle before we get to rotate them.
  const ImVec4 clip = dl->_CmdHeader.ClipRect;
  const ImVec2 origin(clip.x, clip.y);
  const int first = dl->VtxBuffer.Size;
  dl->AddText(origin, col, text);
  for (int i = first; i < dl->VtxBuffer.Size; ++i) {
    ImDrawVert& v = dl->VtxBuffer[i];
    const ImVec2 d(v.pos.x - origin.x, v.pos.y - origin.y);
    v.pos = ImVec2(bottom_left.x + d.y, bottom_left.y - d.x);
  }
}

std::string Thousands(long long n) {
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return n < 0 ? "-" + s : s;
}

}  // namespace mha::gui
