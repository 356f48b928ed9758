// A small heatmap of any matrix for the teaching views: one texel per value (a GL
// texture, so a 512 x 512 map is one quad), token or index labels, the value printed
// in each cell when it fits, a tooltip with the exact value, and a colour legend.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/state/app_state.hpp"

namespace mha::gui {

enum class ColourScale {
  Sequential,  // [0, range], the heatmaps' own colour map (softmax weights: range 1)
  Diverging,   // [-range, +range]: blue below 0, white at 0, red above (scores, Q, W, ...)
};

// RGB of `v` on `scale`; -inf (a masked score) is the exporter's masked grey.
ImU32 ScaleColour(ColourScale scale, float range, float v);

struct MatrixArgs {
  std::string id;   // unique per widget (texture name)
  std::string key;  // changes whenever the values may have changed (trace generation, selection)
  const float* data = nullptr;
  int rows = 0, cols = 0;
  int row_stride = 0;                                    // floats between rows; 0 = cols
  const std::vector<std::string>* row_labels = nullptr;  // null: row numbers
  bool show_row_labels = true;                           // false: a matrix right of one that has them
  const std::vector<std::string>* col_labels = nullptr;  // null: column numbers
  ColourScale scale = ColourScale::Sequential;
  float range = 1.0f;  // Sequential: [0, range]; Diverging: [-range, range]
  ImVec2 size{0, 0};   // room to fit in (0: the available region)
  float max_cell = 0;  // largest cell side in pixels (0: 2.6 x the font size)
  bool square = true;  // false: a wide, short matrix may get taller cells (readable rows)
  bool values = true;  // print values in cells that are big enough ("…" where a number does not fit)
  // Same layout as data: a -inf here (a masked score) draws that cell in the masked
  // grey, without a number (softmax weights of masked keys: exactly 0).
  const float* masked_by = nullptr;
  // Cell text: softmax weights read best as "0.23" (fixed 2 decimals, as the heatmaps);
  // other values as up to `digits` significant digits ("8.999", "12", "-0.0312"),
  // fewer if the cell is narrow; "…" if even that does not fit (the tooltip has it).
  bool fixed_decimals = false;
  int digits = 4;
  // A number too wide for its cell in the regular font is written in the small one
  // (3/4 size) before it gives way to "…": a presented view whose numbers are its point
  // keeps them where they fit at all.
  bool small_values = false;
  const char* row_axis = nullptr;         // e.g. "query": in the tooltip
  const char* col_axis = nullptr;         // e.g. "key"
  int col_group = 0;                      // > 0: a strong line every col_group columns (heads side by side)
  const char* col_group_label = nullptr;  // e.g. "head": "head 0", "head 1", ... above the groups
  // Count in MatrixResult how many numbers fit their cells (a view whose numbers are its
  // point reports them to tests); small matrices only: it measures every cell's text.
  bool count_values = false;
  int highlight_row = -1;  // outlined
  int highlight_col = -1;
  // A lesson's reveal (DrawRevealCell): the answer's cell, and the class's wrong pick.
  int answer_row = -1, answer_col = -1;
  int pick_row = -1, pick_col = -1;
  // Extra tooltip lines for cell (i, j), after the default ones.
  std::function<void(int, int)> tooltip;
};

struct MatrixResult {
  int hover_row = -1, hover_col = -1;
  bool clicked = false;
  ImVec2 min, max;        // the cells' rectangle on screen
  int values_shown = 0;   // cells with their number written in them
  int values_hidden = 0;  // cells whose number did not fit ("…" or nothing)
};

// Draws the matrix (labels, cells, values) as one item of the current window.
MatrixResult DrawMatrix(AppState& s, const MatrixArgs& a);

// A lesson's revealed answer on a map or a table row, the rectangle a..b: the answer
// solid in a colour none of the colour maps uses (viridis, blue-white-red), the class's
// wrong pick dashed white; each over a dark edge, so it reads on the darkest cell and
// the lightest alike. --probe reports it as "reveal_answer" / "reveal_pick".
void DrawRevealCell(AppState& s, ImDrawList* dl, ImVec2 a, ImVec2 b, bool answer);
// The same around the current row of the table being drawn, `line` pixels high, across
// the table's visible width (call it after the row's last cell).
void DrawRevealRow(AppState& s, float line, bool answer);

// A horizontal colour legend for `scale`, `width` pixels wide, with its range.
void DrawScaleLegend(ColourScale scale, float range, float width, const char* label, bool masked_entry);

// `v` with `decimals` places ("0.23"), or in exponent form when that would be long;
// -inf is "-∞". Used for legends and fixed-decimal cells.
std::string FormatValue(float v, int decimals);
// `v` with at most `digits` significant digits: "8.999", "12", "-0.03125", "1.2e+04".
std::string SigValue(float v, int digits);

}  // namespace mha::gui
