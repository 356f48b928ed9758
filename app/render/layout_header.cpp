// The header of a heatmap figure: what is drawn and its formula, the sentence, the
// configuration, how to read the maps, and what was simplified to fit.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/layout.hpp"
#include "text/i18n.hpp"

namespace mha::render {
namespace {

std::string Quote(const std::string& s) { return "\u201C" + s + "\u201D"; }

std::string Join(const std::vector<std::string>& tokens) {
  std::string s;
  for (std::size_t i = 0; i < tokens.size(); ++i) s += (i ? " " : "") + tokens[i];
  return s;
}

std::string Plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

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

std::vector<std::string> ConfigItems(const Trace& t, const std::string& positional) {
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
  if (!positional.empty())
    items.push_back(positional);
  else
    items.push_back(c.positional_encoding ? _("sinusoidal PE") : _("no positional encoding"));
  items.push_back("seed = " + std::to_string(c.seed));
  return items;
}

std::string Formula(const Config& c) {
  std::string inner = "QK{^T}";
  if (c.scale && c.temperature != 1.0f)
    inner += " / (\u221Ad{_k} \u00B7 \u03C4)";
  else if (c.scale)
    inner += " / \u221Ad{_k}";
  else if (c.temperature != 1.0f)
    inner += " / \u03C4";
  std::string f = "softmax(" + inner + ")";
  if (c.mask == Mask::Causal) f += _(", causal mask");
  return f;
}

// The formula without the {^T} / {_k} markup, for places that take plain text (an
// SVG's <title>): "softmax(QKᵀ / √d_k)".
std::string PlainText(const std::string& rich) {
  std::string out;
  for (const auto& [part, kind] : RichSpans(rich)) {
    if (kind == 1 && part == "T")
      out += "\u1D40";  // modifier letter capital T
    else if (kind == 1)
      out += "^" + part;
    else if (kind == 2)
      out += "_" + part;
    else
      out += part;
  }
  return out;
}

// How to read the maps, under the configuration.
std::vector<std::string> ReadingHints(const LayoutInputs& in, const Layout& L) {
  std::vector<std::string> hint;
  if (in.t.in.cross()) {
    hint = {_("rows: query tokens of the sentence"), _("columns: key tokens of the memory sentence")};
  } else {
    hint = {_("rows: query tokens (the token that looks)"), _("columns: key tokens (the token looked at)")};
  }
  hint.push_back(_("each row sums to 1"));
  if (L.values) hint.push_back(_("numbers: weights rounded to 2 decimals"));
  if (in.o.colour_scale != ColourScale::Fixed)
    hint.push_back(std::string(_("colours: ")) + ColourScaleHelp(in.o.colour_scale));
  // On the fixed [0, 1] scale long sentences look uniformly dark; say why.
  const float wmax = in.o.head >= 0 ? in.t.AttnHead(in.o.head).maxCoeff() : in.t.attn.maxCoeff();
  if (wmax < 0.2f && in.o.colour_scale == ColourScale::Fixed) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "largest weight %.3f: spread evenly over %d keys, each would get 1/%d = %.4f",
                  static_cast<double>(wmax), L.cols, L.cols, 1.0 / L.cols);
    hint.push_back(buf);
  }
  return hint;
}

}  // namespace

// What was simplified, in the image itself so a reader of the slide knows.
void LayoutNotes(const LayoutInputs& in, const Fit& f, Layout& L) {
  L.notes.clear();
  L.quiet_notes.clear();
  if (f.s < in.s_requested) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "Drawn at scale %.2g instead of %g to stay within the image size cap (%lld megapixels).", f.s,
                  in.s_requested, kMaxPixels >> 20);
    L.notes.push_back(buf);
  }
  if (f.k > 1) {
    L.notes.push_back("Averaged down to fit the image size cap: each pixel shows the mean weight of " +
                      std::to_string(f.k) + "\u00D7" + std::to_string(f.k) + " cells.");
  } else if (f.cell_override > 0) {
    L.notes.push_back("Cells shrunk to " + std::to_string(static_cast<int>(L.cell)) + " px to fit the image size cap.");
  }
  if (!L.row_labels)
    L.notes.push_back(
        "Token labels left out: with " + Plural(in.n, "token", "tokens") +
        " the cells are too small for text, so the axes number the token positions instead. " +
        (in.P > 1 ? "Draw a single head or use fewer tokens to see the words." : "Use fewer tokens to see the words."));
  else if (in.o.values && !L.values)
    L.quiet_notes.push_back(
        "Weights are not printed: the cells are too small for numbers (the SVG's tooltips and the app show them).");
}

// The header over the maps: what is drawn and its formula, the sentence(s), the
// configuration, how to read the maps, and the notes. A wide figure gets a larger
// header, so it stays legible when the whole figure is shrunk onto a slide. Returns
// the y under it.
double LayoutHeader(const LayoutInputs& in, const Fit& f, double header_w, double content_w, Layout& L) {
  const double s = f.s;
  {
    const bool cross = in.t.in.cross();
    std::string what = std::string("Multi-head ") + (cross ? "cross" : "self") + "-attention weights";
    if (in.o.head >= 0)
      what = "Head " + std::to_string(in.o.head) + " of " + std::to_string(in.t.cfg.num_heads) + ": " +
             (cross ? "cross" : "self") + "-attention weights";
    L.plain_title = what + " = " + PlainText(Formula(in.t.cfg));
  }
  if (!in.o.header) {  // --no-header: the maps alone; what was simplified goes to stderr
    L.header.clear();
    L.quiet_notes.insert(L.quiet_notes.begin(), L.notes.begin(), L.notes.end());
    L.notes.clear();
    return L.margin - in.R(8 * s);
  }
  Text& text = in.text;
  const Trace& t = in.t;
  const bool cross = t.in.cross();
  const int H = t.cfg.num_heads;
  // A slide (--fit) is shown whole: the header keeps its size so the maps get the room.
  const double hs = in.o.fit > 0 ? 1.0 : std::clamp(content_w / (1200 * s), 1.0, 1.6);
  const Style head_title{static_cast<float>(21 * s * hs), true};
  const Style head_line{static_cast<float>(15 * s * hs), false};
  const Style head_small{static_cast<float>(13 * s * hs), false};
  const Style note_style{static_cast<float>(13 * s * hs), false};

  L.header.clear();
  double y = L.margin;
  auto add = [&](const std::string& txt, Style st, Rgb col, bool rich, double space_before) {
    y += space_before;
    const double asc = text.Ascent(st);
    HeaderLine hl{txt, st, col, in.R(y + asc), rich};
    L.header.push_back(hl);
    y += asc + text.Descent(st) + 3 * s;
  };
  {
    // The drawn title in the interface's language (the SVG's <title> above stays English).
    char what[256];
    if (in.o.head >= 0)
      std::snprintf(what, sizeof what,
                    cross ? _("Head %d of %d: cross-attention weights") : _("Head %d of %d: self-attention weights"),
                    in.o.head, H);
    else
      std::snprintf(what, sizeof what, "%s",
                    cross ? _("Multi-head cross-attention weights") : _("Multi-head self-attention weights"));
    std::string line = what + std::string("  =  ") + Formula(t.cfg);
    if (RichWidth(line, text, head_title) > header_w) line = what;
    add(text.Ellipsize(line, head_title, static_cast<float>(header_w)), head_title, kInk, true, 0);
  }
  auto sentence_part = [&](const std::string& label, const std::string& given, const std::vector<std::string>& toks,
                           double budget) {
    char count[64];
    std::snprintf(count, sizeof count, P_("%d token", "%d tokens", toks.size()), static_cast<int>(toks.size()));
    const std::string suffix = "  (" + std::string(count) + ")";
    const std::string body = given.empty() ? Join(toks) : given;
    const double fixed = text.Width(label + "\u201C\u201D" + suffix, head_line);
    return label + Quote(text.Ellipsize(body, head_line, static_cast<float>(std::max(40 * s, budget - fixed)))) +
           suffix;
  };
  if (!cross) {
    add(sentence_part(_("sentence: "), in.o.sentence, in.qtoks, header_w), head_line, kInk, false, 4 * s);
  } else {
    add(sentence_part(_("queries: "), in.o.sentence, in.qtoks, header_w), head_line, kInk, false, 4 * s);
    add(sentence_part(_("keys/values: "), in.o.memory, in.ktoks, header_w), head_line, kInk, false, 0);
  }
  if (!in.o.weights.empty())
    add(text.Ellipsize(std::string(_("weights: ")) + _(in.o.weights.c_str()), Style{head_line.px, true},
                       static_cast<float>(header_w)),
        Style{head_line.px, true}, kInk, false, 0);
  for (const auto& l : Wrap(ConfigItems(t, in.o.positional), text, head_small, header_w))
    add(l, head_small, kGrey, false, 0);
  for (const auto& l : Wrap(ReadingHints(in, L), text, head_small, header_w)) add(l, head_small, kGrey, false, 0);
  for (const auto& nt : L.notes)
    for (const auto& l : WrapWords(nt, text, note_style, header_w)) add(l, note_style, kNoteInk, false, 0);
  return y;
}

}  // namespace mha::render
