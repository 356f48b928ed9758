#include "render/text.hpp"

#include "render/font_file.hpp"
#include "io/assets.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#include <stb_truetype.h>  // the implementation is in libstb (do not define STB_TRUETYPE_IMPLEMENTATION)

namespace mha::render {

// ---------------------------------------------------------------------------------
// Font lookup

namespace {

// Directories that may hold NanumGothic.ttf, most specific first.
std::vector<std::string> FontDirs() {
  std::vector<std::string> dirs = io::AssetDirs("fonts");
  dirs.push_back("/usr/share/fonts/truetype/nanum");  // Debian/Ubuntu fonts-nanum
  dirs.push_back("/usr/share/fonts/nanum");           // Fedora/Arch naver-nanum fonts
  dirs.push_back("/usr/share/fonts/naver-nanum");
  return dirs;
}

// Loads a font through ReadFontFile (bounded, checked); *why gets the reason if not.
bool LoadFace(const std::string& path, Face& f, std::string* why = nullptr) {
  std::string bytes;
  try {
    bytes = ReadFontFile(path);
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
  auto info = std::make_unique<stbtt_fontinfo>();
  f.data.assign(bytes.begin(), bytes.end());
  if (!stbtt_InitFont(info.get(), f.data.data(), 0)) {
    if (why) *why = "The font '" + path + "' cannot be used: stb_truetype refused it.";
    f.data.clear();
    return false;
  }
  // CheckFont leaves GPOS unchecked, so kerning comes from 'kern' only.
  info->gpos = 0;
  f.path = path;
  f.info = std::move(info);
  stbtt_GetFontVMetrics(f.info.get(), &f.ascent, &f.descent, &f.line_gap);
  const float em_scale = stbtt_ScaleForMappingEmToPixels(f.info.get(), 1.0f);
  f.units_per_em = em_scale > 0 ? static_cast<int>(std::lround(1.0f / em_scale)) : 1000;
  return true;
}

struct FontState {
  Fonts fonts;
  std::string error;
};

const FontState& State() {
  static const FontState state = [] {
    FontState s;
    std::vector<std::string> tried;
    std::string why;
    for (const std::string& path : FontSearchPaths()) {
      tried.push_back(path);
      if (!LoadFace(path, s.fonts.regular, &why)) continue;
      // Bold for titles: next to the regular face first, then the usual places; without
      // it titles are set in the regular face.
      const auto slash = path.find_last_of('/');
      std::vector<std::string> bold_dirs{slash == std::string::npos ? "." : path.substr(0, slash)};
      const char* chosen = std::getenv("MHAVIZ_FONT");
      if (!chosen || !*chosen)  // a font the user picked is not mixed with Nanum bold
        for (const auto& d : FontDirs()) bold_dirs.push_back(d);
      for (const auto& d : bold_dirs)
        if ((s.fonts.has_bold = LoadFace(d + "/NanumGothicBold.ttf", s.fonts.bold))) break;
      return s;
    }
    std::ostringstream e;
    if (std::getenv("MHAVIZ_FONT") && *std::getenv("MHAVIZ_FONT")) {
      s.error = "No font to draw the labels with (MHAVIZ_FONT). " + why +
                "\nUnset MHAVIZ_FONT to use NanumGothic (Debian: apt-get install fonts-nanum), or point it at a "
                "TrueType (.ttf) font.";
      return s;
    } else
      e << "No font to draw the labels with: NanumGothic.ttf (Latin + Korean) was not found or could not be read. "
           "Looked in:";
    for (const auto& t : tried) e << "\n  " << t;
    e << "\nInstall it (Debian/Ubuntu: apt-get install fonts-nanum), put NanumGothic.ttf in assets/fonts/ next "
         "to the mhaviz binary, or set MHAVIZ_FONT=/path/to/a/font.ttf.";
    s.error = e.str();
    return s;
  }();
  return state;
}

}  // namespace

std::vector<std::string> FontSearchPaths() {
  // An explicit choice is the only candidate: falling back would hide a typo.
  if (const char* env = std::getenv("MHAVIZ_FONT"); env && *env) return {env};
  std::vector<std::string> paths;
  for (const auto& d : FontDirs()) paths.push_back(d + "/NanumGothic.ttf");
  return paths;
}

const Fonts& GetFonts() {
  const FontState& s = State();
  if (!s.error.empty()) throw Error(s.error);
  return s.fonts;
}

std::string FontPath() { return GetFonts().regular.path; }

const std::vector<Face>& FallbackFaces() {
  static const std::vector<Face> faces = [] {
    std::vector<Face> out;
    for (const auto& p : FallbackFontPaths()) {
      Face f;
      if (LoadFace(p, f)) out.push_back(std::move(f));
    }
    return out;
  }();
  return faces;
}

// ---------------------------------------------------------------------------------
// Text

Text::Text() : fonts_(GetFonts()) {}
Text::~Text() = default;

namespace {
float EmScale(const Face& f, float px) { return px / static_cast<float>(f.units_per_em); }
constexpr int kSubpixel = 4;  // horizontal glyph positions are quantised to 1/4 px
}  // namespace

float Text::Ascent(Style st) const {
  const Face& f = st.bold && fonts_.has_bold ? fonts_.bold : fonts_.regular;
  return f.ascent * EmScale(f, st.px);
}
float Text::Descent(Style st) const {
  const Face& f = st.bold && fonts_.has_bold ? fonts_.bold : fonts_.regular;
  return -f.descent * EmScale(f, st.px);
}

std::vector<Text::Placed> Text::Layout(std::string_view s, Style st, float* width) {
  const Face& main = st.bold && fonts_.has_bold ? fonts_.bold : fonts_.regular;
  std::vector<Placed> out;
  float pen = 0;
  const Face* prev_face = nullptr;
  int prev_glyph = 0;
  for (char32_t cp : DecodeUtf8(s)) {
    if (cp < 0x20 || cp == 0x7F) cp = 0xFFFD;  // control characters have no glyph
    if (cp == 0x2212) cp = '-';                // NanumGothic has no U+2212 MINUS SIGN
    // Outside TextRanges and AstralRanges (and U+FFFD itself) everything is a box, as
    // in the GUI.
    const Face* face = &main;
    int g = 0;
    if (InTextRanges(cp) || InAstralRanges(cp)) {
      g = stbtt_FindGlyphIndex(face->info.get(), static_cast<int>(cp));
      if (g == 0 && face != &fonts_.regular) {
        face = &fonts_.regular;
        g = stbtt_FindGlyphIndex(face->info.get(), static_cast<int>(cp));
      }
      if (g == 0) {
        const std::vector<Face>& fallback = FallbackFaces();
        for (std::size_t k = 0; g == 0 && k < fallback.size(); ++k) {
          face = &fallback[k];
          g = stbtt_FindGlyphIndex(face->info.get(), static_cast<int>(cp));
        }
      }
      if (g == 0) face = &main;
    }
    const float sc = EmScale(*face, st.px);
    float adv;
    if (g == 0) {
      adv = ReplacementBox::kAdvance * st.px;  // drawn as an empty box ("tofu"), honest about a missing glyph
    } else {
      int aw = 0, lsb = 0;
      stbtt_GetGlyphHMetrics(face->info.get(), g, &aw, &lsb);
      adv = aw * sc;
      if (prev_face == face && prev_glyph != 0) pen += stbtt_GetGlyphKernAdvance(face->info.get(), prev_glyph, g) * sc;
    }
    out.push_back({face, g, pen, adv});
    pen += adv;
    prev_face = face;
    prev_glyph = g;
  }
  if (width) *width = pen;
  return out;
}

float Text::Width(std::string_view s, Style st) {
  float w = 0;
  Layout(s, st, &w);
  return w;
}

std::string Text::Ellipsize(std::string_view s, Style st, float max_w) {
  float w = 0;
  const auto placed = Layout(s, st, &w);
  if (w <= max_w) return std::string(s);
  const float ell = Width("\u2026", st);
  auto cps = DecodeUtf8(s);
  std::size_t n = placed.size();
  while (n > 0 && placed[n - 1].x + placed[n - 1].advance + ell > max_w) --n;
  while (n > 0 && (cps[n - 1] == ' ')) --n;
  cps.resize(n);
  cps.push_back(0x2026);
  return EncodeUtf8(cps);
}

const Text::Glyph& Text::GetGlyph(const Face& f, int glyph, float px, int subpixel) {
  const auto key = std::make_tuple(&f, glyph, static_cast<int>(std::lround(px * 16)), subpixel);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  Glyph g;
  const float sc = EmScale(f, px);
  const float shift = static_cast<float>(subpixel) / kSubpixel;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  stbtt_GetGlyphBitmapBoxSubpixel(f.info.get(), glyph, sc, sc, shift, 0, &x0, &y0, &x1, &y1);
  g.w = std::max(0, x1 - x0);
  g.h = std::max(0, y1 - y0);
  g.xoff = x0;
  g.yoff = y0;
  if (g.w > 0 && g.h > 0 && g.w < 4096 && g.h < 4096) {
    g.bitmap.assign(static_cast<std::size_t>(g.w) * g.h, 0);
    stbtt_MakeGlyphBitmapSubpixel(f.info.get(), g.bitmap.data(), g.w, g.h, g.w, sc, sc, shift, 0, glyph);
  } else {
    g.w = g.h = 0;
  }
  return cache_.emplace(key, std::move(g)).first->second;
}

template <class Plot>
void Text::Raster(std::string_view s, float x, float y, Style st, Plot plot) {
  const int base = static_cast<int>(std::lround(y));
  for (const Placed& p : Layout(s, st, nullptr)) {
    const float pen = x + p.x;
    if (p.glyph == 0) {
      // Missing glyph: a thin box the height of a capital letter.
      const int t = std::max(1, static_cast<int>(std::lround(st.px / 14)));
      const int bx0 = static_cast<int>(std::lround(pen + ReplacementBox::kLeft * st.px));
      const int bx1 = static_cast<int>(std::lround(pen + ReplacementBox::kRight * st.px));
      const int by0 = base - static_cast<int>(std::lround(ReplacementBox::kHeight * st.px));
      for (int yy = by0; yy < base; ++yy)
        for (int xx = bx0; xx < bx1; ++xx)
          if (yy < by0 + t || yy >= base - t || xx < bx0 + t || xx >= bx1 - t) plot(xx, yy, 255);
      continue;
    }
    const int ix = static_cast<int>(std::floor(pen));
    const int sub = std::min(kSubpixel - 1, static_cast<int>((pen - ix) * kSubpixel));
    const Glyph& g = GetGlyph(*p.face, p.glyph, st.px, sub);
    for (int gy = 0; gy < g.h; ++gy)
      for (int gx = 0; gx < g.w; ++gx) {
        const int a = g.bitmap[static_cast<std::size_t>(gy) * g.w + gx];
        if (a) plot(ix + g.xoff + gx, base + g.yoff + gy, a);
      }
  }
}

void Text::Draw(Image& img, std::string_view s, float x, float y, Style st, Rgb colour) {
  Raster(s, x, y, st, [&](int px, int py, int a) { BlendPixel(img, px, py, colour, a); });
}

Coverage Text::Render(std::string_view s, Style st) {
  Coverage m;
  const float w = Width(s, st);
  m.baseline = static_cast<int>(std::ceil(Ascent(st))) + 1;
  m.w = static_cast<int>(std::ceil(w)) + 2;
  m.h = m.baseline + static_cast<int>(std::ceil(Descent(st))) + 1;
  m.a.assign(static_cast<std::size_t>(m.w) * m.h, 0);
  Raster(s, 1.0f, static_cast<float>(m.baseline), st, [&](int px, int py, int a) {
    if (px < 0 || py < 0 || px >= m.w || py >= m.h) return;
    std::uint8_t& d = m.a[static_cast<std::size_t>(py) * m.w + px];
    d = static_cast<std::uint8_t>(std::max<int>(d, a));
  });
  return m;
}

void FillRect(Image& img, int x, int y, int w, int h, Rgb c) {
  const int x0 = std::max(0, x), y0 = std::max(0, y);
  const int x1 = std::min(img.width, x + w), y1 = std::min(img.height, y + h);
  for (int yy = y0; yy < y1; ++yy) {
    std::uint8_t* p = &img.rgba[(static_cast<std::size_t>(yy) * img.width + x0) * 4];
    for (int xx = x0; xx < x1; ++xx, p += 4) {
      p[0] = c[0];
      p[1] = c[1];
      p[2] = c[2];
      p[3] = 255;
    }
  }
}

void BlitRotated(Image& img, const Coverage& m, float ax, float ay, float cx, float cy, float degrees, Rgb c) {
  if (m.w == 0 || m.h == 0) return;
  const double th = degrees * 3.14159265358979323846 / 180.0;
  double cs = std::cos(th), sn = std::sin(th);
  // Exact right angles keep the glyphs' pixels exact (no resampling blur).
  if (std::fabs(cs) < 1e-9) cs = 0;
  if (std::fabs(sn) < 1e-9) sn = 0;
  // Canvas offset of mask point (u, v) relative to the anchor (y grows downwards):
  //   dx = u cos + v sin,  dy = -u sin + v cos
  double minx = 1e30, maxx = -1e30, miny = 1e30, maxy = -1e30;
  for (int k = 0; k < 4; ++k) {
    const double u = (k & 1 ? m.w : 0) - ax, v = (k & 2 ? m.h : 0) - ay;
    const double dx = u * cs + v * sn, dy = -u * sn + v * cs;
    minx = std::min(minx, dx);
    maxx = std::max(maxx, dx);
    miny = std::min(miny, dy);
    maxy = std::max(maxy, dy);
  }
  const int x0 = static_cast<int>(std::floor(cx + minx)) - 1, x1 = static_cast<int>(std::ceil(cx + maxx)) + 1;
  const int y0 = static_cast<int>(std::floor(cy + miny)) - 1, y1 = static_cast<int>(std::ceil(cy + maxy)) + 1;
  auto at = [&](int u, int v) -> double {
    if (u < 0 || v < 0 || u >= m.w || v >= m.h) return 0;
    return m.a[static_cast<std::size_t>(v) * m.w + u];
  };
  for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(img.width, x1); ++x) {
      // Sample at the pixel centre; inverse rotation back into the mask.
      const double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
      const double u = dx * cs - dy * sn + ax - 0.5, v = dx * sn + dy * cs + ay - 0.5;
      const int u0 = static_cast<int>(std::floor(u)), v0 = static_cast<int>(std::floor(v));
      const double fu = u - u0, fv = v - v0;
      const double a = at(u0, v0) * (1 - fu) * (1 - fv) + at(u0 + 1, v0) * fu * (1 - fv) +
                       at(u0, v0 + 1) * (1 - fu) * fv + at(u0 + 1, v0 + 1) * fu * fv;
      BlendPixel(img, x, y, c, static_cast<int>(std::lround(a)));
    }
}

bool ReadsOnlyUpright(const std::vector<std::string>& labels) {
  // Jamo, CJK radicals to Yi, Hangul syllables, compatibility ideographs, full-width
  // forms and the supplementary ideographs; "…" and other punctuation turn like Latin.
  auto upright = [](char32_t c) {
    return (c >= 0x1100 && c <= 0x11FF) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xA960 && c <= 0xA97F) ||
           (c >= 0xAC00 && c <= 0xD7FF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF00 && c <= 0xFFEF) || c >= 0x20000;
  };
  for (const auto& l : labels)
    for (char32_t c : DecodeUtf8(l))
      if (upright(c)) return true;
  return false;
}

}  // namespace mha::render
