// Font files checked before stb_truetype sees them. stb_truetype trusts every offset
// and count in a font (its own docs: "no range checking"), so a truncated or crafted
// file makes it read past its buffer or crash. Both the exporter (render/text.cpp) and
// the GUI's atlas (gui/fonts.cpp, Dear ImGui packs glyphs with the same stb_truetype
// v1.26 from libstb) read fonts only through ReadFontFile.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mha::render {

// Fonts bigger than this are refused before they are read (NanumGothic is 4 MiB,
// the largest Noto/DejaVu/Symbola files 2-3 MiB).
inline constexpr std::size_t kMaxFontBytes = std::size_t(64) << 20;

// "" if stb_truetype can use `bytes` as font 0 without reading outside it: a plain
// TrueType (glyf) font whose table directory, and every table stb_truetype reads
// (cmap, head, hhea, hmtx, maxp, loca, glyf, kern), lies inside the file with sane
// counts; every glyph the cmap maps to exists; every glyph outline parses inside its
// own loca range; composite glyphs nest without cycles. Otherwise the reason, as a
// phrase ("its 'glyf' table ends past the end of the file").
// The GPOS table is not checked: callers never let stb read it (DisableGpos).
std::string CheckFont(std::string_view bytes);

// Reads a font file: a regular file (a directory, FIFO or device is refused before it
// is opened for reading, so nothing blocks or grows without bound), at most
// kMaxFontBytes, passing CheckFont. Throws mha::Error naming the path and the reason.
std::string ReadFontFile(const std::string& path);

// The code points the app draws from fonts (all in the Basic Multilingual Plane, which
// is all that Debian's Dear ImGui, built with 16-bit ImWchar, can hold): Latin, Greek,
// Cyrillic, Hangul, CJK and full-width punctuation, and the symbol blocks (arrows,
// maths, shapes, dingbats, the BMP emoji). The GUI's atlas and the exporter both use
// this one table, so they agree: a character outside it, or in it but in no font, is
// drawn as a replacement box (never '?', which would look like a real '?' token).
const std::vector<std::pair<char32_t, char32_t>>& TextRanges();
bool InTextRanges(char32_t cp);
// Beyond U+FFFF, the blocks drawn from the fallback fonts: the emoji and pictographs
// (U+1F000..U+1FAFF, Symbola has most) and the mathematical letters. The exporter
// draws them like the rest; the GUI, whose characters are 16-bit, gives each one a
// label uses a stand-in code point (gui/wide_glyphs.hpp), so the two agree.
const std::vector<std::pair<char32_t, char32_t>>& AstralRanges();
bool InAstralRanges(char32_t cp);
// The replacement box, in ems: its advance, its left and right edges, its height above
// the baseline; the line is max(1, round(size / 14)) pixels thick. The same in both.
struct ReplacementBox {
  static constexpr float kAdvance = 0.6f, kLeft = 0.1f, kRight = 0.5f, kHeight = 0.7f;
};

// Fallback fonts for what NanumGothic lacks, in the order they are tried: DejaVu Sans
// (symbols), Noto Sans Symbols 2, Symbola (emoji and dingbats), from Debian's
// fonts-dejavu-core, fonts-noto-core and fonts-symbola. Only the files that exist.
std::vector<std::string> FallbackFontPaths();

}  // namespace mha::render
