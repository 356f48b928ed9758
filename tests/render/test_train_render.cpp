// The training pictures: the layers x heads grid (PNG, SVG), the GIF over snapshots,
// the curves (PNG, SVG, CSV). Cells are checked against the probe trace's weights.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "mha/training_run.hpp"
#include "render/train_render.hpp"
#include "svg_check.hpp"

namespace {

// A short run of the offsets task (2 layers, 2 heads, causal): snapshots every 5 steps.
std::shared_ptr<const mha::Progress> ShortRun(int steps = 20, int layers = 2) {
  mha::TaskSpec task;
  task.seq = 8;
  task.vocab = 7;
  mha::TrainSetup s = mha::DefaultSetup(task);
  s.model.num_layers = layers;
  s.steps = steps;
  s.batch = 16;
  s.heldout_batch = 16;
  s.threads = 1;
  s.snapshot_every = 5;
  mha::TrainingRun run(s);
  run.RunHere();
  return run.Latest();
}

std::array<std::uint8_t, 3> Pixel(const mha::render::Image& img, int x, int y) {
  const std::size_t i = (static_cast<std::size_t>(y) * img.width + x) * 4;
  return {img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]};
}

std::string Str(std::array<std::uint8_t, 3> c) {
  return "(" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) + ")";
}

// MHAVIZ_TEST_PICTURES=dir keeps the pictures, to look at them.
void Keep(const std::string& name, const std::string& bytes) {
  if (const char* dir = std::getenv("MHAVIZ_TEST_PICTURES")) std::ofstream(std::string(dir) + "/" + name) << bytes;
}

}  // namespace

TEST_CASE("The grid draws every head of every layer, each cell the colour of its weight", "[render][train]") {
  const auto p = ShortRun();
  REQUIRE(p->finished);
  const mha::Snapshot& snap = *p->snapshots.back();
  mha::render::GridOptions o;
  o.total_steps = p->total;
  const mha::render::Image img = mha::render::DrawModelGrid(snap, o);
  Keep("grid.png", mha::render::EncodePng(img));
  const int L = 2, H = 2, S = 8;
  REQUIRE(img.panels.size() == static_cast<std::size_t>(L * H));
  for (std::size_t i = 0; i < img.panels.size(); ++i) {
    const auto& pn = img.panels[i];
    const int layer = static_cast<int>(i) / H, head = static_cast<int>(i) % H;
    CHECK(pn.head == head);
    REQUIRE(pn.rows == S);
    REQUIRE(pn.cols == S);
    const mha::Trace& t = snap.probe.layers[static_cast<std::size_t>(layer)];
    for (int r = 0; r < S; ++r)
      for (int c = 0; c < S; ++c) {
        const auto px = Pixel(img, pn.x + c * pn.cell, pn.y + r * pn.cell);
        const auto want = c > r ? mha::render::kMaskedColour : mha::render::Colormap(t.AttnHead(head)(r, c));
        INFO("layer " << layer << " head " << head << " cell " << r << "," << c);
        CHECK(Str(px) == Str(want));
      }
    // Inside the image, and no two maps overlap.
    CHECK(pn.x + pn.cols * pn.cell <= img.width);
    CHECK(pn.y + pn.rows * pn.cell <= img.height);
    for (std::size_t j = i + 1; j < img.panels.size(); ++j) {
      const auto& q = img.panels[j];
      const bool apart = pn.x + pn.cols * pn.cell <= q.x || q.x + q.cols * q.cell <= pn.x ||
                         pn.y + pn.rows * pn.cell <= q.y || q.y + q.rows * q.cell <= pn.y;
      CHECK(apart);
    }
  }
}

TEST_CASE("The grid's SVG has layers x heads x seq x seq cells at the PNG's coordinates", "[render][train][svg]") {
  const auto p = ShortRun();
  const mha::Snapshot& snap = *p->snapshots.back();
  const mha::render::GridOptions o;
  const mha::render::Image img = mha::render::DrawModelGrid(snap, o);
  const std::string svg = mha::render::ModelGridSvg(snap, o);
  Keep("grid.svg", svg);
  const auto els = svgcheck::Parse(svg);
  CHECK(svgcheck::Count(els, "rect", "cell") == 2u * 2 * 8 * 8);
  // The first cell of layer 1, head 1 sits where the PNG drew it.
  const auto& pn = img.panels[3];
  const std::string at = "data-layer=\"1\" data-head=\"1\" data-row=\"0\" data-col=\"0\" x=\"" + std::to_string(pn.x) +
                         "\" y=\"" + std::to_string(pn.y) + "\"";
  CHECK(svg.find(at) != std::string::npos);
}

TEST_CASE("The GIF has one frame per snapshot, a GIF89a header and the loop extension", "[render][train][gif]") {
  const auto p = ShortRun();
  REQUIRE(p->snapshots.size() == 5);  // steps 0, 5, 10, 15, 20
  const std::string gif = mha::render::EncodeGridGif(p->snapshots, mha::render::GifOptions{});
  Keep("grid.gif", gif);
  REQUIRE(gif.size() > 100);
  CHECK(gif.compare(0, 6, "GIF89a") == 0);
  CHECK(gif.find("NETSCAPE2.0") != std::string::npos);
  CHECK(gif.back() == ';');  // the trailer
  CHECK(mha::render::GifFrameCount(5) == 5);
  CHECK(mha::render::GifFrameCount(1000) == mha::render::kMaxGifFrames);
  CHECK_THROWS_WITH(mha::render::EncodeGridGif({}, mha::render::GifOptions{}), Catch::Contains("no snapshots"));
}

TEST_CASE("The curves: PNG and SVG from one layout, the CSV every step", "[render][train][curves]") {
  const auto p = ShortRun();
  const mha::render::CurveOptions o;
  const mha::render::Image img = mha::render::DrawCurves(*p, o);
  Keep("curves.png", mha::render::EncodePng(img));
  CHECK(img.width > 600);
  const std::string svg = mha::render::CurvesSvg(*p, o);
  Keep("curves.svg", svg);
  const auto els = svgcheck::Parse(svg);
  CHECK(svgcheck::Count(els, "polyline", "loss") == 1);
  CHECK(svgcheck::Count(els, "polyline", "accuracy-0") == 1);
  CHECK(svgcheck::Count(els, "polyline", "accuracy-1") == 1);
  const std::string csv = mha::render::CurvesCsv(*p);
  CHECK(csv.rfind("step,lr,loss,accuracy_0,accuracy_1,grad_norm\n", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 21);
  mha::Progress empty;
  CHECK(mha::render::CurvesCsv(empty, 2) == "step,lr,loss,accuracy_0,accuracy_1,grad_norm\n");
  CHECK_THROWS_WITH(mha::render::DrawCurves(empty, o), Catch::Contains("no curve"));
}
