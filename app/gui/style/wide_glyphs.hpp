// Characters beyond U+FFFF (most emoji) in the window. Debian's Dear ImGui holds 16-bit
// characters, so it would draw every one of them as U+FFFD, the replacement box. Each
// such character a label uses that a fallback font has (Symbola for the emoji) gets a
// stand-in code point of the Private Use Area (U+E000 on), whose glyph is rasterised
// from that font into the atlas; ForDisplay rewrites a label to the stand-ins. The
// exporter draws the same characters from the same fonts (render::AstralRanges), so
// the window and the export agree.
#pragma once

#include <string>
#include <vector>

struct ImFont;

namespace mha::gui {

// `utf8` with its drawable characters beyond U+FFFF replaced by their stand-ins (as
// is if it has none). A character seen for the first time is queued for the atlas.
std::string ForDisplay(const std::string& utf8);

// The character stand-in `cp` stands for (cp itself if it is none).
unsigned StoodFor(unsigned cp);
// ForDisplay undone: what a text field showing stand-ins holds.
std::string FromDisplay(const std::string& utf8);

// Whether characters were queued since the atlas last got their glyphs: the window
// rebuilds its fonts before the next frame.
bool WideGlyphsPending();

// For LoadFonts: before the atlas is built, room for every known character's glyph in
// `font` at `px` (with the font's ascent in pixels, where the glyphs' baseline is);
// after it is built, the glyphs drawn into that room.
struct WideGlyph {
  int rect = -1;    // the atlas's custom rectangle
  int face = 0;     // which fallback font
  int glyph = 0;    // its glyph index there
  float scale = 0;  // its scale at the font's size
};
void AddWideGlyphs(ImFont* font, float px, float ascent, std::vector<WideGlyph>* out);
void PaintWideGlyphs(const std::vector<WideGlyph>& glyphs);

}  // namespace mha::gui
