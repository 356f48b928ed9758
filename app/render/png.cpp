// The raster figure (RGBA) and its PNG encoding.
#include <algorithm>
#include <cmath>
#include <mutex>

#include <stb_image_write.h>  // the implementation is in libstb (no STB_IMAGE_WRITE_IMPLEMENTATION)

#include "render/layout.hpp"

namespace mha::render {
namespace {

void DrawRich(Image& img, Text& text, const std::string& s, double x, double baseline, Style st, Rgb c) {
  for (const auto& [part, kind] : RichSpans(s)) {
    Style ss = st;
    double y = baseline;
    if (kind) {
      ss.px = st.px * 0.7f;
      y += kind == 1 ? -0.38 * st.px : 0.18 * st.px;
    }
    text.Draw(img, part, static_cast<float>(x), static_cast<float>(y), ss, c);
    x += text.Width(part, ss);
  }
}

void DrawPanel(Image& img, Text& text, const Layout& L, const PanelLayout& p, const Trace& t) {
  const double s = L.s;
  // Title: "head 3" in bold, then "reads K/V head 1" in grey.
  text.Draw(img, p.title, static_cast<float>(p.grid_x), static_cast<float>(p.title_baseline), L.title, kInk);
  if (!p.subtitle.empty())
    text.Draw(img, p.subtitle, static_cast<float>(p.grid_x + text.Width(p.title, L.title) + 8 * s),
              static_cast<float>(p.title_baseline), L.subtitle, kGrey);

  const PanelData d = GetPanelData(t, p.head, L.colour_scale);
  const int k = L.downsample;
  const int cell = static_cast<int>(L.cell), gap = static_cast<int>(L.gap);
  const int gx = static_cast<int>(p.grid_x), gy = static_cast<int>(p.grid_y);
  const int vrows = (L.rows + k - 1) / k, vcols = (L.cols + k - 1) / k;
  for (int r = 0; r < vrows; ++r)
    for (int c = 0; c < vcols; ++c) {
      Rgb col;
      if (k == 1) {
        col = d.Colour(static_cast<std::size_t>(r) * L.cols + c, L.cols);
      } else {
        // Mean of the k x k block; grey only if every cell in it is masked.
        double sum = 0;
        int cnt = 0, masked = 0;
        for (int rr = r * k; rr < std::min(L.rows, (r + 1) * k); ++rr)
          for (int cc = c * k; cc < std::min(L.cols, (c + 1) * k); ++cc) {
            const std::size_t i = static_cast<std::size_t>(rr) * L.cols + cc;
            sum += d.w[i] / d.divisor[static_cast<std::size_t>(rr)];
            ++cnt;
            masked += d.masked[i];
          }
        col = masked == cnt ? kMaskedColour : Colormap(static_cast<float>(sum / cnt));
      }
      FillRect(img, gx + c * cell, gy + r * cell, cell - gap, cell - gap, col);
      if (L.values && k == 1) {
        const std::size_t i = static_cast<std::size_t>(r) * L.cols + c;
        if (d.masked[i]) continue;
        const std::string v = FormatWeight(d.w[i]);
        const double inner = cell - gap;
        const double tw = text.Width(v, L.value);
        text.Draw(img, v, static_cast<float>(gx + c * cell + (inner - tw) / 2),
                  static_cast<float>(gy + r * cell + inner / 2 + 0.36 * L.value.px), L.value, TextColourOn(col));
      }
    }

  // Token positions instead of labels on maps too big for text.
  if (L.index_step > 0) {
    const int tick = std::max(1, static_cast<int>(std::lround(L.s)));
    const int len = static_cast<int>(std::lround(4 * L.s));
    for (int i = 0; i < std::max(L.rows, L.cols); i += L.index_step) {
      const std::string num = std::to_string(i);
      const double w = text.Width(num, L.index_style);
      const double at = (i + 0.5) / k * cell;
      if (i < L.rows) {
        FillRect(img, gx - len - 1, static_cast<int>(gy + at) - tick / 2, len, tick, kGrey);
        text.Draw(img, num, static_cast<float>(gx - len - 3 * L.s - w),
                  static_cast<float>(gy + at + 0.36 * L.index_style.px), L.index_style, kGrey);
      }
      if (i < L.cols) {
        FillRect(img, static_cast<int>(gx + at) - tick / 2, gy - len - 1, tick, len, kGrey);
        text.Draw(img, num, static_cast<float>(gx + at - w / 2),
                  static_cast<float>(gy - len - 3 * L.s - text.Descent(L.index_style)), L.index_style, kGrey);
      }
    }
  }

  // Row labels: right-aligned, centred on each row.
  if (L.row_labels)
    for (int r = 0; r < L.rows; ++r) {
      const std::string& lab = L.row_text[static_cast<std::size_t>(r)];
      const double w = text.Width(lab, L.label);
      text.Draw(img, lab, static_cast<float>(p.grid_x - L.label_pad - w),
                static_cast<float>(p.grid_y + (r + 0.5) * cell - gap / 2.0 + 0.36 * L.label.px), L.label, kInk);
    }
  // Column labels: horizontal when they fit (Hangul on staggered lines), else reading
  // upwards from the map.
  if (L.col_labels)
    for (int c = 0; c < L.cols; ++c) {
      const std::string& lab = L.col_text[static_cast<std::size_t>(c)];
      const double cx = p.grid_x + (c + 0.5) * cell - gap / 2.0;
      if (L.col_angle == 0) {
        const double w = text.Width(lab, L.col_label);
        text.Draw(img, lab, static_cast<float>(cx - w / 2),
                  static_cast<float>(p.grid_y - L.label_pad - text.Descent(L.col_label) - StaggerLift(text, L, c)),
                  L.col_label, kInk);
      } else {
        // Rotated about the start of the text, which sits just above the column; at 45
        // degrees the start moves left so the first letter is centred on the column.
        const Coverage m = text.Render(lab, L.col_label);
        const double shift = L.col_angle == 45 ? 0.2 * L.col_label.px : 0.0;
        BlitRotated(img, m, 1.0f, static_cast<float>(m.baseline - 0.36 * L.col_label.px),
                    static_cast<float>(cx - shift), static_cast<float>(p.grid_y - L.label_pad),
                    static_cast<float>(L.col_angle), kInk);
      }
    }
}

void DrawColourBar(Image& img, Text& text, const Layout& L) {
  const double s = L.s;
  text.Draw(img, L.bar_title, static_cast<float>(L.bar_x), static_cast<float>(L.bar_title_baseline), L.subtitle, kInk);
  const int x = static_cast<int>(L.bar_x), y = static_cast<int>(L.bar_y);
  const int w = static_cast<int>(L.bar_w), h = static_cast<int>(L.bar_h);
  // 1 at the top, 0 at the bottom, like a y axis.
  for (int yy = 0; yy < h; ++yy) {
    const float v = h > 1 ? 1.0f - static_cast<float>(yy) / static_cast<float>(h - 1) : 1.0f;
    FillRect(img, x, y + yy, w, 1, Colormap(v));
  }
  const int line = std::max(1, static_cast<int>(std::lround(s)));
  for (int i = 0; i <= 4; ++i) {
    const int ty = y + static_cast<int>(std::lround((h - 1) * (1.0 - i / 4.0)));
    FillRect(img, x + w, ty - line / 2, static_cast<int>(std::lround(5 * s)), line, kInk);
    text.Draw(img, L.ticks[static_cast<std::size_t>(i)], static_cast<float>(x + w + 8 * s),
              static_cast<float>(ty + 0.36 * L.tick.px), L.tick, kInk);
  }
  if (L.mask_legend) {
    const int my = static_cast<int>(L.mask_y);
    FillRect(img, x, my, w, w, kMaskedColour);
    text.Draw(img, L.mask_text, static_cast<float>(x + w + 8 * s),
              static_cast<float>(my + w / 2.0 + 0.36 * L.subtitle.px), L.subtitle, kInk);
  }
}

}  // namespace

Image RenderHeatmaps(const Trace& t, const HeatmapOptions& o) {
  Text text;
  const Layout L = MakeLayout(t, o, text, false);
  Image img;
  img.width = static_cast<int>(L.width);
  img.height = static_cast<int>(L.height);
  img.rgba.assign(static_cast<std::size_t>(img.width) * img.height * 4, 255);
  for (const auto& hl : L.header) {
    if (hl.rich)
      DrawRich(img, text, hl.text, L.header_x, hl.baseline, hl.st, hl.colour);
    else
      text.Draw(img, hl.text, static_cast<float>(L.header_x), static_cast<float>(hl.baseline), hl.st, hl.colour);
  }
  for (const auto& p : L.panels) {
    DrawPanel(img, text, L, p, t);
    img.panels.push_back({p.head, static_cast<int>(p.grid_x), static_cast<int>(p.grid_y), L.rows, L.cols,
                          static_cast<int>(L.cell), static_cast<int>(L.gap), L.downsample});
  }
  DrawColourBar(img, text, L);
  img.notes = L.notes;
  img.notes.insert(img.notes.end(), L.quiet_notes.begin(), L.quiet_notes.end());
  return img;
}

std::string EncodePng(const Image& img) {
  if (img.width <= 0 || img.height <= 0 || img.rgba.size() != static_cast<std::size_t>(img.width) * img.height * 4)
    throw Error("Cannot encode an empty or inconsistent image as PNG.");
  // Opaque by construction, so RGB: a quarter smaller and no alpha surprises in slides.
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(img.width) * img.height * 3);
  for (std::size_t i = 0, n = static_cast<std::size_t>(img.width) * img.height; i < n; ++i) {
    rgb[i * 3] = img.rgba[i * 4];
    rgb[i * 3 + 1] = img.rgba[i * 4 + 1];
    rgb[i * 3 + 2] = img.rgba[i * 4 + 2];
  }
  // stb's deflate is slow; with no row filter and the fastest level a slide-sized
  // figure (flat cells, text) encodes about 2.5x faster and only ~10% bigger.
  static std::once_flag once;
  std::call_once(once, [] {
    stbi_write_force_png_filter = 0;
    stbi_write_png_compression_level = 1;
  });
  std::string out;
  auto sink = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(sink, &out, img.width, img.height, 3, rgb.data(), img.width * 3) || out.empty())
    throw Error("PNG encoding failed (out of memory?). Try a smaller --scale or fewer tokens.");
  return out;
}

}  // namespace mha::render
