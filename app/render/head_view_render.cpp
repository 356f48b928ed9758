// The head view's lines (shared with the GUI) and its export as a Scene: a header, a
// legend of the heads' colours, the two token columns and the lines between them.
#include "render/head_view_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/layout.hpp"
#include "render/scene.hpp"

namespace mha::render {
namespace {

// Sizes in points (1 pt = `s` pixels).
constexpr double kMargin = 16, kRow = 18, kGap = 300, kLineWidth = 1.5, kLegendGap = 14;

std::vector<bool> HeadsDrawn(const Trace& t, int head, const std::vector<bool>& heads) {
  const int H = t.cfg.num_heads;
  if (!heads.empty()) {
    if (static_cast<int>(heads.size()) != H)
      throw Error("the head view was given " + std::to_string(heads.size()) + " head switches for " +
                  std::to_string(H) + " heads.");
    if (std::find(heads.begin(), heads.end(), true) == heads.end())
      throw Error("every head is switched off: switch one on to draw its lines.");
    return heads;
  }
  if (head >= H || head < -1)
    throw Error("head " + std::to_string(head) + " does not exist: the heads are numbered 0 to " +
                std::to_string(H - 1) + ".");
  std::vector<bool> on(static_cast<std::size_t>(H), head < 0);
  if (head >= 0) on[static_cast<std::size_t>(head)] = true;
  return on;
}

struct Geometry {
  double s = 1;
  Style title, subtitle, note, label, legend, column;
  HeadViewColumns cols;
  std::vector<std::string> qtok, ktok;  // ellipsized
  std::vector<int> legend_heads;
  double legend_y = 0, legend_row_h = 0, column_title_y = 0;
  std::vector<double> legend_x;  // per legend entry, its swatch's left edge
  std::vector<int> legend_row;
  int width = 0, height = 0;
};

std::string Explanation() {
  return "Each line joins a query token (left) to a key token (right): opacity = attention weight, colour = head. "
         "Lines under " +
         Fixed2(kHeadViewMinWeight) + " are left out.";
}

Geometry Measure(const Trace& t, const HeadViewOptions& o, const std::vector<bool>& on, Text& text) {
  Geometry g;
  const double s = g.s = std::clamp(o.scale, 1, 8);
  g.title = {static_cast<float>(15 * s), true};
  g.subtitle = {static_cast<float>(12 * s), false};
  g.note = {static_cast<float>(10.5 * s), false};
  g.label = {static_cast<float>(12 * s), false};
  g.legend = {static_cast<float>(11 * s), false};
  g.column = {static_cast<float>(10.5 * s), true};
  const double max_label = 220 * s;
  double widest = text.Width("query", g.column);
  for (const std::string& tk : QueryTokens(t)) g.qtok.push_back(text.Ellipsize(tk, g.label, max_label));
  for (const std::string& tk : KeyTokens(t)) g.ktok.push_back(text.Ellipsize(tk, g.label, max_label));
  for (const auto* col : {&g.qtok, &g.ktok})
    for (const std::string& tk : *col) widest = std::max<double>(widest, text.Width(tk, g.label));
  const double label_w = std::ceil(widest + 12 * s);
  const double content_w = 2 * label_w + kGap * s;
  double y = kMargin * s;
  double header_w = 0;
  if (o.header) {
    header_w = std::max({text.Width(o.title.empty() ? "Head view" : o.title, g.title),
                         text.Width(o.sentence, g.subtitle), text.Width(Explanation(), g.note)});
    y += (15 + 8 + 12 + 6 + 10.5 + 10) * s;
    // The legend: a swatch and "head h" for every head drawn, wrapped at the content's width.
    g.legend_row_h = 16 * s;
    g.legend_y = y;
    const double wrap = std::max(content_w, header_w);
    double x = 0;
    int row = 0;
    for (int h = 0; h < static_cast<int>(on.size()); ++h) {
      if (!on[static_cast<std::size_t>(h)]) continue;
      const double w = 12 * s + 4 * s + text.Width("head " + std::to_string(h), g.legend) + kLegendGap * s;
      if (x > 0 && x + w > wrap) x = 0, ++row;
      g.legend_heads.push_back(h);
      g.legend_x.push_back(kMargin * s + x);
      g.legend_row.push_back(row);
      x += w;
    }
    y += (row + 1) * g.legend_row_h + 8 * s;
  }
  g.column_title_y = y + 10.5 * s;
  y += 18 * s;
  g.cols.x = kMargin * s;
  g.cols.y = std::round(y);
  g.cols.label_w = label_w;
  g.cols.gap = kGap * s;
  g.cols.row_h = kRow * s;
  const int rows = std::max(t.seq, t.seq_kv);
  g.width = static_cast<int>(std::ceil(kMargin * s + std::max(content_w, header_w) + kMargin * s));
  g.height = static_cast<int>(std::ceil(g.cols.y + rows * g.cols.row_h + kMargin * s));
  return g;
}

void AddHeader(const HeadViewOptions& o, const Geometry& g, Scene& sc) {
  const double s = g.s, x = kMargin * s;
  double y = kMargin * s + 15 * s;
  sc.texts.push_back(Label(x, y, g.title, kInk, o.title.empty() ? "Head view" : o.title));
  y += (8 + 12) * s;
  if (!o.sentence.empty()) sc.texts.push_back(Label(x, y, g.subtitle, kInk, o.sentence));
  y += (6 + 10.5) * s;
  sc.texts.push_back(Label(x, y, g.note, kGrey, Explanation()));
  for (std::size_t i = 0; i < g.legend_heads.size(); ++i) {
    const int h = g.legend_heads[i];
    const double top = g.legend_y + g.legend_row[i] * g.legend_row_h;
    SceneRect sw = Box(static_cast<int>(std::lround(g.legend_x[i])), static_cast<int>(std::lround(top + 2 * s)),
                       static_cast<int>(std::lround(12 * s)), static_cast<int>(std::lround(10 * s)), HeadColour(h));
    sw.cls = "legend";
    sw.attrs = " data-head=\"" + std::to_string(h) + "\"";
    sc.rects.push_back(std::move(sw));
    sc.texts.push_back(Label(g.legend_x[i] + 16 * s, top + 11 * s, g.legend, kInk, "head " + std::to_string(h)));
  }
}

void AddColumns(const Geometry& g, Scene& sc) {
  const HeadViewColumns& c = g.cols;
  const double pad = 6 * g.s, shift = 0.36 * g.label.px;
  sc.texts.push_back(Label(c.LeftX() - pad, g.column_title_y, g.column, kGrey, "query", Anchor::End));
  sc.texts.push_back(Label(c.RightX() + pad, g.column_title_y, g.column, kGrey, "key"));
  for (int i = 0; i < static_cast<int>(g.qtok.size()); ++i)
    sc.texts.push_back(
        Label(c.LeftX() - pad, c.RowY(i) + shift, g.label, kInk, g.qtok[static_cast<std::size_t>(i)], Anchor::End));
  for (int j = 0; j < static_cast<int>(g.ktok.size()); ++j)
    sc.texts.push_back(Label(c.RightX() + pad, c.RowY(j) + shift, g.label, kInk, g.ktok[static_cast<std::size_t>(j)]));
}

std::string Weight(float w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(w));
  return buf;
}

Scene HeadViewScene(const Trace& t, const HeadViewOptions& o, Text& text, bool svg) {
  const std::vector<bool> on = HeadsDrawn(t, o.head, o.heads);
  const int rows = std::max(t.seq, t.seq_kv);
  if (rows > kHeadViewMaxTokens)
    throw Error("The head view draws at most " + std::to_string(kHeadViewMaxTokens) +
                " tokens per column, and this "
                "sequence has " +
                std::to_string(rows) +
                ": the column would be taller than any page. Use fewer "
                "tokens, or the heatmaps (--view heatmaps), which show long sequences.");
  const Geometry g = Measure(t, o, on, text);
  CheckImageSize(g.width, g.height);
  HeadViewSelection sel;
  sel.heads = on;
  const std::vector<HeadViewLine> lines = HeadViewLines(t, g.cols, sel);
  if (svg && static_cast<long long>(lines.size()) > kMaxSvgCells)
    throw Error("An SVG of this head view would hold " + std::to_string(lines.size()) +
                " lines, too many for any "
                "viewer (the limit is " +
                std::to_string(kMaxSvgCells) + "). Export one head, or write a PNG.");
  Scene sc;
  sc.width = g.width;
  sc.height = g.height;
  if (o.header) AddHeader(o, g, sc);
  AddColumns(g, sc);
  const std::vector<std::string> q = QueryTokens(t), k = KeyTokens(t);
  sc.paths.reserve(lines.size());
  for (const HeadViewLine& l : lines) {
    ScenePath p;
    p.pts = {{l.x0, l.y0}, {l.x1, l.y1}};
    p.colour = HeadColour(l.head);
    p.width = kLineWidth * g.s;
    p.opacity = l.opacity;
    p.cls = "attn";
    if (svg) {
      p.attrs = " data-head=\"" + std::to_string(l.head) + "\" data-query=\"" + std::to_string(l.query) +
                "\" data-key=\"" + std::to_string(l.key) + "\" data-weight=\"" + Weight(l.weight) + "\"";
      p.title = "head " + std::to_string(l.head) + ": query \u201C" + q[static_cast<std::size_t>(l.query)] +
                "\u201D \u2192 key \u201C" + k[static_cast<std::size_t>(l.key)] + "\u201D: " + Weight(l.weight);
    }
    sc.paths.push_back(std::move(p));
  }
  return sc;
}

}  // namespace

Rgb HeadColour(int head) {
  static constexpr Rgb kColours[12] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                       {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                       {188, 189, 34},  {23, 190, 207}, {0, 0, 128},     {128, 128, 0}};
  return kColours[static_cast<std::size_t>(((head % 12) + 12) % 12)];
}

void AppendHeadViewLines(const Trace& t, const HeadViewColumns& c, const HeadViewSelection& sel, int head,
                         std::vector<HeadViewLine>& out) {
  if (head < 0 || head >= t.cfg.num_heads)
    throw Error("the head view was asked for head " + std::to_string(head) + "; the layer has " +
                std::to_string(t.cfg.num_heads) + ".");
  if (!sel.heads.empty() && (head >= static_cast<int>(sel.heads.size()) || !sel.heads[static_cast<std::size_t>(head)]))
    return;
  const auto A = t.AttnHead(head);
  const int i0 = sel.query >= 0 ? sel.query : 0, i1 = sel.query >= 0 ? std::min(sel.query + 1, t.seq) : t.seq;
  // Only the lines into one key: that column alone is read, not every weight.
  const bool one_key = sel.query < 0 && sel.key >= 0;
  const int j0 = one_key ? sel.key : 0, j1 = one_key ? std::min(sel.key + 1, t.seq_kv) : t.seq_kv;
  for (int i = i0; i < i1; ++i) {
    const double y0 = c.RowY(i);
    for (int j = j0; j < j1; ++j) {
      const float w = A(i, j);
      if (!(w >= sel.min_weight)) continue;  // NaN too
      const double y1 = c.RowY(j);
      if (std::max(y0, y1) < sel.top || std::min(y0, y1) > sel.bottom) continue;
      out.push_back({head, i, j, w, std::min(1.0f, w), c.LeftX(), y0, c.RightX(), y1});
    }
  }
}

std::vector<HeadViewLine> HeadViewLines(const Trace& t, const HeadViewColumns& c, const HeadViewSelection& sel) {
  const int H = t.cfg.num_heads;
  if (static_cast<int>(sel.heads.size()) > H)
    throw Error("the head view was asked for " + std::to_string(sel.heads.size()) + " heads; the layer has " +
                std::to_string(H) + ".");
  std::vector<HeadViewLine> out;
  for (int h = 0; h < H; ++h) AppendHeadViewLines(t, c, sel, h, out);
  return out;
}

Image RenderHeadView(const Trace& t, const HeadViewOptions& o) {
  Text text;
  return Rasterise(HeadViewScene(t, o, text, false), text);
}

std::string RenderHeadViewSvg(const Trace& t, const HeadViewOptions& o) {
  Text text;
  return SceneSvg(HeadViewScene(t, o, text, true));
}

}  // namespace mha::render
