// The vector figure: the same layout as the PNG, every cell a <rect>, text as <text>.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/layout.hpp"

namespace mha::render {
namespace {

// Numbers in attributes: at most 2 decimals, no trailing zeros.
std::string N(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string Hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

// XML text and attribute escaping. Characters XML 1.0 forbids even when escaped
// (most C0 controls, U+FFFE, U+FFFF) become U+FFFD so the file always parses.
std::string Esc(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (char32_t cp : DecodeUtf8(s)) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF) cp = 0xFFFD;
        out += EncodeUtf8({cp});
    }
  }
  return out;
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string TextEl(double x, double y, Style st, Rgb c, const std::string& body, const char* extra = "") {
  std::string s = "<text x=\"" + N(x) + "\" y=\"" + N(y) + "\" font-size=\"" + N(st.px) + "\"";
  if (st.bold) s += " font-weight=\"bold\"";
  if (c != kInk) s += " fill=\"" + Hex(c) + "\"";
  s += extra;
  s += ">" + body + "</text>\n";
  return s;
}

std::string RichBody(const std::string& s) {
  // Super/subscripts shift with dy (understood by every SVG viewer, unlike
  // baseline-shift); the next normal span shifts back. em is the span's own size.
  std::string out, back;
  for (const auto& [part, kind] : RichSpans(s)) {
    if (kind == 0) {
      out += back.empty() ? Esc(part) : "<tspan dy=\"" + back + "\">" + Esc(part) + "</tspan>";
      back.clear();
    } else {
      out += std::string("<tspan font-size=\"70%\" dy=\"") + (kind == 1 ? "-0.54em" : "0.26em") + "\">" + Esc(part) +
             "</tspan>";
      back = kind == 1 ? "0.378em" : "-0.182em";
    }
  }
  return out;
}

}  // namespace

long long SvgCellCount(const Trace& t, const HeatmapOptions& o) {
  CheckHead(t, o.head);
  const long long heads = o.head >= 0 ? 1 : t.cfg.num_heads;
  return heads * t.seq * t.seq_kv;
}

std::string RenderHeatmapsSvg(const Trace& t, const HeatmapOptions& o) {
  const long long cells = SvgCellCount(t, o);
  if (cells > kMaxSvgCells)
    throw Error("An SVG of " + std::to_string(cells) + " cells would be too big to open (the limit is " +
                std::to_string(kMaxSvgCells) +
                " cells, e.g. one head of 512 tokens). Export a single head, use "
                "fewer tokens or heads, or export a PNG instead.");
  Text text;
  const Layout L = MakeLayout(t, o, text, true);
  const double s = L.s;
  std::string out;
  out.reserve(static_cast<std::size_t>(cells) * 170 + 20000);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + N(L.width) + "\" height=\"" + N(L.height) +
         "\" viewBox=\"0 0 " + N(L.width) + " " + N(L.height) +
         // Laid out with NanumGothic's widths; where it is missing, the nearest Korean
         // sans-serif fonts of each system, then Latin ones, then any sans-serif; Symbola
         // for the emoji, as the PNG draws them.
         "\" font-family=\"NanumGothic, 'Nanum Gothic', 'Noto Sans KR', 'Noto Sans CJK KR', 'Malgun Gothic', "
         "'Apple SD Gothic Neo', 'Noto Sans', 'DejaVu Sans', Arial, Symbola, sans-serif\" fill=\"" +
         Hex(kInk) + "\" xml:space=\"preserve\" style=\"white-space: pre\">\n";
  out += "<title>" + Esc(L.plain_title) + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

  // Header.
  out += "<g class=\"header\">\n";
  for (const auto& hl : L.header)
    out += TextEl(L.header_x, hl.baseline, hl.st, hl.colour, hl.rich ? RichBody(hl.text) : Esc(hl.text));
  out += "</g>\n";

  const std::vector<std::string> qtoks = QueryTokens(t), ktoks = KeyTokens(t);
  const double inner = L.cell - L.gap;
  for (const auto& p : L.panels) {
    // crispEdges: abutting cells would otherwise show anti-aliased seams (moire).
    out += "<g class=\"panel\" data-head=\"" + std::to_string(p.head) + "\" shape-rendering=\"crispEdges\">\n";
    out += TextEl(p.grid_x, p.title_baseline, L.title, kInk, Esc(p.title));
    if (!p.subtitle.empty())
      out +=
          TextEl(p.grid_x + text.Width(p.title, L.title) + 8 * s, p.title_baseline, L.subtitle, kGrey, Esc(p.subtitle));
    const PanelData d = GetPanelData(t, p.head, L.colour_scale);
    const char* cls = p.head >= 0 ? "cell" : "mean-cell";
    std::string values;
    for (int r = 0; r < L.rows; ++r)
      for (int c = 0; c < L.cols; ++c) {
        const std::size_t i = static_cast<std::size_t>(r) * L.cols + c;
        const Rgb col = d.Colour(i, L.cols);
        const double x = p.grid_x + c * L.cell, y = p.grid_y + r * L.cell;
        out += std::string("<rect class=\"") + cls + "\" x=\"" + N(x) + "\" y=\"" + N(y) + "\" width=\"" + N(inner) +
               "\" height=\"" + N(inner) + "\" fill=\"" + Hex(col) + "\"><title>query " +
               Esc("\u201C" + qtoks[static_cast<std::size_t>(r)] + "\u201D") + " \u2192 key " +
               Esc("\u201C" + ktoks[static_cast<std::size_t>(c)] + "\u201D") + ": ";
        if (d.masked[i])
          out += "masked (score \u2212\u221E), weight 0";
        else {
          out += "weight " + Fmt("%.4f", d.w[i]);
          if (!d.score.empty()) out += ", score " + Fmt("%.4f", d.score[i]);
        }
        out += "</title></rect>\n";
        if (L.values && !d.masked[i])
          values += TextEl(x + inner / 2, y + inner / 2, L.value, TextColourOn(col), FormatWeight(d.w[i]),
                           " text-anchor=\"middle\" dy=\"0.36em\" class=\"value\"");
      }
    out += values;
    if (L.index_step > 0) {
      const double len = 4 * s;
      for (int i = 0; i < std::max(L.rows, L.cols); i += L.index_step) {
        const double at = (i + 0.5) * L.cell;
        const std::string stroke = "\" stroke=\"" + Hex(kGrey) + "\" stroke-width=\"" + N(s) + "\"/>\n";
        if (i < L.rows) {
          out += "<line x1=\"" + N(p.grid_x - len - 1) + "\" y1=\"" + N(p.grid_y + at) + "\" x2=\"" + N(p.grid_x - 1) +
                 "\" y2=\"" + N(p.grid_y + at) + stroke;
          out += TextEl(p.grid_x - len - 3 * s, p.grid_y + at, L.index_style, kGrey, std::to_string(i),
                        " text-anchor=\"end\" dy=\"0.36em\" class=\"index\"");
        }
        if (i < L.cols) {
          out += "<line x1=\"" + N(p.grid_x + at) + "\" y1=\"" + N(p.grid_y - len - 1) + "\" x2=\"" + N(p.grid_x + at) +
                 "\" y2=\"" + N(p.grid_y - 1) + stroke;
          out += TextEl(p.grid_x + at, p.grid_y - len - 3 * s - text.Descent(L.index_style), L.index_style, kGrey,
                        std::to_string(i), " text-anchor=\"middle\" class=\"index\"");
        }
      }
    }
    if (L.row_labels)
      for (int r = 0; r < L.rows; ++r) {
        const std::string& tok = qtoks[static_cast<std::size_t>(r)];
        const std::string& lab = L.row_text[static_cast<std::size_t>(r)];
        out += TextEl(p.grid_x - L.label_pad, p.grid_y + (r + 0.5) * L.cell - L.gap / 2, L.label, kInk,
                      Esc(lab) + (lab != tok ? "<title>" + Esc(tok) + "</title>" : ""),
                      " text-anchor=\"end\" dy=\"0.36em\" class=\"row-label\"");
      }
    if (L.col_labels)
      for (int c = 0; c < L.cols; ++c) {
        const std::string& tok = ktoks[static_cast<std::size_t>(c)];
        const std::string& lab = L.col_text[static_cast<std::size_t>(c)];
        const double cx = p.grid_x + (c + 0.5) * L.cell - L.gap / 2;
        const std::string body = Esc(lab) + (lab != tok ? "<title>" + Esc(tok) + "</title>" : "");
        if (L.col_angle == 0)
          out += TextEl(cx, p.grid_y - L.label_pad - text.Descent(L.col_label) - StaggerLift(text, L, c), L.col_label,
                        kInk, body, " text-anchor=\"middle\" class=\"col-label\"");
        else
          out += "<text transform=\"translate(" + N(cx - (L.col_angle == 45 ? 0.2 * L.col_label.px : 0.0)) + " " +
                 N(p.grid_y - L.label_pad) + ") rotate(-" + std::to_string(L.col_angle) +
                 ")\" x=\"0\" y=\"0\" dy=\"0.36em\" font-size=\"" + N(L.col_label.px) + "\" class=\"col-label\">" +
                 body + "</text>\n";
      }
    out += "</g>\n";
  }

  // Colour bar: a gradient through the same colormap, 1 at the top.
  out += "<defs><linearGradient id=\"weight-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int i = 0; i <= 32; ++i)
    out += "<stop offset=\"" + N(i / 32.0) + "\" stop-color=\"" + Hex(Colormap(static_cast<float>(i / 32.0))) + "\"/>";
  out += "</linearGradient></defs>\n<g class=\"colour-bar\">\n";
  out += TextEl(L.bar_x, L.bar_title_baseline, L.subtitle, kInk, Esc(L.bar_title));
  out += "<rect x=\"" + N(L.bar_x) + "\" y=\"" + N(L.bar_y) + "\" width=\"" + N(L.bar_w) + "\" height=\"" + N(L.bar_h) +
         "\" fill=\"url(#weight-scale)\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double ty = L.bar_y + L.bar_h * (1.0 - i / 4.0);
    out += "<line x1=\"" + N(L.bar_x + L.bar_w) + "\" y1=\"" + N(ty) + "\" x2=\"" + N(L.bar_x + L.bar_w + 5 * s) +
           "\" y2=\"" + N(ty) + "\" stroke=\"" + Hex(kInk) + "\" stroke-width=\"" + N(s) + "\"/>\n";
    if (!L.ticks[static_cast<std::size_t>(i)].empty())
      out += TextEl(L.bar_x + L.bar_w + 8 * s, ty, L.tick, kInk, Esc(L.ticks[static_cast<std::size_t>(i)]),
                    " dy=\"0.36em\"");
  }
  if (L.mask_legend) {
    out += "<rect x=\"" + N(L.bar_x) + "\" y=\"" + N(L.mask_y) + "\" width=\"" + N(L.bar_w) + "\" height=\"" +
           N(L.bar_w) + "\" fill=\"" + Hex(kMaskedColour) + "\"/>\n";
    out +=
        TextEl(L.bar_x + L.bar_w + 8 * s, L.mask_y + L.bar_w / 2, L.subtitle, kInk, Esc(L.mask_text), " dy=\"0.36em\"");
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace mha::render
