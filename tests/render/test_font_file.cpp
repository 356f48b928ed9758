// The font checker in front of stb_truetype (render/font_file): real fonts pass, and
// cut or crafted ones are refused with a reason before stb_truetype reads them.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "render/font_file.hpp"

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

TEST_CASE("The text ranges hold the characters the lesson needs, all in the BMP", "[render][font]") {
  for (char32_t c : {U'A', U'가', U'힣', U'，', U'！', U'（', U'√', U'❤', U'ᄀ'}) CHECK(mha::render::InTextRanges(c));
  CHECK_FALSE(mha::render::InTextRanges(U'\U0001F600'));  // beyond U+FFFF: a box in GUI and export alike
  CHECK_FALSE(mha::render::InTextRanges(0xFFFD));
  for (const auto& [lo, hi] : mha::render::TextRanges()) CHECK((lo <= hi && hi <= 0xFFFF));
}
