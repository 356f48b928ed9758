// The layers x heads grid of a model's attention on one probe example, laid out once
// as a Scene (scene.hpp) for the PNG, the SVG and every GIF frame.
#include <algorithm>
#include <cmath>

#include "render/grid_scene.hpp"
#include "render/scene.hpp"
#include "render/train_render.hpp"

namespace mha::render {
namespace {

// Sizes in points (1 pt = `s` pixels).
constexpr double kMargin = 16, kBlockGap = 18, kLayerGap = 14, kBarW = 12, kMapSide = 220, kMaxGridW = 1500;

struct GridGeometry {
  double s = 1;
  int n_rows = 0, n_cols = 0;  // query, key tokens
  int cell = 0, gap = 0;       // pixels
  bool labels = false, col_vertical = false, values = false;
  Style title, subtitle, note, layer, head, head_label, label, value, tick;
  double caption_h = 0, layer_w = 0, row_label_w = 0, col_label_h = 0, head_h = 0;
  double block_w = 0, block_h = 0, grid_x = 0, grid_y = 0;
  int per_row = 1, rows = 1;  // heads per row of maps, rows per layer
  int width = 0, height = 0;
};

std::string CaptionNote(bool masked) {
  return std::string("Rows: query tokens \u00B7 columns: key tokens \u00B7 colour: attention weight, 0 to 1") +
         (masked ? " \u00B7 grey: masked" : "");
}

std::string HeadLabel(const std::vector<HeadProfile>* heads, int layer, int head) {
  if (!heads) return "";
  for (const HeadProfile& p : *heads)
    if (p.layer == layer && p.head == head) return p.label + " " + Fixed2(p.score);
  return "";
}

GridGeometry Measure(const GridInput& in, const GridOptions& o, Text& text, double s) {
  const ModelTrace& mt = *in.probe;
  const int L = static_cast<int>(mt.layers.size()), H = mt.layers[0].cfg.num_heads;
  GridGeometry g;
  g.s = s;
  g.n_rows = mt.layers[0].seq;
  g.n_cols = mt.layers[0].seq_kv;
  const int n = std::max(g.n_rows, g.n_cols);
  const double cell_pt = std::clamp(std::min(kMapSide / n, (kMaxGridW / H - 30) / n), 1.0, 16.0);
  g.cell = std::max(1, static_cast<int>(std::lround(cell_pt * s)));
  g.gap = g.cell >= 8 ? std::max(1, static_cast<int>(std::lround(0.5 * s))) : 0;
  g.labels = cell_pt >= 7;
  g.values = o.values && cell_pt >= 18;
  g.title = {static_cast<float>(15 * s), true};
  g.subtitle = {static_cast<float>(12 * s), false};
  g.note = {static_cast<float>(10.5 * s), false};
  g.layer = {static_cast<float>(12 * s), true};
  g.head = {static_cast<float>(11 * s), true};
  g.head_label = {static_cast<float>(10.5 * s), false};
  g.label = {static_cast<float>(std::min(10.0, cell_pt * 0.8) * s), false};
  g.value = {static_cast<float>(std::min(9.0, cell_pt * 0.45) * s), false};
  g.tick = {static_cast<float>(10 * s), false};
  g.caption_h = (15 + 8 + 12 + 6 + 10.5 + 14) * s;
  g.layer_w = text.Width("layer " + std::to_string(L - 1), g.layer) + 10 * s;
  double tok_w = 0;
  if (g.labels)
    for (const std::string& t : in.tokens) tok_w = std::max<double>(tok_w, text.Width(t, g.label));
  g.row_label_w = g.labels ? tok_w + 4 * s : 0;
  g.col_vertical = g.labels && tok_w > g.cell - 2;
  g.col_label_h = g.labels ? (g.col_vertical ? tok_w : text.Ascent(g.label) + text.Descent(g.label)) + 4 * s : 0;
  const bool labelled = in.heads && !in.heads->empty();
  g.head_h = (11 + 4 + (labelled ? 13 : 0)) * s;
  g.block_w = g.row_label_w + g.n_cols * g.cell;
  g.block_h = g.head_h + g.col_label_h + g.n_rows * g.cell;
  g.grid_x = std::round(kMargin * s + g.layer_w);
  g.grid_y = std::round(kMargin * s + g.caption_h);
  const double bar_w = (kBlockGap + kBarW + 40) * s;
  // A layer's heads wrap onto more rows where one row would pass kMaxSide even at a
  // pixel a cell: 64 heads of 256 tokens were 17,961 pixels wide.
  g.per_row = H;
  while (g.per_row > 1 &&
         g.grid_x + g.per_row * g.block_w + (g.per_row - 1) * kBlockGap * s + bar_w + kMargin * s > kMaxSide)
    --g.per_row;
  g.rows = (H + g.per_row - 1) / g.per_row;
  const double grid_w = g.per_row * g.block_w + (g.per_row - 1) * kBlockGap * s;
  const double grid_h = L * g.rows * g.block_h + (L * g.rows - 1) * kLayerGap * s;
  const double caption_w = std::max(
      {text.Width(in.title, g.title), text.Width(in.subtitle, g.subtitle), text.Width(CaptionNote(true), g.note)});
  g.width = static_cast<int>(std::ceil(std::max(g.grid_x + grid_w + bar_w, kMargin * s + caption_w) + kMargin * s));
  g.height = static_cast<int>(std::ceil(g.grid_y + std::max(grid_h, 150 * s) + kMargin * s));
  return g;
}

void AddCaption(const GridInput& in, const GridGeometry& g, Scene& sc, bool masked) {
  const double s = g.s, x = kMargin * s;
  double y = kMargin * s + 15 * s;
  sc.texts.push_back(Label(x, y, g.title, kInk, in.title));
  y += (8 + 12) * s;
  if (!in.subtitle.empty()) sc.texts.push_back(Label(x, y, g.subtitle, kInk, in.subtitle));
  y += (6 + 10.5) * s;
  sc.texts.push_back(Label(x, y, g.note, kGrey, CaptionNote(masked)));
}

void AddMap(const Trace& t, int layer, int head, const GridInput& in, const GridGeometry& g, double bx, double by,
            Text& text, bool svg, Scene& sc) {
  const double s = g.s;
  sc.texts.push_back(Label(bx + g.row_label_w, by + 11 * s, g.head, kInk, "head " + std::to_string(head)));
  const std::string label = HeadLabel(in.heads, layer, head);
  if (!label.empty())
    sc.texts.push_back(Label(bx + g.row_label_w, by + (11 + 13) * s, g.head_label, kGrey,
                             text.Ellipsize(label, g.head_label, static_cast<float>(g.block_w - g.row_label_w))));
  const int gx = static_cast<int>(std::lround(bx + g.row_label_w));
  const int gy = static_cast<int>(std::lround(by + g.head_h + g.col_label_h));
  const PanelData d = GetPanelData(t, head);
  const std::vector<std::string> q = QueryTokens(t), k = KeyTokens(t);
  const int inner = g.cell - g.gap;
  SceneCells block;  // the PNG's cells: a colour each
  if (!svg) {
    block = {
        static_cast<double>(gx), static_cast<double>(gy), static_cast<double>(g.cell), g.n_rows, g.n_cols, g.gap, {}};
    block.fill.reserve(static_cast<std::size_t>(g.n_rows) * g.n_cols);
  }
  for (int r = 0; r < g.n_rows; ++r)
    for (int c = 0; c < g.n_cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * g.n_cols + c;
      const Rgb col = d.masked[i] ? kMaskedColour : Colormap(d.w[i]);
      if (g.values && !d.masked[i])
        sc.texts.push_back(Label(gx + c * g.cell + inner / 2.0, gy + r * g.cell + inner / 2.0 + 0.36 * g.value.px,
                                 g.value, TextColourOn(col), FormatWeight(d.w[i]), Anchor::Middle));
      if (!svg) {
        block.fill.push_back(col);
        continue;
      }
      SceneRect rect = Box(gx + c * g.cell, gy + r * g.cell, inner, inner, col);
      rect.cls = "cell";
      rect.attrs = " data-layer=\"" + std::to_string(layer) + "\" data-head=\"" + std::to_string(head) +
                   "\" data-row=\"" + std::to_string(r) + "\" data-col=\"" + std::to_string(c) + "\"";
      char w[32];
      std::snprintf(w, sizeof w, "%.4f", static_cast<double>(d.w[i]));
      rect.title = "layer " + std::to_string(layer) + ", head " + std::to_string(head) + ": query \u201C" + q[r] +
                   "\u201D \u2192 key \u201C" + k[c] + "\u201D: " + (d.masked[i] ? "masked, weight 0" : w);
      sc.rects.push_back(std::move(rect));
    }
  if (!svg) sc.cells.push_back(std::move(block));
  sc.panels.push_back({head, gx, gy, g.n_rows, g.n_cols, g.cell, g.gap, 1});
  if (!g.labels) return;
  for (int r = 0; r < g.n_rows; ++r)
    sc.texts.push_back(
        Label(gx - 4 * s, gy + (r + 0.5) * g.cell - g.gap / 2.0 + 0.36 * g.label.px, g.label, kInk, q[r], Anchor::End));
  for (int c = 0; c < g.n_cols; ++c) {
    const double cx = gx + (c + 0.5) * g.cell - g.gap / 2.0;
    if (g.col_vertical)
      sc.texts.push_back(Label(cx + 0.36 * g.label.px, gy - 4 * s, g.label, kInk, k[c], Anchor::Start, 90));
    else
      sc.texts.push_back(Label(cx, gy - 4 * s - text.Descent(g.label), g.label, kInk, k[c], Anchor::Middle));
  }
}

void AddColourBar(const GridGeometry& g, int grid_w_px, bool masked, Scene& sc) {
  const double s = g.s;
  const int x = static_cast<int>(std::lround(g.grid_x + grid_w_px + kBlockGap * s));
  const int y = static_cast<int>(std::lround(g.grid_y + g.head_h + g.col_label_h));
  const int w = static_cast<int>(std::lround(kBarW * s)), h = static_cast<int>(std::lround(120 * s));
  for (int yy = 0; yy < h; ++yy)
    sc.rects.push_back(Box(x, y + yy, w, 1, Colormap(h > 1 ? 1.0f - static_cast<float>(yy) / (h - 1) : 1.0f)));
  const char* ticks[] = {"0", "0.5", "1"};
  for (int i = 0; i <= 2; ++i) {
    const double ty = y + (h - 1) * (1.0 - i / 2.0);
    sc.rects.push_back(Box(x + w, static_cast<int>(std::lround(ty)), static_cast<int>(std::lround(4 * s)),
                           std::max(1, static_cast<int>(std::lround(s))), kInk));
    sc.texts.push_back(Label(x + w + 6 * s, ty + 0.36 * g.tick.px, g.tick, kInk, ticks[i]));
  }
  if (masked) {
    sc.rects.push_back(Box(x, y + h + static_cast<int>(std::lround(10 * s)), w, w, kMaskedColour));
    sc.texts.push_back(Label(x + w + 6 * s, y + h + 10 * s + w / 2.0 + 0.36 * g.tick.px, g.tick, kInk, "masked"));
  }
}

bool AnyMasked(const ModelTrace& mt) {
  for (const Trace& t : mt.layers)
    for (int h = 0; h < t.cfg.num_heads; ++h) {
      const auto sc = t.ScoresHead(h);
      for (int r = 0; r < t.seq; ++r)
        for (int c = 0; c < t.seq_kv; ++c)
          if (std::isinf(sc(r, c)) && sc(r, c) < 0) return true;
    }
  return false;
}

}  // namespace

Scene GridScene(const GridInput& in, const GridOptions& o, Text& text, long long max_pixels, bool svg) {
  if (!in.probe || in.probe->layers.empty())
    throw Error("There is no probe trace to draw: the run has not taken a snapshot yet.");
  double s = std::clamp(o.scale, 1.0, 8.0);
  GridGeometry g = Measure(in, o, text, s);
  // Too big: lower the scale first; cells themselves shrink through Measure's caps.
  const auto too_big = [&] {
    return static_cast<long long>(g.width) * g.height > max_pixels || g.width > kMaxSide || g.height > kMaxSide;
  };
  for (int tries = 0; tries < 8 && too_big() && s > 0.25; ++tries) {
    const double w = g.width, h = g.height;
    s *= std::min({std::sqrt(static_cast<double>(max_pixels) / (w * h)), kMaxSide / w, kMaxSide / h}) * 0.97;
    g = Measure(in, o, text, s);
  }
  if (too_big())
    throw Error("The grid would be " + std::to_string(g.width) + " x " + std::to_string(g.height) +
                " pixels even at the smallest size; use fewer layers, heads or tokens.");
  Scene sc;
  sc.width = g.width;
  sc.height = g.height;
  if (s < std::clamp(o.scale, 1.0, 8.0))
    sc.notes.push_back("drawn at scale " + Fixed2(s) + " instead of " + Fixed2(o.scale) + " to stay within " +
                       std::to_string(max_pixels >> 20) + " megapixels and " + std::to_string(kMaxSide) +
                       " pixels a side");
  if (!g.labels) sc.notes.push_back("token labels left out: the cells are too small for text");
  const bool masked = AnyMasked(*in.probe);
  AddCaption(in, g, sc, masked);
  const int L = static_cast<int>(in.probe->layers.size());
  const int H = in.probe->layers[0].cfg.num_heads;
  const double step_x = g.block_w + kBlockGap * s, step_y = g.block_h + kLayerGap * s;
  for (int l = 0; l < L; ++l) {
    const double by = g.grid_y + l * g.rows * step_y;
    sc.texts.push_back(Label(kMargin * s, by + g.head_h + g.col_label_h + g.n_rows * g.cell / 2.0 + 0.36 * g.layer.px,
                             g.layer, kInk, "layer " + std::to_string(l)));
    for (int h = 0; h < H; ++h)
      AddMap(in.probe->layers[static_cast<std::size_t>(l)], l, h, in, g, g.grid_x + (h % g.per_row) * step_x,
             by + (h / g.per_row) * step_y, text, svg, sc);
  }
  AddColourBar(g, static_cast<int>(std::lround(g.per_row * step_x - kBlockGap * s)), masked, sc);
  return sc;
}

std::string ModelTitle(const ModelConfig& c) {
  // The task's name from its JSON ({"name": "offsets", ...}); a model without one has none.
  std::string task;
  const auto key = c.task.find("\"name\"");
  const auto open = key == std::string::npos ? key : c.task.find('"', c.task.find(':', key));
  if (open != std::string::npos) task = c.task.substr(open + 1, c.task.find('"', open + 1) - open - 1) + " \u00B7 ";
  return task + std::to_string(c.num_layers) + (c.num_layers == 1 ? " layer" : " layers") + " \u00D7 " +
         std::to_string(c.layer.num_heads) + (c.layer.num_heads == 1 ? " head" : " heads") + " \u00B7 d_model " +
         std::to_string(c.layer.d_model);
}

GridInput SnapshotGridInput(const Snapshot& s, const GridOptions& o) {
  GridInput in;
  in.probe = &s.probe;
  in.heads = &s.heads;
  in.tokens = s.probe.layers.empty() ? std::vector<std::string>() : QueryTokens(s.probe.layers[0]);
  if (!o.title.empty())
    in.title = o.title;
  else
    in.title = s.model ? ModelTitle(s.model->cfg) : "Attention of every head";
  in.subtitle = "step " + std::to_string(s.step) + (o.total_steps > 0 ? " of " + std::to_string(o.total_steps) : "");
  if (!s.heldout.accuracy.empty()) {
    char loss[32];
    std::snprintf(loss, sizeof loss, "%.4f", s.heldout.loss);
    in.subtitle += " \u00B7 held-out loss " + std::string(loss) + " \u00B7 accuracy ";
    for (std::size_t k = 0; k < s.heldout.accuracy.size(); ++k)
      in.subtitle += (k ? " / " : "") + Fixed2(s.heldout.accuracy[k]);
  }
  return in;
}

Image DrawModelGrid(const GridInput& in, const GridOptions& o) {
  Text text;
  return Rasterise(GridScene(in, o, text, kMaxPixels), text);
}

long long GridCellCount(const ModelTrace& probe) {
  long long n = 0;
  for (const Trace& t : probe.layers) n += static_cast<long long>(t.cfg.num_heads) * t.seq * t.seq_kv;
  return n;
}

std::string ModelGridSvg(const GridInput& in, const GridOptions& o) {
  if (in.probe && GridCellCount(*in.probe) > kMaxSvgCells)
    throw Error("An SVG of this grid would hold " + std::to_string(GridCellCount(*in.probe)) +
                " cells, too many for any viewer to open (the limit is " + std::to_string(kMaxSvgCells) +
                "). Write a PNG instead, or use fewer layers, heads or tokens.");
  Text text;
  return SceneSvg(GridScene(in, o, text, kMaxPixels, true));
}

Image DrawModelGrid(const Snapshot& s, const GridOptions& o) { return DrawModelGrid(SnapshotGridInput(s, o), o); }

std::string ModelGridSvg(const Snapshot& s, const GridOptions& o) { return ModelGridSvg(SnapshotGridInput(s, o), o); }

}  // namespace mha::render
