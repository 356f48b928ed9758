#include "gui/style/theme.hpp"

namespace mha::gui {
namespace {

Palette g_palette;

ImVec4 Hex(unsigned rgb, float a = 1.0f) {
  return ImVec4(((rgb >> 16) & 0xFF) / 255.0f, ((rgb >> 8) & 0xFF) / 255.0f, (rgb & 0xFF) / 255.0f, a);
}
ImU32 U(unsigned rgb, float a = 1.0f) { return ImGui::ColorConvertFloat4ToU32(Hex(rgb, a)); }

void Light(ImGuiStyle& st) {
  ImGui::StyleColorsLight(&st);
  ImVec4* c = st.Colors;
  c[ImGuiCol_Text] = Hex(0x1E2430);
  c[ImGuiCol_TextDisabled] = Hex(0x7A8290);
  // Panels are outlined, not filled: a software rasteriser (Mesa llvmpipe) pays
  // for every filled pixel, and a full-window card fill doubles the frame time.
  c[ImGuiCol_WindowBg] = Hex(0xFCFCFD);
  c[ImGuiCol_ChildBg] = Hex(0xFFFFFF, 0.0f);
  c[ImGuiCol_PopupBg] = Hex(0xFFFFFF);
  c[ImGuiCol_Border] = Hex(0xD5D9E0);
  c[ImGuiCol_FrameBg] = Hex(0xF3F5F8);
  c[ImGuiCol_FrameBgHovered] = Hex(0xE4EBF7);
  c[ImGuiCol_FrameBgActive] = Hex(0xD6E2F7);
  c[ImGuiCol_TitleBg] = Hex(0xE3E6EC);
  c[ImGuiCol_TitleBgActive] = Hex(0xD6DBE4);
  c[ImGuiCol_MenuBarBg] = Hex(0xFFFFFF);
  c[ImGuiCol_Button] = Hex(0xE6ECF6);
  c[ImGuiCol_ButtonHovered] = Hex(0xCFDDF5);
  c[ImGuiCol_ButtonActive] = Hex(0xB5CBF0);
  c[ImGuiCol_Header] = Hex(0xE3EAF6);
  c[ImGuiCol_HeaderHovered] = Hex(0xD2DFF5);
  c[ImGuiCol_HeaderActive] = Hex(0xBCD0F2);
  // Translucent grabs: the slider's number is drawn over the grab and must stay legible.
  c[ImGuiCol_SliderGrab] = Hex(0x2F6FDE, 0.45f);
  c[ImGuiCol_SliderGrabActive] = Hex(0x1F56B8, 0.6f);
  c[ImGuiCol_CheckMark] = Hex(0x2F6FDE);
  c[ImGuiCol_Separator] = Hex(0xD5D9E0);
  c[ImGuiCol_TableHeaderBg] = Hex(0xEEF1F6);
  c[ImGuiCol_TableBorderStrong] = Hex(0xC9CFD8);
  c[ImGuiCol_TableBorderLight] = Hex(0xE2E6EC);
  c[ImGuiCol_TableRowBgAlt] = Hex(0xF7F8FA);
  c[ImGuiCol_ScrollbarBg] = Hex(0xF3F4F7);
  g_palette = Palette{U(0x2F6FDE), U(0xE08A00), U(0xFFE7B3), U(0xF4F7FC), U(0x9AA8BD),
                      U(0xE9F0FC), U(0xA9BEE3), U(0x1B3A6B), U(0xFDECEC), U(0xA11D1D),
                      U(0xFFF6DA), U(0x7A5300), U(0x1F7A3A), U(0x69717E), U(0xFFFFFF, 0.35f)};
}

void Dark(ImGuiStyle& st) {
  ImGui::StyleColorsDark(&st);
  ImVec4* c = st.Colors;
  c[ImGuiCol_WindowBg] = Hex(0x1E2128);
  c[ImGuiCol_ChildBg] = Hex(0x23272F, 0.0f);
  c[ImGuiCol_PopupBg] = Hex(0x2A2F38);
  c[ImGuiCol_Border] = Hex(0x3A404C);
  c[ImGuiCol_FrameBg] = Hex(0x2E343E);
  c[ImGuiCol_TableHeaderBg] = Hex(0x2E343E);
  c[ImGuiCol_TableRowBgAlt] = Hex(0x272B33);
  c[ImGuiCol_SliderGrab] = Hex(0x5B93F0, 0.5f);
  c[ImGuiCol_SliderGrabActive] = Hex(0x7AA8F5, 0.65f);
  c[ImGuiCol_CheckMark] = Hex(0x7AA8F5);
  g_palette = Palette{U(0x5B93F0), U(0xFFB020), U(0x5A4413), U(0x2B313B), U(0x66738A),
                      U(0x2C3A52), U(0x4A6696), U(0xDCE7FA), U(0x4A2222), U(0xFFB4B4),
                      U(0x45391A), U(0xFFD98A), U(0x7FD99A), U(0x9AA3B2), U(0x000000, 0.35f)};
}

}  // namespace

void ApplyTheme(bool dark, float scale) {
  ImGuiStyle st;
  if (dark)
    Dark(st);
  else
    Light(st);
  st.WindowRounding = 0.0f;
  st.ChildRounding = 6.0f;
  st.FrameRounding = 4.0f;
  st.GrabRounding = 4.0f;
  st.PopupRounding = 4.0f;
  st.ScrollbarRounding = 6.0f;
  st.TabRounding = 4.0f;
  st.WindowBorderSize = 0.0f;
  st.ChildBorderSize = 1.0f;
  st.FrameBorderSize = 0.0f;
  st.WindowPadding = ImVec2(10, 10);
  st.FramePadding = ImVec2(7, 4);
  st.ItemSpacing = ImVec2(8, 6);
  st.ItemInnerSpacing = ImVec2(6, 4);
  st.CellPadding = ImVec2(6, 3);
  st.GrabMinSize = 12.0f;
  st.ScrollbarSize = 13.0f;
  st.ScaleAllSizes(scale);
  ImGui::GetStyle() = st;
}

const Palette& Pal() { return g_palette; }

}  // namespace mha::gui
