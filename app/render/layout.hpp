// The geometry of a heatmap figure, computed once and drawn by both the PNG and the
// SVG writer so the two always match. Internal to mha_render.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "render/render.hpp"
#include "render/text.hpp"

namespace mha::render {

// A piece of the header; the formula uses {^T} and {_k} for super/subscripts.
struct HeaderLine {
  std::string text;
  Style st;
  Rgb colour;
  double baseline = 0;
  bool rich = false;
};

struct PanelLayout {
  int head = 0;  // -1: mean over heads
  std::string title, subtitle;
  double x = 0, y = 0;  // top-left of the panel (title included)
  double title_baseline = 0;
  double grid_x = 0, grid_y = 0;
};

struct Layout {
  double s = 1;  // pixels per point
  double width = 0, height = 0;
  double margin = 0;
  double header_x = 0;  // left edge of the header's lines (the margin, or more when centred)
  std::vector<HeaderLine> header;
  std::string plain_title;  // what is drawn and its formula as plain text (the SVG's <title>)

  int rows = 0, cols = 0;  // seq, seq_kv
  double cell = 0;         // pixels per cell (an integer for PNGs)
  double gap = 0;          // white separator inside each cell's right/bottom edge
  int downsample = 1;      // PNG only: cells per pixel along each axis
  double grid_w = 0, grid_h = 0;

  Style title, subtitle;

  bool row_labels = false, col_labels = false;
  Style label, col_label;                       // col_label may be smaller so column labels stay horizontal
  int col_angle = 0;                            // 0 (horizontal), 45 or 90 degrees counter-clockwise
  bool col_stagger = false;                     // horizontal on two lines: odd columns on the upper one
  std::vector<std::string> row_text, col_text;  // ellipsized tokens
  double label_pad = 0;
  int index_step = 0;  // > 0: no labels; token positions 0, step, 2*step... on both axes
  Style index_style;

  bool values = false;
  Style value;

  std::vector<PanelLayout> panels;

  double bar_x = 0, bar_y = 0, bar_w = 0, bar_h = 0;
  Style tick;
  std::vector<std::string> ticks;  // bottom (0) to top, 5 labels; "" for an unlabelled tick
  std::string bar_title;
  double bar_title_baseline = 0;
  ColourScale colour_scale = ColourScale::Fixed;
  bool mask_legend = false;
  double mask_y = 0;  // top of the masked swatch
  std::string mask_text;

  std::vector<std::string> notes;        // drawn under the header and returned
  std::vector<std::string> quiet_notes;  // only returned (too obvious to print on a slide)
};

// What every phase of the layout reads: the trace, the options, and what follows
// from them alone (the maps drawn, the tokens, the cell size asked for).
struct LayoutInputs {
  const Trace& t;
  const HeatmapOptions& o;
  Text& text;
  bool vector;             // SVG: no pixel caps, no rounding
  double s_requested;      // the scale asked for, clamped to [1, 8]
  int n;                   // max(seq, seq_kv)
  std::vector<int> heads;  // the maps in order; -1 is the mean over heads
  int P;                   // number of maps
  std::vector<std::string> qtoks, ktoks;
  double cell_pt = 0;  // the cell side asked for, in points

  // PNG coordinates are whole pixels; SVG keeps fractions.
  double R(double v) const { return vector ? v : std::round(v); }
};

// How far the figure has been shrunk to fit the pixel cap (layout.cpp's Shrink).
struct Fit {
  double s;                  // pixels per point
  double cell_override = 0;  // > 0: the cells themselves shrank to this many pixels
  int k = 1;                 // cells averaged per pixel along each axis
};

// MakeLayout's header phase (layout_header.cpp): the notes on what was simplified,
// then the header's lines from the top margin down. Returns the y under the header.
void LayoutNotes(const LayoutInputs& in, const Fit& f, Layout& L);
double LayoutHeader(const LayoutInputs& in, const Fit& f, double header_w, double content_w, Layout& L);

// `vector`: for SVG (no pixel caps, no rounding, no downsampling).
Layout MakeLayout(const Trace& t, const HeatmapOptions& o, Text& text, bool vector);

// The weights and mask of each panel in layout order (mean computed here).
struct PanelData {
  std::vector<float> w;  // rows x cols, row-major
  std::vector<unsigned char> masked;
  std::vector<float> score;    // raw scores (empty for the mean)
  std::vector<float> divisor;  // per row: the colour scale's divisor (ScaleDivisors)
  // The colour of cell i: masked grey, else the colour map of the scaled weight.
  Rgb Colour(std::size_t i, int cols) const {
    return masked[i] ? kMaskedColour : Colormap(w[i] / divisor[i / static_cast<std::size_t>(cols)]);
  }
};
PanelData GetPanelData(const Trace& t, int head, ColourScale scale = ColourScale::Fixed);

// The labels of the rows (queries) or columns (keys): the trace's tokens, or "#i" if
// a hand-built trace has fewer labels than rows.
std::vector<std::string> QueryTokens(const Trace& t);
std::vector<std::string> KeyTokens(const Trace& t);

// How far column c's label sits above the others' line: one line for odd columns
// when the labels are staggered, else 0.
double StaggerLift(Text& text, const Layout& L, int c);

// "0.27": the weight as printed in a cell.
std::string FormatWeight(float w);

// Head index checked against the trace; throws mha::Error naming the valid range.
void CheckHead(const Trace& t, int head);

// Splits "a {^T} b {_k}" into (text, kind) spans: kind 0 normal, 1 superscript, 2 subscript.
std::vector<std::pair<std::string, int>> RichSpans(const std::string& s);

inline constexpr Rgb kInk{34, 34, 34};
inline constexpr Rgb kGrey{100, 100, 100};
inline constexpr Rgb kNoteInk{160, 64, 0};
inline constexpr Rgb kWhite{255, 255, 255};

}  // namespace mha::render
