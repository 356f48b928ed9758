// Tables that fit a projector's window: a header that would widen its column past the
// column's cells goes onto two lines, so the numbers, not the words, set the width.
#pragma once

#include <string>

namespace mha::gui {

// The width `t` takes in the current font.
float TextWidth(const std::string& t);

// `text` on two lines, broken at the space that leaves the wider line narrowest (as it
// is when it has no space). ImGui's table headers draw a "\n" as a second line and make
// the header row as tall as its tallest label.
std::string TwoLineHeader(const std::string& text);

// The header a column of cells `cells_w` wide shows: `text` as it is where it fits in
// `cells_w` or `wrap` is false, else on two lines (TwoLineHeader).
std::string FittedHeader(const std::string& text, float cells_w, bool wrap);

}  // namespace mha::gui
