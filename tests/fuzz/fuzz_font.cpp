// libFuzzer target: the font checker (mha::render::CheckFont) in front of stb_truetype.
// Every font the checker accepts goes through an instrumented copy of the same
// stb_truetype v1.26 that the exporter and Dear ImGui's atlas use, doing what they do
// (metrics, cmap look-ups, outlines, bitmaps, kerning): a read past the font's buffer
// (ASan), an stb assert, or a glyph index the cmap invents, is a hole in the checker.
// Seeds (corpus/font): small Noto fonts (SIL OFL, from Debian's fonts-noto-core) and
// cut ones.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "render/font_file.hpp"

// A private, instrumented stb_truetype: static, so it cannot clash with libstb's.
#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#define STBTT_assert(x) FUZZ_CHECK(x, "stb_truetype assert")
#include <stb/stb_truetype.h>

namespace {

// The characters the app asks fonts for: ASCII, Hangul, full-width forms, symbols,
// an emoji, and U+FFFD; plus a few taken from the input itself.
std::vector<int> Codepoints(const std::uint8_t* data, std::size_t size) {
  std::vector<int> cps;
  for (int c = 0x20; c < 0x7F; ++c) cps.push_back(c);
  for (int c : {0xAC00, 0xB098, 0x3131, 0x1100, 0xFF01, 0xFF0C, 0x2026, 0x221A, 0x2764, 0x2702, 0x1F600, 0xFFFD,
                0x10280, 0x1680})
    cps.push_back(c);
  for (std::size_t i = 0; i + 3 < size && cps.size() < 160; i += 61)
    cps.push_back(((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]) % 0x110000);
  return cps;
}

void Exercise(const stbtt_fontinfo& info, const std::uint8_t* data, std::size_t size) {
  int ascent = 0, descent = 0, gap = 0;
  stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
  for (float px : {9.0f, 17.0f, 34.0f}) {
    // ImGui's scale (pixel height = ascent - descent) and the exporter's (em size).
    for (float scale : {stbtt_ScaleForPixelHeight(&info, px), stbtt_ScaleForMappingEmToPixels(&info, px)}) {
      FUZZ_CHECK(scale > 0 && scale < 1e6f, "scale %g", static_cast<double>(scale));
      (void)scale;
    }
  }
  const float scale = stbtt_ScaleForPixelHeight(&info, 17.0f);
  int prev = 0;
  for (int cp : Codepoints(data, size)) {
    const int g = stbtt_FindGlyphIndex(&info, cp);
    FUZZ_CHECK(g >= 0 && g < info.numGlyphs, "cmap gives glyph %d of %d", g, info.numGlyphs);
    int advance = 0, lsb = 0;
    stbtt_GetGlyphHMetrics(&info, g, &advance, &lsb);
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    stbtt_GetGlyphBitmapBoxSubpixel(&info, g, scale, scale, 0.25f, 0, &x0, &y0, &x1, &y1);
    const int w = x1 - x0, h = y1 - y0;
    FUZZ_CHECK(w >= 0 && h >= 0 && w <= 2048 && h <= 2048, "glyph %d box %dx%d at 17 px", g, w, h);
    if (w > 0 && h > 0) {
      std::vector<unsigned char> bitmap(static_cast<std::size_t>(w) * h);
      stbtt_MakeGlyphBitmapSubpixel(&info, bitmap.data(), w, h, w, scale, scale, 0.25f, 0, g);
    }
    (void)stbtt_GetGlyphKernAdvance(&info, prev, g);
    prev = g;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string why = mha::render::CheckFont(bytes);
  if (!why.empty()) return 0;
  // An exactly sized heap copy, so ASan sees any read past the end.
  std::vector<unsigned char> buf(data, data + size);
  stbtt_fontinfo info;
  if (!stbtt_InitFont(&info, buf.data(), 0)) return 0;
  info.gpos = 0;  // as the exporter does: GPOS is not checked, so never read
  Exercise(info, data, size);
  // Every outline (composites included), as ImGui's atlas packs whole ranges.
  for (int g = 0; g < info.numGlyphs && g < 512; ++g) {
    stbtt_vertex* v = nullptr;
    const int n = stbtt_GetGlyphShape(&info, g, &v);
    FUZZ_CHECK(n >= 0 && n <= (1 << 18), "glyph %d has %d vertices", g, n);
    stbtt_FreeShape(&info, v);
  }
  return 0;
}
