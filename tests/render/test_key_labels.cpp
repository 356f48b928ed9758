// Key labels in the exports read the way the window's heatmaps do (docs/app.md):
// Hangul keys stay horizontal, on two staggered lines where a cell is too narrow,
// and are never turned on their side; Latin keys still turn where they do not fit.
#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <string>

#include "mha/mha.hpp"
#include "render/cost_flash.hpp"
#include "render/render.hpp"
#include "svg_check.hpp"

namespace {

mha::Trace Run(const std::string& sentence, int heads) {
  mha::Config cfg;
  cfg.num_heads = heads;
  cfg.d_model = 64;
  const mha::Inputs in = mha::MakeInputs(sentence, "", cfg);
  return mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
}

bool HasHangul(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0xE1) return true;
  return false;
}

bool Turned(const svgcheck::Element& e) {
  const auto it = e.attrs.find("transform");
  return it != e.attrs.end() && it->second.find("rotate") != std::string::npos;
}

const char* const kLongKorean =
    "할머니께서 오늘 아침 일찍 시장에서 싱싱한 사과와 배를 많이 사셨습니다 그리고 집에 돌아오셨다";
const char* const kLongEnglish =
    "internationalisation responsibilities notwithstanding, extraordinarily counterproductive bureaucracies "
    "overwhelmingly misunderstand characteristically incomprehensible circumstances";

}  // namespace

TEST_CASE("heatmap SVG: long Korean keys go on two staggered lines, never turned", "[render][svg][labels]") {
  const mha::Trace t = Run(kLongKorean, 8);
  const auto els = svgcheck::Parse(mha::render::RenderHeatmapsSvg(t, {}));
  std::vector<std::string> ys;
  for (const auto& e : els) {
    if (e.name != "text" || e.attrs.count("class") == 0 || e.attrs.at("class") != "col-label") continue;
    CHECK_FALSE(Turned(e));
    ys.push_back(e.attrs.count("y") ? e.attrs.at("y") : "");
  }
  const std::size_t per_map = static_cast<std::size_t>(t.seq_kv);
  REQUIRE(ys.size() == per_map * (t.cfg.num_heads + 1));  // every head and the mean
  // The sentence's keys are wider than a cell: each map's keys alternate between two
  // lines (one line would run them together).
  for (std::size_t m = 0; m < ys.size(); m += per_map) {
    const std::set<std::string> lines(ys.begin() + static_cast<long>(m), ys.begin() + static_cast<long>(m + per_map));
    CHECK(lines.size() == 2u);
    CHECK(ys[m] != ys[m + 1]);
  }
}

TEST_CASE("heatmap SVG: long Latin keys that do not fit still turn", "[render][svg][labels]") {
  const mha::Trace t = Run(kLongEnglish, 8);
  const auto els = svgcheck::Parse(mha::render::RenderHeatmapsSvg(t, {}));
  int turned = 0;
  for (const auto& e : els)
    if (e.name == "text" && e.attrs.count("class") && e.attrs.at("class") == "col-label" && Turned(e)) ++turned;
  CHECK(turned > 0);
}

TEST_CASE("Flash picture: Korean keys stay horizontal, Latin keys that do not fit read upwards", "[render][labels]") {
  mha::render::FlashPictureOptions o;
  SECTION("Korean") {
    const mha::Trace t = Run(kLongKorean, 2);
    const auto els = svgcheck::Parse(mha::render::FlashPictureSvg(t, o));
    int hangul = 0;
    for (const auto& e : els)
      if (e.name == "text" && HasHangul(e.text)) {
        ++hangul;
        CHECK_FALSE(Turned(e));
      }
    CHECK(hangul >= 2 * t.seq);  // every row and every column has its key
  }
  SECTION("English") {
    const mha::Trace t = Run(kLongEnglish, 2);
    const auto els = svgcheck::Parse(mha::render::FlashPictureSvg(t, o));
    int turned = 0;
    for (const auto& e : els)
      if (e.name == "text" && Turned(e)) ++turned;
    CHECK(turned >= t.seq);
  }
}
