// The heatmap grid's layout (grid_layout.cpp): how many maps per row, how big the
// cells, and which token labels fit, for the panel's size. Drawing: views/heatmaps/grid.cpp.
#pragma once

#include <imgui.h>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// What names the columns (keys): the tokens upright, upright on two staggered lines
// (each may take two columns' width: Korean words stay horizontal), rotated, their
// index numbers (as on the Sentence panel's chips; rows then carry the same
// numbers), or nothing.
enum class Keys { kNone, kUpright, kStaggered, kRotated, kIndex };

const char* KeysName(Keys k);

struct Geometry {
  int cols = 1, rows = 1;      // grid of maps
  float cw = 0.0f, ch = 0.0f;  // pixels per cell, across and down
  Keys keys = Keys::kNone;
  bool labels = false;           // token labels drawn: queries left, keys as `keys` says
  ImFont* label_font = nullptr;  // ... in this font
  float label_px = 0.0f;         // ... at its size
  float row_label_w = 0.0f, index_w = 0.0f, col_label_h = 0.0f, title_h = 0.0f;
  float gap_x = 0.0f, gap_y = 0.0f;
  bool scroll = false;          // taller than the panel: the panel scrolls
  bool keys_every_row = false;  // key labels above every row of maps (they scroll away otherwise)
  float content_h = 0.0f;
  int visible_maps = 0;  // maps wholly in view before any scrolling
};

float TextWidth(ImFont* font, const char* text);
ImFont* SmallFont(const AppState& s);

// The token labels in one font: the widest query and key token (capped at 7 em),
// and the index numbers, in the same font.
struct Labels {
  ImFont* font = nullptr;
  float px = 0.0f;  // the font's size (of a font not loaded yet: its widths are estimates)
  float row = 0.0f, col = 0.0f;
  float index_w = 0.0f, index_h = 0.0f;
  float values_w = 0.0f, values_h = 0.0f;  // a cell that holds its weight ("0.00") in the UI font
  bool wide = false;                       // a key has Hangul, CJK or other wide glyphs: never turned 90 degrees
};

// The labels of the current tokens in `font`; `px` other than the font's size: an
// estimate for that size, from this font's widths.
Labels MeasureLabels(const AppState& s, ImFont* font, float px = 0.0f);

// The layout of `n` maps in `avail`. Labels are never smaller than the UI font, so
// a bigger text size makes the cells bigger, not the labels smaller. In order of
// preference:
//  1. the whole grid in view with token labels: key tokens (upright, staggered, then
//     rotated) before key numbers, then the biggest cells;
//  2. (a grid of several maps) token labels with a vertical scroll: the most maps
//     wholly in view, then as in 1. Fewer maps per row and a scroll before no labels;
//  3. no labels, the biggest cells that fit (hundreds of tokens). Hovering a cell
//     still names its query and key.
// `labels` are the tokens measured in the UI font; `only_cols` > 0 fixes the maps per
// row (presentation mode's 2 x 2).
// `big_text` (a text size above 100%: a projector): the cells grow with the text rather
// than shrink to keep every map in view. Before anything above: the whole grid with
// horizontal token labels and cells that hold their weights; then (with a scroll) cells
// that hold their weights, the most maps in view; then horizontal labels on the biggest
// cells. Keys with wide glyphs (Hangul) are never turned 90 degrees.
Geometry FitGrid(int n, int seq, int seq_kv, ImVec2 avail, const Labels& labels, bool allow_scroll, int only_cols = 0,
                 bool big_text = false);

}  // namespace mha::gui
