// Exports that drop into a slide: the colour scales (each cell is the colour map of
// its weight over the map's or the row's largest, computed here from the trace
// alone), --columns, --fit W:H, --no-header, and the SVG's plain-text title and
// font fallbacks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>

#include "mha/mha.hpp"
#include "render/render.hpp"

namespace {

mha::Trace Run(const std::string& sentence, int heads, int d_model, mha::Mask mask = mha::Mask::None) {
  mha::Config cfg;
  cfg.num_heads = heads;
  cfg.d_model = d_model;
  cfg.mask = mask;
  const mha::Inputs in = mha::MakeInputs(sentence, "", cfg);
  return mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
}

std::array<std::uint8_t, 3> Pixel(const mha::render::Image& img, int x, int y) {
  const std::size_t i = (static_cast<std::size_t>(y) * img.width + x) * 4;
  return {img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]};
}

// Weight (r, c) of map `head` (-1: the mean over heads), straight from the trace.
float W(const mha::Trace& t, int head, int r, int c) {
  if (head >= 0) return t.AttnHead(head)(r, c);
  double s = 0;
  for (int h = 0; h < t.cfg.num_heads; ++h) s += t.AttnHead(h)(r, c);
  return static_cast<float>(s / t.cfg.num_heads);
}

bool Masked(const mha::Trace& t, int head, int r, int c) {
  auto one = [&](int h) { return std::isinf(t.ScoresHead(h)(r, c)); };
  if (head >= 0) return one(head);
  for (int h = 0; h < t.cfg.num_heads; ++h)
    if (!one(h)) return false;
  return true;
}

// The colour scale's expected value of a cell, by its definition.
float Scaled(const mha::Trace& t, int head, int r, int c, mha::render::ColourScale s) {
  using mha::render::ColourScale;
  const float w = W(t, head, r, c);
  if (s == ColourScale::Fixed) return w;
  float m = 0;
  for (int rr = 0; rr < t.seq; ++rr) {
    if (s == ColourScale::Row && rr != r) continue;
    for (int cc = 0; cc < t.seq_kv; ++cc)
      if (!Masked(t, head, rr, cc)) m = std::max(m, W(t, head, rr, cc));
  }
  return w / m;
}

std::string Str(std::array<std::uint8_t, 3> c) {
  return "(" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) + ")";
}

}  // namespace

TEST_CASE("every cell is the colour map of its weight on the chosen colour scale, in the PNG and the SVG",
          "[render][scale]") {
  using mha::render::ColourScale;
  const auto mask = GENERATE(mha::Mask::None, mha::Mask::Causal);
  const mha::Trace t = Run("the cat sat on the warm mat today", 4, 32, mask);
  for (ColourScale s : mha::render::kColourScales) {
    INFO("scale " << mha::render::ToString(s) << ", mask " << mha::ToString(mask));
    mha::render::HeatmapOptions o;
    o.colour_scale = s;
    o.values = false;  // plain cells: the whole cell is its colour
    const mha::render::Image img = mha::render::RenderHeatmaps(t, o);
    REQUIRE(img.panels.size() == 5);
    int brightest = 0;
    for (const auto& p : img.panels)
      for (int r = 0; r < t.seq; ++r)
        for (int c = 0; c < t.seq_kv; ++c) {
          const bool masked = Masked(t, p.head, r, c);
          const auto want = masked ? mha::render::kMaskedColour : mha::render::Colormap(Scaled(t, p.head, r, c, s));
          const auto got = Pixel(img, p.x + c * p.cell + p.cell / 2, p.y + r * p.cell + p.cell / 2);
          INFO("map " << p.head << " cell (" << r << ", " << c << ")");
          REQUIRE(Str(got) == Str(want));
          brightest += !masked && got == mha::render::Colormap(1.0f);
        }
    // Per row every row has its brightest cell at the top of the scale; per map, each map.
    if (s == ColourScale::Row) CHECK(brightest >= 5 * t.seq);
    if (s == ColourScale::Map) CHECK(brightest >= 5);
    // The SVG draws the same colours, and its colour bar says which scale.
    const std::string svg = mha::render::RenderHeatmapsSvg(t, o);
    CHECK_THAT(svg, Catch::Contains(mha::render::ColourScaleTitle(s)));
    const auto c0 = mha::render::Colormap(Scaled(t, 1, 2, 1, s));
    char hex[8];
    std::snprintf(hex, sizeof hex, "#%02x%02x%02x", c0[0], c0[1], c0[2]);
    CHECK_THAT(svg, Catch::Contains(std::string("fill=\"") + hex + "\""));
  }
}

TEST_CASE("slide layout: --columns puts N maps per row, and --fit 16:9 makes a 16:9 canvas with the figure centred",
          "[render][slide]") {
  const mha::Trace t = Run("I saw her duck with the telescope", 8, 64);
  for (int cols : {1, 3, 9}) {
    mha::render::HeatmapOptions o;
    o.columns = cols;
    const auto img = mha::render::RenderHeatmaps(t, o);
    std::set<int> xs, ys;
    for (const auto& p : img.panels) {
      xs.insert(p.x);
      ys.insert(p.y);
    }
    CHECK(static_cast<int>(xs.size()) == cols);
    CHECK(static_cast<int>(ys.size()) == (9 + cols - 1) / cols);
  }
  for (int heads : {1, 2, 8}) {
    const mha::Trace th = Run("I saw her duck with the telescope", heads, 64);
    for (bool header : {true, false}) {
      mha::render::HeatmapOptions o;
      o.fit = 16.0 / 9.0;
      o.header = header;
      const auto img = mha::render::RenderHeatmaps(th, o);
      INFO(heads << " heads, header " << header << ": " << img.width << " x " << img.height);
      // Whole pixels: within one pixel of 16:9.
      CHECK(std::abs(img.width * 9.0 - img.height * 16.0) <= 16.0);
      // Centred: the first map as far from the left edge as the last column's right
      // edge from the right (within the colour bar's block), and never off the canvas.
      int right = 0;
      for (const auto& p : img.panels) right = std::max(right, p.x + p.cols * p.cell);
      CHECK(img.panels.front().x > 0);
      CHECK(right < img.width);
      const std::string svg = mha::render::RenderHeatmapsSvg(th, o);
      CHECK_THAT(svg, Catch::Contains("<svg"));
    }
  }
}

TEST_CASE(
    "slide layout: --no-header leaves the maps alone at the top, and the SVG title is plain text with font fallbacks",
    "[render][slide]") {
  const mha::Trace t = Run("고양이가 쥐를 잡았다", 2, 16);
  mha::render::HeatmapOptions with, without;
  with.columns = without.columns = 3;
  without.header = false;
  const auto a = mha::render::RenderHeatmaps(t, with), b = mha::render::RenderHeatmaps(t, without);
  CHECK(b.height < a.height);
  CHECK(b.panels.front().y < a.panels.front().y - 60);
  const std::string svg = mha::render::RenderHeatmapsSvg(t, without);
  const auto title_at = svg.find("<title>");
  REQUIRE(title_at != std::string::npos);
  const std::string title = svg.substr(title_at, svg.find("</title>") - title_at);
  CHECK(title == "<title>Multi-head self-attention weights = softmax(QK\u1D40 / \u221Ad_k)");
  CHECK(title.find('{') == std::string::npos);
  CHECK(svg.find("class=\"header\"") != std::string::npos);  // the group, empty
  CHECK(svg.find("sentence: ") == std::string::npos);
  CHECK_THAT(svg, Catch::Contains("'Noto Sans KR'") && Catch::Contains("sans-serif\""));
}
