// A picture as a list of shapes in pixel coordinates, drawn by one rasteriser (PNG)
// and one SVG writer, so the training pictures' PNG and SVG cannot disagree. Internal
// to mha_render (the heatmap export keeps its own Layout).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "render/layout.hpp"
#include "render/text.hpp"

namespace mha::render {

struct SceneRect {
  int x = 0, y = 0, w = 0, h = 0;
  Rgb fill{};
  std::string cls;    // SVG class ("" for none)
  std::string attrs;  // extra SVG attributes, e.g. ` data-row="3"`
  std::string title;  // SVG tooltip ("" for none)
};

// A block of square cells (a heatmap) for the PNG: one colour each, no SVG attributes.
// As SceneRects, the cells of 6 layers x 32 heads x 256 tokens took 1.5 GB. Cell (r, c)
// spans lround(x + c * pitch) to lround(x + (c + 1) * pitch) less `gap` (at least a pixel).
struct SceneCells {
  double x = 0, y = 0, pitch = 1;  // pixels
  int rows = 0, cols = 0, gap = 0;
  std::vector<Rgb> fill;  // rows x cols, row-major
};

enum class Anchor { Start, Middle, End };

struct SceneText {
  double x = 0, y = 0;  // the anchor point on the baseline
  Style st;
  Rgb colour = kInk;
  std::string text;
  Anchor anchor = Anchor::Start;
  int angle = 0;  // degrees counter-clockwise about (x, y): 0 or 90
};

struct ScenePath {
  std::vector<std::pair<double, double>> pts;
  Rgb colour = kInk;
  double width = 1;  // pixels
  std::string cls;
  // < 1: blended over what is below (the head view's lines); 1: opaque, and where a
  // path's segments overlap at a joint the darker coverage is kept.
  double opacity = 1;
  std::string attrs;  // extra SVG attributes
  std::string title;  // SVG tooltip ("" for none)
};

// Brace-free builders (the structs' later members keep their defaults).
inline SceneRect Box(int x, int y, int w, int h, Rgb fill) {
  SceneRect r;
  r.x = x, r.y = y, r.w = w, r.h = h, r.fill = fill;
  return r;
}
inline SceneText Label(double x, double y, Style st, Rgb colour, std::string text, Anchor anchor = Anchor::Start,
                       int angle = 0) {
  SceneText t;
  t.x = x, t.y = y, t.st = st, t.colour = colour, t.text = std::move(text), t.anchor = anchor, t.angle = angle;
  return t;
}

struct Scene {
  int width = 0, height = 0;
  std::vector<SceneCells> cells;  // drawn first: the heatmaps' cells
  std::vector<SceneRect> rects;   // then the rectangles, in order (a Flash grid's tile edges over its cells)
  std::vector<ScenePath> paths;   // then the lines
  std::vector<SceneText> texts;   // then the text
  std::vector<PanelInfo> panels;
  std::vector<std::string> notes;
};

// Text measured with `text` (the same instance the layout used).
Image Rasterise(const Scene& s, Text& text);
std::string SceneSvg(const Scene& s);

// Throws mha::Error if a w x h image is over kMaxPixels or kMaxSide.
void CheckImageSize(long long w, long long h);

// "0.97", "1.00": two decimals.
std::string Fixed2(double v);

}  // namespace mha::render
