// The font checker in front of stb_truetype (render/font_file): real fonts pass, and
// cut or crafted ones are refused with a reason before stb_truetype reads them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include "render/font_file.hpp"
#include "render/text.hpp"

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const std::string kNanum = std::string(MHAVIZ_SOURCE_DIR) + "/assets/fonts/NanumGothic.ttf";

}  // namespace

TEST_CASE("CheckFont accepts the shipped font and every fallback font that is installed", "[render][font]") {
  const std::string nanum = Slurp(kNanum);
  REQUIRE(nanum.size() > 1000000);
  CHECK(mha::render::CheckFont(nanum).empty());
  for (const auto& p : mha::render::FallbackFontPaths()) {
    INFO(p);
    CHECK(mha::render::CheckFont(Slurp(p)).empty());
  }
}

TEST_CASE("CheckFont refuses a font cut anywhere, with a reason", "[render][font]") {
  const std::string nanum = Slurp(kNanum);
  for (std::size_t n : {std::size_t(0), std::size_t(4), std::size_t(12), std::size_t(300), std::size_t(2000),
                        std::size_t(100000), std::size_t(1000000), std::size_t(4000000)}) {
    INFO("cut at " << n);
    CHECK_FALSE(mha::render::CheckFont(std::string_view(nanum).substr(0, n)).empty());
  }
}

TEST_CASE("CheckFont refuses collections, CFF fonts and other files by their first bytes", "[render][font]") {
  std::string nanum = Slurp(kNanum);
  nanum.replace(0, 4, "OTTO");
  CHECK_THAT(mha::render::CheckFont(nanum), Catch::Contains("CFF"));
  nanum.replace(0, 4, "ttcf");
  CHECK_THAT(mha::render::CheckFont(nanum), Catch::Contains("collection"));
  CHECK_THAT(mha::render::CheckFont(std::string(4096, '\0')), Catch::Contains("TrueType"));
}

TEST_CASE("CheckFont refuses a glyph whose points lie above a box that tops out at the baseline", "[render][font]") {
  // stb's rasteriser asserts on an outline edge wholly above its bitmap's row 0, which
  // such a box makes the baseline: a simple glyph's own points, or a composite's
  // placed component (here glyph 4 of Noto Lycian, made a composite of glyph 0 placed
  // at 0, 0 under a box from -10 to 0).
  const std::string dir = std::string(MHAVIZ_SOURCE_DIR) + "/tests/fuzz/regressions/font/";
  for (const char* name : {"points_above_box_at_baseline", "composite_above_box_at_baseline"}) {
    INFO(name);
    CHECK_THAT(mha::render::CheckFont(Slurp(dir + name)), Catch::Contains("above the top of its bounding box"));
  }
  // The font it was made from passes.
  CHECK(mha::render::CheckFont(Slurp(std::string(MHAVIZ_SOURCE_DIR) + "/tests/fuzz/corpus/font/noto_lycian.ttf"))
            .empty());
}

TEST_CASE("The text ranges hold the characters the lesson needs, all in the BMP", "[render][font]") {
  for (char32_t c : {U'A', U'가', U'힣', U'，', U'！', U'（', U'√', U'❤', U'ᄀ'}) CHECK(mha::render::InTextRanges(c));
  CHECK_FALSE(mha::render::InTextRanges(U'\U0001F600'));  // beyond U+FFFF: a box in GUI and export alike
  CHECK_FALSE(mha::render::InTextRanges(0xFFFD));
  for (const auto& [lo, hi] : mha::render::TextRanges()) CHECK((lo <= hi && hi <= 0xFFFF));
  // Beyond U+FFFF: the emoji blocks, drawn from the fallback fonts in both.
  CHECK(mha::render::InAstralRanges(U'\U0001F600'));
  CHECK(mha::render::InAstralRanges(U'\U0001F680'));
  CHECK_FALSE(mha::render::InAstralRanges(U'\U00010300'));  // Old Italic: no font here
}

namespace {

// The coverage of `s` drawn alone at 48 px.
mha::render::Coverage Drawn(const char* s) {
  mha::render::Text text;
  return text.Render(s, {48.0f, false});
}

// Covered pixels strictly inside the replacement box's outline: an empty box has none.
int Inside(const mha::render::Coverage& c) {
  using B = mha::render::ReplacementBox;
  const int x0 = static_cast<int>(B::kLeft * 48) + 5, x1 = static_cast<int>(B::kRight * 48) - 5;
  const int y0 = c.baseline - static_cast<int>(B::kHeight * 48) + 5, y1 = c.baseline - 5;
  int n = 0;
  for (int y = std::max(y0, 0); y < std::min(y1, c.h); ++y)
    for (int x = std::max(x0, 0); x < std::min(x1, c.w); ++x) n += c.a[static_cast<std::size_t>(y) * c.w + x] > 128;
  return n;
}

}  // namespace

TEST_CASE("The export draws an emoji with Symbola's glyph, and a character no font has as an empty box",
          "[render][font]") {
  const auto box = Drawn("\xF0\x90\x8C\x80");  // U+10300, outside every range: the box
  CHECK(Inside(box) == 0);
  bool symbola = false;
  for (const auto& p : mha::render::FallbackFontPaths()) symbola |= p.find("Symbola") != std::string::npos;
  if (!symbola) return;                          // fonts-symbola is not installed: the emoji is a box too
  const auto emoji = Drawn("\xF0\x9F\x98\x80");  // U+1F600 grinning face: eyes and mouth inside the outline
  CHECK(Inside(emoji) > 20);
  CHECK(emoji.a != box.a);
}
