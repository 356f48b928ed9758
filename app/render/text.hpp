// Text for the CPU renderer: NanumGothic through stb_truetype, measured and drawn
// onto an RGBA canvas. Internal to mha_render.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "render/render.hpp"
#include "text/utf8.hpp"

struct stbtt_fontinfo;

namespace mha::render {

// UTF-8 to code points and back (text/utf8.hpp).
using text::DecodeUtf8;
using text::EncodeUtf8;

// One loaded font file. The bytes live as long as the process (loaded once).
struct Face {
  std::string path;
  std::vector<unsigned char> data;
  std::unique_ptr<stbtt_fontinfo> info;
  int ascent = 0, descent = 0, line_gap = 0, units_per_em = 1000;
};

struct Fonts {
  Face regular;
  Face bold;  // NanumGothicBold if found, else a copy of regular's path
  bool has_bold = false;
};

// The fallback fonts (FallbackFontPaths() that load), for what the regular face lacks;
// loaded on first use, since most labels never need them.
const std::vector<Face>& FallbackFaces();

// The process-wide fonts, loaded on first use. Throws mha::Error (every time it is
// called) if no font could be read, with the list of places searched.
const Fonts& GetFonts();

// An 8-bit coverage mask (text rendered off-canvas, e.g. for rotated labels).
struct Coverage {
  int w = 0, h = 0;
  std::vector<std::uint8_t> a;
  int baseline = 0;  // y of the baseline inside the mask
};

// Text style: size is the em size in pixels (like CSS font-size).
struct Style {
  float px = 12;
  bool bold = false;
};

// Measures and rasterises text; caches glyph bitmaps. Not thread-safe: use one per
// render call (the fonts themselves are shared and read-only).
class Text {
 public:
  Text();
  ~Text();
  float Width(std::string_view s, Style st);
  float Ascent(Style st) const;   // > 0, above the baseline
  float Descent(Style st) const;  // > 0, below the baseline
  // The longest prefix of s that fits in max_w with "…" appended (s itself if it fits).
  std::string Ellipsize(std::string_view s, Style st, float max_w);
  // Draws s with its left end at x and its baseline at y.
  void Draw(Image& img, std::string_view s, float x, float y, Style st, Rgb colour);
  Coverage Render(std::string_view s, Style st);

 private:
  struct Glyph {
    int w = 0, h = 0, xoff = 0, yoff = 0;
    std::vector<std::uint8_t> bitmap;
  };
  struct Placed {
    const Face* face;
    int glyph;  // 0: missing (drawn as a box)
    float x;    // pen position relative to the start
    float advance;
  };
  std::vector<Placed> Layout(std::string_view s, Style st, float* width);
  const Glyph& GetGlyph(const Face& f, int glyph, float px, int subpixel);
  template <class Plot>
  void Raster(std::string_view s, float x, float y, Style st, Plot plot);

  const Fonts& fonts_;
  std::map<std::tuple<const Face*, int, int, int>, Glyph> cache_;
};

// Blends `colour` with coverage a (0..255) into pixel (x, y) if inside the image.
inline void BlendPixel(Image& img, int x, int y, Rgb c, int a) {
  if (a <= 0 || x < 0 || y < 0 || x >= img.width || y >= img.height) return;
  std::uint8_t* p = &img.rgba[(static_cast<std::size_t>(y) * img.width + x) * 4];
  for (int k = 0; k < 3; ++k) p[k] = static_cast<std::uint8_t>((c[k] * a + p[k] * (255 - a) + 127) / 255);
}

void FillRect(Image& img, int x, int y, int w, int h, Rgb c);
// Draws a coverage mask rotated by `degrees` counter-clockwise around its point
// (ax, ay) (mask coordinates), which lands on canvas point (cx, cy).
void BlitRotated(Image& img, const Coverage& m, float ax, float ay, float cx, float cy, float degrees, Rgb c);

// Whether any of the labels has Hangul or CJK (U+1100 and up: 3- and 4-byte UTF-8),
// which read only upright: such keys go on staggered lines, never on their side.
bool ReadsOnlyUpright(const std::vector<std::string>& labels);

}  // namespace mha::render
