#include "render/layout.hpp"
#include "text/i18n.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mha::render {

void CheckHead(const Trace& t, int head) {
  const int H = t.cfg.num_heads;
  if (H <= 0 || t.seq <= 0 || t.seq_kv <= 0 || t.attn.rows() != static_cast<Eigen::Index>(H) * t.seq ||
      t.attn.cols() != t.seq_kv)
    throw Error("There are no attention weights to draw: run the forward pass first.");
  if (head < -1 || head >= H)
    throw Error("head " + std::to_string(head) +
                " is out of range: this configuration has num_heads = " + std::to_string(H) +
                ", so heads are numbered 0 to " + std::to_string(H - 1) + " (or -1 for all heads and their mean).");
}

namespace {
PanelData PanelWeights(const Trace& t, int head);
}  // namespace

PanelData GetPanelData(const Trace& t, int head, ColourScale scale) {
  PanelData d = PanelWeights(t, head);
  d.divisor = ScaleDivisors(scale, d.w.data(), d.masked.data(), t.seq, t.seq_kv);
  return d;
}

namespace {

PanelData PanelWeights(const Trace& t, int head) {
  PanelData d;
  const std::size_t n = static_cast<std::size_t>(t.seq) * t.seq_kv;
  d.w.resize(n);
  d.masked.assign(n, 0);
  if (head >= 0) {
    const auto a = t.AttnHead(head);
    const auto sc = t.ScoresHead(head);
    d.score.resize(n);
    for (int r = 0; r < t.seq; ++r)
      for (int c = 0; c < t.seq_kv; ++c) {
        const std::size_t i = static_cast<std::size_t>(r) * t.seq_kv + c;
        d.w[i] = a(r, c);
        d.score[i] = sc(r, c);
        d.masked[i] = std::isinf(sc(r, c)) && sc(r, c) < 0;
      }
    return d;
  }
  // The mean over heads, accumulated in double so it is exact to float precision.
  const int H = t.cfg.num_heads;
  std::vector<double> acc(n, 0.0);
  std::vector<int> masked(n, 0);
  for (int h = 0; h < H; ++h) {
    const auto a = t.AttnHead(h);
    const auto sc = t.ScoresHead(h);
    for (int r = 0; r < t.seq; ++r)
      for (int c = 0; c < t.seq_kv; ++c) {
        const std::size_t i = static_cast<std::size_t>(r) * t.seq_kv + c;
        acc[i] += a(r, c);
        masked[i] += std::isinf(sc(r, c)) && sc(r, c) < 0;
      }
  }
  for (std::size_t i = 0; i < n; ++i) {
    d.w[i] = static_cast<float>(acc[i] / H);
    d.masked[i] = masked[i] == H;
  }
  return d;
}

std::vector<std::string> Labels(const std::vector<std::string>& tokens, int n) {
  std::vector<std::string> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] =
        static_cast<std::size_t>(i) < tokens.size() ? tokens[static_cast<std::size_t>(i)] : "#" + std::to_string(i);
  return out;
}
}  // namespace

std::vector<std::string> QueryTokens(const Trace& t) { return Labels(t.in.tokens, t.seq); }
std::vector<std::string> KeyTokens(const Trace& t) {
  return Labels(t.in.cross() ? t.in.memory_tokens : t.in.tokens, t.seq_kv);
}

double StaggerLift(Text& text, const Layout& L, int c) {
  if (!L.col_stagger || c % 2 == 0) return 0.0;
  return text.Ascent(L.col_label) + text.Descent(L.col_label);
}

std::string FormatWeight(float w) {
  if (std::isnan(w)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(w));
  return buf;
}

std::vector<std::pair<std::string, int>> RichSpans(const std::string& s) {
  std::vector<std::pair<std::string, int>> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t open = s.find('{', i);
    const std::size_t close = open == std::string::npos ? std::string::npos : s.find('}', open);
    if (open == std::string::npos || close == std::string::npos || open + 1 >= s.size() ||
        (s[open + 1] != '^' && s[open + 1] != '_')) {
      out.emplace_back(s.substr(i), 0);
      break;
    }
    if (open > i) out.emplace_back(s.substr(i, open - i), 0);
    out.emplace_back(s.substr(open + 2, close - open - 2), s[open + 1] == '^' ? 1 : 2);
    i = close + 1;
  }
  return out;
}

namespace {

// What the panels' labels take around each map.
struct Bands {
  double row = 0;             // left of the grid: row labels or positions
  double col = 0;             // above the grid: column labels or positions
  double right_overflow = 0;  // slanted column labels reach past the grid's right edge
};

std::vector<int> PanelHeads(const Trace& t, const HeatmapOptions& o) {
  std::vector<int> heads;
  if (o.head >= 0) {
    heads.push_back(o.head);
  } else {
    for (int h = 0; h < t.cfg.num_heads; ++h) heads.push_back(h);
    if (t.cfg.num_heads > 1) heads.push_back(-1);  // with one head the mean would repeat it
  }
  return heads;
}

// Cells big enough for a printed weight up to a dozen tokens, token labels up to
// 64 tokens; past that the maps keep a fixed size and the cells shrink.
double CellPoints(const LayoutInputs& in) {
  const double s = in.s_requested;
  const double map_pt = in.P == 1 ? 640.0 : 330.0;
  double cell_pt = std::min(map_pt / in.n, in.P == 1 ? 56.0 : 40.0);
  if (in.n <= 64) cell_pt = std::max(cell_pt, 10.0);
  // A few tokens: widen the cells so the key labels can stay horizontal (easier to
  // read, Korean especially) as long as the map stays within its usual size.
  const Style full{static_cast<float>(13 * s), false};
  double widest = 0;
  for (const auto& tok : in.ktoks)
    widest = std::max<double>(widest, in.text.Width(in.text.Ellipsize(tok, full, static_cast<float>(130 * s)), full));
  const double need = widest / s + 6;
  if (need > cell_pt && in.n * need <= map_pt && need <= 72) cell_pt = need;
  return cell_pt;
}

void SetStyles(const LayoutInputs& in, const Fit& f, Layout& L) {
  const double s = f.s;
  L.s = s;
  L.margin = in.R(28 * s);
  L.header_x = L.margin;
  L.title = {static_cast<float>(15 * s), true};
  L.subtitle = {static_cast<float>(12.5 * s), false};
  L.tick = {static_cast<float>(12 * s), false};
  L.label_pad = in.R(5 * s);
}

// The cells: their side in pixels, the separator, and the grid's size. Returns the
// points per token on the page, which decides what text fits.
double SizeCells(const LayoutInputs& in, const Fit& f, Layout& L) {
  const double s = f.s;
  const double cell = f.cell_override > 0 ? f.cell_override
                      : in.vector         ? in.cell_pt * s
                                          : std::max(1.0, std::round(in.cell_pt * s));
  L.cell = cell;
  L.downsample = f.k;
  const double eff_pt = cell / f.k / s;
  L.gap = eff_pt >= 14 && f.k == 1 ? std::max(1.0, in.R(1.0 * s)) : 0.0;
  const int vrows = (L.rows + f.k - 1) / f.k, vcols = (L.cols + f.k - 1) / f.k;
  L.grid_w = vcols * cell;
  L.grid_h = vrows * cell;
  return eff_pt;
}

// Token labels: the font follows the cell size within [8, 13] pt. Returns the widest
// row and column label.
std::pair<double, double> TokenLabels(const LayoutInputs& in, const Fit& f, double eff_pt, Layout& L) {
  const double s = f.s;
  L.label = {static_cast<float>(std::clamp(eff_pt * 0.62, 8.0, 13.0) * s), false};
  L.row_labels = L.col_labels = f.k == 1 && eff_pt >= 9.0;
  L.row_text.clear();
  L.col_text.clear();
  double row_w = 0, col_w = 0;
  if (!L.row_labels) return {row_w, col_w};
  const float max_label = static_cast<float>(130 * s);
  for (const auto& tok : in.qtoks) {
    L.row_text.push_back(in.text.Ellipsize(tok, L.label, max_label));
    row_w = std::max<double>(row_w, in.text.Width(L.row_text.back(), L.label));
  }
  for (const auto& tok : in.ktoks) {
    L.col_text.push_back(in.text.Ellipsize(tok, L.label, max_label));
    col_w = std::max<double>(col_w, in.text.Width(L.col_text.back(), L.label));
  }
  return {row_w, col_w};
}

// Column labels: horizontal if they fit (at up to 15% smaller type); Hangul and CJK
// then on two staggered lines, cut to two cells (docs/app.md: Korean keys are never
// rotated); other keys at 45 degrees when the cells are wide enough for slanted lines
// not to touch, else 90.
// Returns the band they take above the grid and how far they reach past its right.
Bands ColumnLabels(const LayoutInputs& in, const Fit& f, double col_w, Layout& L) {
  const double s = f.s;
  const double cell = L.cell;
  Bands b;
  b.col = in.R(6 * s);
  L.col_label = L.label;
  L.col_angle = 0;
  L.col_stagger = false;
  if (!L.col_labels) return b;
  const double room = cell - L.gap - 4 * s;
  if (col_w > room) {
    const double shrink = room / col_w;
    if (shrink >= 0.85 && L.label.px * shrink >= 8 * s) {
      L.col_label.px = static_cast<float>(L.label.px * shrink);
      col_w *= shrink;
    } else if (ReadsOnlyUpright(in.ktoks)) {
      // Hangul and CJK are never turned: two staggered lines give each key two cells.
      L.col_stagger = true;
      const float room2 = static_cast<float>(2 * cell - L.gap - 4 * s);
      col_w = 0;
      for (std::size_t c = 0; c < L.col_text.size(); ++c) {
        L.col_text[c] = in.text.Ellipsize(in.ktoks[c], L.col_label, room2);
        col_w = std::max<double>(col_w, in.text.Width(L.col_text[c], L.col_label));
      }
    } else {
      // Slanted lines are cell * sin 45 apart; a line of Hangul needs ~1.2 em.
      const double slanted_px = std::min<double>(L.label.px, (cell - L.gap) * 0.58);
      if (slanted_px >= 8 * s) {
        L.col_angle = 45;
        L.col_label.px = static_cast<float>(slanted_px);
        col_w *= slanted_px / L.label.px;
      } else {
        L.col_angle = 90;
      }
    }
  }
  const double line_h = in.text.Ascent(L.col_label) + in.text.Descent(L.col_label);
  if (L.col_angle == 0) {
    b.col = in.R((L.col_stagger ? 2 : 1) * line_h + L.label_pad + 2 * s);
    if (L.col_stagger && L.cols > 0) {
      const double last = in.text.Width(L.col_text.back(), L.col_label);
      b.right_overflow = std::max(0.0, (L.cols - 0.5) * cell + last / 2 - L.grid_w);
    }
    return b;
  }
  const double th = L.col_angle * 3.14159265358979323846 / 180.0;
  b.col = in.R(col_w * std::sin(th) + 0.5 * line_h * std::cos(th) + L.label_pad + 2 * s);
  for (int c = 0; c < L.cols; ++c) {
    const double w = in.text.Width(L.col_text[static_cast<std::size_t>(c)], L.col_label);
    const double end = (c + 0.5) * cell + w * std::cos(th) + 0.5 * line_h * std::sin(th);
    b.right_overflow = std::max(b.right_overflow, end - L.grid_w);
  }
  return b;
}

// Without labels, token positions every `index_step` tokens keep the map readable
// ("query 128 attends to key 0").
void IndexLabels(const LayoutInputs& in, const Fit& f, Bands& b, Layout& L) {
  const double s = f.s;
  L.index_step = 0;
  if (L.row_labels) return;
  L.index_style = {static_cast<float>(10 * s), false};
  const double px_per_token = L.cell / f.k;
  for (int step : {1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000}) {
    if (step * px_per_token >= 36 * s) {
      L.index_step = step;
      break;
    }
  }
  if (L.index_step == 0) return;
  const double num_w = in.text.Width(std::to_string((in.n - 1) / L.index_step * L.index_step), L.index_style);
  b.row = in.R(num_w + L.label_pad + 5 * s);
  b.col = in.R(in.text.Ascent(L.index_style) + in.text.Descent(L.index_style) + L.label_pad + 5 * s);
  b.right_overflow = std::max(b.right_overflow, num_w / 2);
}

Bands AxisLabels(const LayoutInputs& in, const Fit& f, double eff_pt, Layout& L) {
  const auto [row_w, col_w] = TokenLabels(in, f, eff_pt, L);
  Bands b = ColumnLabels(in, f, col_w, L);
  b.row = L.row_labels ? in.R(row_w + L.label_pad + 2 * f.s) : 0;
  IndexLabels(in, f, b, L);
  return b;
}

// Weights inside cells: the largest type (up to 13 pt) at which "0.00" fills at most
// 68% of the cell; printed only if that is at least 7 pt.
void CellValues(const LayoutInputs& in, const Fit& f, Layout& L) {
  const double s = f.s;
  const Style probe{static_cast<float>(100 * s), false};
  const double per_pt = in.text.Width("0.00", probe) / (100.0 * s);  // width of "0.00" per pixel of type size
  const double fit_pt = (L.cell - L.gap) * 0.68 / per_pt / s;
  L.value = {static_cast<float>(std::min({13.0, fit_pt, (L.cell - L.gap) * 0.55 / s}) * s), false};
  L.values = in.o.values && f.k == 1 && L.value.px >= 7 * s;
}

// Each map's title ("head 3"; under GQA "reads K/V head 1" beside it) and the
// widest one.
struct Titles {
  std::vector<std::pair<std::string, std::string>> text;  // title, subtitle
  double width = 0;
};

Titles PanelTitles(const LayoutInputs& in, const Fit& f, const Layout& L) {
  const int H = in.t.cfg.num_heads;
  const bool gqa = in.t.cfg.kv_heads() != H;
  Titles out;
  for (int h : in.heads) {
    std::string tt, st;
    if (h >= 0) {
      char b[96];
      std::snprintf(b, sizeof b, _("head %d"), h);
      tt = b;
      if (gqa) {
        std::snprintf(b, sizeof b, _("reads K/V head %d"), in.t.KvHeadOf(h));
        st = b;
      }
    } else {
      char b[96];
      std::snprintf(b, sizeof b, P_("mean over %d head", "mean over %d heads", H), H);
      tt = b;
    }
    out.text.emplace_back(tt, st);
    out.width = std::max<double>(
        out.width, in.text.Width(tt, L.title) + (st.empty() ? 0 : 8 * f.s + in.text.Width(st, L.subtitle)));
  }
  return out;
}

// Colour bar block: bar, ticks, title; the masked swatch under it. Returns its width.
double ColourBarBlock(const LayoutInputs& in, const Fit& f, Layout& L) {
  const double s = f.s;
  L.colour_scale = in.o.colour_scale;
  L.bar_title = ColourScaleTitle(in.o.colour_scale);
  if (in.o.colour_scale == ColourScale::Fixed)
    L.ticks = {"0", "0.25", "0.5", "0.75", "1"};
  else
    L.ticks = {"0", "", "", "", "max"};
  L.mask_legend = in.t.cfg.mask == Mask::Causal;
  L.mask_text = _("masked (weight 0)");
  L.bar_w = in.R(16 * s);
  double block_w =
      std::max<double>(L.bar_w + 10 * s + in.text.Width("0.75", L.tick), in.text.Width(L.bar_title, L.subtitle));
  if (L.mask_legend) block_w = std::max<double>(block_w, L.bar_w + 8 * s + in.text.Width(L.mask_text, L.subtitle));
  return in.R(block_w);
}

// The sizes the grid of maps is built from.
struct Cells {
  double panel_w = 0, panel_h = 0;  // one map with its title and labels
  double gx = 0, gy = 0;            // space between maps
  double bar_gap = 0, block_w = 0;  // the colour bar's block right of the grid
  double title_h = 0;
};

// Grid of panels: the column count that brings the figure closest to 16:9, with a
// cost for each empty slot (a lone map on a row looks lost).
int GridColumns(const LayoutInputs& in, const Fit& f, const Cells& c, double margin) {
  if (in.o.columns > 0) return std::min(in.o.columns, in.P);
  const double header_guess = in.o.header ? 110 * f.s : 0.0;
  int best_c = 1;
  double best = 1e30;
  for (int cols = 1; cols <= in.P; ++cols) {
    const int r = (in.P + cols - 1) / cols;
    const double W = cols * c.panel_w + (cols - 1) * c.gx + c.bar_gap + c.block_w + 2 * margin;
    const double Hh = r * c.panel_h + (r - 1) * c.gy + header_guess + 2 * margin;
    const double score = std::fabs(std::log(W / Hh) - std::log(16.0 / 9.0)) + 0.1 * (r * cols - in.P);
    if (score < best - 1e-9) {
      best = score;
      best_c = cols;
    }
  }
  return best_c;
}

// Where each map and the colour bar go, and the figure's size.
void Place(const LayoutInputs& in, const Fit& f, const Cells& c, const Titles& titles, const Bands& b, int gc,
           double header_w, double header_bottom, Layout& L) {
  const double s = f.s;
  const int gr = (in.P + gc - 1) / gc;
  const double grid_total_w = gc * c.panel_w + (gc - 1) * c.gx;
  const double grid_total_h = gr * c.panel_h + (gr - 1) * c.gy;
  const double grid_top = in.R(header_bottom + 14 * s);
  L.panels.clear();
  for (int i = 0; i < in.P; ++i) {
    PanelLayout p;
    p.head = in.heads[static_cast<std::size_t>(i)];
    p.title = titles.text[static_cast<std::size_t>(i)].first;
    p.subtitle = titles.text[static_cast<std::size_t>(i)].second;
    const int pc = i % gc, pr = i / gc;
    p.x = in.R(L.margin + pc * (c.panel_w + c.gx));
    p.y = in.R(grid_top + pr * (c.panel_h + c.gy));
    p.grid_x = in.R(p.x + b.row);
    p.grid_y = in.R(p.y + c.title_h + b.col);
    p.title_baseline = in.R(p.y + in.text.Ascent(L.title));
    L.panels.push_back(p);
  }

  // Colour bar, aligned with the first row of maps.
  L.bar_x = in.R(L.margin + grid_total_w + c.bar_gap);
  L.bar_y = L.panels.front().grid_y;
  L.bar_h = in.R(std::max(100 * s, std::min(L.grid_h, 320 * s)));
  L.bar_title_baseline = in.R(L.bar_y - 10 * s - in.text.Descent(L.subtitle));
  L.mask_y = in.R(L.bar_y + L.bar_h + 28 * s);
  double bottom = grid_top + grid_total_h;
  bottom = std::max(bottom, L.bar_y + L.bar_h + in.text.Descent(L.tick) + 8 * s);
  if (L.mask_legend) bottom = std::max(bottom, L.mask_y + 16 * s);

  L.width = in.R(2 * L.margin + header_w);
  L.height = in.R(bottom + L.margin);
}

// Moves everything drawn by (dx, dy).
void Shift(double dx, double dy, Layout& L) {
  L.header_x += dx;
  for (auto& h : L.header) h.baseline += dy;
  for (auto& p : L.panels) {
    p.x += dx;
    p.grid_x += dx;
    p.y += dy;
    p.grid_y += dy;
    p.title_baseline += dy;
  }
  L.bar_x += dx;
  L.bar_y += dy;
  L.bar_title_baseline += dy;
  L.mask_y += dy;
}

// Pads the canvas to width / height = aspect, the figure centred on it.
void PadToAspect(const LayoutInputs& in, double aspect, Layout& L) {
  double w = L.width, h = L.height;
  if (w / h < aspect)
    w = h * aspect;
  else
    h = w / aspect;
  w = in.R(w);
  h = in.R(h);
  Shift(in.R((w - L.width) / 2), in.R((h - L.height) / 2), L);
  L.width = w;
  L.height = h;
}

// One try at the layout with the figure shrunk as far as `f` says.
void TryLayout(const LayoutInputs& in, const Fit& f, Layout& L) {
  const double s = f.s;
  SetStyles(in, f, L);
  const double eff_pt = SizeCells(in, f, L);
  const Bands b = AxisLabels(in, f, eff_pt, L);
  CellValues(in, f, L);
  const Titles titles = PanelTitles(in, f, L);

  Cells c;
  c.gx = in.R(30 * s);
  c.gy = in.R(22 * s);
  c.title_h = in.R(in.text.Ascent(L.title) + in.text.Descent(L.title) + 10 * s);
  c.panel_w = in.R(b.row + std::max(L.grid_w + b.right_overflow, titles.width));
  c.panel_h = c.title_h + b.col + L.grid_h;
  c.block_w = ColourBarBlock(in, f, L);
  c.bar_gap = in.R(36 * s);

  auto place = [&](int gc) {
    const double content_w = gc * c.panel_w + (gc - 1) * c.gx + c.bar_gap + c.block_w;
    const double header_w = in.o.header ? std::max(content_w, 600 * s) : content_w;
    LayoutNotes(in, f, L);
    const double header_bottom = LayoutHeader(in, f, header_w, content_w, L);
    Place(in, f, c, titles, b, gc, header_w, header_bottom, L);
  };
  if (in.o.fit <= 0) {
    place(GridColumns(in, f, c, L.margin));
    return;
  }
  // A slide of the given shape: the columns whose figure is closest to it (given
  // ones: those), then the canvas padded to exactly that shape, the figure centred.
  int best = 1;
  if (in.o.columns > 0) {
    best = std::min(in.o.columns, in.P);
  } else {
    double best_score = 1e30;
    for (int gc = 1; gc <= in.P; ++gc) {
      place(gc);
      const double score = std::fabs(std::log(L.width / L.height / in.o.fit));
      if (score < best_score - 1e-9) {
        best_score = score;
        best = gc;
      }
    }
  }
  place(best);
  PadToAspect(in, in.o.fit, L);
}

// How many times over the PNG caps the figure is (<= 1: it fits).
double Overflow(const Layout& L) {
  const double pixels = L.width * L.height;
  return std::max({pixels / static_cast<double>(kMaxPixels), L.width / kMaxSide, L.height / kMaxSide, 0.0});
}

// First lower the resolution (everything shrinks together, labels stay), then shrink
// the cells down to 1 px, then average k x k cells per pixel.
void Shrink(double over, double cell, Fit& f) {
  const double lin = std::sqrt(over);
  if (f.s > 1.0 && f.cell_override == 0) {
    f.s = std::max(1.0, std::floor(f.s / lin * 100) / 100);
  } else if (cell > 1) {
    f.cell_override = std::max(1.0, std::min(cell - 1, std::floor(cell / lin)));
  } else {
    ++f.k;
  }
}

}  // namespace

Layout MakeLayout(const Trace& t, const HeatmapOptions& o, Text& text, bool vector) {
  CheckHead(t, o.head);
  LayoutInputs in{t,
                  o,
                  text,
                  vector,
                  static_cast<double>(std::clamp(o.scale, 1, 8)),
                  std::max(t.seq, t.seq_kv),
                  PanelHeads(t, o),
                  0,
                  QueryTokens(t),
                  KeyTokens(t)};
  in.P = static_cast<int>(in.heads.size());
  in.cell_pt = CellPoints(in);

  Layout L;
  L.rows = t.seq;
  L.cols = t.seq_kv;
  Fit f{in.s_requested};
  for (int iter = 0; iter < 200; ++iter) {
    TryLayout(in, f, L);
    if (vector) break;
    const double over = Overflow(L);
    if (over <= 1.0) break;
    Shrink(over, L.cell, f);
  }
  return L;
}

}  // namespace mha::render
