// The head view's lines (render/head_view_render.hpp), which the GUI's Head view draws and the
// export writes: which lines exist for a selection (heads switched off, a hovered query
// or key, a scrolled window), where they run and how opaque they are.
#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <tuple>

#include "mha/mha.hpp"
#include "render/head_view_render.hpp"

namespace {

mha::Trace Causal(int heads) {
  mha::Config cfg;
  cfg.num_heads = heads;
  cfg.d_model = 16;
  cfg.mask = mha::Mask::Causal;
  const mha::Inputs in = mha::MakeInputs("the cat sat on the mat", "", cfg);
  return mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
}

using Key = std::tuple<int, int, int>;

std::set<Key> Keys(const std::vector<mha::render::HeadViewLine>& lines) {
  std::set<Key> k;
  for (const auto& l : lines) k.insert({l.head, l.query, l.key});
  return k;
}

}  // namespace

TEST_CASE("Head view lines: one per weight of at least 0.01, from the query's row to the key's", "[render]") {
  const mha::Trace t = Causal(4);
  mha::render::HeadViewColumns c;
  c.x = 10, c.y = 20, c.label_w = 50, c.gap = 200, c.row_h = 10;
  const auto lines = mha::render::HeadViewLines(t, c, {});
  std::set<Key> want;
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < t.seq; ++i)
      for (int j = 0; j < t.seq_kv; ++j)
        if (t.AttnHead(h)(i, j) >= mha::render::kHeadViewMinWeight) want.insert({h, i, j});
  CHECK(Keys(lines) == want);
  for (const auto& l : lines) {
    CHECK(l.weight == t.AttnHead(l.head)(l.query, l.key));
    CHECK(l.opacity == std::min(1.0f, l.weight));
    CHECK(l.key <= l.query);  // the causal mask: no line into the future
    CHECK(l.x0 == 60);
    CHECK(l.x1 == 260);
    CHECK(l.y0 == 20 + 10 * (l.query + 0.5));
    CHECK(l.y1 == 20 + 10 * (l.key + 0.5));
  }
}

TEST_CASE("Head view lines: heads off, a hovered query or key, lines off screen", "[render]") {
  const mha::Trace t = Causal(4);
  mha::render::HeadViewColumns c;
  c.row_h = 10, c.label_w = 10, c.gap = 100;
  const std::set<Key> all = Keys(mha::render::HeadViewLines(t, c, {}));
  auto only = [&](auto keep) {
    std::set<Key> out;
    for (const Key& k : all)
      if (keep(k)) out.insert(k);
    return out;
  };
  mha::render::HeadViewSelection sel;
  sel.heads = {true, false, true, false};
  CHECK(Keys(mha::render::HeadViewLines(t, c, sel)) == only([](const Key& k) { return std::get<0>(k) % 2 == 0; }));
  sel = {};
  sel.query = 3;
  sel.key = 1;  // a hovered query wins over a hovered key
  CHECK(Keys(mha::render::HeadViewLines(t, c, sel)) == only([](const Key& k) { return std::get<1>(k) == 3; }));
  sel.query = -1;
  CHECK(Keys(mha::render::HeadViewLines(t, c, sel)) == only([](const Key& k) { return std::get<2>(k) == 1; }));
  sel = {};
  sel.top = 31;  // rows 0..2 end above: a line between two of them is off screen
  CHECK(Keys(mha::render::HeadViewLines(t, c, sel)) ==
        only([](const Key& k) { return std::get<1>(k) >= 3 || std::get<2>(k) >= 3; }));
  sel = {};
  sel.heads.assign(5, true);
  CHECK_THROWS_AS(mha::render::HeadViewLines(t, c, sel), mha::Error);
}

TEST_CASE("Head view export: a head out of range and too many tokens are refused", "[render]") {
  const mha::Trace t = Causal(2);
  mha::render::HeadViewOptions o;
  o.head = 2;
  CHECK_THROWS_WITH(mha::render::RenderHeadView(t, o), Catch::Contains("head 2 does not exist"));
  o.head = -1;
  o.heads = {false, false};
  CHECK_THROWS_WITH(mha::render::RenderHeadViewSvg(t, o), Catch::Contains("every head is switched off"));
  o.heads = {true, false};
  const mha::render::Image img = mha::render::RenderHeadView(t, o);
  CHECK(img.width > 0);
  CHECK(img.rgba.size() == static_cast<std::size_t>(img.width) * img.height * 4);
}
