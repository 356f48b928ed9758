#include "gui/views/heatmaps/grid_layout.hpp"
#include "gui/style/wide_glyphs.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

namespace mha::gui {
namespace {

// One candidate layout: `n` maps of seq x seq_kv cells in `cols` columns, labelled
// as `keys` says in `ls.font`. Scrolling layouts size the cells so that one row of
// maps (title, labels, cells) fits the panel's height.
// `tall`: a scroll in which even one map is taller than the panel, its rows as tall
// as the labels (a big text size in a small window).
// `stretch`: how much wider or taller than square a cell may be.
Geometry Arrange(int n, int cols, int seq, int skv, ImVec2 avail, const Labels& ls, Keys keys, bool scroll,
                 float stretch, bool tall = false, float tall_floor = 0.0f) {
  const float kStretch = stretch;
  const float fs = ImGui::GetFontSize();
  Geometry g;
  g.cols = cols;
  g.rows = (n + cols - 1) / cols;
  g.keys = keys;
  g.labels = keys != Keys::kNone;
  g.label_font = g.labels ? ls.font : nullptr;
  g.label_px = g.labels ? ls.px : 0.0f;
  g.scroll = scroll;
  g.gap_x = fs * 0.8f;
  g.gap_y = fs * 0.5f;
  g.title_h = fs * 1.25f;
  if (g.labels) {
    g.index_w = keys == Keys::kIndex ? ls.index_w + fs * 0.3f : 0.0f;
    g.row_label_w = ls.row + fs * 0.4f + g.index_w;
    g.col_label_h = keys == Keys::kUpright     ? ls.px + fs * 0.2f
                    : keys == Keys::kStaggered ? 2.0f * ls.px + fs * 0.3f
                    : keys == Keys::kRotated   ? ls.col + fs * 0.3f
                                               : ls.index_h + fs * 0.15f;
  }
  g.keys_every_row = scroll && g.rows > 1;
  const float width = avail.x - (scroll ? ImGui::GetStyle().ScrollbarSize : 0.0f);
  float w = (width - g.row_label_w - (cols - 1) * g.gap_x) / (cols * static_cast<float>(skv));
  // Staggered keys: a map's last label and the next map's first may share a line, each
  // reaching (label - cell) / 2 past its map; the gap keeps them apart ("잡았다고양이가").
  if (keys == Keys::kStaggered && cols > 1 && ls.col - w > g.gap_x - fs * 0.6f) {
    g.gap_x = ls.col - w + fs * 0.9f;
    w = (width - g.row_label_w - (cols - 1) * g.gap_x) / (cols * static_cast<float>(skv));
  }
  const float h = scroll ? (avail.y - g.col_label_h - g.title_h) / static_cast<float>(seq)
                         : (avail.y - g.col_label_h - g.rows * g.title_h - (g.rows - 1) * g.gap_y) /
                               (g.rows * static_cast<float>(seq));
  const float m = std::min(w, tall ? std::max({h, ls.px, tall_floor}) : h);
  // Quarter-pixel steps keep cell edges steady while resizing; below one pixel
  // per cell (hundreds of tokens) the texture's mipmaps average the cells.
  auto quantise = [](float v) { return v >= 1.0f ? std::floor(v * 4.0f) / 4.0f : v; };
  g.cw = quantise(std::min(w, m * kStretch));
  g.ch = quantise(tall ? m : std::min(h, m * kStretch));
  const float row_h = g.title_h + g.ch * seq;
  g.content_h = (g.keys_every_row ? g.rows : 1) * g.col_label_h + g.rows * row_h + (g.rows - 1) * g.gap_y;
  for (int gy = 0; gy < g.rows; ++gy) {
    const float bottom = (g.keys_every_row ? gy + 1 : 1) * g.col_label_h + (gy + 1) * row_h + gy * g.gap_y;
    if (bottom <= avail.y + 0.5f) g.visible_maps += std::min(cols, n - gy * cols);
  }
  return g;
}

// Whether the labels of `g` can be read: rows at least nearly as tall as the text
// (a little less is fine: the line height includes room above and below the glyphs),
// upright key labels no wider than their column.
bool Readable(const Geometry& g, const Labels& ls, float abbreviate_em = 0.0f) {
  if (g.cw <= 0.0f || g.ch <= 0.0f) return false;
  if (!g.labels) return true;
  const float min_cell = 0.85f * g.label_px;
  if (g.ch < min_cell || g.cw < min_cell * 0.5f) return false;
  if (g.keys == Keys::kUpright) return ls.col <= g.cw - 2.0f;
  // A label centred on its column may reach half a column into each neighbour,
  // whose label sits on the other line.
  // `abbreviate_em` > 0: a long key may be cut to that many ems with its "…" (hovering
  // it names the token; the rows carry the same tokens in full).
  const float room = abbreviate_em > 0.0f ? std::min(ls.col, abbreviate_em * g.label_px) : ls.col;
  if (g.keys == Keys::kStaggered) return room <= 2.0f * g.cw - 4.0f && g.cw >= min_cell;
  if (g.keys == Keys::kRotated) return g.cw >= min_cell && !ls.wide;
  return true;  // index numbers: every k-th column when they are wider than a cell
}

// Whether the cells hold their weights in the UI font (views/heatmaps/grid.cpp ValuesFit).
bool HoldsValues(const Geometry& g, const Labels& ls) { return g.cw >= ls.values_w && g.ch >= ls.values_h; }

// Big text: the cells grow with it. The whole grid with horizontal token labels on
// cells that hold their weights; else a scroll with such cells, the most maps in view;
// else horizontal labels on the biggest cells a scroll allows. `found` false: none.
Geometry FitBigText(int n, int seq, int skv, ImVec2 avail, const Labels& ls, bool allow_scroll, int lo, int hi,
                    float stretch, bool* found, bool need_values = true) {
  auto HoldsValues = [&](const Geometry& g, const Labels& l) { return !need_values || mha::gui::HoldsValues(g, l); };
  const Keys horizontal[] = {Keys::kUpright, Keys::kStaggered};
  auto area = [](const Geometry& g) { return g.cw * g.ch; };
  Geometry best;
  *found = false;
  for (Keys keys : horizontal)
    for (int cols = lo; cols <= hi; ++cols) {
      const Geometry g = Arrange(n, cols, seq, skv, avail, ls, keys, false, stretch);
      if (Readable(g, ls) && HoldsValues(g, ls) &&
          (!*found || area(g) > area(best) * (g.keys == best.keys ? 1.0f : 2.0f))) {
        best = g;
        *found = true;
      }
    }
  if (*found || !allow_scroll) return best;
  for (Keys keys : horizontal)
    for (int cols = lo; cols <= hi; ++cols) {
      const Geometry g = Arrange(n, cols, seq, skv, avail, ls, keys, true, stretch);
      if (!Readable(g, ls) || !HoldsValues(g, ls) || g.visible_maps < 1) continue;
      if (!*found || g.visible_maps > best.visible_maps ||
          (g.visible_maps == best.visible_maps && area(g) > area(best))) {
        best = g;
        *found = true;
      }
    }
  if (*found) return best;
  // Not even one map in view with such cells (a short panel): maps taller than the
  // panel, cells that hold their weights if any do, the most maps per row.
  const float hold = std::max(ls.values_w, ls.values_h);
  // (Small text keeps a whole map in view: token numbers before maps taller than the panel.)
  if (*found || !need_values) return best;
  // Else cells wide enough for the keys on two staggered lines, cut short if need be:
  // to two characters and "…", or to one.
  for (float em : {0.0f, 2.5f, 1.6f}) {
    const float floor_cell = em == 0.0f ? hold : (std::min(ls.col, em * ls.px) + 4.0f) * 0.5f + 0.5f;
    for (Keys keys : horizontal)
      for (int cols = lo; cols <= hi; ++cols) {
        Geometry g = Arrange(n, cols, seq, skv, avail, ls, keys, true, stretch, true, floor_cell);
        if (!Readable(g, ls, em) || (em == 0.0f && !HoldsValues(g, ls))) continue;
        if (!*found || g.cols > best.cols || (g.cols == best.cols && area(g) > area(best))) {
          best = g;
          *found = true;
        }
      }
    if (*found) break;
  }
  if (*found) {
    best.scroll = best.content_h > avail.y + 0.5f;
    best.keys_every_row = best.scroll && best.rows > 1;
  }
  return best;
}

}  // namespace

const char* KeysName(Keys k) {
  switch (k) {
    case Keys::kUpright: return "upright";
    case Keys::kStaggered: return "staggered";
    case Keys::kRotated: return "rotated";
    case Keys::kIndex: return "index";
    default: return "none";
  }
}

float TextWidth(ImFont* font, const char* text) { return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, text).x; }

ImFont* SmallFont(const AppState& s) { return s.ui.font_small ? s.ui.font_small : ImGui::GetFont(); }

// `px` other than the font's size: an estimate for that size, from this font's widths.
Labels MeasureLabels(const AppState& s, ImFont* font, float px) {
  const Trace& t = s.result.trace;
  const auto& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;
  Labels l;
  l.font = font;
  l.px = px > 0.0f ? px : font->FontSize;
  const float cap = font->FontSize * 7.0f;
  for (const auto& q : t.in.tokens)
    if ((l.row = std::max(l.row, TextWidth(font, ForDisplay(q).c_str()))) >= cap) break;
  for (const auto& k : keys)
    if ((l.col = std::max(l.col, TextWidth(font, ForDisplay(k).c_str()))) >= cap) break;
  l.row = std::min(l.row, cap) * l.px / font->FontSize;
  l.col = std::min(l.col, cap) * l.px / font->FontSize;
  // Token numbers in the same font: nothing on the maps is smaller than the UI's text.
  l.index_w = TextWidth(font, std::to_string(std::max(t.seq, t.seq_kv) - 1).c_str()) * l.px / font->FontSize;
  l.index_h = l.px;
  l.values_w = ImGui::CalcTextSize("0.00").x + 4.0f;
  l.values_h = ImGui::GetFontSize() + 2.0f;
  // Hangul and CJK from U+1100 up (3- and 4-byte UTF-8) read only upright.
  for (const auto& k : keys) {
    for (unsigned char c : k)
      if (c >= 0xE1) l.wide = true;
    if (l.wide) break;
  }
  return l;
}

// The layout of `n` maps in `avail` (grid_layout.hpp says in which order of
// preference).
Geometry FitGrid(int n, int seq, int seq_kv, ImVec2 avail, const Labels& labels, bool allow_scroll, int only_cols,
                 bool big_text) {
  const int lo = only_cols > 0 ? std::min(only_cols, n) : 1, hi = only_cols > 0 ? std::min(only_cols, n) : n;
  // Words before numbers; among words, upright before staggered before rotated.
  const std::vector<std::vector<Keys>> groups = {{Keys::kUpright, Keys::kStaggered, Keys::kRotated}, {Keys::kIndex}};
  auto area = [](const Geometry& g) { return g.cw * g.ch; };
  // The enlarged map, and presentation mode's fixed grid (whose maps fill the window
  // alike), may stretch to use the panel's shape; a free grid of maps stays square so
  // heads compare at a glance.
  const float stretch = n == 1 || only_cols > 0 ? 2.0f : 1.0f;
  const bool any_labels = labels.font != nullptr;  // no font: too many tokens for any
  if (any_labels && big_text) {
    bool found = false;
    const Geometry g = FitBigText(n, seq, seq_kv, avail, labels, allow_scroll, lo, hi, stretch, &found);
    if (found) return g;
  }
  // Hangul keys read only horizontally: on two staggered lines with a scroll (a whole
  // row of maps in view) before token numbers ("0 1 2").
  if (any_labels && labels.wide) {
    bool found = false;
    const Geometry g = FitBigText(n, seq, seq_kv, avail, labels, allow_scroll, lo, hi, stretch, &found, false);
    if (found) return g;
  }
  if (any_labels)
    for (const auto& group : groups) {
      Geometry best;
      bool found = false;
      for (std::size_t k = 0; k < group.size(); ++k)
        for (int cols = lo; cols <= hi; ++cols) {
          const Geometry g = Arrange(n, cols, seq, seq_kv, avail, labels, group[k], false, stretch);
          // Within a group, an earlier kind wins unless a later one doubles the cells.
          if (Readable(g, labels) && (!found || area(g) > area(best) * (g.keys == best.keys ? 1.0f : 2.0f))) {
            best = g;
            found = true;
          }
        }
      if (found) return best;
    }
  if (any_labels && allow_scroll && n > 1) {
    Geometry best;
    int best_group = -1;
    for (int gi = 0; gi < static_cast<int>(groups.size()); ++gi)
      for (Keys keys : groups[gi])
        for (int cols = lo; cols <= hi; ++cols) {
          const Geometry g = Arrange(n, cols, seq, seq_kv, avail, labels, keys, true, stretch);
          if (!Readable(g, labels) || g.visible_maps < 1 || g.content_h <= avail.y) continue;
          const bool better =
              best_group < 0 || g.visible_maps > best.visible_maps ||
              (g.visible_maps == best.visible_maps && (gi < best_group || (gi == best_group && area(g) > area(best))));
          if (!better) continue;
          best = g;
          best_group = gi;
        }
    if (best_group >= 0) return best;
  }
  // Rows as tall as the labels and a scroll, even if no map is wholly in view: the
  // most of the first map's rows in view (short key labels win here), then words
  // before numbers, then the biggest cells.
  if (any_labels && allow_scroll) {
    Geometry best;
    float best_rows = -1.0f;
    int best_group = 0;
    for (int gi = 0; gi < static_cast<int>(groups.size()); ++gi)
      for (Keys keys : groups[gi])
        for (int cols = lo; cols <= hi; ++cols) {
          const Geometry g = Arrange(n, cols, seq, seq_kv, avail, labels, keys, true, stretch, true);
          if (!Readable(g, labels)) continue;
          const float rows =
              std::min(static_cast<float>(seq), std::floor((avail.y - g.col_label_h - g.title_h) / g.ch));
          const bool better = rows > best_rows ||
                              (rows == best_rows && (gi < best_group || (gi == best_group && area(g) > area(best))));
          if (!better) continue;
          best = g;
          best_rows = rows;
          best_group = gi;
        }
    if (best_rows >= 0.0f) {
      best.scroll = best.content_h > avail.y + 0.5f;
      best.keys_every_row = best.scroll && best.rows > 1;
      return best;
    }
  }
  Geometry best;
  for (int cols = lo; cols <= hi; ++cols) {
    const Geometry g = Arrange(n, cols, seq, seq_kv, avail, labels, Keys::kNone, false, stretch);
    if (g.cw > 0.0f && g.ch > 0.0f && area(g) > area(best)) best = g;
  }
  // A panel too small for anything still gets a (tiny) valid grid.
  best.cw = std::max(best.cw, 0.05f);
  best.ch = std::max(best.ch, 0.05f);
  return best;
}

}  // namespace mha::gui
