#include "render/scene.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mha::render {
namespace {

std::string Num(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// An opacity as written: the weight's float to 6 significant digits, so a reader
// recovers the attention weight itself.
std::string Opacity(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", std::max(0.0, v));
  return buf;
}

std::string HexColour(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

// XML escaping; characters XML 1.0 forbids become U+FFFD so the file always parses.
std::string Xml(const std::string& s) {
  std::string out;
  for (char32_t cp : DecodeUtf8(s)) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0xFFFE || cp == 0xFFFF) cp = 0xFFFD;
        out += EncodeUtf8({cp});
    }
  }
  return out;
}

double AnchorShift(Text& text, const SceneText& t) {
  if (t.anchor == Anchor::Start) return 0;
  const double w = text.Width(t.text, t.st);
  return t.anchor == Anchor::Middle ? w / 2 : w;
}

// An anti-aliased line: coverage from each pixel centre's distance to the segment.
void DrawSegment(Image& img, double x0, double y0, double x1, double y1, double width, Rgb c) {
  const double r = width / 2;
  const int bx0 = static_cast<int>(std::floor(std::min(x0, x1) - r - 1));
  const int bx1 = static_cast<int>(std::ceil(std::max(x0, x1) + r + 1));
  const int by0 = static_cast<int>(std::floor(std::min(y0, y1) - r - 1));
  const int by1 = static_cast<int>(std::ceil(std::max(y0, y1) + r + 1));
  const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  for (int y = std::max(0, by0); y < std::min(img.height, by1); ++y)
    for (int x = std::max(0, bx0); x < std::min(img.width, bx1); ++x) {
      const double px = x + 0.5, py = y + 0.5;
      const double t = len2 > 0 ? std::clamp(((px - x0) * dx + (py - y0) * dy) / len2, 0.0, 1.0) : 0.0;
      const double d = std::hypot(px - (x0 + t * dx), py - (y0 + t * dy));
      const double a = std::clamp(r + 0.5 - d, 0.0, 1.0);
      if (a <= 0) continue;
      // Segments of one path overlap at their joints: keep the darker of the two
      // coverages instead of blending twice.
      std::uint8_t* p = &img.rgba[(static_cast<std::size_t>(y) * img.width + x) * 4];
      for (int k = 0; k < 3; ++k) {
        const int v = static_cast<int>(std::lround(c[k] * a + 255 * (1 - a)));
        if (std::abs(v - c[k]) < std::abs(p[k] - c[k])) p[k] = static_cast<std::uint8_t>(v);
      }
    }
}

// A translucent line, blended over the picture: per scanline only the pixels near the
// segment are visited, so a long diagonal costs its length, not its bounding box.
void BlendSegment(Image& img, double x0, double y0, double x1, double y1, double width, Rgb c, double opacity) {
  const double r = width / 2, reach = r + 1;
  const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  const int by0 = std::max(0, static_cast<int>(std::floor(std::min(y0, y1) - reach)));
  const int by1 = std::min(img.height, static_cast<int>(std::ceil(std::max(y0, y1) + reach)));
  for (int y = by0; y < by1; ++y) {
    const double py = y + 0.5;
    // A pixel within `reach` of the segment is within `reach` vertically of its
    // nearest point: the segment's points between these two parameters.
    double ta = 0, tb = 1;
    if (std::abs(dy) > 1e-12) {
      ta = std::clamp((py - reach - y0) / dy, 0.0, 1.0);
      tb = std::clamp((py + reach - y0) / dy, 0.0, 1.0);
      if (ta > tb) std::swap(ta, tb);
    }
    const double xa = x0 + ta * dx, xb = x0 + tb * dx;
    const int bx0 = std::max(0, static_cast<int>(std::floor(std::min(xa, xb) - reach)));
    const int bx1 = std::min(img.width, static_cast<int>(std::ceil(std::max(xa, xb) + reach)));
    for (int x = bx0; x < bx1; ++x) {
      const double px = x + 0.5;
      const double t = len2 > 0 ? std::clamp(((px - x0) * dx + (py - y0) * dy) / len2, 0.0, 1.0) : 0.0;
      const double d = std::hypot(px - (x0 + t * dx), py - (y0 + t * dy));
      const double a = std::clamp(r + 0.5 - d, 0.0, 1.0) * opacity;
      if (a <= 0) continue;
      std::uint8_t* p = &img.rgba[(static_cast<std::size_t>(y) * img.width + x) * 4];
      for (int k = 0; k < 3; ++k) p[k] = static_cast<std::uint8_t>(std::lround(c[k] * a + p[k] * (1 - a)));
    }
  }
}

}  // namespace

void CheckImageSize(long long w, long long h) {
  if (w > kMaxSide || h > kMaxSide || w * h > kMaxPixels)
    throw Error("The picture would be " + std::to_string(w) + " x " + std::to_string(h) +
                " pixels, over the limit of " + std::to_string(kMaxPixels >> 20) + " megapixels (" +
                std::to_string(kMaxSide) +
                " per side). Use a smaller --scale, fewer layers or heads, or a shorter "
                "sequence.");
}

std::string Fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

namespace {

struct CellBox {
  int x, y, w, h;
};

CellBox Edges(const SceneCells& b, int r, int c) {
  const auto at = [&](double o, int k) { return static_cast<int>(std::lround(o + k * b.pitch)); };
  return {at(b.x, c), at(b.y, r), std::max(1, at(b.x, c + 1) - at(b.x, c) - b.gap),
          std::max(1, at(b.y, r + 1) - at(b.y, r) - b.gap)};
}

}  // namespace

Image Rasterise(const Scene& s, Text& text) {
  CheckImageSize(s.width, s.height);
  Image img;
  img.width = s.width;
  img.height = s.height;
  img.rgba.assign(static_cast<std::size_t>(img.width) * img.height * 4, 255);
  for (const SceneCells& b : s.cells)
    for (int r = 0; r < b.rows; ++r)
      for (int c = 0; c < b.cols; ++c) {
        const CellBox e = Edges(b, r, c);
        FillRect(img, e.x, e.y, e.w, e.h, b.fill[static_cast<std::size_t>(r) * b.cols + c]);
      }
  for (const SceneRect& r : s.rects) FillRect(img, r.x, r.y, r.w, r.h, r.fill);
  for (const ScenePath& p : s.paths)
    for (std::size_t i = 1; i < p.pts.size(); ++i)
      if (p.opacity < 1)
        BlendSegment(img, p.pts[i - 1].first, p.pts[i - 1].second, p.pts[i].first, p.pts[i].second, p.width, p.colour,
                     std::max(0.0, p.opacity));
      else
        DrawSegment(img, p.pts[i - 1].first, p.pts[i - 1].second, p.pts[i].first, p.pts[i].second, p.width, p.colour);
  for (const SceneText& t : s.texts) {
    if (t.angle == 0) {
      text.Draw(img, t.text, static_cast<float>(t.x - AnchorShift(text, t)), static_cast<float>(t.y), t.st, t.colour);
    } else {
      // Reads upwards; the anchor shifts along the rotated baseline.
      const Coverage m = text.Render(t.text, t.st);
      const double shift = AnchorShift(text, t);
      BlitRotated(img, m, static_cast<float>(1 + shift), static_cast<float>(m.baseline), static_cast<float>(t.x),
                  static_cast<float>(t.y), static_cast<float>(t.angle), t.colour);
    }
  }
  img.panels = s.panels;
  img.notes = s.notes;
  return img;
}

std::string SceneSvg(const Scene& s) {
  std::string out;
  out.reserve(s.rects.size() * 150 + s.texts.size() * 120 + 4096);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(s.width) + "\" height=\"" +
         std::to_string(s.height) + "\" viewBox=\"0 0 " + std::to_string(s.width) + " " + std::to_string(s.height) +
         "\" font-family=\"NanumGothic, 'Nanum Gothic', 'Noto Sans CJK KR', sans-serif\" fill=\"" + HexColour(kInk) +
         "\" xml:space=\"preserve\" style=\"white-space: pre\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  // crispEdges: abutting cells would otherwise show anti-aliased seams.
  out += "<g shape-rendering=\"crispEdges\">\n";
  for (const SceneCells& b : s.cells)
    for (int r = 0; r < b.rows; ++r)
      for (int c = 0; c < b.cols; ++c) {
        const CellBox e = Edges(b, r, c);
        out += "<rect class=\"cell\" x=\"" + std::to_string(e.x) + "\" y=\"" + std::to_string(e.y) + "\" width=\"" +
               std::to_string(e.w) + "\" height=\"" + std::to_string(e.h) + "\" fill=\"" +
               HexColour(b.fill[static_cast<std::size_t>(r) * b.cols + c]) + "\"/>\n";
      }
  for (const SceneRect& r : s.rects) {
    out += "<rect";
    if (!r.cls.empty()) out += " class=\"" + r.cls + "\"";
    out += r.attrs + " x=\"" + std::to_string(r.x) + "\" y=\"" + std::to_string(r.y) + "\" width=\"" +
           std::to_string(r.w) + "\" height=\"" + std::to_string(r.h) + "\" fill=\"" + HexColour(r.fill) + "\"";
    out += r.title.empty() ? "/>\n" : "><title>" + Xml(r.title) + "</title></rect>\n";
  }
  out += "</g>\n";
  for (const ScenePath& p : s.paths) {
    out += "<polyline";
    if (!p.cls.empty()) out += " class=\"" + p.cls + "\"";
    out += p.attrs + " fill=\"none\" stroke=\"" + HexColour(p.colour) + "\" stroke-width=\"" + Num(p.width) + "\"";
    if (p.opacity < 1) out += " stroke-opacity=\"" + Opacity(p.opacity) + "\"";
    out += " stroke-linejoin=\"round\" points=\"";
    for (std::size_t i = 0; i < p.pts.size(); ++i)
      out += (i ? " " : "") + Num(p.pts[i].first) + "," + Num(p.pts[i].second);
    out += p.title.empty() ? "\"/>\n" : "\"><title>" + Xml(p.title) + "</title></polyline>\n";
  }
  for (const SceneText& t : s.texts) {
    out += "<text x=\"" + Num(t.x) + "\" y=\"" + Num(t.y) + "\" font-size=\"" + Num(t.st.px) + "\"";
    if (t.st.bold) out += " font-weight=\"bold\"";
    if (t.colour != kInk) out += " fill=\"" + HexColour(t.colour) + "\"";
    if (t.anchor != Anchor::Start)
      out += t.anchor == Anchor::Middle ? " text-anchor=\"middle\"" : " text-anchor=\"end\"";
    if (t.angle) out += " transform=\"rotate(-" + std::to_string(t.angle) + " " + Num(t.x) + " " + Num(t.y) + ")\"";
    out += ">" + Xml(t.text) + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace mha::render
