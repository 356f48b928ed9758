#include "gui/style/fonts.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include <imgui.h>
#include <imgui_internal.h>  // ImTextCharFromUtf8: decode as ImGui's text drawing does
#include <stb/stb_truetype.h>

#include "gui/style/wide_glyphs.hpp"
#include "io/assets.hpp"
#include "mha/mha.hpp"
#include "render/font_file.hpp"
#include "render/text.hpp"
#include "text/i18n.hpp"
#include "text/utf8.hpp"

namespace mha::gui {
namespace {

// A checked font file (render::ReadFontFile: bounded, regular file, and every table
// stb_truetype reads inside the file), or "" with *why set.
std::string ReadFont(const std::string& path, std::string* why = nullptr) {
  try {
    return render::ReadFontFile(path);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return {};
  }
}

// A checked font that has Latin and, for the main font, Hangul.
bool HasGlyphs(const std::string& bytes, bool need_hangul) {
  if (bytes.empty()) return false;
  stbtt_fontinfo info;
  if (!stbtt_InitFont(&info, reinterpret_cast<const unsigned char*>(bytes.data()), 0)) return false;
  if (stbtt_FindGlyphIndex(&info, 'A') == 0) return false;
  return !need_hangul || stbtt_FindGlyphIndex(&info, 0xAC00) != 0;  // 가
}

// The font's ascent in pixels at ImGui's `size` (ImGui scales to ascent - descent).
float AscentPixels(const std::string& bytes, float size) {
  stbtt_fontinfo info;
  if (bytes.empty() || !stbtt_InitFont(&info, reinterpret_cast<const unsigned char*>(bytes.data()), 0))
    return std::round(size * 0.8f);
  int ascent = 0, descent = 0, gap = 0;
  stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
  return std::round(static_cast<float>(ascent) * stbtt_ScaleForPixelHeight(&info, size));
}

// Loads a checked font from memory (ImGui takes ownership of the copy); with `merge`
// its glyphs fill the gaps of the font added before it.
ImFont* AddFont(const std::string& bytes, float size, const ImWchar* ranges, bool merge = false) {
  ImFontConfig cfg;
  // The Korean range is ~11,000 glyphs: horizontal oversampling would triple the
  // atlas for no visible gain at UI sizes.
  cfg.OversampleH = 1;
  cfg.OversampleV = 1;
  cfg.PixelSnapH = true;
  cfg.MergeMode = merge;
  void* copy = IM_ALLOC(bytes.size());
  std::memcpy(copy, bytes.data(), bytes.size());
  return ImGui::GetIO().Fonts->AddFontFromMemoryTTF(copy, static_cast<int>(bytes.size()), size, &cfg, ranges);
}

// render::TextRanges() as ImGui glyph ranges: the same characters as the exporter's.
const ImWchar* TextRanges() {
  static std::vector<ImWchar> ranges;
  if (ranges.empty()) {
    for (const auto& [lo, hi] : render::TextRanges()) {
      ranges.push_back(static_cast<ImWchar>(lo));
      ranges.push_back(static_cast<ImWchar>(hi));
    }
    // And every character the translations use (a notebook's Wᵀ, a piece's ▁): the
    // exporter's ranges need not hold them, the window draws them.
    for (const char32_t c : i18n::CatalogCharacters()) {
      ranges.push_back(static_cast<ImWchar>(c));
      ranges.push_back(static_cast<ImWchar>(c));
    }
    ranges.push_back(0);
  }
  return ranges.data();
}

// `base` (pairs, 0-terminated) plus every character the translations use: the bold
// headings and the small tab buttons load only Latin, and would draw a translated label
// as boxes. A few hundred glyphs, not the ~11,000 of all Hangul.
std::vector<ImWchar> WithCatalogCharacters(std::initializer_list<ImWchar> base) {
  std::vector<ImWchar> out(base.begin(), base.end());
  for (const char32_t c : i18n::CatalogCharacters()) {
    out.push_back(static_cast<ImWchar>(c));
    out.push_back(static_cast<ImWchar>(c));
  }
  out.push_back(0);
  return out;
}

// Adds the main font with `ranges`, then merges the fallbacks into the same ranges.
ImFont* AddWithFallbacks(const std::string& bytes, float size, const ImWchar* ranges) {
  ImFont* f = AddFont(bytes, size, ranges);
  for (const auto& fb : FallbackFontBytes()) AddFont(fb, size, ranges, true);
  return f;
}

// U+FFFD as an outlined box, drawn into the atlas after it is built. ImGui draws every
// character it has no glyph for with U+FFFD (and every character beyond U+FFFF, which
// its 16-bit ImWchar cannot hold), so nothing missing ever shows as '?'.
struct BoxGlyph {
  int rect = -1;
  int thickness = 1;
};
BoxGlyph AddBoxGlyph(ImFont* font, float size, float ascent) {
  using B = render::ReplacementBox;
  BoxGlyph b;
  const int w = std::max(3, static_cast<int>(std::lround((B::kRight - B::kLeft) * size)));
  const int h = std::max(3, static_cast<int>(std::lround(B::kHeight * size)));
  b.thickness = std::max(1, static_cast<int>(std::lround(size / 14)));
  const ImVec2 offset(std::round(B::kLeft * size), ascent - static_cast<float>(h));
  b.rect = ImGui::GetIO().Fonts->AddCustomRectFontGlyph(font, 0xFFFD, w, h, std::round(B::kAdvance * size), offset);
  return b;
}
void PaintBoxGlyphs(const std::vector<BoxGlyph>& boxes) {
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  unsigned char* pixels = nullptr;
  int tw = 0, th = 0;
  atlas->GetTexDataAsAlpha8(&pixels, &tw, &th);
  for (const BoxGlyph& b : boxes) {
    const ImFontAtlasCustomRect* r = atlas->GetCustomRectByIndex(b.rect);
    if (!r || !pixels) continue;
    for (int y = 0; y < r->Height; ++y)
      for (int x = 0; x < r->Width; ++x) {
        const bool edge =
            y < b.thickness || y >= r->Height - b.thickness || x < b.thickness || x >= r->Width - b.thickness;
        pixels[static_cast<std::size_t>(r->Y + y) * tw + r->X + x] = edge ? 255 : 0;
      }
  }
}

}  // namespace

const std::vector<std::string>& FallbackFontBytes() {
  static const std::vector<std::string> bytes = [] {
    std::vector<std::string> out;
    for (const auto& p : render::FallbackFontPaths())
      if (std::string b = ReadFont(p); HasGlyphs(b, false)) out.push_back(std::move(b));
    return out;
  }();
  return bytes;
}

std::vector<std::string> FontSearchPath() {
  std::vector<std::string> dirs = io::AssetDirs("fonts");
  dirs.push_back("/usr/share/fonts/truetype/nanum");
  return dirs;
}

std::string FindFont(const std::string& file) {
  for (const auto& d : FontSearchPath()) {
    std::error_code ec;
    const auto norm = std::filesystem::weakly_canonical(d + "/" + file, ec);
    const std::string p = ec ? d + "/" + file : norm.string();
    if (access(p.c_str(), R_OK) != 0) continue;
    if (HasGlyphs(ReadFont(p), file.find("Bold") == std::string::npos)) return p;
  }
  return {};
}

namespace {
AtlasStats last_stats;
}  // namespace

AtlasStats LastAtlasStats() { return last_stats; }

Fonts LoadFonts(float pixel_size, std::string* notice, bool with_label) {
  const auto t0 = std::chrono::steady_clock::now();
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  // The atlas as tall as its glyphs, not the next power of two (GL 3.3 takes any size).
  io.Fonts->Flags |= ImFontAtlasFlags_NoPowerOfTwoHeight;
  Fonts f;
  if (notice) notice->clear();
  // $MHAVIZ_FONT names exactly one font (as for `mhaviz export`): no search.
  const char* forced = std::getenv("MHAVIZ_FONT");
  std::string regular, why;
  if (forced && *forced) {
    if (HasGlyphs(ReadFont(forced, &why), true)) regular = forced;
  } else {
    regular = FindFont("NanumGothic.ttf");
  }
  const std::string bytes = regular.empty() ? std::string() : ReadFont(regular);
  if (!bytes.empty()) {
    f.regular = AddWithFallbacks(bytes, pixel_size, TextRanges());
    f.path = regular;
  }
  if (!f.regular) {
    ImFontConfig cfg;
    cfg.SizePixels = pixel_size;
    f.regular = io.Fonts->AddFontDefault(&cfg);
    if (notice)
      *notice = forced && *forced
                    ? "MHAVIZ_FONT: " + (why.empty() ? std::string("the font has no Hangul") : why) +
                          " Using the built-in font, so Korean text shows as boxes."
                    : "NanumGothic.ttf was not found or could not be read (looked in assets/fonts and "
                      "/usr/share/fonts/truetype/nanum), so Korean text shows as boxes. Install fonts-nanum.";
  }
  std::vector<BoxGlyph> boxes;
  std::vector<WideGlyph> wide;  // characters beyond U+FFFF that labels use (wide_glyphs.hpp)
  const float ascent = AscentPixels(bytes, pixel_size);
  boxes.push_back(AddBoxGlyph(f.regular, pixel_size, ascent));
  AddWideGlyphs(f.regular, pixel_size, ascent, &wide);
  const std::string bold = f.path.empty() || (forced && *forced) ? std::string() : FindFont("NanumGothicBold.ttf");
  if (!bold.empty()) {
    static const std::vector<ImWchar> latin =
        WithCatalogCharacters({0x0020, 0x00FF, 0x2010, 0x2044, 0x2190, 0x21FF, 0x2200, 0x22FF});
    const std::string bold_bytes = ReadFont(bold);
    f.bold = AddWithFallbacks(bold_bytes, pixel_size, latin.data());  // e.g. ᵀ, ▁: not in Nanum
    boxes.push_back(AddBoxGlyph(f.bold, pixel_size, AscentPixels(bold_bytes, pixel_size)));
  }
  if (!f.bold) f.bold = f.regular;
  // Its own size in the atlas: glyphs are sampled unfiltered, so scaling a bigger
  // font down would look ragged.
  const float small_px = std::round(pixel_size * 0.75f);
  if (!f.path.empty()) {
    // Latin, the ellipsis of shortened table cells, and the translations' characters.
    static const std::vector<ImWchar> latin = WithCatalogCharacters({0x0020, 0x00FF, 0x2026, 0x2026});
    f.small = AddWithFallbacks(bytes, small_px, latin.data());
  } else {
    ImFontConfig cfg;
    cfg.SizePixels = small_px;
    f.small = io.Fonts->AddFontDefault(&cfg);
  }
  boxes.push_back(AddBoxGlyph(f.small, small_px, AscentPixels(bytes, small_px)));
  // Heatmap labels a size down, for grids too dense for the full size: their own
  // glyphs, since a bigger font drawn smaller looks ragged (nearest sampling).
  if (with_label && !f.path.empty()) {
    const float label_px = std::round(pixel_size * 0.8f);
    f.label = AddWithFallbacks(bytes, label_px, TextRanges());
    boxes.push_back(AddBoxGlyph(f.label, label_px, AscentPixels(bytes, label_px)));
    AddWideGlyphs(f.label, label_px, AscentPixels(bytes, label_px), &wide);
  }
  // Weights in big heatmap cells (one map on a projector): digits at their own bigger
  // size, for the same reason.
  if (!f.path.empty()) {
    static const ImWchar digits[] = {0x0020, 0x0039, 0x2026, 0x2026, 0};  // space .. 9, and "…"
    f.numbers = AddFont(bytes, std::round(pixel_size * kNumbersScale), digits);
  }
  io.FontDefault = f.regular;
  io.Fonts->Build();
  PaintBoxGlyphs(boxes);
  PaintWideGlyphs(wide);
  last_stats.width = io.Fonts->TexWidth;
  last_stats.height = io.Fonts->TexHeight;
  last_stats.glyphs = 0;
  for (const ImFont* font : io.Fonts->Fonts) last_stats.glyphs += font->Glyphs.Size;
  last_stats.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

std::vector<unsigned> DrawnCodepoints(const std::string& utf8) { return FieldCodepoints(ForDisplay(utf8)); }

std::vector<unsigned> FieldCodepoints(const std::string& shown) {
  std::vector<unsigned> out;
  ImFont* font = ImGui::GetIO().FontDefault ? ImGui::GetIO().FontDefault : ImGui::GetFont();
  const char* p = shown.c_str();
  const char* end = p + shown.size();
  while (p < end) {
    unsigned int c = 0;
    const int n = ImTextCharFromUtf8(&c, p, end);
    if (n <= 0) break;
    p += n;
    const ImFontGlyph* g = font ? font->FindGlyph(static_cast<ImWchar>(c)) : nullptr;
    out.push_back(g ? StoodFor(g->Codepoint) : 0u);
  }
  return out;
}

std::string BoxNote(const std::string& utf8) {
  std::string names;
  int boxed = 0;
  // Decoded strictly (the exporter's decoder), since ImGui's own maps U+1F600 to U+FFFD.
  for (char32_t cp : text::DecodeUtf8(utf8)) {
    const std::string one = text::EncodeUtf8({cp});
    const std::vector<unsigned> drawn = DrawnCodepoints(one);
    if (drawn.empty() || drawn[0] != 0xFFFD || boxed == 8) continue;
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(cp));
    names += (boxed++ ? ", " : "") + std::string(code);
  }
  if (boxed == 0) return {};
  std::string note = names + (boxed == 1 ? " is" : " are") +
                     " drawn as a box: no installed font has it (emoji come from fonts-symbola).";
  // The text field holds 16-bit characters: an emoji typed or pasted there, like bytes
  // that are not UTF-8, arrives as U+FFFD, the replacement character.
  if (names.find("U+FFFD") != std::string::npos)
    note +=
        " U+FFFD stands for a character that was replaced: bytes that are not UTF-8, or a character "
        "beyond U+FFFF once it passed through the text field.";
  return note;
}

}  // namespace mha::gui
