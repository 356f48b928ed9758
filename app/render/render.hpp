// CPU rendering of the attention heatmaps for slides and documents: PNG (text with
// stb_truetype, encoded with stb_image_write) and SVG (every cell a vector <rect>).
// Needs no display and no OpenGL: `mhaviz export` and the GUI's export both use it.
//
// What is drawn: a header (formula, sentence, configuration), one heatmap per head
// (rows = query tokens, columns = key tokens; under GQA the title says which K/V head
// the query head reads), the mean over heads, and one colour bar. The colour scale is
// fixed to [0, 1] for every map by default so heads can be compared by eye; per map or
// per row (HeatmapOptions::colour_scale) each cell is coloured as Colormap(weight /
// the map's or the row's largest weight), and the colour bar's title says so. Cells
// masked by the causal mask are drawn in a neutral grey (their weight is exactly 0)
// and the legend says so. Every printed weight is the float the core computed,
// rounded to 2 decimals.
//
// Big inputs stay bounded: labels and values are left out when they would not fit
// (the axes then number token positions), and to stay within kMaxPixels the scale is
// lowered first, then cells shrink down to 1 px, then the maps are averaged down (each
// pixel = the mean of k x k cells). Image::notes says what was simplified.
//
// Thread-safe: the font is loaded once per process (read-only afterwards); everything
// else is per call.
//
// Text: NanumGothic (Latin + Hangul), looked up next to the executable
// (assets/fonts, ../assets/fonts, ../../assets/fonts, ../share/mhaviz/fonts), in the
// source tree's assets/fonts, then in the system font directories (fonts-nanum); or
// exactly the file $MHAVIZ_FONT names. Loaded once per process and cached; a missing
// font is an mha::Error that says where it looked and how to install one.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mha/mha.hpp"
#include "render/colormap.hpp"  // Colormap, kMaskedColour: the colours drawn

namespace mha::render {

struct HeatmapOptions {
  int head = -1;                                  // -1: all heads + the mean over heads; else only head `head`
  int scale = 2;                                  // slide resolution multiplier (1 = 1 px per point), clamped to [1, 8]
  bool values = true;                             // print the weight inside cells that are big enough
  ColourScale colour_scale = ColourScale::Fixed;  // what each map's colours are relative to
  int columns = 0;                                // maps per row; 0: chosen (closest to 16:9, or to `fit`)
  bool header = true;                             // the title, sentence, configuration and notes above the maps
  double fit = 0;                                 // > 0: a canvas of exactly this width / height (16:9 = 1.777...),
                                                  // the columns chosen to fill it, the figure centred
  // Shown in the header instead of the tokens joined by spaces, if not empty.
  std::string sentence;
  std::string memory;  // cross-attention: the keys/values sentence
  // Shown in the header instead of the layer's own positional-encoding setting, if not
  // empty: a trained model's layers run with it off because the model adds its PE
  // (learned or sinusoidal) below the stack.
  std::string positional;
  // Where the weights come from, a line of its own in the header, so a figure of
  // untrained heads is never taken for a finding: "random weights (untrained)" (see
  // kUntrainedWeights), "trained: mhaviz-small · layer 1", ... ("": not said).
  std::string weights;
};

// The header's words for seeded random weights (the GUI's marker says the same).
inline constexpr const char* kUntrainedWeights = "random weights (untrained)";

// Where one heatmap was drawn (pixels), for tests and for hit-testing in a viewer.
// Cell (r, c) covers [x + c*cell, x + (c+1)*cell - gap) horizontally, the same
// vertically; its top-left pixel is always the plain cell colour (no text, no grid
// line). When downsample > 1, cell == 1 and pixel (x + c, y + r) shows the mean weight
// of cells [r*downsample, (r+1)*downsample) x [c*downsample, (c+1)*downsample).
struct PanelInfo {
  int head = 0;  // -1 for the mean over heads
  int x = 0, y = 0;
  int rows = 0, cols = 0;  // seq, seq_kv
  int cell = 0, gap = 0;
  int downsample = 1;
};

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  // row-major, 4 bytes per pixel, fully opaque
  std::vector<PanelInfo> panels;   // heads in order, then the mean (if drawn)
  std::vector<std::string> notes;  // what was left out or averaged, and why
};

// Images are capped at this many pixels (64 MiB of RGBA) and kMaxSide per side.
inline constexpr long long kMaxPixels = 16LL << 20;
inline constexpr int kMaxSide = 16384;
// An SVG with more heatmap cells than this is refused (it would be hundreds of MB
// that no viewer opens); a single head of 512 tokens still fits.
inline constexpr long long kMaxSvgCells = 300000;

// Throws mha::Error if the head is out of range or no font can be read.
Image RenderHeatmaps(const Trace& t, const HeatmapOptions& o);

// PNG bytes of an image (stb_image_write, RGB). Throws mha::Error on failure.
std::string EncodePng(const Image& img);

// The same layout as RenderHeatmaps as an SVG document. Per-head cells are
// <rect class="cell">, so counting them gives num_heads x seq x seq_kv (or seq x seq_kv
// with a single head); cells of the mean map are <rect class="mean-cell"> and are not
// counted. Each cell's <title> holds the query, key, weight and raw score. Throws
// mha::Error if the SVG would hold more than kMaxSvgCells cells.
std::string RenderHeatmapsSvg(const Trace& t, const HeatmapOptions& o);
// Number of <rect class="cell"> the SVG would hold (to refuse early).
long long SvgCellCount(const Trace& t, const HeatmapOptions& o);

// Where the renderer looks for NanumGothic.ttf, in order.
std::vector<std::string> FontSearchPaths();
// The font file in use (loads it if needed). Throws mha::Error if none can be read.
std::string FontPath();

}  // namespace mha::render
