// Heatmaps: every head's attention weights side by side, plus their mean, on one
// fixed [0, 1] colour scale. Maps are GL textures (one texel per cell); labels,
// values and grid lines are drawn only where they fit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "gui/panels.hpp"
#include "gui/theme.hpp"
#include "gui/widgets.hpp"
#include "render/render.hpp"

namespace mha::gui {
namespace {

struct Geometry {
  int cols = 1, rows = 1;  // grid of maps
  float cw = 0.0f, ch = 0.0f;  // pixels per cell, across and down
  bool labels = false;     // token labels drawn
  bool vertical = false;   // key labels rotated
  float row_label_w = 0.0f, col_label_h = 0.0f, title_h = 0.0f;
  float gap_x = 0.0f, gap_y = 0.0f;
};

float MaxLabelWidth(const std::vector<std::string>& tokens, float cap) {
  float w = 0.0f;
  for (const auto& t : tokens) {
    w = std::max(w, ImGui::CalcTextSize(t.c_str()).x);
    if (w >= cap) return cap;
  }
  return w;
}

// The biggest cells for `n` maps of seq x seq_kv cells in `avail`, trying every
// column count; with labels while they fit, without once cells get too small.
// Cells may be up to kStretch times wider than tall (or taller than wide) to use
// the panel's shape; more than that would distort the map.
Geometry FitGrid(int n, int seq, int seq_kv, ImVec2 avail, float row_label, float col_label, bool shared_labels) {
  // The enlarged map may stretch to use the panel's shape; a grid of maps stays
  // square so heads compare at a glance.
  const float kStretch = n == 1 ? 2.0f : 1.0f;
  const float fs = ImGui::GetFontSize();
  Geometry best;
  float best_area = 0.0f;
  const float min_label_cell = fs * 0.85f;
  for (int labels = 1; labels >= 0; --labels) {
    for (int cols = 1; cols <= n; ++cols) {
      const int rows = (n + cols - 1) / cols;
      Geometry g;
      g.cols = cols;
      g.rows = rows;
      g.labels = labels != 0;
      g.gap_x = fs * 0.9f;
      g.gap_y = fs * 0.5f;
      g.title_h = fs * 1.3f;
      g.row_label_w = g.labels ? row_label + fs * 0.4f : 0.0f;
      // Key labels: rotated unless the cell is wide enough for them upright.
      for (int vertical = 0; vertical <= 1; ++vertical) {
        g.vertical = vertical != 0;
        g.col_label_h = g.labels ? (g.vertical ? col_label + fs * 0.3f : fs * 1.2f) : 0.0f;
        const float lw_total = shared_labels ? g.row_label_w : g.row_label_w * cols;
        const float lh_total = shared_labels ? g.col_label_h : g.col_label_h * rows;
        const float w = (avail.x - lw_total - (cols - 1) * g.gap_x) / (cols * static_cast<float>(seq_kv));
        const float h = (avail.y - lh_total - rows * g.title_h - (rows - 1) * g.gap_y) / (rows * static_cast<float>(seq));
        const float m = std::min(w, h);
        // Quarter-pixel steps keep cell edges steady while resizing; below one pixel
        // per cell (hundreds of tokens) the texture's mipmaps average the cells.
        auto quantise = [](float v) { return v >= 1.0f ? std::floor(v * 4.0f) / 4.0f : v; };
        g.cw = quantise(std::min(w, m * kStretch));
        g.ch = quantise(std::min(h, m * kStretch));
        if (!g.vertical && g.labels && col_label > g.cw - 2.0f) continue;  // upright labels would overlap
        break;
      }
      if (g.labels && std::min(g.cw, g.ch) < min_label_cell) continue;
      if (g.cw <= 0.0f || g.ch <= 0.0f) continue;
      const float area = g.cw * g.ch;
      if (area > best_area) {
        best = g;
        best_area = area;
      }
    }
    if (best_area > 0.0f && (labels == 0 || best.labels)) break;
  }
  // A panel too small for anything still gets a (tiny) valid grid.
  best.cw = std::max(best.cw, 0.05f);
  best.ch = std::max(best.ch, 0.05f);
  return best;
}

ImU32 TextOn(float v) {
  const auto c = render::Colormap(v);
  const float lum = 0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2];
  return lum > 140.0f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

std::string MapTitle(const Trace& t, int index) {
  const int H = t.cfg.num_heads;
  if (index == H) return "mean of " + std::to_string(H) + " head" + (H == 1 ? "" : "s");
  // Numbered from 0, as in the exports and the .npz arrays (attn[0, h]).
  std::string s = "head " + std::to_string(index);
  if (t.cfg.kv_heads() != H) s += "  (K/V head " + std::to_string(t.KvHeadOf(index)) + ")";
  return s;
}

// Whether cell (i, j) of map `index` is hidden by the mask (-inf score; for the mean,
// in every head), as the exporter decides it.
bool Masked(const Trace& t, int index, int i, int j) {
  auto masked = [&](int h) {
    const float sc = t.scores(static_cast<Eigen::Index>(h) * t.seq + i, j);
    return std::isinf(sc) && sc < 0;
  };
  if (index < t.cfg.num_heads) return masked(index);
  for (int h = 0; h < t.cfg.num_heads; ++h)
    if (!masked(h)) return false;
  return true;
}

// Value of map `index` (head or mean) at (i, j).
float Weight(const Result& r, int index, int i, int j) {
  const Trace& t = r.trace;
  if (index == t.cfg.num_heads) return r.mean_attn(i, j);
  return t.attn(static_cast<Eigen::Index>(index) * t.seq + i, j);
}

void CellTooltip(const Result& r, int index, int i, int j) {
  const Trace& t = r.trace;
  const auto& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(MapTitle(t, index).c_str());
  ImGui::Separator();
  ImGui::Text("query  %d \"%s\"", i, t.in.tokens[static_cast<std::size_t>(i)].c_str());
  ImGui::Text("key    %d \"%s\"", j, keys[static_cast<std::size_t>(j)].c_str());
  ImGui::Text("weight %.4f", static_cast<double>(Weight(r, index, i, j)));
  if (index < t.cfg.num_heads) {
    const float sc = t.scores(static_cast<Eigen::Index>(index) * t.seq + i, j);
    if (std::isinf(sc) && sc < 0)
      ImGui::TextUnformatted("score  masked (-inf): the causal mask hides later keys");
    else
      ImGui::Text("score  %.4f  (%s, before softmax)", static_cast<double>(sc),
                  t.cfg.scale ? "q\xC2\xB7k / \xE2\x88\x9A" "d_k" : "q\xC2\xB7k, unscaled");
  } else {
    float lo = 1.0f, hi = 0.0f;
    for (int h = 0; h < t.cfg.num_heads; ++h) {
      const float w = t.attn(static_cast<Eigen::Index>(h) * t.seq + i, j);
      lo = std::min(lo, w);
      hi = std::max(hi, w);
    }
    ImGui::Text("across heads: min %.4f, max %.4f", static_cast<double>(lo), static_cast<double>(hi));
  }
  ImGui::EndTooltip();
}

struct MapPlace {
  ImVec2 origin;            // top-left of the cells
  bool row_labels = false;  // query labels to the left
  bool col_labels = false;  // key labels above
  bool hovered = false;     // the maps' area is hovered (the mouse may be over this map)
  bool clicked = false;     // ... and was clicked this frame
};

// Draws map `index` with its cells' top-left at place.origin. Returns true if
// clicked.
bool DrawMap(AppState& s, int index, const Geometry& g, const MapPlace& place, bool values_allowed) {
  const Result& r = s.result;
  const Trace& t = r.trace;
  const Palette& pal = Pal();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const int seq = t.seq, skv = t.seq_kv;
  const float cw = g.cw, ch = g.ch;
  const ImVec2 a = place.origin;
  const ImVec2 b(a.x + cw * skv, a.y + ch * seq);
  const auto& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;

  // Title above the labels.
  const float title_y = a.y - (place.col_labels ? g.col_label_h : 0.0f) - g.title_h;
  // Titles may run into the gap to the next map; the mean's falls back to "mean".
  const float title_w = std::max(b.x - a.x + g.gap_x * 0.8f, fs * 3.0f);
  std::string title = MapTitle(t, index);
  if (index == t.cfg.num_heads && ImGui::CalcTextSize(title.c_str()).x > title_w) title = "mean";
  title = Ellipsize(title, title_w);
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  dl->AddText(ImVec2(a.x, title_y + (g.title_h - fs) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), title.c_str());
  if (s.ui.font_bold) ImGui::PopFont();

  const ImTextureID tex = reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(s.ui.textures.Texture(index)));
  dl->AddImage(tex, a, b);
  if (std::min(cw, ch) >= 10.0f) {  // thin separators make single cells readable
    for (int i = 1; i < seq; ++i) dl->AddLine(ImVec2(a.x, a.y + i * ch), ImVec2(b.x, a.y + i * ch), pal.grid_line);
    for (int j = 1; j < skv; ++j) dl->AddLine(ImVec2(a.x + j * cw, a.y), ImVec2(a.x + j * cw, b.y), pal.grid_line);
  }
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), pal.block_border);

  // Weights inside the cells when they fit: "0.23", or ".23" in narrower cells.
  const bool full = cw >= ImGui::CalcTextSize("0.00").x + 6.0f;
  const bool brief = cw >= ImGui::CalcTextSize(".00").x + 4.0f;
  if (values_allowed && (full || brief) && ch >= fs + 2.0f) {
    char buf[16];
    const ImVec4 clip = dl->_CmdHeader.ClipRect;
    for (int i = 0; i < seq; ++i) {
      const float y = a.y + i * ch;
      if (y + ch < clip.y || y > clip.w) continue;
      for (int j = 0; j < skv; ++j) {
        if (t.cfg.mask == Mask::Causal && Masked(t, index, i, j)) continue;  // grey, weight 0
        const float v = Weight(r, index, i, j);
        if (full)
          std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
        else if (v >= 0.995f)
          std::snprintf(buf, sizeof buf, "1");
        else
          std::snprintf(buf, sizeof buf, ".%02d", static_cast<int>(std::lround(v * 100.0f)));
        const ImVec2 ts = ImGui::CalcTextSize(buf);
        dl->AddText(ImVec2(a.x + j * cw + (cw - ts.x) * 0.5f, y + (ch - ts.y) * 0.5f), TextOn(v), buf);
      }
    }
  }

  // Token labels: queries left of the rows, keys above the columns.
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  if (g.labels && place.row_labels) {
    for (int i = 0; i < seq; ++i) {
      const std::string l = Ellipsize(t.in.tokens[static_cast<std::size_t>(i)], g.row_label_w - fs * 0.4f);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      const bool hot = i == s.ui.hover_token;
      dl->AddText(ImVec2(a.x - fs * 0.3f - ts.x, a.y + i * ch + (ch - ts.y) * 0.5f), hot ? pal.highlight : text, l.c_str());
    }
  }
  if (g.labels && place.col_labels) {
    for (int j = 0; j < skv; ++j) {
      const float max_w = g.vertical ? g.col_label_h - fs * 0.3f : cw - 2.0f;
      const std::string l = Ellipsize(keys[static_cast<std::size_t>(j)], max_w);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      const bool hot = !t.in.cross() && j == s.ui.hover_token;
      if (g.vertical)
        AddTextVertical(dl, ImVec2(a.x + j * cw + (cw - ts.y) * 0.5f, a.y - fs * 0.3f), hot ? pal.highlight : text, l.c_str());
      else
        dl->AddText(ImVec2(a.x + j * cw + (cw - ts.x) * 0.5f, a.y - fs * 0.15f - ts.y), hot ? pal.highlight : text, l.c_str());
    }
  }

  // Highlight the row of a hovered token chip.
  if (s.ui.hover_token >= 0 && s.ui.hover_token < seq) {
    const float y = a.y + s.ui.hover_token * ch;
    dl->AddRect(ImVec2(a.x - 1, y - 1), ImVec2(b.x + 1, y + ch + 1), pal.highlight, 0.0f, 0, 2.0f);
  }

  s.ui.probe["map " + std::to_string(index)] = {a.x, a.y, b.x - a.x, b.y - a.y};
  // Hover: tooltip for the cell, outline of its row; click enlarges.
  const ImVec2 m = ImGui::GetIO().MousePos;
  const bool over = place.hovered && m.x >= a.x && m.x < b.x && m.y >= a.y && m.y < b.y;
  if (!over) return false;
  const int i = std::clamp(static_cast<int>((m.y - a.y) / ch), 0, seq - 1);
  const int j = std::clamp(static_cast<int>((m.x - a.x) / cw), 0, skv - 1);
  dl->AddRect(ImVec2(a.x - 1, a.y + i * ch - 1), ImVec2(b.x + 1, a.y + (i + 1) * ch + 1), pal.highlight, 0.0f, 0, 1.5f);
  dl->AddRect(ImVec2(a.x + j * cw, a.y + i * ch), ImVec2(a.x + (j + 1) * cw, a.y + (i + 1) * ch),
              IM_COL32(255, 255, 255, 255), 0.0f, 0, 2.0f);
  CellTooltip(r, index, i, j);
  return place.clicked;
}

void DrawColourBar(ImVec2 a, ImVec2 size, bool masked_legend) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const char* title = "weight";
  dl->AddText(ImVec2(a.x, a.y), ImGui::GetColorU32(ImGuiCol_Text), title);
  const float top = a.y + fs * 1.6f, bottom = a.y + size.y - fs * 0.6f;
  const float x0 = a.x, x1 = a.x + fs * 1.0f;
  constexpr int kSteps = 64;
  for (int k = 0; k < kSteps; ++k) {
    // Top is 1, bottom is 0.
    const float v0 = 1.0f - static_cast<float>(k) / kSteps, v1 = 1.0f - static_cast<float>(k + 1) / kSteps;
    const auto c0 = render::Colormap(v0), c1 = render::Colormap(v1);
    const ImU32 u0 = IM_COL32(c0[0], c0[1], c0[2], 255), u1 = IM_COL32(c1[0], c1[1], c1[2], 255);
    const float y0 = top + (bottom - top) * k / kSteps, y1 = top + (bottom - top) * (k + 1) / kSteps;
    dl->AddRectFilledMultiColor(ImVec2(x0, y0), ImVec2(x1, y1 + 0.5f), u0, u0, u1, u1);
  }
  dl->AddRect(ImVec2(x0 - 1, top - 1), ImVec2(x1 + 1, bottom + 1), Pal().block_border);
  for (int k = 0; k <= 4; ++k) {
    const float v = 1.0f - k * 0.25f;
    const float y = top + (bottom - top) * k / 4.0f;
    char buf[8];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
    dl->AddLine(ImVec2(x1, y), ImVec2(x1 + fs * 0.3f, y), ImGui::GetColorU32(ImGuiCol_Text));
    dl->AddText(ImVec2(x1 + fs * 0.4f, y - fs * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), buf);
  }
  if (masked_legend) {
    // The causal mask's cells: the exporter's grey, outside the colour scale.
    const auto m = render::kMaskedColour;
    const float y = bottom + fs * 1.2f;
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + fs), IM_COL32(m[0], m[1], m[2], 255));
    dl->AddRect(ImVec2(x0 - 1, y - 1), ImVec2(x1 + 1, y + fs + 1), Pal().block_border);
    dl->AddText(ImVec2(x1 + fs * 0.4f, y), ImGui::GetColorU32(ImGuiCol_Text), "masked");
  }
}

}  // namespace

void DrawHeatmapsPanel(AppState& s) {
  const Result& r = s.result;
  const Trace& t = r.trace;
  SectionTitle(s, "Attention weights",
               "softmax(Q\xC2\xB7K^T / \xE2\x88\x9A" "d_k) per head. Row = query token (who looks), "
               "column = key token (what it looks at); each row sums to 1. Click a head to enlarge it.",
               true);
  if (!r.ok) {
    MessageBox(r.error.empty() ? "Nothing computed yet." : "Nothing to show: " + r.error, Pal().error_bg,
               Pal().error_text);
    return;
  }
  {
    const auto t0 = std::chrono::steady_clock::now();
    if (s.ui.textures.Sync(r)) {
      s.timing.last_upload_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      s.timing.upload_ms.push_back(s.timing.last_upload_ms);
    }
  }
  const int H = t.cfg.num_heads;
  if (s.ui.enlarged > H) s.ui.enlarged = -1;
  if (t.seq_kv >= 24) {
    // Why long sentences look dark on the fixed scale (and that nothing is wrong).
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped("Each row shares 1 among %d keys: an even spread is 1/%d = %.3f per cell, near the dark "
                       "end of the scale. Bright cells are keys a query singles out.",
                       t.seq_kv, t.seq_kv, 1.0 / t.seq_kv);
    ImGui::PopStyleColor();
  }
  const float fs = ImGui::GetFontSize();

  if (s.ui.enlarged >= 0) {
    if (ImGui::Button("< All heads")) s.ui.enlarged = -1;
    Probe(s, "all_heads");
    ImGui::SameLine();
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) s.ui.enlarged = (s.ui.enlarged + H) % (H + 1);
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right)) s.ui.enlarged = (s.ui.enlarged + 1) % (H + 1);
    ImGui::SameLine();
    ImGui::TextDisabled("Esc returns to all heads");
  }

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Colour bar column: margin, bar, tick, the widest of its labels.
  const float bar_w = fs * 2.3f + std::max({ImGui::CalcTextSize("0.00").x, ImGui::CalcTextSize("weight").x * 0.6f,
                                            ImGui::CalcTextSize("masked").x});
  const ImVec2 area(avail.x - bar_w, avail.y);
  // One button over all maps: its hover and click are what the maps respond to
  // (the window itself counts as blocked while the button is being pressed).
  ImGui::InvisibleButton("##maps", ImVec2(std::max(area.x, 1.0f), std::max(area.y, 1.0f)));
  const bool maps_hovered = ImGui::IsItemHovered();
  const bool maps_clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  Probe(s, "heatmaps");
  const auto& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;
  const float row_label = MaxLabelWidth(t.in.tokens, fs * 7.0f);
  const float col_label = MaxLabelWidth(keys, fs * 7.0f);

  if (s.ui.enlarged >= 0) {
    const Geometry g = FitGrid(1, t.seq, t.seq_kv, area, row_label, col_label, true);
    s.ui.textures.SetMinified(g.cw < 1.0f || g.ch < 1.0f);
    MapPlace p;
    p.origin = ImVec2(origin.x + g.row_label_w, origin.y + g.title_h + g.col_label_h);
    p.row_labels = p.col_labels = true;
    p.hovered = maps_hovered;
    DrawMap(s, s.ui.enlarged, g, p, true);
  } else {
    const int n = H + 1;
    const Geometry g = FitGrid(n, t.seq, t.seq_kv, area, row_label, col_label, true);
    s.ui.textures.SetMinified(g.cw < 1.0f || g.ch < 1.0f);
    const float map_w = g.cw * t.seq_kv, map_h = g.ch * t.seq;
    for (int k = 0; k < n; ++k) {
      const int gx = k % g.cols, gy = k / g.cols;
      MapPlace p;
      p.row_labels = gx == 0;
      p.col_labels = gy == 0;
      p.hovered = maps_hovered;
      p.clicked = maps_clicked;
      p.origin = ImVec2(origin.x + g.row_label_w + gx * (map_w + g.gap_x),
                        origin.y + g.col_label_h + g.title_h + gy * (map_h + g.title_h + g.gap_y));
      if (DrawMap(s, k, g, p, true)) s.ui.enlarged = k;
    }
  }
  DrawColourBar(ImVec2(origin.x + area.x + fs * 0.8f, origin.y),
                ImVec2(bar_w - fs * 0.8f, std::min(area.y - fs * 2.5f, fs * 16.0f)), t.cfg.mask == Mask::Causal);
}

}  // namespace mha::gui
