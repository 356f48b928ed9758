// NanumGothic (Hangul + Latin) for the whole UI, found on disk at startup, with fallback
// fonts merged in for symbols and emoji, and a replacement box for anything missing.
#pragma once

#include <string>
#include <vector>

struct ImFont;

namespace mha::gui {

// The size of Fonts::numbers against the UI font.
inline constexpr float kNumbersScale = 1.75f;

struct Fonts {
  ImFont* regular = nullptr;  // NanumGothic, Korean glyph range (or ImGui's default)
  ImFont* bold = nullptr;     // NanumGothicBold, Latin only (headings); = regular if absent
  ImFont* small = nullptr;    // NanumGothic at 3/4 size, Latin only (token indices, table details)
  ImFont* label = nullptr;    // NanumGothic at 4/5 size with Hangul (heatmap token labels), if asked for
  ImFont* numbers = nullptr;  // NanumGothic at kNumbersScale x size, digits only (weights in big cells)
  std::string path;           // the file regular came from ("" = ImGui's default font)
};

// The fallback fonts' bytes (render::FallbackFontPaths(), checked by
// render::ReadFontFile), read once: they do not change while the app runs.
const std::vector<std::string>& FallbackFontBytes();

// Places searched for a font file, most specific first: $MHAVIZ_ASSETS/fonts,
// assets/fonts next to the executable (and its parent dirs, for build trees),
// share/mhaviz/fonts beside an installed binary's bin/, the source tree's assets/fonts
// and the configured install prefix's share/mhaviz/fonts, then fonts-nanum's directory.
std::vector<std::string> FontSearchPath();

// The first readable, valid TrueType file named `file` on FontSearchPath(), or "".
std::string FindFont(const std::string& file);

// Clears io.Fonts and loads the UI fonts at `pixel_size`: $MHAVIZ_FONT if set (that
// file only), else NanumGothic from FontSearchPath(), for render::TextRanges(), with
// render::FallbackFontPaths() merged in for what it lacks (the exporter draws the same
// glyphs), and U+FFFD an outlined box that ImGui draws for every missing character.
// Fonts are read through render::ReadFontFile (bounded and checked). If none can be
// used, falls back to ImGui's built-in font and sets `notice`. `with_label` adds
// Fonts::label, a second copy of the text ranges (a bigger atlas, so only on demand).
Fonts LoadFonts(float pixel_size, std::string* notice, bool with_label = false);

// The last LoadFonts' atlas: its size, its glyph count and how long building it took
// (the fallback fonts add symbols to two copies of the text ranges: watch both).
struct AtlasStats {
  int width = 0, height = 0, glyphs = 0;
  double build_ms = 0;
};
AtlasStats LastAtlasStats();

// The code points of the glyphs the default font draws for `utf8` as a label, one per
// character (a character with no glyph is drawn with the U+FFFD replacement box; one
// beyond U+FFFF with its own glyph once the atlas has it, see wide_glyphs.hpp). For
// tests: a missing glyph must never be drawn as '?'.
std::vector<unsigned> DrawnCodepoints(const std::string& utf8);
// The same for text as a field holds it (stand-ins already in place), e.g. the sentence
// field's buffer.
std::vector<unsigned> FieldCodepoints(const std::string& shown);

// "" if every character of `utf8` has a glyph, else a note naming those drawn as the
// box ("U+1F600 is drawn as a box: no font here has it, or it lies beyond U+FFFF"),
// for tooltips: the learner sees which character a box stands for.
std::string BoxNote(const std::string& utf8);

}  // namespace mha::gui
