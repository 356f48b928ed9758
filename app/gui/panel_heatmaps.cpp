// Heatmaps: every head's attention weights side by side, plus their mean, on one
// fixed [0, 1] colour scale. Maps are GL textures (one texel per cell); labels,
// values and grid lines are drawn only where they fit.
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/heatmap_layout.hpp"
#include "gui/panels.hpp"
#include "gui/theme.hpp"
#include "gui/widgets.hpp"
#include "render/colormap.hpp"

namespace mha::gui {
namespace {

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

// Whether the weights fit inside the cells ("0.23", or ".23" in narrower cells).
bool ValuesFit(const Geometry& g) {
  return g.cw >= ImGui::CalcTextSize(".00").x + 4.0f && g.ch >= ImGui::GetFontSize() + 2.0f;
}

struct MapPlace {
  ImVec2 origin;            // top-left of the cells
  bool row_labels = false;  // query labels to the left
  bool col_labels = false;  // key labels above
  bool hovered = false;     // the maps' area is hovered (the mouse may be over this map)
  bool clicked = false;     // ... and was clicked this frame
  bool last_in_row = true;  // no map to its right (its title may run on)
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
  // Titles may run into the gap to the next map (past the last map of a row, further);
  // too long, the mean's becomes "mean" and a head's "h3".
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  const float title_w = b.x - a.x + g.gap_x * 0.8f;
  const float room = place.last_in_row ? std::max(title_w, fs * 3.0f) : title_w;
  std::string title = MapTitle(t, index);
  if (ImGui::CalcTextSize(title.c_str()).x > room)
    title = index == t.cfg.num_heads ? "mean" : "head " + std::to_string(index);
  if (ImGui::CalcTextSize(title.c_str()).x > room && index < t.cfg.num_heads) title = "h" + std::to_string(index);
  title = Ellipsize(title, room);
  dl->AddText(ImVec2(a.x, title_y + (g.title_h - fs) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), title.c_str());
  if (s.ui.font_bold) ImGui::PopFont();

  const ImTextureID tex = reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(s.ui.textures.Texture(index)));
  dl->AddImage(tex, a, b);
  if (std::min(cw, ch) >= 10.0f) {  // thin separators make single cells readable
    // On whole pixels (AddLine centres them on the pixel): between pixels a line is
    // drawn stepped.
    for (int i = 1; i < seq; ++i) {
      const float y = std::round(a.y + i * ch);
      dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), pal.grid_line);
    }
    for (int j = 1; j < skv; ++j) {
      const float x = std::round(a.x + j * cw);
      dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), pal.grid_line);
    }
  }
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), pal.block_border);

  // Weights inside the cells when they fit: "0.23", or ".23" in narrower cells.
  const bool full = cw >= ImGui::CalcTextSize("0.00").x + 6.0f;
  if (values_allowed && ValuesFit(g)) {
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
        dl->AddText(ImVec2(a.x + j * cw + (cw - ts.x) * 0.5f, y + (ch - ts.y) * 0.5f), Col32(render::TextColourOn(render::Colormap(v))), buf);
      }
    }
  }

  // Token labels: queries left of the rows, keys above the columns; hovering one
  // names its token in full (and a query's row lights up in every map).
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  ImFont* small = SmallFont(s);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const bool index_keys = g.keys == Keys::kIndex;
  // Token k's number in the small font, its middle at height y, centred on x or ending at x.
  auto number = [&](int k, float x, float y, bool centred, bool hot) {
    const std::string idx = std::to_string(k);
    const ImVec2 is = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0.0f, idx.c_str());
    dl->AddText(small, small->FontSize, ImVec2(centred ? x - is.x * 0.5f : x - is.x, y - is.y * 0.5f),
                hot ? pal.highlight : pal.muted_text, idx.c_str());
  };
  if (g.labels) ImGui::PushFont(g.label_font);
  if (g.labels && place.row_labels) {
    const float right = a.x - fs * 0.3f;  // the labels' right edge
    for (int i = 0; i < seq; ++i) {
      const float y = a.y + i * ch;
      const bool hot = i == s.ui.hover_token;
      const std::string& tok = t.in.tokens[static_cast<std::size_t>(i)];
      const std::string l = Ellipsize(tok, g.row_label_w - g.index_w - fs * 0.4f);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      dl->AddText(ImVec2(right - g.index_w - ts.x, y + (ch - ts.y) * 0.5f), hot ? pal.highlight : text, l.c_str());
      if (index_keys) number(i, right, y + ch * 0.5f, false, hot);  // matches the numbers above the columns
      if (place.hovered && m.x >= a.x - g.row_label_w && m.x < a.x && m.y >= y && m.y < y + ch) {
        ImGui::SetTooltip("query %d: \"%s\"", i, tok.c_str());
        s.ui.hover_token_next = i;
      }
    }
  }
  if (g.labels && place.col_labels) {
    // Index numbers wider than a cell: every k-th column.
    int every = 1;
    if (index_keys) {
      const float wmax = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0.0f, std::to_string(skv - 1).c_str()).x;
      every = std::max(1, static_cast<int>(std::ceil((wmax + 2.0f) / cw)));
    }
    for (int j = 0; j < skv; ++j) {
      const float x = a.x + j * cw;
      const std::string& tok = keys[static_cast<std::size_t>(j)];
      const bool hot = !t.in.cross() && j == s.ui.hover_token;
      if (place.hovered && m.x >= x && m.x < x + cw && m.y >= a.y - g.col_label_h && m.y < a.y)
        ImGui::SetTooltip("key %d: \"%s\"", j, tok.c_str());
      if (index_keys) {
        if (j % every == 0) number(j, x + cw * 0.5f, a.y - fs * 0.1f - small->FontSize * 0.5f, true, hot);
        continue;
      }
      const float max_w = g.keys == Keys::kRotated ? g.col_label_h - fs * 0.3f : cw - 2.0f;
      const std::string l = Ellipsize(tok, max_w);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      if (g.keys == Keys::kRotated)
        AddTextVertical(dl, ImVec2(x + (cw - ts.y) * 0.5f, a.y - fs * 0.3f), hot ? pal.highlight : text, l.c_str());
      else
        dl->AddText(ImVec2(x + (cw - ts.x) * 0.5f, a.y - fs * 0.15f - ts.y), hot ? pal.highlight : text, l.c_str());
    }
  }
  if (g.labels) ImGui::PopFont();

  // Highlight the row of a hovered token chip.
  if (s.ui.hover_token >= 0 && s.ui.hover_token < seq) {
    const float y = a.y + s.ui.hover_token * ch;
    dl->AddRect(ImVec2(a.x - 1, y - 1), ImVec2(b.x + 1, y + ch + 1), pal.highlight, 0.0f, 0, 2.0f);
  }

  s.ui.probe["map " + std::to_string(index)] = {a.x, a.y, b.x - a.x, b.y - a.y};
  // Hover: tooltip for the cell, outline of its row; click enlarges.
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
    const ImU32 u0 = Col32(render::Colormap(v0)), u1 = Col32(render::Colormap(v1));
    const float y0 = top + (bottom - top) * k / kSteps, y1 = top + (bottom - top) * (k + 1) / kSteps;
    dl->AddRectFilledMultiColor(ImVec2(x0, y0), ImVec2(x1, y1 + 0.5f), u0, u0, u1, u1);
  }
  dl->AddRect(ImVec2(x0 - 1, top - 1), ImVec2(x1 + 1, bottom + 1), Pal().block_border);
  // Ticks every 0.25, or fewer where the bar is too short for their labels.
  const int parts = bottom - top >= 4.0f * fs ? 4 : bottom - top >= 2.0f * fs ? 2 : 1;
  for (int k = 0; k <= parts; ++k) {
    const float v = 1.0f - static_cast<float>(k) / parts;
    const float y = top + (bottom - top) * k / static_cast<float>(parts);
    char buf[8];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
    dl->AddLine(ImVec2(x1, y), ImVec2(x1 + fs * 0.3f, y), ImGui::GetColorU32(ImGuiCol_Text));
    dl->AddText(ImVec2(x1 + fs * 0.4f, y - fs * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), buf);
  }
  if (masked_legend) {
    // The causal mask's cells: the exporter's grey, outside the colour scale.
    const float y = bottom + fs * 1.2f;
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + fs), Col32(render::kMaskedColour));
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
  const ImVec2 area(std::max(avail.x - bar_w, 1.0f), std::max(avail.y, 1.0f));
  const bool enlarged = s.ui.enlarged >= 0;
  const int n = enlarged ? 1 : H + 1;
  // Labels need rows of ~4/5 of the font or more, and one whole map in the panel's
  // height: beyond that (hundreds of tokens) the tokens are not even measured.
  const float small_px = std::round(fs * 0.8f);
  const bool labels_possible = 0.85f * small_px * t.seq <= area.y;
  const Labels full = labels_possible ? MeasureLabels(s, ImGui::GetFont()) : Labels{};
  // The label font once loaded; until then an estimate of it (4/5 of the size).
  const Labels small = !labels_possible ? Labels{}
                       : s.ui.font_label ? MeasureLabels(s, s.ui.font_label)
                                         : MeasureLabels(s, ImGui::GetFont(), small_px);
  bool needs_small = false;
  const Geometry g = labels_possible ? FitGrid(n, t.seq, t.seq_kv, area, full, small, s.ui.font_label != nullptr,
                                               !enlarged, &needs_small)
                                     : FitGrid(n, t.seq, t.seq_kv, area, {}, {}, true, false, &needs_small);
  if (needs_small && !s.ui.want_label_font) {
    // Only a smaller label font keeps every map in view with labels: load it (a
    // second copy of the Korean glyphs; the atlas is rebuilt before the next frame).
    s.ui.want_label_font = true;
    s.ui.fonts_dirty = true;
  }
  s.ui.textures.SetMinified(g.cw < 1.0f || g.ch < 1.0f);

  // The maps' own region, which scrolls when the layout is taller than the panel.
  const ImGuiWindowFlags view_flags =
      g.scroll ? ImGuiWindowFlags_None : ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  ImGui::BeginChild("##maps_view", area, false, view_flags);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float content_w = area.x - (g.scroll ? ImGui::GetStyle().ScrollbarSize : 0.0f);
  // One button over all maps: its hover and click are what the maps respond to
  // (the window itself counts as blocked while the button is being pressed).
  ImGui::InvisibleButton("##maps", ImVec2(std::max(content_w, 1.0f), std::max(g.scroll ? g.content_h : area.y, 1.0f)));
  const bool maps_hovered = ImGui::IsItemHovered();
  const bool maps_clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  Probe(s, "heatmaps");
  const float map_w = g.cw * t.seq_kv, map_h = g.ch * t.seq;
  for (int k = 0; k < n; ++k) {
    const int gx = k % g.cols, gy = k / g.cols;
    MapPlace p;
    p.row_labels = gx == 0;
    p.last_in_row = gx == g.cols - 1 || k == n - 1;
    p.col_labels = gy == 0 || g.keys_every_row;
    p.hovered = maps_hovered;
    p.clicked = maps_clicked && !enlarged;
    const float keys_above = (g.keys_every_row ? gy + 1 : 1) * g.col_label_h;
    // Whole pixels: a map edge between pixels is drawn stepped by the rasteriser.
    p.origin = ImVec2(std::round(o.x + g.row_label_w + gx * (map_w + g.gap_x)),
                      std::round(o.y + keys_above + g.title_h + gy * (map_h + g.title_h + g.gap_y)));
    if (DrawMap(s, enlarged ? s.ui.enlarged : k, g, p, true)) s.ui.enlarged = k;
  }
  ImGui::EndChild();
  Probe(s, "heatmaps_view");

  LayoutReport& rep = s.ui.report;
  rep.maps = n;
  rep.grid_cols = g.cols;
  rep.grid_rows = g.rows;
  rep.cell_w = g.cw;
  rep.cell_h = g.ch;
  rep.row_labels = g.labels;
  rep.key_labels = KeysName(g.keys);
  rep.label_px = g.label_px;
  rep.label_font = s.ui.font_label != nullptr;
  rep.values = ValuesFit(g);
  rep.scroll = g.scroll;
  rep.content_h = g.content_h;
  rep.view_h = area.y;

  DrawColourBar(ImVec2(origin.x + area.x + fs * 0.8f, origin.y),
                ImVec2(bar_w - fs * 0.8f, std::min(area.y - fs * 2.5f, fs * 16.0f)), t.cfg.mask == Mask::Causal);
}

}  // namespace mha::gui
