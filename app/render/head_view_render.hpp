// The head view (BertViz's signature picture): the tokens twice, queries in a column on
// the left and keys on the right, a line from each query to each key it attends to,
// the line's opacity the attention weight and its colour the head's.
//
// HeadViewLines is the one place that decides which lines exist, where they run and
// how opaque they are; the GUI's Head view draws them with ImGui, and the export
// (`mhaviz export --view head`, the GUI's Export section) draws them into a PNG or an
// SVG, so the screen and the file cannot disagree.
#pragma once

#include <string>
#include <vector>

#include "mha/mha.hpp"
#include "render/render.hpp"

namespace mha::render {

// A line fainter than this cannot be told from the background: it is not drawn (and
// every query's weights sum to 1, so a query has at most 100 lines per head).
inline constexpr float kHeadViewMinWeight = 0.01f;
// The export draws at most this many tokens per column (a column of more is taller
// than any slide; the heatmaps show long sequences).
inline constexpr int kHeadViewMaxTokens = 256;

// Tableau's 10 plus two: distinct on light and dark backgrounds. Head h's colour.
Rgb HeadColour(int head);

// Where the two token columns sit, in the caller's coordinates: query labels fill
// [x, x + label_w), the lines run across the gap, key labels start at x + label_w + gap.
struct HeadViewColumns {
  double x = 0, y = 0;  // top-left of the first query label
  double label_w = 0, gap = 0, row_h = 0;
  double LeftX() const { return x + label_w; }
  double RightX() const { return x + label_w + gap; }
  double RowY(int i) const { return y + row_h * (i + 0.5); }
};

// Which lines to keep.
struct HeadViewSelection {
  std::vector<bool> heads;  // per head, whether it is drawn; empty: every head
  int query = -1;           // >= 0: only this query's lines (a hovered query)
  int key = -1;             // >= 0 and no query: only the lines into this key
  float min_weight = kHeadViewMinWeight;
  // Lines entirely above `top` or below `bottom` are left out (a scrolled window).
  double top = -1e300, bottom = 1e300;
};

struct HeadViewLine {
  int head = 0, query = 0, key = 0;
  float weight = 0;                       // the attention weight the core computed
  float opacity = 0;                      // = weight (at most 1)
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // from the query's row to the key's
};

// Every line of the selected heads, head by head (the later drawn on top), then by
// query and key. Throws mha::Error if the selection names more heads than the trace has.
std::vector<HeadViewLine> HeadViewLines(const Trace& t, const HeadViewColumns& c, const HeadViewSelection& sel);
// Head `head`'s lines alone, appended to `out` (none if the selection switches it off):
// a caller may search a big layer a few heads at a time. Throws mha::Error for a head
// the layer does not have.
void AppendHeadViewLines(const Trace& t, const HeadViewColumns& c, const HeadViewSelection& sel, int head,
                         std::vector<HeadViewLine>& out);

struct HeadViewOptions {
  int head = -1;            // -1: every head on one picture; else only head `head`
  std::vector<bool> heads;  // if not empty: the heads drawn (the GUI's toggles); `head` is then ignored
  int scale = 2;            // pixels per point, clamped to [1, 8]
  bool header = true;       // the title, sentence, legend and explanation above the columns
  std::string title;        // "" : "Head view"
  std::string sentence;     // shown in the header instead of the tokens joined by spaces
};

// The head view as a PNG image or an SVG document (every line a <line class="attn">
// with data-head, data-query, data-key, data-weight and stroke-opacity = the weight).
// Throws mha::Error for a head out of range, more than kHeadViewMaxTokens tokens, or an
// SVG of more than kMaxSvgCells lines.
Image RenderHeadView(const Trace& t, const HeadViewOptions& o);
std::string RenderHeadViewSvg(const Trace& t, const HeadViewOptions& o);

}  // namespace mha::render
