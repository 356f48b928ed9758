#include "render/layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace mha::render {

void CheckHead(const Trace& t, int head) {
  const int H = t.cfg.num_heads;
  if (H <= 0 || t.seq <= 0 || t.seq_kv <= 0 || t.attn.rows() != static_cast<Eigen::Index>(H) * t.seq ||
      t.attn.cols() != t.seq_kv)
    throw Error("There are no attention weights to draw: run the forward pass first.");
  if (head < -1 || head >= H)
    throw Error("head " + std::to_string(head) + " is out of range: this configuration has num_heads = " +
                std::to_string(H) + ", so heads are numbered 0 to " + std::to_string(H - 1) +
                " (or -1 for all heads and their mean).");
}

PanelData GetPanelData(const Trace& t, int head) {
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

namespace {
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

std::string FormatWeight(float w) {
  if (std::isnan(w)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(w));
  return buf;
}

Rgb TextOn(Rgb c) {
  const double lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  return lum < 128 ? kWhite : Rgb{17, 17, 17};
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

std::string Quote(const std::string& s) { return "\u201C" + s + "\u201D"; }

std::string Join(const std::vector<std::string>& tokens) {
  std::string s;
  for (std::size_t i = 0; i < tokens.size(); ++i) s += (i ? " " : "") + tokens[i];
  return s;
}

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Greedy wrap of items joined by " · " into lines no wider than max_w.
std::vector<std::string> Wrap(const std::vector<std::string>& items, Text& text, Style st, double max_w) {
  std::vector<std::string> lines;
  std::string cur;
  for (const auto& it : items) {
    const std::string cand = cur.empty() ? it : cur + "  \u00B7  " + it;
    if (!cur.empty() && text.Width(cand, st) > max_w) {
      lines.push_back(cur);
      cur = it;
    } else {
      cur = cand;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  for (auto& l : lines) l = text.Ellipsize(l, st, static_cast<float>(max_w));
  return lines;
}

// Greedy word wrap of a sentence into lines no wider than max_w.
std::vector<std::string> WrapWords(const std::string& para, Text& text, Style st, double max_w) {
  std::vector<std::string> lines;
  std::string cur;
  std::size_t i = 0;
  while (i < para.size()) {
    const std::size_t sp = para.find(' ', i);
    const std::string word = para.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    i = sp == std::string::npos ? para.size() : sp + 1;
    const std::string cand = cur.empty() ? word : cur + " " + word;
    if (!cur.empty() && text.Width(cand, st) > max_w) {
      lines.push_back(cur);
      cur = word;
    } else {
      cur = cand;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  for (auto& l : lines) l = text.Ellipsize(l, st, static_cast<float>(max_w));
  return lines;
}

double RichWidth(const std::string& s, Text& text, Style st) {
  double w = 0;
  for (const auto& [part, kind] : RichSpans(s)) {
    Style ss = st;
    if (kind) ss.px = st.px * 0.7f;
    w += text.Width(part, ss);
  }
  return w;
}

std::vector<std::string> ConfigItems(const Trace& t) {
  const Config& c = t.cfg;
  std::vector<std::string> items;
  items.push_back("d_model = " + std::to_string(c.d_model));
  items.push_back("num_heads = " + std::to_string(c.num_heads));
  const int G = c.kv_heads();
  std::string kv = "num_kv_heads = " + std::to_string(G);
  if (G == 1 && c.num_heads > 1)
    kv += " (MQA: all heads share one K/V head)";
  else if (G < c.num_heads)
    kv += " (GQA: " + std::to_string(c.num_heads / G) + " query heads share each K/V head)";
  items.push_back(kv);
  items.push_back("head_dim = d_k = " + std::to_string(c.head_dim()));
  items.push_back(std::string("mask = ") + ToString(c.mask));
  items.push_back(std::string("norm = ") + ToString(c.norm));
  if (c.scale) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "scores \u00F7 \u221A%d = %.4g", c.head_dim(), std::sqrt(double(c.head_dim())));
    items.push_back(buf);
  } else {
    items.push_back("scores not scaled");
  }
  if (c.temperature != 1.0f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "temperature \u03C4 = %g", static_cast<double>(c.temperature));
    items.push_back(buf);
  }
  items.push_back(c.positional_encoding ? "sinusoidal PE" : "no positional encoding");
  items.push_back("seed = " + std::to_string(c.seed));
  return items;
}

std::string Formula(const Config& c) {
  std::string inner = "QK{^T}";
  if (c.scale && c.temperature != 1.0f) inner += " / (\u221Ad{_k} \u00B7 \u03C4)";
  else if (c.scale) inner += " / \u221Ad{_k}";
  else if (c.temperature != 1.0f) inner += " / \u03C4";
  std::string f = "softmax(" + inner + ")";
  if (c.mask == Mask::Causal) f += ", causal mask";
  return f;
}

}  // namespace

Layout MakeLayout(const Trace& t, const HeatmapOptions& o, Text& text, bool vector) {
  CheckHead(t, o.head);
  Layout L;
  const int H = t.cfg.num_heads;
  const bool cross = t.in.cross();
  const double s_requested = std::clamp(o.scale, 1, 8);
  double s = s_requested;
  auto R = [vector](double v) { return vector ? v : std::round(v); };
  L.rows = t.seq;
  L.cols = t.seq_kv;
  const int n = std::max(L.rows, L.cols);
  const std::vector<std::string> qtoks = QueryTokens(t), ktoks = KeyTokens(t);

  std::vector<int> heads;
  if (o.head >= 0) {
    heads.push_back(o.head);
  } else {
    for (int h = 0; h < H; ++h) heads.push_back(h);
    if (H > 1) heads.push_back(-1);  // with one head the mean would repeat it
  }
  const int P = static_cast<int>(heads.size());

  // Cells big enough for a printed weight up to a dozen tokens, token labels up to
  // 64 tokens; past that the maps keep a fixed size and the cells shrink.
  double cell_pt = std::min((P == 1 ? 640.0 : 330.0) / n, P == 1 ? 56.0 : 40.0);
  if (n <= 64) cell_pt = std::max(cell_pt, 10.0);
  // A few tokens: widen the cells so the key labels can stay horizontal (easier to
  // read, Korean especially) as long as the map stays within its usual size.
  {
    const Style full{static_cast<float>(13 * s), false};
    double widest = 0;
    for (const auto& tok : ktoks)
      widest = std::max<double>(widest, text.Width(text.Ellipsize(tok, full, static_cast<float>(130 * s)), full));
    const double need = widest / s + 6;
    if (need > cell_pt && n * need <= (P == 1 ? 640.0 : 330.0) && need <= 72) cell_pt = need;
  }

  double cell_override = 0;  // set once the cells themselves must shrink
  int k = 1;
  for (int iter = 0; iter < 200; ++iter) {
    L.s = s;
    L.margin = R(28 * s);
    L.title = {static_cast<float>(15 * s), true};
    L.subtitle = {static_cast<float>(12.5 * s), false};
    L.tick = {static_cast<float>(12 * s), false};
    L.label_pad = R(5 * s);
    const double gx = R(30 * s), gy = R(22 * s);
    const double cell = cell_override > 0 ? cell_override
                                          : vector ? cell_pt * s : std::max(1.0, std::round(cell_pt * s));
    L.cell = cell;
    L.downsample = k;
    const double eff_pt = cell / k / s;  // points per token on the page
    L.gap = eff_pt >= 14 && k == 1 ? std::max(1.0, R(1.0 * s)) : 0.0;
    const int vrows = (L.rows + k - 1) / k, vcols = (L.cols + k - 1) / k;
    L.grid_w = vcols * cell;
    L.grid_h = vrows * cell;

    // Token labels: the font follows the cell size within [8, 13] pt.
    L.label = {static_cast<float>(std::clamp(eff_pt * 0.62, 8.0, 13.0) * s), false};
    L.row_labels = L.col_labels = k == 1 && eff_pt >= 9.0;
    L.row_text.clear();
    L.col_text.clear();
    double row_w = 0, col_w = 0;
    const float max_label = static_cast<float>(130 * s);
    if (L.row_labels) {
      for (const auto& tok : qtoks) {
        L.row_text.push_back(text.Ellipsize(tok, L.label, max_label));
        row_w = std::max<double>(row_w, text.Width(L.row_text.back(), L.label));
      }
      for (const auto& tok : ktoks) {
        L.col_text.push_back(text.Ellipsize(tok, L.label, max_label));
        col_w = std::max<double>(col_w, text.Width(L.col_text.back(), L.label));
      }
    }
    // Column labels: horizontal if they fit (at up to 15% smaller type), else at 45
    // degrees when the cells are wide enough for slanted lines not to touch, else 90.
    L.col_label = L.label;
    L.col_angle = 0;
    double right_overflow = 0, col_band = R(6 * s);
    if (L.col_labels) {
      const double room = cell - L.gap - 4 * s;
      if (col_w > room) {
        const double shrink = room / col_w;
        if (shrink >= 0.85 && L.label.px * shrink >= 8 * s) {
          L.col_label.px = static_cast<float>(L.label.px * shrink);
          col_w *= shrink;
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
      const double line_h = text.Ascent(L.col_label) + text.Descent(L.col_label);
      if (L.col_angle == 0) {
        col_band = R(line_h + L.label_pad + 2 * s);
      } else {
        const double th = L.col_angle * 3.14159265358979323846 / 180.0;
        col_band = R(col_w * std::sin(th) + 0.5 * line_h * std::cos(th) + L.label_pad + 2 * s);
        const auto& ktoks_text = L.col_text;
        for (int c = 0; c < L.cols; ++c) {
          const double w = text.Width(ktoks_text[static_cast<std::size_t>(c)], L.col_label);
          const double end = (c + 0.5) * cell + w * std::cos(th) + 0.5 * line_h * std::sin(th);
          right_overflow = std::max(right_overflow, end - L.grid_w);
        }
      }
    }
    double row_band = L.row_labels ? R(row_w + L.label_pad + 2 * s) : 0;
    // Without labels, token positions every `index_step` tokens keep the map readable
    // ("query 128 attends to key 0").
    L.index_step = 0;
    if (!L.row_labels) {
      L.index_style = {static_cast<float>(10 * s), false};
      const double px_per_token = cell / k;
      for (int step : {1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000}) {
        if (step * px_per_token >= 36 * s) {
          L.index_step = step;
          break;
        }
      }
      if (L.index_step > 0) {
        const double num_w = text.Width(std::to_string((n - 1) / L.index_step * L.index_step), L.index_style);
        row_band = R(num_w + L.label_pad + 5 * s);
        col_band = R(text.Ascent(L.index_style) + text.Descent(L.index_style) + L.label_pad + 5 * s);
        right_overflow = std::max(right_overflow, num_w / 2);
      }
    }

    // Weights inside cells: the largest type (up to 13 pt) at which "0.00" fills at
    // most 68% of the cell; printed only if that is at least 7 pt.
    {
      const Style probe{static_cast<float>(100 * s), false};
      const double per_pt = text.Width("0.00", probe) / (100.0 * s);  // width of "0.00" per pixel of type size
      const double fit_pt = (cell - L.gap) * 0.68 / per_pt / s;
      L.value = {static_cast<float>(std::min({13.0, fit_pt, (cell - L.gap) * 0.55 / s}) * s), false};
      L.values = o.values && k == 1 && L.value.px >= 7 * s;
    }

    // Panel titles.
    const bool gqa = t.cfg.kv_heads() != H;
    double title_w = 0;
    std::vector<std::pair<std::string, std::string>> titles;
    for (int h : heads) {
      std::string tt, st;
      if (h >= 0) {
        tt = "head " + std::to_string(h);
        if (gqa) st = "reads K/V head " + std::to_string(t.KvHeadOf(h));
      } else {
        tt = "mean over " + std::to_string(H) + " heads";
      }
      titles.emplace_back(tt, st);
      title_w = std::max<double>(title_w, text.Width(tt, L.title) +
                                              (st.empty() ? 0 : 8 * s + text.Width(st, L.subtitle)));
    }
    const double title_h = R(text.Ascent(L.title) + text.Descent(L.title) + 10 * s);
    const double panel_w = R(row_band + std::max(L.grid_w + right_overflow, title_w));
    const double panel_h = title_h + col_band + L.grid_h;

    // Colour bar block: bar, ticks, title; the masked swatch under it.
    L.bar_title = "attention weight";
    L.mask_legend = t.cfg.mask == Mask::Causal;
    L.mask_text = "masked (weight 0)";
    const double bar_w = R(16 * s);
    double block_w = std::max<double>(bar_w + 10 * s + text.Width("0.75", L.tick), text.Width(L.bar_title, L.subtitle));
    if (L.mask_legend) block_w = std::max<double>(block_w, bar_w + 8 * s + text.Width(L.mask_text, L.subtitle));
    block_w = R(block_w);
    const double bar_gap = R(36 * s);

    // Grid of panels: the column count that brings the figure closest to 16:9.
    const double header_guess = 110 * s;
    int best_c = 1;
    double best = 1e30;
    for (int c = 1; c <= P; ++c) {
      const int r = (P + c - 1) / c;
      const double W = c * panel_w + (c - 1) * gx + bar_gap + block_w + 2 * L.margin;
      const double Hh = r * panel_h + (r - 1) * gy + header_guess + 2 * L.margin;
      // Closest to 16:9, with a cost for each empty slot (a lone map on a row looks lost).
      const double score = std::fabs(std::log(W / Hh) - std::log(16.0 / 9.0)) + 0.1 * (r * c - P);
      if (score < best - 1e-9) {
        best = score;
        best_c = c;
      }
    }
    const int gc = best_c, gr = (P + gc - 1) / gc;
    const double grid_total_w = gc * panel_w + (gc - 1) * gx;
    const double grid_total_h = gr * panel_h + (gr - 1) * gy;
    const double content_w = grid_total_w + bar_gap + block_w;
    const double header_w = std::max(content_w, 600 * s);
    // A wide figure gets a larger header, so it stays legible when the whole figure is
    // shrunk onto a slide.
    const double hs = std::clamp(content_w / (1200 * s), 1.0, 1.6);
    const Style head_title{static_cast<float>(21 * s * hs), true};
    const Style head_line{static_cast<float>(15 * s * hs), false};
    const Style head_small{static_cast<float>(13 * s * hs), false};
    const Style note_style{static_cast<float>(13 * s * hs), false};

    // Header.
    L.header.clear();
    double y = L.margin;
    auto add = [&](const std::string& txt, Style st, Rgb col, bool rich, double space_before) {
      y += space_before;
      const double asc = text.Ascent(st);
      HeaderLine hl{txt, st, col, R(y + asc), rich};
      L.header.push_back(hl);
      y += asc + text.Descent(st) + 3 * s;
    };
    {
      std::string what = std::string("Multi-head ") + (cross ? "cross" : "self") + "-attention weights";
      if (o.head >= 0) what = "Head " + std::to_string(o.head) + " of " + std::to_string(H) + ": " +
                              (cross ? "cross" : "self") + "-attention weights";
      std::string line = what + "  =  " + Formula(t.cfg);
      if (RichWidth(line, text, head_title) > header_w) line = what;
      add(text.Ellipsize(line, head_title, static_cast<float>(header_w)), head_title, kInk, true, 0);
    }
    {
      auto sentence_part = [&](const std::string& label, const std::string& given,
                               const std::vector<std::string>& toks, double budget) {
        const std::string suffix = "  (" + Plural(static_cast<int>(toks.size()), "token", "tokens") + ")";
        const std::string body = given.empty() ? Join(toks) : given;
        const double fixed = text.Width(label + "\u201C\u201D" + suffix, head_line);
        return label + Quote(text.Ellipsize(body, head_line, static_cast<float>(std::max(40 * s, budget - fixed)))) +
               suffix;
      };
      if (!cross) {
        add(sentence_part("sentence: ", o.sentence, qtoks, header_w), head_line, kInk, false, 4 * s);
      } else {
        add(sentence_part("queries: ", o.sentence, qtoks, header_w), head_line, kInk, false, 4 * s);
        add(sentence_part("keys/values: ", o.memory, ktoks, header_w), head_line, kInk, false, 0);
      }
    }
    for (const auto& l : Wrap(ConfigItems(t), text, head_small, header_w)) add(l, head_small, kGrey, false, 0);
    {
      std::vector<std::string> hint;
      if (cross) {
        hint = {"rows: query tokens of the sentence", "columns: key tokens of the memory sentence"};
      } else {
        hint = {"rows: query tokens (the token that looks)", "columns: key tokens (the token looked at)"};
      }
      hint.push_back("each row sums to 1");
      if (L.values) hint.push_back("numbers: weights rounded to 2 decimals");
      // On the fixed [0, 1] scale long sentences look uniformly dark; say why.
      const float wmax = o.head >= 0 ? t.AttnHead(o.head).maxCoeff() : t.attn.maxCoeff();
      if (wmax < 0.2f) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "largest weight %.3f: spread evenly over %d keys, each would get 1/%d = %.4f",
                      static_cast<double>(wmax), L.cols, L.cols, 1.0 / L.cols);
        hint.push_back(buf);
      }
      for (const auto& l : Wrap(hint, text, head_small, header_w)) add(l, head_small, kGrey, false, 0);
    }
    // What was simplified, in the image itself so a reader of the slide knows.
    L.notes.clear();
    L.quiet_notes.clear();
    if (s < s_requested) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "Drawn at scale %.2g instead of %g to stay within the image size cap (%lld megapixels).",
                    s, s_requested, kMaxPixels >> 20);
      L.notes.push_back(buf);
    }
    if (k > 1) {
      L.notes.push_back("Averaged down to fit the image size cap: each pixel shows the mean weight of " +
                        std::to_string(k) + "\u00D7" + std::to_string(k) + " cells.");
    } else if (cell_override > 0) {
      L.notes.push_back("Cells shrunk to " + std::to_string(static_cast<int>(cell)) +
                        " px to fit the image size cap.");
    }
    if (!L.row_labels)
      L.notes.push_back("Token labels left out: with " + Plural(n, "token", "tokens") +
                        " the cells are too small for text, so the axes number the token positions instead. " +
                        (P > 1 ? "Draw a single head or use fewer tokens to see the words."
                               : "Use fewer tokens to see the words."));
    else if (o.values && !L.values)
      L.quiet_notes.push_back(
          "Weights are not printed: the cells are too small for numbers (the SVG's tooltips and the app show them).");
    for (const auto& nt : L.notes)
      for (const auto& l : WrapWords(nt, text, note_style, header_w)) add(l, note_style, kNoteInk, false, 0);

    const double grid_top = R(y + 14 * s);

    // Panels.
    L.panels.clear();
    for (int i = 0; i < P; ++i) {
      PanelLayout p;
      p.head = heads[static_cast<std::size_t>(i)];
      p.title = titles[static_cast<std::size_t>(i)].first;
      p.subtitle = titles[static_cast<std::size_t>(i)].second;
      const int pc = i % gc, pr = i / gc;
      p.x = R(L.margin + pc * (panel_w + gx));
      p.y = R(grid_top + pr * (panel_h + gy));
      p.grid_x = R(p.x + row_band);
      p.grid_y = R(p.y + title_h + col_band);
      p.title_baseline = R(p.y + text.Ascent(L.title));
      L.panels.push_back(p);
    }

    // Colour bar, aligned with the first row of maps.
    L.bar_x = R(L.margin + grid_total_w + bar_gap);
    L.bar_w = bar_w;
    L.bar_y = L.panels.front().grid_y;
    L.bar_h = R(std::max(100 * s, std::min(L.grid_h, 320 * s)));
    L.bar_title_baseline = R(L.bar_y - 10 * s - text.Descent(L.subtitle));
    L.mask_y = R(L.bar_y + L.bar_h + 28 * s);
    double bottom = grid_top + grid_total_h;
    bottom = std::max(bottom, L.bar_y + L.bar_h + text.Descent(L.tick) + 8 * s);
    if (L.mask_legend) bottom = std::max(bottom, L.mask_y + 16 * s);

    L.width = R(2 * L.margin + header_w);
    L.height = R(bottom + L.margin);

    if (vector) break;
    const double pixels = L.width * L.height;
    const double over = std::max({pixels / static_cast<double>(kMaxPixels), L.width / kMaxSide,
                                  L.height / kMaxSide, 0.0});
    if (over <= 1.0) break;
    // First lower the resolution (everything shrinks together, labels stay), then
    // shrink the cells down to 1 px, then average k x k cells per pixel.
    const double lin = std::sqrt(over);
    if (s > 1.0 && cell_override == 0) {
      s = std::max(1.0, std::floor(s / lin * 100) / 100);
    } else if (cell > 1) {
      cell_override = std::max(1.0, std::min(cell - 1, std::floor(cell / lin)));
    } else {
      ++k;
    }
  }
  return L;
}

}  // namespace mha::render
