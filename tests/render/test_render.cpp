// The CPU heatmap renderer: colours, geometry, PNG round trip, SVG structure.
#include <catch2/catch.hpp>

#include <stb_image.h>  // implementation in libstb

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "mha/mha.hpp"
#include "render/render.hpp"
#include "svg_check.hpp"

namespace {

mha::Trace Run(const std::string& sentence, int heads, int d_model, int kv_heads = 0, mha::Mask mask = mha::Mask::None,
               const std::string& memory = "") {
  mha::Config cfg;
  cfg.num_heads = heads;
  cfg.d_model = d_model;
  cfg.num_kv_heads = kv_heads;
  cfg.mask = mask;
  const mha::Inputs in = mha::MakeInputs(sentence, memory, cfg);
  return mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
}

struct Decoded {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  std::array<std::uint8_t, 3> At(int x, int y) const {
    const std::size_t i = (static_cast<std::size_t>(y) * w + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Decoded DecodePng(const std::string& png) {
  Decoded d;
  int comp = 0;
  unsigned char* p = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(png.data()),
                                           static_cast<int>(png.size()), &d.w, &d.h, &comp, 3);
  REQUIRE(p != nullptr);
  d.rgb.assign(p, p + static_cast<std::size_t>(d.w) * d.h * 3);
  stbi_image_free(p);
  return d;
}

std::array<std::uint8_t, 3> Pixel(const mha::render::Image& img, int x, int y) {
  const std::size_t i = (static_cast<std::size_t>(y) * img.width + x) * 4;
  return {img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]};
}

// The mean over heads, computed here independently of the renderer.
float MeanWeight(const mha::Trace& t, int r, int c) {
  double s = 0;
  for (int h = 0; h < t.cfg.num_heads; ++h) s += t.AttnHead(h)(r, c);
  return static_cast<float>(s / t.cfg.num_heads);
}

std::string Str(std::array<std::uint8_t, 3> c) {
  return "(" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) + ")";
}

}  // namespace

TEST_CASE("Colormap is viridis: its endpoints, midpoint, clamping, and rising lightness", "[render]") {
  using mha::render::Colormap;
  // matplotlib's viridis table, entries 0, 128 and 255, in 8-bit sRGB.
  CHECK(Str(Colormap(0.0f)) == "(68,1,84)");
  CHECK(Str(Colormap(128.0f / 255.0f)) == "(33,145,140)");
  CHECK(Str(Colormap(1.0f)) == "(253,231,37)");
  CHECK(Str(Colormap(-3.0f)) == Str(Colormap(0.0f)));
  CHECK(Str(Colormap(7.0f)) == Str(Colormap(1.0f)));
  CHECK(Str(Colormap(std::nanf(""))) == Str(Colormap(0.0f)));
  // Perceptually ordered: relative luminance strictly increases with the weight.
  double prev = -1;
  for (int i = 0; i <= 64; ++i) {
    const auto c = Colormap(i / 64.0f);
    const double lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    CHECK(lum > prev);
    prev = lum;
  }
}

TEST_CASE("PNG: every cell of every head has the colour of its weight, and the mean is the mean", "[render][png]") {
  const mha::Trace t = Run("The quick brown fox jumps over the lazy dog .", 8, 64);
  REQUIRE(t.seq == 10);
  mha::render::HeatmapOptions o;
  o.scale = 1;
  const mha::render::Image img = mha::render::RenderHeatmaps(t, o);
  REQUIRE(img.panels.size() == 9);  // 8 heads + mean
  const Decoded png = DecodePng(mha::render::EncodePng(img));
  REQUIRE(png.w == img.width);
  REQUIRE(png.h == img.height);
  long checked = 0;
  for (std::size_t p = 0; p < img.panels.size(); ++p) {
    const auto& pn = img.panels[p];
    CHECK(pn.head == (p < 8 ? static_cast<int>(p) : -1));
    CHECK(pn.rows == 10);
    CHECK(pn.cols == 10);
    CHECK(pn.downsample == 1);
    for (int r = 0; r < 10; ++r)
      for (int c = 0; c < 10; ++c) {
        const float w = pn.head >= 0 ? t.AttnHead(pn.head)(r, c) : MeanWeight(t, r, c);
        const int x = pn.x + c * pn.cell, y = pn.y + r * pn.cell;
        INFO("panel " << p << " cell (" << r << ", " << c << ") weight " << w);
        CHECK(Str(png.At(x, y)) == Str(mha::render::Colormap(w)));
        ++checked;
      }
  }
  CHECK(checked == 900);
}

TEST_CASE("PNG geometry: panels inside the image, disjoint, and the size follows the scale", "[render][png]") {
  const mha::Trace t = Run("고양이가 쥐를 잡았다", 2, 64);
  mha::render::HeatmapOptions o;
  o.scale = 1;
  const auto a = mha::render::RenderHeatmaps(t, o);
  o.scale = 2;
  const auto b = mha::render::RenderHeatmaps(t, o);
  REQUIRE(a.panels.size() == 3);
  // Everything is laid out in points, so doubling the scale doubles the image (up to
  // rounding of each element to whole pixels).
  CHECK(std::abs(b.width - 2 * a.width) <= 12);
  CHECK(std::abs(b.height - 2 * a.height) <= 12);
  CHECK(b.panels[0].cell == 2 * a.panels[0].cell);
  for (const auto* img : {&a, &b}) {
    CHECK(img->rgba.size() == static_cast<std::size_t>(img->width) * img->height * 4);
    for (std::size_t i = 0; i < img->panels.size(); ++i) {
      const auto& p = img->panels[i];
      CHECK(p.x >= 0);
      CHECK(p.y >= 0);
      CHECK(p.x + p.cols * p.cell <= img->width);
      CHECK(p.y + p.rows * p.cell <= img->height);
      for (std::size_t j = i + 1; j < img->panels.size(); ++j) {
        const auto& q = img->panels[j];
        const bool apart = p.x + p.cols * p.cell <= q.x || q.x + q.cols * q.cell <= p.x ||
                           p.y + p.rows * p.cell <= q.y || q.y + q.rows * q.cell <= p.y;
        CHECK(apart);
      }
    }
  }
}

TEST_CASE("PNG: one head with --head, GQA, causal mask in grey, cross-attention rectangles", "[render][png]") {
  SECTION("a single head") {
    const mha::Trace t = Run("The cat sat on the mat .", 4, 64);
    mha::render::HeatmapOptions o;
    o.head = 2;
    const auto img = mha::render::RenderHeatmaps(t, o);
    REQUIRE(img.panels.size() == 1);
    CHECK(img.panels[0].head == 2);
    const auto& p = img.panels[0];
    CHECK(Str(Pixel(img, p.x + 3 * p.cell, p.y + 1 * p.cell)) == Str(mha::render::Colormap(t.AttnHead(2)(1, 3))));
  }
  SECTION("causal mask: the upper triangle is the masked grey, the rest the weight's colour") {
    const mha::Trace t = Run("The quick brown fox jumps .", 8, 64, 2, mha::Mask::Causal);
    const auto img = mha::render::RenderHeatmaps(t, {});
    for (const auto& p : img.panels)
      for (int r = 0; r < p.rows; ++r)
        for (int c = 0; c < p.cols; ++c) {
          const auto px = Pixel(img, p.x + c * p.cell, p.y + r * p.cell);
          if (c > r)
            CHECK(Str(px) == Str(mha::render::kMaskedColour));
          else
            CHECK(Str(px) == Str(mha::render::Colormap(p.head >= 0 ? t.AttnHead(p.head)(r, c) : MeanWeight(t, r, c))));
        }
  }
  SECTION("cross-attention: seq x seq_kv maps") {
    const mha::Trace t = Run("고양이가 쥐를 잡았다", 4, 64, 0, mha::Mask::None, "The cat caught the mouse .");
    const auto img = mha::render::RenderHeatmaps(t, {});
    REQUIRE(img.panels.size() == 5);
    for (const auto& p : img.panels) {
      CHECK(p.rows == 3);
      CHECK(p.cols == 6);
    }
    const auto& p = img.panels[1];
    CHECK(Str(Pixel(img, p.x + 5 * p.cell, p.y + 2 * p.cell)) == Str(mha::render::Colormap(t.AttnHead(1)(2, 5))));
  }
  SECTION("one head only: no separate mean map") {
    const mha::Trace t = Run("one head only", 1, 16);
    CHECK(mha::render::RenderHeatmaps(t, {}).panels.size() == 1);
  }
}

TEST_CASE("A head out of range is a clear error naming the valid range", "[render]") {
  const mha::Trace t = Run("The cat sat", 8, 64);
  mha::render::HeatmapOptions o;
  o.head = 8;
  CHECK_THROWS_WITH(mha::render::RenderHeatmaps(t, o), Catch::Contains("0 to 7"));
  CHECK_THROWS_WITH(mha::render::RenderHeatmapsSvg(t, o), Catch::Contains("0 to 7"));
  o.head = -2;
  CHECK_THROWS_AS(mha::render::RenderHeatmaps(t, o), mha::Error);
}

TEST_CASE("SVG: one <rect class=cell> per head, query and key, the mean's cells counted apart", "[render][svg]") {
  struct Case {
    const char* sentence;
    int heads, kv;
    const char* memory;
  };
  for (const Case& c :
       {Case{"The quick brown fox jumps over the lazy dog .", 8, 0, ""}, Case{"고양이가 쥐를 잡았다", 2, 0, ""},
        Case{"고양이가 쥐를 잡았다", 8, 2, ""}, Case{"The cat sat", 4, 0, "고양이가 쥐를 잡았다 ."}}) {
    const mha::Trace t = Run(c.sentence, c.heads, 64, c.kv, mha::Mask::None, c.memory);
    INFO(c.sentence << " heads " << c.heads);
    const auto els = svgcheck::Parse(mha::render::RenderHeatmapsSvg(t, {}));
    CHECK(els[0].name == "svg");
    CHECK(svgcheck::Count(els, "rect", "cell") == static_cast<std::size_t>(c.heads * t.seq * t.seq_kv));
    CHECK(svgcheck::Count(els, "rect", "mean-cell") == static_cast<std::size_t>(t.seq * t.seq_kv));
    CHECK(mha::render::SvgCellCount(t, {}) == c.heads * t.seq * t.seq_kv);
    mha::render::HeatmapOptions one;
    one.head = c.heads - 1;
    const auto els1 = svgcheck::Parse(mha::render::RenderHeatmapsSvg(t, one));
    CHECK(svgcheck::Count(els1, "rect", "cell") == static_cast<std::size_t>(t.seq * t.seq_kv));
    CHECK(svgcheck::Count(els1, "rect", "mean-cell") == 0);
  }
}

TEST_CASE("SVG: cells carry the exact colour and the weight in their tooltip", "[render][svg]") {
  const mha::Trace t = Run("The cat sat on the mat", 2, 32);
  const auto els = svgcheck::Parse(mha::render::RenderHeatmapsSvg(t, {}));
  std::vector<const svgcheck::Element*> cells;
  for (const auto& e : els)
    if (e.name == "rect" && e.attrs.count("class") && e.attrs.at("class") == "cell") cells.push_back(&e);
  REQUIRE(cells.size() == 2u * 6 * 6);
  // Cells are written head by head, row by row.
  for (int h = 0; h < 2; ++h)
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c) {
        const auto* e = cells[static_cast<std::size_t>((h * 6 + r) * 6 + c)];
        const float w = t.AttnHead(h)(r, c);
        const auto col = mha::render::Colormap(w);
        char hex[8];
        std::snprintf(hex, sizeof hex, "#%02x%02x%02x", col[0], col[1], col[2]);
        CHECK(e->attrs.at("fill") == hex);
        // The tooltip is the <title> child.
        const svgcheck::Element* title = nullptr;
        for (const auto& x : els)
          if (x.name == "title" && x.parent >= 0 && &els[static_cast<std::size_t>(x.parent)] == e) title = &x;
        REQUIRE(title != nullptr);
        char weight[32];
        std::snprintf(weight, sizeof weight, "weight %.4f", static_cast<double>(w));
        CHECK_THAT(title->text, Catch::Contains(weight));
        CHECK_THAT(title->text, Catch::Contains(t.in.tokens[static_cast<std::size_t>(r)]));
      }
}

TEST_CASE("SVG: Korean labels are text, and <, &, quotes in tokens are escaped", "[render][svg]") {
  SECTION("Korean") {
    const mha::Trace t = Run("고양이가 쥐를 잡았다", 2, 64);
    const std::string svg = mha::render::RenderHeatmapsSvg(t, {});
    const auto els = svgcheck::Parse(svg);
    const auto rows = svgcheck::Texts(els, "row-label");
    const auto cols = svgcheck::Texts(els, "col-label");
    REQUIRE(rows.size() == 3u * 3);  // 3 panels (2 heads + mean), 3 rows each
    REQUIRE(cols.size() == 3u * 3);
    CHECK(rows[0] == "고양이가");
    CHECK(rows[1] == "쥐를");
    CHECK(rows[2] == "잡았다");
    CHECK(cols[2] == "잡았다");
    CHECK(svg.find("고양이가 쥐를 잡았다") != std::string::npos);  // the sentence in the header
  }
  SECTION("XML special characters") {
    const mha::Trace t = Run("a < b & \"c\" 'd' > e", 2, 64);
    const std::string svg = mha::render::RenderHeatmapsSvg(t, {});
    const auto els = svgcheck::Parse(svg);  // throws if any of them leaked raw
    const auto rows = svgcheck::Texts(els, "row-label");
    std::vector<std::string> first(rows.begin(), rows.begin() + t.seq);
    CHECK(first == t.in.tokens);
    CHECK(std::find(t.in.tokens.begin(), t.in.tokens.end(), "<") != t.in.tokens.end());
    CHECK(std::find(t.in.tokens.begin(), t.in.tokens.end(), "&") != t.in.tokens.end());
    CHECK(svg.find("&lt;") != std::string::npos);
    CHECK(svg.find("&amp;") != std::string::npos);
    CHECK(svg.find("&quot;") != std::string::npos);
  }
  SECTION("control characters never break the XML") {
    mha::Trace t = Run("x y", 1, 8);
    t.in.tokens[0] = std::string("bad\x01\x1b", 5);
    CHECK_NOTHROW(svgcheck::Parse(mha::render::RenderHeatmapsSvg(t, {})));
  }
}

TEST_CASE("Big inputs stay bounded: 512 tokens x 16 heads", "[render][big]") {
  std::string s;
  for (int i = 0; i < 512; ++i) s += (i ? " w" : "w") + std::to_string(i % 97);
  const mha::Trace t = Run(s, 16, 64);
  REQUIRE(t.seq == 512);
  const auto img = mha::render::RenderHeatmaps(t, {});
  CHECK(static_cast<long long>(img.width) * img.height <= mha::render::kMaxPixels);
  CHECK(img.width <= mha::render::kMaxSide);
  CHECK(img.height <= mha::render::kMaxSide);
  REQUIRE(img.panels.size() == 17);
  CHECK_FALSE(img.notes.empty());  // says the labels were left out
  const auto& p = img.panels[7];
  CHECK(p.cell >= 1);
  for (int rc : {0, 100, 511})
    CHECK(Str(Pixel(img, p.x + rc * p.cell, p.y + rc * p.cell)) == Str(mha::render::Colormap(t.AttnHead(7)(rc, rc))));
  // All heads as SVG would be 4 million rects: refused with a hint; one head fits.
  CHECK(mha::render::SvgCellCount(t, {}) > mha::render::kMaxSvgCells);
  CHECK_THROWS_WITH(mha::render::RenderHeatmapsSvg(t, {}), Catch::Contains("single head"));
  mha::render::HeatmapOptions one;
  one.head = 3;
  CHECK(mha::render::SvgCellCount(t, one) <= mha::render::kMaxSvgCells);
}

TEST_CASE("Past the pixel cap the maps are averaged k x k, and say so", "[render][big]") {
  // A synthetic trace (no forward pass needed): 1024 tokens, 16 heads, weight of
  // cell (r, c) = ((r + c) % 8) / 8.
  mha::Trace t;
  t.cfg.num_heads = 16;
  t.cfg.d_model = 16;
  t.seq = t.seq_kv = 1024;
  for (int i = 0; i < 1024; ++i) t.in.tokens.push_back("t" + std::to_string(i));
  t.attn.resize(16 * 1024, 1024);
  t.scores.resize(16 * 1024, 1024);
  for (int r = 0; r < 16 * 1024; ++r)
    for (int c = 0; c < 1024; ++c) t.attn(r, c) = static_cast<float>(((r % 1024) + c) % 8) / 8.0f;
  t.scores.setZero();
  const auto img = mha::render::RenderHeatmaps(t, {});
  CHECK(static_cast<long long>(img.width) * img.height <= mha::render::kMaxPixels);
  const auto& p = img.panels[0];
  REQUIRE(p.downsample > 1);
  CHECK(p.cell == 1);
  const int k = p.downsample;
  bool said = false;
  for (const auto& n : img.notes) said = said || n.find("mean weight of") != std::string::npos;
  CHECK(said);
  // Pixel (x + 3, y + 5) is the mean of its k x k block.
  double sum = 0;
  for (int r = 5 * k; r < 6 * k; ++r)
    for (int c = 3 * k; c < 4 * k; ++c) sum += t.attn(r, c);
  CHECK(Str(Pixel(img, p.x + 3, p.y + 5)) == Str(mha::render::Colormap(static_cast<float>(sum / (k * k)))));
}

TEST_CASE("The font is found and EncodePng refuses an empty image", "[render]") {
  CHECK_FALSE(mha::render::FontPath().empty());
  CHECK_THROWS_AS(mha::render::EncodePng(mha::render::Image{}), mha::Error);
}

TEST_CASE("Weights are printed inside big cells in a readable colour, and not with values = false", "[render][png]") {
  const mha::Trace t = Run("고양이가 쥐를 잡았다", 2, 64);
  mha::render::HeatmapOptions o;
  const auto with = mha::render::RenderHeatmaps(t, o);
  o.values = false;
  const auto without = mha::render::RenderHeatmaps(t, o);
  const auto& p = with.panels[0];
  const auto& q = without.panels[0];  // the header differs by a line, so the maps may move
  REQUIRE(p.cell > 20);
  REQUIRE(q.cell == p.cell);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const auto cell = mha::render::Colormap(t.AttnHead(0)(r, c));
      const double lum = 0.2126 * cell[0] + 0.7152 * cell[1] + 0.0722 * cell[2];
      int text_px = 0, plain_px = 0;
      for (int y = p.y + r * p.cell; y < p.y + (r + 1) * p.cell - p.gap; ++y)
        for (int x = p.x + c * p.cell; x < p.x + (c + 1) * p.cell - p.gap; ++x) {
          const auto a = Pixel(with, x, y), b = Pixel(without, x - p.x + q.x, y - p.y + q.y);
          CHECK(Str(b) == Str(cell));  // no text at all without values
          if (Str(a) != Str(cell)) {
            ++text_px;
            // Text is the opposite lightness of the cell (white on dark, dark on light).
            const double l = 0.2126 * a[0] + 0.7152 * a[1] + 0.0722 * a[2];
            if (lum < 128)
              CHECK(l >= lum);
            else
              CHECK(l <= lum);
          } else {
            ++plain_px;
          }
        }
      CHECK(text_px > 20);            // digits were drawn
      CHECK(plain_px > 4 * text_px);  // and stay small inside the cell
    }
}

TEST_CASE("A hand-built trace without token labels gets position labels instead of crashing", "[render]") {
  mha::Trace t;
  t.cfg.num_heads = 2;
  t.cfg.d_model = 4;
  t.seq = t.seq_kv = 3;
  t.attn = mha::Mat::Constant(6, 3, 1.0f / 3);
  t.scores = mha::Mat::Zero(6, 3);
  const auto els = svgcheck::Parse(mha::render::RenderHeatmapsSvg(t, {}));
  const auto rows = svgcheck::Texts(els, "row-label");
  REQUIRE(rows.size() >= 3);
  CHECK(rows[0] == "#0");
  CHECK(rows[2] == "#2");
  CHECK(mha::render::RenderHeatmaps(t, {}).panels.size() == 3);
  t.attn.resize(0, 0);  // no forward pass yet
  CHECK_THROWS_AS(mha::render::RenderHeatmaps(t, {}), mha::Error);
}
