#include "gui/draw/widgets.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gui/style/fonts.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {
// Where presentation mode keeps the explanations it folds: set and cleared by the
// presented view's frame (views/registry.cpp), so no view has to know it is presented.
std::vector<std::string>* g_folded = nullptr;
}  // namespace

void FoldExplanations(std::vector<std::string>* sink) { g_folded = sink; }
bool FoldingExplanations() { return g_folded != nullptr; }

void Explanation(const char* text) {
  if (g_folded) {
    g_folded->emplace_back(text);
    return;
  }
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

void SectionTitle(const AppState& s, const char* title, const char* subtitle, bool inline_subtitle) {
  const float full = ImGui::GetContentRegionAvail().x;
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(title);
  if (s.ui.font_bold) ImGui::PopFont();
  if (subtitle && g_folded) {
    g_folded->emplace_back(subtitle);
  } else if (subtitle) {
    // Beside the heading only where the column it leaves is wide enough to read (at
    // large text in a narrow view it would be a few words a line): else under it.
    const float fs = ImGui::GetFontSize(), gap = fs * 0.8f;
    if (inline_subtitle && full - ImGui::GetItemRectSize().x - gap >= std::max(full * 0.5f, fs * 12.0f))
      ImGui::SameLine(0.0f, gap);
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
  // Drawn on the draw list, so ImGui's log (--dump-state's shown_text) would miss it.
  ImGui::LogText("%s\n", text.c_str());
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

void SameLineIfFits(float width, float spacing) {
  ImGui::SameLine(0.0f, spacing);
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

float ButtonWidth(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}

float ToggleWidth(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
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

void AddImageRows(ImDrawList* dl, unsigned int tex, ImVec2 a, ImVec2 b, int ready, int rows) {
  if (ready <= 0 || rows <= 0) return;
  const float part = static_cast<float>(std::min(ready, rows)) / static_cast<float>(rows);
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(tex)), a, ImVec2(b.x, a.y + (b.y - a.y) * part),
               ImVec2(0, 0), ImVec2(1, part));
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

int TokenChips(const AppState& s, const char* id, const std::vector<std::string>& tokens, int highlight) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const Palette& pal = Pal();
  ImFont* small = s.ui.font_small ? s.ui.font_small : ImGui::GetFont();
  const float fs = ImGui::GetFontSize();
  const float pad_x = st.FramePadding.x * 0.7f, pad_y = st.FramePadding.y * 0.5f;
  const float gap = st.ItemSpacing.x * 0.6f, line_gap = st.ItemSpacing.y * 0.8f;
  const float width = ImGui::GetContentRegionAvail().x - st.ScrollbarSize;
  const float chip_h = fs + 2 * pad_y;

  // Layout first (no drawing), so the box gets the height of its content.
  struct Chip {
    ImVec2 pos, size;
    std::string label, idx;
    float idx_w;
  };
  std::vector<Chip> chips(tokens.size());
  float x = 0, y = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    Chip& c = chips[i];
    c.idx = std::to_string(i);
    c.idx_w = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0.0f, c.idx.c_str()).x;
    c.label = Ellipsize(ForDisplay(tokens[i]), std::min(fs * 14.0f, width - c.idx_w - 3 * pad_x));
    c.size = ImVec2(ImGui::CalcTextSize(c.label.c_str()).x + c.idx_w + 3 * pad_x, chip_h);
    if (x > 0 && x + c.size.x > width) {
      x = 0;
      y += chip_h + line_gap;
    }
    c.pos = ImVec2(x, y);
    x += c.size.x + gap;
  }
  const float content_h = tokens.empty() ? 0.0f : y + chip_h;
  const float max_h = 5 * chip_h + 4 * line_gap;
  int hovered = -1;
  ImGui::BeginChild(id, ImVec2(0, std::min(content_h, max_h) + 2.0f), false);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float top = ImGui::GetWindowPos().y, bottom = top + ImGui::GetWindowSize().y;
  for (std::size_t i = 0; i < chips.size(); ++i) {
    const Chip& c = chips[i];
    const ImVec2 p(o.x + c.pos.x, o.y + c.pos.y), q(p.x + c.size.x, p.y + c.size.y);
    if (q.y < top || p.y > bottom) continue;  // scrolled out of view
    const ImVec2 m = ImGui::GetIO().MousePos;
    const bool over = ImGui::IsWindowHovered() && m.x >= p.x && m.x < q.x && m.y >= p.y && m.y < q.y;
    if (over) {
      hovered = static_cast<int>(i);
      const std::string box = BoxNote(tokens[i]);
      ImGui::SetTooltip(_("token %d: \"%s\"%s%s"), static_cast<int>(i), ForDisplay(tokens[i]).c_str(),
                        box.empty() ? "" : "\n", box.c_str());
    }
    const bool hot = over || static_cast<int>(i) == highlight;
    // Square corners: a rounded, outlined chip is ~100 anti-aliased triangles, a
    // square one ~20, and a software rasteriser (Mesa llvmpipe) pays per triangle.
    dl->AddRectFilled(p, q, hot ? pal.highlight_bg : pal.chip_bg);
    dl->AddRect(p, q, hot ? pal.highlight : pal.chip_border);
    dl->AddText(small, small->FontSize, ImVec2(p.x + pad_x, std::round(p.y + (chip_h - small->FontSize) * 0.5f)),
                pal.muted_text, c.idx.c_str());
    dl->AddText(ImVec2(p.x + 2 * pad_x + c.idx_w, p.y + pad_y), pal.chip_text, c.label.c_str());
  }
  ImGui::Dummy(ImVec2(width, content_h));
  ImGui::EndChild();
  return hovered;
}

std::string Thousands(long long n) {
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return n < 0 ? "-" + s : s;
}

}  // namespace mha::gui
