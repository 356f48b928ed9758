#include "gui/style/wide_glyphs.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <imgui.h>
#include <stb/stb_truetype.h>

#include "gui/style/fonts.hpp"
#include "render/font_file.hpp"
#include "text/utf8.hpp"

namespace mha::gui {
namespace {

constexpr unsigned kFirstStandIn = 0xE000;
// Distinct characters given stand-ins; later ones stay boxes. Each costs one glyph in
// each font that draws labels, so the atlas stays small.
constexpr unsigned kMaxStandIns = 512;

// The fallback fonts (checked by render::ReadFontFile before stb reads them), parsed.
struct Faces {
  std::vector<stbtt_fontinfo> info;
};
const Faces& FallbackFaces() {
  static const Faces faces = [] {
    Faces f;
    for (const std::string& bytes : FallbackFontBytes()) {
      stbtt_fontinfo info;
      if (stbtt_InitFont(&info, reinterpret_cast<const unsigned char*>(bytes.data()), 0)) f.info.push_back(info);
    }
    return f;
  }();
  return faces;
}

struct StandIns {
  std::map<char32_t, unsigned> of;  // character -> stand-in
  std::vector<char32_t> chars;      // by stand-in - kFirstStandIn
  std::vector<int> face;            // the fallback font that has it
  bool pending = false;
};
StandIns& Table() {
  static StandIns t;
  return t;
}

// The stand-in for `cp`, or 0 if no fallback font has it (it stays a box).
unsigned StandIn(char32_t cp) {
  StandIns& t = Table();
  if (auto it = t.of.find(cp); it != t.of.end()) return it->second;
  if (!render::InAstralRanges(cp) || t.chars.size() >= kMaxStandIns) return 0;
  const Faces& faces = FallbackFaces();
  for (std::size_t k = 0; k < faces.info.size(); ++k) {
    if (stbtt_FindGlyphIndex(&faces.info[k], static_cast<int>(cp)) == 0) continue;
    const unsigned s = kFirstStandIn + static_cast<unsigned>(t.chars.size());
    t.of.emplace(cp, s);
    t.chars.push_back(cp);
    t.face.push_back(static_cast<int>(k));
    t.pending = true;
    return s;
  }
  t.of.emplace(cp, 0u);  // remembered, so it is looked up once
  return 0;
}

}  // namespace

std::string ForDisplay(const std::string& utf8) {
  // Only a 4-byte sequence (lead byte F0..F4) encodes a character beyond U+FFFF.
  if (std::none_of(utf8.begin(), utf8.end(), [](char c) { return static_cast<unsigned char>(c) >= 0xF0; })) return utf8;
  std::vector<char32_t> cps = text::DecodeUtf8(utf8);
  for (char32_t& cp : cps)
    if (cp > 0xFFFF)
      if (const unsigned s = StandIn(cp)) cp = s;
  return text::EncodeUtf8(cps);
}

unsigned StoodFor(unsigned cp) {
  const StandIns& t = Table();
  if (cp < kFirstStandIn || cp - kFirstStandIn >= t.chars.size()) return cp;
  return static_cast<unsigned>(t.chars[cp - kFirstStandIn]);
}

std::string FromDisplay(const std::string& utf8) {
  // Stand-ins are U+E000..U+E1FF, whose UTF-8 starts with the byte EE.
  if (std::none_of(utf8.begin(), utf8.end(), [](char c) { return static_cast<unsigned char>(c) == 0xEE; })) return utf8;
  std::vector<char32_t> cps = text::DecodeUtf8(utf8);
  for (char32_t& cp : cps) cp = StoodFor(static_cast<unsigned>(cp));
  return text::EncodeUtf8(cps);
}

bool WideGlyphsPending() { return Table().pending; }

void AddWideGlyphs(ImFont* font, float px, float ascent, std::vector<WideGlyph>* out) {
  StandIns& t = Table();
  t.pending = false;
  const Faces& faces = FallbackFaces();
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  for (std::size_t i = 0; i < t.chars.size(); ++i) {
    const stbtt_fontinfo& info = faces.info[static_cast<std::size_t>(t.face[i])];
    WideGlyph g;
    g.face = t.face[i];
    g.glyph = stbtt_FindGlyphIndex(&info, static_cast<int>(t.chars[i]));
    // Scaled as ImGui scales the glyphs it merges from the same fonts (the BMP symbols).
    g.scale = stbtt_ScaleForPixelHeight(&info, px);
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0, advance = 0, lsb = 0;
    stbtt_GetGlyphBitmapBox(&info, g.glyph, g.scale, g.scale, &x0, &y0, &x1, &y1);
    stbtt_GetGlyphHMetrics(&info, g.glyph, &advance, &lsb);
    const int w = std::clamp(x1 - x0, 1, 512), h = std::clamp(y1 - y0, 1, 512);
    g.rect = atlas->AddCustomRectFontGlyph(font, static_cast<ImWchar>(kFirstStandIn + i), w, h,
                                           std::round(static_cast<float>(advance) * g.scale),
                                           ImVec2(static_cast<float>(x0), ascent + static_cast<float>(y0)));
    out->push_back(g);
  }
}

void PaintWideGlyphs(const std::vector<WideGlyph>& glyphs) {
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  unsigned char* pixels = nullptr;
  int tw = 0, th = 0;
  atlas->GetTexDataAsAlpha8(&pixels, &tw, &th);
  const Faces& faces = FallbackFaces();
  for (const WideGlyph& g : glyphs) {
    const ImFontAtlasCustomRect* r = atlas->GetCustomRectByIndex(g.rect);
    if (!r || !pixels || !r->IsPacked()) continue;
    stbtt_MakeGlyphBitmap(&faces.info[static_cast<std::size_t>(g.face)],
                          pixels + static_cast<std::size_t>(r->Y) * tw + r->X, r->Width, r->Height, tw, g.scale,
                          g.scale, g.glyph);
  }
}

}  // namespace mha::gui
