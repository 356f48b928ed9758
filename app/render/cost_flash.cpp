// The Cost and Flash pictures (cost_flash.hpp): one Scene each, rasterised for the
// PNG and written out for the SVG.
#include "render/cost_flash.hpp"

#include <algorithm>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "mha/cost.hpp"
#include "mha/config.hpp"
#include "mha/flash.hpp"
#include "render/colormap.hpp"
#include "render/scene.hpp"
#include "text/i18n.hpp"

namespace mha::render {
namespace {

constexpr double kMargin = 16;
constexpr int kCnnKernel = 3;
constexpr Rgb kCore{214, 39, 40}, kProj{31, 119, 180}, kFfn{44, 160, 44}, kMark{255, 127, 14};
constexpr Rgb kAxis{180, 180, 180}, kGridLine{235, 235, 235}, kTableRule{210, 210, 210};

// 1234567 -> "1,234,567": the separators the app's tables use.
std::string Group(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string Printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

using Split = FlopGroups;

// The header's sentence takes at most this many lines of this many points; the rest is
// elided. On one line, 1,024 words made the picture 50,000 pixels wide.
constexpr int kSentenceLines = 3;
constexpr double kSentenceWidth = 900;
// A token's label in the Flash grid shows at most this many characters.
constexpr std::size_t kTokenLabelChars = 16;

std::size_t CharBytes(unsigned char c) { return c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; }

// `s` cut to at most `chars` characters, "…" marking a cut.
std::string Elide(const std::string& s, std::size_t chars) {
  std::size_t at = 0;
  for (std::size_t n = 0; at < s.size() && n < chars; ++n) at += CharBytes(static_cast<unsigned char>(s[at]));
  return at >= s.size() ? s : s.substr(0, at) + "\u2026";
}

// `s` in at most `max_lines` lines no wider than `width`, broken at spaces (inside a
// word only where it alone is wider than a line); "…" ends the last line if there was more.
std::vector<std::string> WrapLines(Text& text, const Style& st, const std::string& s, double width, int max_lines) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < s.size() && static_cast<int>(lines.size()) < max_lines) {
    const std::size_t j = std::min(s.find(' ', i), s.size());
    const std::string word = s.substr(i, j - i), joined = line.empty() ? word : line + " " + word;
    if (text.Width(joined, st) <= width) {
      line = joined;
      i = j + 1;
    } else if (!line.empty()) {
      lines.push_back(std::move(line));
      line.clear();
    } else {  // one word wider than the line: as many characters as fit
      std::size_t k = i;
      while (k < j) {
        const std::size_t n = std::min(CharBytes(static_cast<unsigned char>(s[k])), j - k);
        if (k > i && text.Width(s.substr(i, k + n - i), st) > width) break;
        k += n;
      }
      lines.push_back(s.substr(i, k - i));
      i = k;
    }
  }
  const bool more = i < s.size();
  if (!line.empty() && static_cast<int>(lines.size()) < max_lines) lines.push_back(std::move(line));
  if (more && !lines.empty()) {
    std::string& last = lines.back();
    while (!last.empty() && text.Width(last + "\u2026", st) > width) {
      std::size_t cut = last.size() - 1;
      while (cut > 0 && (static_cast<unsigned char>(last[cut]) & 0xC0) == 0x80) --cut;
      last.resize(cut);
    }
    last += "\u2026";
  }
  return lines;
}

void Header(Scene& sc, Text& text, double s, double& y, const std::string& title, const std::string& config,
            const std::string& sentence) {
  const Style t{static_cast<float>(15 * s), true}, l{static_cast<float>(11 * s), false};
  y = (kMargin + 15) * s;
  sc.texts.push_back(Label(kMargin * s, y, t, kInk, title));
  sc.width = std::max(sc.width, static_cast<int>(text.Width(title, t) + 2 * kMargin * s));
  y += 17 * s;
  sc.texts.push_back(Label(kMargin * s, y, l, kGrey, config));
  sc.width = std::max(sc.width, static_cast<int>(text.Width(config, l) + 2 * kMargin * s));
  if (!sentence.empty()) {
    // A model's source arrives described ("layer 1 of M.npz on “...”"), quotes included.
    const std::string quoted = sentence.find("\u201C") == std::string::npos ? "\u201C" + sentence + "\u201D" : sentence;
    for (const std::string& line : WrapLines(text, l, quoted, kSentenceWidth * s, kSentenceLines)) {
      y += 15 * s;
      sc.texts.push_back(Label(kMargin * s, y, l, kInk, line));
      sc.width = std::max(sc.width, static_cast<int>(text.Width(line, l) + 2 * kMargin * s));
    }
  }
  y += 22 * s;
}

// The scene `build` makes at `scale`, or at the largest lower scale whose picture fits
// kMaxPixels and kMaxSide (the size is proportional to the scale, and at scale 1 every
// accepted input fits); `notes` says so.
template <class Build>
Scene Fitted(double scale, std::vector<std::string>* notes, const Build& build) {
  scale = std::clamp(scale, 1.0, 8.0);
  Scene sc = build(scale);
  const double asked = scale;
  const int w0 = sc.width, h0 = sc.height;
  for (int tries = 0;
       tries < 8 && scale > 1 &&
       (sc.width > kMaxSide || sc.height > kMaxSide || static_cast<long long>(sc.width) * sc.height > kMaxPixels);
       ++tries) {
    const double w = sc.width, h = sc.height;
    const double f = std::min({kMaxSide / w, kMaxSide / h, std::sqrt(static_cast<double>(kMaxPixels) / (w * h))});
    scale = std::max(1.0, std::floor(scale * std::min(f, 0.99) * 10) / 10);
    sc = build(scale);
  }
  CheckImageSize(sc.width, sc.height);
  if (scale != asked && notes)
    notes->push_back(
        Printf("at --scale %g the picture would be %d x %d pixels, over the limit of %lld megapixels: "
               "drawn at scale %g (%d x %d).",
               asked, w0, h0, kMaxPixels >> 20, scale, sc.width, sc.height));
  return sc;
}

std::string ConfigLine(const Trace& t) {
  return Printf(_("n = %d tokens \xC2\xB7 d_model = %d \xC2\xB7 %d heads \xC2\xB7 head_dim = %d"), t.seq, t.cfg.d_model,
                t.cfg.num_heads, t.cfg.head_dim());
}

// Beside the plot at x = bx from y = top: the shape flow's FLOPs at this n, the
// crossover, the bytes. Returns the height it reached.
double CostNotes(Scene& sc, Text& text, const Trace& t, const CostNumbers& c, double s, double bx, double top,
                 const Style& label, const Style& bold) {
  const bool ffn = c.ffn_flops > 0;
  double by = top + 10 * s;
  std::vector<std::pair<std::string, Style>> lines = {
      {Printf(_("FLOPs of this layer at n = %d (the shape flow's):"), c.n), bold},
      {Printf(_("attention core: %s"), Group(c.core_flops).c_str()), label},
      {Printf(_("projections: %s"), Group(c.projection_flops).c_str()), label}};
  if (ffn) lines.push_back({Printf(_("feed-forward: %s"), Group(c.ffn_flops).c_str()), label});
  lines.push_back({Printf(_("The core overtakes the projections at n = %d"), c.crossover_n), label});
  lines.push_back({Printf(_("(4n\xC2\xB2"
                            "d = 8n"
                            "d\xC2\xB2 at n = 2d = %d)."),
                          2 * c.d_model),
                   label});
  lines.push_back({"", label});
  lines.push_back({_("Bytes the attention weights take:"), bold});
  lines.push_back({Printf(_("weights n\xC2\xB2 x heads x 4 bytes: %s bytes"), Group(c.weights_bytes).c_str()), label});
  lines.push_back(
      {Printf(_("standard attention keeps scores and weights: %s bytes"), Group(c.standard_bytes).c_str()), label});
  lines.push_back({Printf(_("Flash attention holds one %d x %d tile per worker: %s bytes"), FlashBr(t.cfg),
                          FlashBc(t.cfg), Group(c.flash_bytes).c_str()),
                   label});
  for (const auto& [txt, st] : lines) {
    if (!txt.empty()) sc.texts.push_back(Label(bx, by, st, kInk, txt));
    sc.width = std::max(sc.width, static_cast<int>(bx + text.Width(txt, st) + kMargin * s));
    by += 16 * s;
  }
  return by;
}

Scene CostScene(const Trace& t, const CostPictureOptions& o, Text& text) {
  const double s = std::clamp(o.scale, 1.0, 8.0);
  const Style label{static_cast<float>(11 * s), false}, bold{static_cast<float>(11 * s), true},
      tick{static_cast<float>(10 * s), false};
  const CostNumbers c = CostNumbersOf(t);
  Scene sc;
  double y = 0;
  Header(sc, text, s, y, _("What attention costs"), ConfigLine(t), o.sentence);

  // Lesson 001's table.
  const std::string n_str = std::to_string(c.n);
  const std::vector<std::vector<std::string>> rows = {
      {_("layer"), _("time"), Printf(_("at n = %d, d = %d"), c.n, c.d_model), _("long-range dependency"),
       _("parallel")},
      {"RNN",
       "O(n\xC2\xB7"
       "d\xC2\xB2)",
       Group(c.rnn), Printf(_("hard: the first and last word are %d steps apart"), std::max(c.n - 1, 0)), _("no")},
      {"CNN (k = 3)",
       "O(k\xC2\xB7n\xC2\xB7"
       "d\xC2\xB2)",
       Group(c.cnn),
       Printf(_("grows with the layers: about %d layers of width 3 to span %d words"),
              std::max(1, (c.n + kCnnKernel - 2) / (kCnnKernel - 1)), c.n),
       _("yes")},
      {_("self-attention"),
       "O(n\xC2\xB2\xC2\xB7"
       "d)",
       Group(c.self_attention), _("one layer: every word sees every word"), _("yes")}};
  std::vector<double> colw(5, 0);
  for (const auto& r : rows)
    for (std::size_t k = 0; k < r.size(); ++k) colw[k] = std::max(colw[k], static_cast<double>(text.Width(r[k], bold)));
  const double pad = 10 * s, row_h = 18 * s;
  double x = kMargin * s;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double cx = x;
    for (std::size_t k = 0; k < rows[i].size(); ++k) {
      sc.texts.push_back(Label(cx, y, i == 0 ? bold : label, kInk, rows[i][k]));
      cx += colw[k] + 2 * pad;
    }
    sc.width = std::max(sc.width, static_cast<int>(cx + kMargin * s));
    sc.rects.push_back(Box(static_cast<int>(x), static_cast<int>(y + 5 * s), static_cast<int>(cx - x),
                           std::max(1, static_cast<int>(s)), kTableRule));
    y += row_h;
  }
  y += 4 * s;
  const std::string note = Printf(_("The numbers are the O() formulas with n = %d and d = d_model = %d (no constant "
                                    "factors): self-attention is the cheaper while n < d."),
                                  c.n, c.d_model);
  sc.texts.push_back(Label(x, y, tick, kGrey, note));
  sc.width = std::max(sc.width, static_cast<int>(text.Width(note, tick) + 2 * kMargin * s));
  y += 24 * s;

  // The log-log plot of FLOPs against n, from ShapeFlow at each n.
  const double left = (kMargin + 40) * s, top = y, pw = 520 * s, ph = 280 * s;
  const bool ffn = c.ffn_flops > 0;
  const double x0 = 0.0, x1 = std::max(5.0, std::ceil(std::log10(std::max(4.0 * c.d_model, 2.0 * c.n))) + 1.0);
  const int samples = 48;
  std::vector<Split> pts(samples + 1);
  std::vector<double> ns(samples + 1);
  double y0 = 1e300, y1 = 0;
  for (int i = 0; i <= samples; ++i) {
    ns[i] = std::max(1.0, std::round(std::pow(10.0, x0 + (x1 - x0) * i / samples)));
    pts[i] = GroupFlops(ShapeFlow(t.cfg, static_cast<int>(ns[i]), static_cast<int>(ns[i])));
    for (long long v : {pts[i].core, pts[i].projections, ffn ? pts[i].ffn : pts[i].core}) {
      y0 = std::min(y0, std::log10(static_cast<double>(std::max<long long>(v, 1))));
      y1 = std::max(y1, std::log10(static_cast<double>(std::max<long long>(v, 1))));
    }
  }
  y0 = std::floor(y0);
  y1 = std::ceil(y1);
  auto X = [&](double n) { return left + (std::log10(n) - x0) / (x1 - x0) * pw; };
  auto Y = [&](double v) { return top + ph - (std::log10(std::max(v, 1.0)) - y0) / (y1 - y0) * ph; };
  const int line = std::max(1, static_cast<int>(std::lround(s)));
  for (int e = static_cast<int>(x0); e <= static_cast<int>(x1); ++e) {
    sc.rects.push_back(Box(static_cast<int>(std::lround(X(std::pow(10.0, e)))), static_cast<int>(top), line,
                           static_cast<int>(ph), kGridLine));
    sc.texts.push_back(
        Label(X(std::pow(10.0, e)), top + ph + 14 * s, tick, kGrey, "1e" + std::to_string(e), Anchor::Middle));
  }
  const int ystep = std::max(1, static_cast<int>((y1 - y0) / 6));
  for (int e = static_cast<int>(y0); e <= static_cast<int>(y1); e += ystep) {
    sc.rects.push_back(Box(static_cast<int>(left), static_cast<int>(std::lround(Y(std::pow(10.0, e)))),
                           static_cast<int>(pw), line, kGridLine));
    sc.texts.push_back(
        Label(left - 5 * s, Y(std::pow(10.0, e)) + 0.36 * tick.px, tick, kGrey, "1e" + std::to_string(e), Anchor::End));
  }
  sc.rects.push_back(Box(static_cast<int>(left), static_cast<int>(top + ph), static_cast<int>(pw), line, kAxis));
  sc.rects.push_back(Box(static_cast<int>(left) - line, static_cast<int>(top), line, static_cast<int>(ph), kAxis));
  auto curve = [&](std::int64_t Split::*m, Rgb col, const char* cls) {
    ScenePath p;
    p.colour = col;
    p.width = 2 * s;
    p.cls = cls;
    for (int i = 0; i <= samples; ++i) p.pts.emplace_back(X(ns[i]), Y(static_cast<double>(pts[i].*m)));
    sc.paths.push_back(std::move(p));
  };
  curve(&Split::core, kCore, "core");
  curve(&Split::projections, kProj, "projections");
  if (ffn) curve(&Split::ffn, kFfn, "ffn");
  const double xc = X(2.0 * c.d_model);
  sc.rects.push_back(Box(static_cast<int>(std::lround(xc)), static_cast<int>(top),
                         std::max(1, static_cast<int>(1.5 * s)), static_cast<int>(ph), kMark));
  sc.texts.push_back(Label(xc + 4 * s, top + ph - 24 * s, tick, kMark, Printf("n = 2d = %d", 2 * c.d_model)));
  const double xn = X(std::max(c.n, 1));
  for (auto [v, col] :
       {std::pair<long long, Rgb>{c.core_flops, kCore}, {c.projection_flops, kProj}, {c.ffn_flops, kFfn}}) {
    if (v <= 0) continue;
    const int r = static_cast<int>(4 * s);
    sc.rects.push_back(
        Box(static_cast<int>(xn) - r, static_cast<int>(Y(static_cast<double>(v))) - r, 2 * r, 2 * r, col));
  }
  sc.texts.push_back(Label(xn + 7 * s, Y(static_cast<double>(c.core_flops)) + 14 * s, tick, kInk,
                           Printf(_("your sentence: n = %d"), c.n)));
  double ly = top + 14 * s;
  auto legend = [&](const std::string& what, Rgb col) {
    sc.rects.push_back(Box(static_cast<int>(left + 8 * s), static_cast<int>(ly - 4 * s), static_cast<int>(16 * s),
                           std::max(2, static_cast<int>(2 * s)), col));
    sc.texts.push_back(Label(left + 30 * s, ly, tick, kInk, what));
    ly += 14 * s;
  };
  legend(_("attention core: scores, softmax, weights x V (~4 n^2 d)"), kCore);
  legend(_("projections: Q, K, V, W_O (~8 n d^2)"), kProj);
  if (ffn) legend(_("feed-forward (~16 n d^2)"), kFfn);
  sc.texts.push_back(Label(left + pw / 2, top + ph + 30 * s, label, kInk, _("n (tokens), log"), Anchor::Middle));
  sc.texts.push_back(Label(left - 32 * s, top + ph / 2, label, kInk, _("FLOPs, log"), Anchor::Middle, 90));

  // Beside the plot: the shape flow's FLOPs at this n, the crossover, the bytes.
  const double by = CostNotes(sc, text, t, c, s, left + pw + 24 * s, top, label, bold);
  sc.height = static_cast<int>(std::max(top + ph + 40 * s, by) + kMargin * s);
  return sc;
}

// `svg`: every cell a <rect> with its row, column and a tooltip; the PNG's cells are one
// SceneCells block (a million rects with tooltips were some 200 MB).
Scene FlashScene(const Trace& t, const FlashPictureOptions& o, Text& text, FlashNumbers* out, bool svg) {
  const double s = std::clamp(o.scale, 1.0, 8.0);
  const FlashNumbers f = FlashNumbersOf(t, o);
  if (out) *out = f;
  const Style label{static_cast<float>(11 * s), false}, bold{static_cast<float>(11 * s), true};
  Scene sc;
  double y = 0;
  Header(sc, text, s, y, Printf(_("Flash attention, tile by tile \xC2\xB7 head %d"), f.head), ConfigLine(t),
         o.sentence);
  // The weights each row recovers at the end (exp(s - m) / l), as the Flash view shades them.
  FlashTiles ft(t, f.head, f.br, f.bc);
  while (!ft.finished()) ft.Next();
  const int n = f.seq, nk = f.seq_kv;
  const double cell = std::clamp(std::floor(440.0 / std::max(n, nk)), 1.0, 28.0) * s;
  const bool labels = cell >= 9 * s;
  const Style tok{static_cast<float>(std::min(11.0, cell / s * 0.8) * s), false};
  // The labels are cut short: one long word must not push the grid off the page.
  const auto& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;
  std::vector<std::string> row_labels, col_labels;
  double label_w = 0, label_h = 0;
  if (labels) {
    for (int i = 0; i < n; ++i) {
      row_labels.push_back(Elide(t.in.tokens[i], kTokenLabelChars));
      label_w = std::max(label_w, static_cast<double>(text.Width(row_labels.back(), tok)));
    }
    for (int j = 0; j < nk && j < static_cast<int>(keys.size()); ++j) {
      col_labels.push_back(Elide(keys[j], kTokenLabelChars));
      label_h = std::max(label_h, static_cast<double>(text.Width(col_labels.back(), tok)));
    }
  }
  // Keys stay horizontal where they fit their cell; Hangul and CJK then go on two
  // staggered lines cut to two cells (they are never turned); other keys read upwards.
  const double line_h = text.Ascent(tok) + text.Descent(tok);
  const bool upright = label_h <= cell - 2 * s;
  const bool stagger = !upright && ReadsOnlyUpright(col_labels);
  if (labels && stagger)
    for (std::size_t j = 0; j < col_labels.size(); ++j)
      col_labels[j] = text.Ellipsize(keys[j], tok, static_cast<float>(2 * cell - 4 * s));
  if (labels && (upright || stagger)) label_h = (stagger ? 2 : 1) * line_h;
  const double gx = kMargin * s + label_w + (labels ? 6 * s : 0), gy = y + label_h + (labels ? 6 * s : 0);
  SceneCells block{gx, gy, cell, n, nk, 0, {}};
  if (!svg) block.fill.reserve(static_cast<std::size_t>(n) * nk);
  for (int i = 0; i < n; ++i) {
    if (labels)
      sc.texts.push_back(
          Label(gx - 4 * s, gy + (i + 0.5) * cell + 0.36 * tok.px, tok, kInk, row_labels[i], Anchor::End));
    const std::vector<float> w = ft.Weights(i);
    for (int j = 0; j < nk; ++j) {
      const bool masked = std::isinf(t.scores(static_cast<Eigen::Index>(f.head) * t.seq + i, j));
      if (!svg) {
        block.fill.push_back(masked ? kMaskedColour : Colormap(std::clamp(w[j], 0.0f, 1.0f)));
        continue;
      }
      SceneRect r = Box(static_cast<int>(std::lround(gx + j * cell)), static_cast<int>(std::lround(gy + i * cell)),
                        std::max(1, static_cast<int>(std::lround(gx + (j + 1) * cell)) -
                                        static_cast<int>(std::lround(gx + j * cell))),
                        std::max(1, static_cast<int>(std::lround(gy + (i + 1) * cell)) -
                                        static_cast<int>(std::lround(gy + i * cell))),
                        masked ? kMaskedColour : Colormap(std::clamp(w[j], 0.0f, 1.0f)));
      r.cls = "cell";
      r.attrs = " data-row=\"" + std::to_string(i) + "\" data-col=\"" + std::to_string(j) + "\"";
      r.title = masked ? Printf("%s \xE2\x86\x92 %s: masked", t.in.tokens[i].c_str(),
                                j < static_cast<int>(keys.size()) ? keys[j].c_str() : "")
                       : Printf("%s \xE2\x86\x92 %s: %.4f", t.in.tokens[i].c_str(),
                                j < static_cast<int>(keys.size()) ? keys[j].c_str() : "", w[j]);
      sc.rects.push_back(std::move(r));
    }
  }
  if (!svg) sc.cells.push_back(std::move(block));
  for (std::size_t j = 0; j < col_labels.size(); ++j) {
    const double cx = gx + (j + 0.5) * cell;
    if (upright || stagger)
      sc.texts.push_back(Label(cx, gy - 4 * s - text.Descent(tok) - (stagger && j % 2 == 1 ? line_h : 0.0), tok, kInk,
                               col_labels[j], Anchor::Middle));
    else
      sc.texts.push_back(Label(cx + 0.36 * tok.px, gy - 4 * s, tok, kInk, col_labels[j], Anchor::Start, 90));
  }
  // The tile edges: every Br rows and every Bc columns, and the frame.
  const int edge = std::max(1, static_cast<int>(std::lround(1.5 * s)));
  for (int i = 0; i <= n; i += f.br)
    sc.rects.push_back(Box(static_cast<int>(gx), static_cast<int>(std::lround(gy + i * cell)) - edge / 2,
                           static_cast<int>(nk * cell), edge, kWhite));
  for (int j = 0; j <= nk; j += f.bc)
    sc.rects.push_back(Box(static_cast<int>(std::lround(gx + j * cell)) - edge / 2, static_cast<int>(gy), edge,
                           static_cast<int>(n * cell), kWhite));
  sc.rects.push_back(
      Box(static_cast<int>(gx), static_cast<int>(std::lround(gy + n * cell)), static_cast<int>(nk * cell), edge, kInk));
  sc.rects.push_back(
      Box(static_cast<int>(gx), static_cast<int>(gy) - edge, static_cast<int>(nk * cell) + edge, edge, kInk));
  sc.rects.push_back(
      Box(static_cast<int>(gx) - edge, static_cast<int>(gy) - edge, edge, static_cast<int>(n * cell) + 2 * edge, kInk));
  sc.rects.push_back(
      Box(static_cast<int>(std::lround(gx + nk * cell)), static_cast<int>(gy), edge, static_cast<int>(n * cell), kInk));

  const double bx = gx + nk * cell + 24 * s;
  double by = gy + 10 * s;
  const std::vector<std::pair<std::string, Style>> lines = {
      {Printf(_("Tiles of Br x Bc = %d x %d: %d in all, %d skipped (every pair masked)."), f.br, f.bc, f.tiles,
              f.skipped),
       label},
      {_("Each query row keeps a running max m, a running sum l and an unnormalised output O,"), label},
      {_("rescaled by exp(m_old - m_new) when a tile raises the max; context = O / l at the end."), label},
      {_("Shaded: the weights recovered from m and l, exp(s - m) / l (white lines: the tiles)."), label},
      {"", label},
      {Printf(_("Largest difference from the standard path's context: %.3g"), f.max_diff), bold},
      {Printf(_("(over %d x %d numbers of head %d; float rounding in another order)."), f.seq, f.head_dim, f.head),
       label},
      {"", label},
      {Printf(_("Bytes for this head: standard attention keeps %s bytes (scores and weights),"),
              Group(static_cast<long long>(f.standard_bytes)).c_str()),
       label},
      {Printf(_("Flash attention holds %s bytes (one tile, m, l and O of one block)."),
              Group(static_cast<long long>(f.held_bytes)).c_str()),
       label}};
  for (const auto& [txt, st] : lines) {
    if (!txt.empty()) sc.texts.push_back(Label(bx, by, st, kInk, txt));
    sc.width = std::max(sc.width, static_cast<int>(bx + text.Width(txt, st) + kMargin * s));
    by += 16 * s;
  }
  sc.height = static_cast<int>(std::max(gy + n * cell, by) + kMargin * s);
  return sc;
}

}  // namespace

CostNumbers CostNumbersOf(const Trace& t) {
  CostNumbers c;
  c.n = t.seq;
  c.d_model = t.cfg.d_model;
  const Split f = GroupFlops(t.flow);
  c.core_flops = f.core;
  c.projection_flops = f.projections;
  c.ffn_flops = f.ffn;
  const long long n = c.n, d = c.d_model;
  c.rnn = n * d * d;
  c.cnn = kCnnKernel * n * d * d;
  c.self_attention = n * n * d;
  c.crossover_n = CoreOvertakesProjectionsAt(t.cfg);
  c.weights_bytes = n * t.seq_kv * t.cfg.num_heads * 4LL;
  c.standard_bytes = static_cast<long long>(StandardAttentionBytes(t.cfg, t.seq, t.seq_kv));
  c.flash_bytes = static_cast<long long>(FlashWorkerBytes(t.cfg));
  return c;
}

FlashNumbers FlashNumbersOf(const Trace& t, const FlashPictureOptions& o) {
  if (o.head < 0 || o.head >= t.cfg.num_heads)
    throw Error("--head " + std::to_string(o.head) +
                " is out of range: with num_heads = " + std::to_string(t.cfg.num_heads) +
                " the heads are numbered 0 to " + std::to_string(t.cfg.num_heads - 1) + ".");
  if (t.scores.rows() == 0 || t.context.rows() == 0)
    throw Error(
        "The Flash picture compares the tiles with the standard path's context and needs its scores: "
        "export it from a standard trace (leave out --attention flash).");
  FlashNumbers f;
  f.head = o.head;
  f.seq = t.seq;
  f.seq_kv = t.seq_kv;
  f.br = std::clamp(o.br, 1, std::max(t.seq, 1));
  f.bc = std::clamp(o.bc, 1, std::max(t.seq_kv, 1));
  FlashTiles ft(t, o.head, f.br, f.bc);
  f.tiles = ft.count();
  f.head_dim = ft.head_dim();
  f.standard_bytes = ft.StandardHeadBytes();
  while (!ft.finished()) {
    const FlashTileStep& st = ft.Next();
    if (st.skipped) ++f.skipped;
    f.held_bytes = std::max(f.held_bytes, ft.HeldBytes());
  }
  const Mat c = ft.Context();
  for (int i = 0; i < t.seq; ++i)
    for (int j = 0; j < f.head_dim; ++j)
      f.max_diff = std::max(f.max_diff,
                            std::abs(static_cast<double>(c(i, j)) -
                                     static_cast<double>(t.context(static_cast<Eigen::Index>(o.head) * t.seq + i, j))));
  return f;
}

namespace {

template <class Options, class Build>
Scene FittedScene(const Options& o, std::vector<std::string>* notes, const Build& build) {
  return Fitted(o.scale, notes, [&](double scale) {
    Options at = o;
    at.scale = scale;
    return build(at);
  });
}

}  // namespace

Image DrawCostPicture(const Trace& t, const CostPictureOptions& o) {
  Text text;
  std::vector<std::string> notes;
  Image img =
      Rasterise(FittedScene(o, &notes, [&](const CostPictureOptions& at) { return CostScene(t, at, text); }), text);
  img.notes = std::move(notes);
  return img;
}

std::string CostPictureSvg(const Trace& t, const CostPictureOptions& o) {
  Text text;
  return SceneSvg(FittedScene(o, nullptr, [&](const CostPictureOptions& at) { return CostScene(t, at, text); }));
}

Image DrawFlashPicture(const Trace& t, const FlashPictureOptions& o) {
  Text text;
  std::vector<std::string> notes;
  Image img = Rasterise(
      FittedScene(o, &notes, [&](const FlashPictureOptions& at) { return FlashScene(t, at, text, nullptr, false); }),
      text);
  img.notes = std::move(notes);
  return img;
}

std::string FlashPictureSvg(const Trace& t, const FlashPictureOptions& o) {
  if (static_cast<long long>(t.seq) * t.seq_kv > kMaxSvgCells)
    throw Error("The Flash picture's SVG would hold " + Group(static_cast<long long>(t.seq) * t.seq_kv) +
                " cells, over the SVG limit of " + Group(kMaxSvgCells) + ": use fewer tokens, or write only a --png.");
  Text text;
  return SceneSvg(
      FittedScene(o, nullptr, [&](const FlashPictureOptions& at) { return FlashScene(t, at, text, nullptr, true); }));
}

}  // namespace mha::render
