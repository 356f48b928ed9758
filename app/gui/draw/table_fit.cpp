#include "gui/draw/table_fit.hpp"

#include <algorithm>

#include <imgui.h>

namespace mha::gui {

float TextWidth(const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; }

std::string TwoLineHeader(const std::string& text) {
  // Spaces are ASCII, so a break there never splits a UTF-8 sequence.
  std::string best = text;
  float best_w = ImGui::CalcTextSize(text.c_str()).x;
  for (std::size_t i = text.find(' '); i != std::string::npos; i = text.find(' ', i + 1)) {
    const std::string a = text.substr(0, i), b = text.substr(i + 1);
    if (a.empty() || b.empty()) continue;
    const float w = std::max(ImGui::CalcTextSize(a.c_str()).x, ImGui::CalcTextSize(b.c_str()).x);
    if (w < best_w) {
      best_w = w;
      best = a + "\n" + b;
    }
  }
  return best;
}

std::string FittedHeader(const std::string& text, float cells_w, bool wrap) {
  if (!wrap || ImGui::CalcTextSize(text.c_str()).x <= cells_w) return text;
  return TwoLineHeader(text);
}

}  // namespace mha::gui
