// Heatmaps: every head's attention weights side by side, plus their mean, on the
// colour scale the learner picks (fixed [0, 1], per map or per row, as the export).
// Maps are GL textures (one texel per cell); labels and values are drawn in the UI
// font where they fit (hovering a cell gives its weight in any case). In presentation
// mode the same panel shows one map, a 2 x 2 page or every map.
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "gui/views/heatmaps/bars.hpp"
#include "gui/views/heatmaps/heatmaps.hpp"
#include "gui/views/heatmaps/norms.hpp"
#include "gui/views/heatmaps/grid_layout.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

std::string MapTitle(const Trace& t, int index) {
  const int H = t.cfg.num_heads;
  char b[96];
  if (index == H) {
    std::snprintf(b, sizeof b, P_("mean of %d head", "mean of %d heads", H), H);
    return b;
  }
  // Numbered from 0, as in the exports and the .npz arrays (attn[0, h]).
  std::snprintf(b, sizeof b, _("head %d"), index);
  std::string s = b;
  if (t.cfg.kv_heads() != H) {
    std::snprintf(b, sizeof b, _("  (K/V head %d)"), t.KvHeadOf(index));
    s += b;
  }
  return s;
}

// Value of map `index` (head or mean) at (i, j): its weight, or with `n` (the view shows
// what each key adds) its share of the row's value-weighted norms.
float Weight(const Result& r, const HeatmapNorms* n, int index, int i, int j) {
  const Trace& t = r.trace;
  if (n) {
    if (index == t.cfg.num_heads) return n->mean(i, j);
    return n->share(static_cast<Eigen::Index>(index) * t.seq + i, j);
  }
  if (index == t.cfg.num_heads) return r.mean_attn(i, j);
  return t.attn(static_cast<Eigen::Index>(index) * t.seq + i, j);
}

void CellTooltip(const Result& r, const HeatmapNorms* n, int index, int i, int j) {
  const Trace& t = r.trace;
  const auto& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(MapTitle(t, index).c_str());
  ImGui::Separator();
  ImGui::Text(_("query  %d \"%s\""), i, ForDisplay(t.in.tokens[static_cast<std::size_t>(i)]).c_str());
  ImGui::Text(_("key    %d \"%s\""), j, ForDisplay(keys[static_cast<std::size_t>(j)]).c_str());
  if (n) {
    ImGui::Text(_("share  %.4f of the row's summed norms"), static_cast<double>(Weight(r, n, index, i, j)));
    if (index < t.cfg.num_heads)
      ImGui::Text(_("norm   %.4f  = ||alpha (x_j W_V + b_V) W_O||"),
                  static_cast<double>(n->raw(static_cast<Eigen::Index>(index) * t.seq + i, j)));
  }
  ImGui::Text(_("weight %.4f"), static_cast<double>(Weight(r, nullptr, index, i, j)));
  if (index < t.cfg.num_heads) {
    const float sc = t.scores(static_cast<Eigen::Index>(index) * t.seq + i, j);
    if (std::isinf(sc) && sc < 0)
      ImGui::TextUnformatted(_("score  masked (-inf): the causal mask hides later keys"));
    else
      ImGui::Text(_("score  %.4f  (%s, before softmax)"), static_cast<double>(sc),
                  t.cfg.scale ? "q\xC2\xB7k / \xE2\x88\x9A"
                                "d_k"
                              : _("q\xC2\xB7k, unscaled"));
  } else {
    float lo = 1.0f, hi = 0.0f;
    for (int h = 0; h < t.cfg.num_heads; ++h) {
      const float w = t.attn(static_cast<Eigen::Index>(h) * t.seq + i, j);
      lo = std::min(lo, w);
      hi = std::max(hi, w);
    }
    ImGui::Text(_("across heads: min %.4f, max %.4f"), static_cast<double>(lo), static_cast<double>(hi));
  }
  ImGui::EndTooltip();
}

// Whether the weights fit inside the cells, as "0.23" (the one format of the app's
// weights). All cells or none: a blank cell among numbers would read as 0, and a
// map full of "…" reads as nothing. Hovering a cell always gives its weight.
// Big text (a projector) may leave cells too small for numbers of its own size: the
// numbers then take the small font, if that is still at least the 100% text size
// (what a reader at a desk gets), never smaller.
ImFont* SmallValuesFont(const AppState& s) {
  ImFont* small = s.ui.font_small;
  return small && small->FontSize >= std::round(17.0f * s.ui.content_scale) ? small : nullptr;
}

bool Holds(ImFont* font, const Geometry& g) {
  return g.cw >= font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, "0.00").x + 4.0f && g.ch >= font->FontSize + 2.0f;
}

bool ValuesFit(const AppState& s, const Geometry& g) {
  if (Holds(ImGui::GetFont(), g)) return true;
  ImFont* small = SmallValuesFont(s);
  return small && Holds(small, g);
}

// The font of the weights in the cells: big cells (one map on a projector) get bigger
// numbers, from their own glyphs (a font drawn at another size than its own looks
// ragged), when the bigger number takes at most 3/5 of the cell's width and half its
// height.
struct ValuesText {
  ImFont* font;
  float px;
};
ValuesText ValuesFont(const AppState& s, const Geometry& g) {
  if (ImFont* big = s.ui.font_numbers) {
    const float w = big->CalcTextSizeA(big->FontSize, FLT_MAX, 0.0f, "0.00").x;
    if (w <= g.cw * 0.6f && big->FontSize <= g.ch * 0.5f) return {big, big->FontSize};
  }
  ImFont* small = SmallValuesFont(s);
  if (!Holds(ImGui::GetFont(), g) && small) return {small, small->FontSize};
  return {ImGui::GetFont(), ImGui::GetFontSize()};
}

struct MapPlace {
  ImVec2 origin;            // top-left of the cells
  bool row_labels = false;  // query labels to the left
  bool col_labels = false;  // key labels above
  bool hovered = false;     // the maps' area is hovered (the mouse may be over this map)
  bool clicked = false;     // ... and was clicked this frame
  bool last_in_row = true;  // no map to its right (its title may run on)
  // Out: the horizontal extent of the key labels drawn on each line (lower, upper), for
  // the check that neighbouring maps' labels stay apart.
  float keys_lo[2] = {FLT_MAX, FLT_MAX}, keys_hi[2] = {-FLT_MAX, -FLT_MAX};
};

// Draws map `index` with its cells' top-left at place.origin. Returns true if
// clicked.
// The weights written in the cells of map `index` at a (where they fit); the text's
// colour follows the cell's.
void DrawCellValues(AppState& s, const HeatmapNorms* n, int index, const Geometry& g, ImVec2 a) {
  const Result& r = s.result;
  const Trace& t = r.trace;
  const int seq = t.seq, skv = t.seq_kv;
  const float cw = g.cw, ch = g.ch;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The colour scale's divisor per row, for the text colour on each cell: only where
  // values are drawn (big cells, few tokens), so hundreds of tokens cost nothing here.
  std::vector<float> divisor(static_cast<std::size_t>(t.seq), 1.0f);
  if (s.ui.colour_scale != render::ColourScale::Fixed) {
    std::vector<float> w(static_cast<std::size_t>(t.seq) * t.seq_kv);
    std::vector<unsigned char> m(w.size(), 0);
    for (int i = 0; i < t.seq; ++i)
      for (int j = 0; j < t.seq_kv; ++j) {
        const std::size_t k = static_cast<std::size_t>(i) * t.seq_kv + j;
        w[k] = Weight(r, n, index, i, j);
        m[k] = t.cfg.mask == Mask::Causal && HeatmapMasked(t, index, i, j);
      }
    divisor = render::ScaleDivisors(s.ui.colour_scale, w.data(), m.data(), t.seq, t.seq_kv);
  }
  // Weights inside the cells where they fit; text colour follows the cell's colour.
  char buf[16];
  const ImVec4 clip = dl->_CmdHeader.ClipRect;
  const auto [font, vs] = ValuesFont(s, g);
  for (int i = 0; i < seq; ++i) {
    const float y = a.y + i * ch;
    if (y + ch < clip.y || y > clip.w) continue;
    for (int j = 0; j < skv; ++j) {
      if (t.cfg.mask == Mask::Causal && HeatmapMasked(t, index, i, j)) continue;  // grey, weight 0
      const float v = Weight(r, n, index, i, j);
      std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
      const ImVec2 ts = font->CalcTextSizeA(vs, FLT_MAX, 0.0f, buf);
      const render::Rgb bg = render::Colormap(v / divisor[static_cast<std::size_t>(i)]);
      dl->AddText(font, vs, ImVec2(a.x + j * cw + (cw - ts.x) * 0.5f, y + (ch - ts.y) * 0.5f),
                  Col32(render::TextColourOn(bg)), buf);
    }
  }
}

// Whether a map's keys stay at its panel's top when scrolled (one row of maps).
bool KeysStick(const Geometry& g) { return g.labels && g.scroll && !g.keys_every_row; }

// Where a map's key labels end (their lower edge): on its cells, or, for one row of
// maps scrolled down (a map taller than its panel), at the panel's top, where they stay
// on a strip over the rows scrolled under it, so a row in view still has its columns
// named.
float KeysBottom(const Geometry& g, ImVec2 a, int seq) {
  const float view_top = ImGui::GetWindowPos().y;
  if (KeysStick(g) && a.y - g.col_label_h < view_top)
    return std::min(view_top + g.col_label_h, a.y + static_cast<float>(seq) * g.ch);
  return a.y;
}

// The token labels of a map at a (queries left of the rows, keys above the columns);
// hovering one names its token in full (and a query's row lights up in every map).
void DrawTokenLabels(AppState& s, const Geometry& g, MapPlace& place, ImVec2 a) {
  const Trace& t = s.result.trace;
  const Palette& pal = Pal();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const int seq = t.seq, skv = t.seq_kv;
  const float cw = g.cw, ch = g.ch;
  const auto& keys = t.in.cross() ? t.in.memory_tokens : t.in.tokens;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  ImFont* small = g.label_font ? g.label_font : ImGui::GetFont();  // token numbers: the labels' font
  const ImVec2 m = ImGui::GetIO().MousePos;
  const bool index_keys = g.keys == Keys::kIndex;
  // Token k's number in the small font, its middle at height y, centred on x or ending at x.
  auto number = [&](int k, float x, float y, bool centred, bool hot) {
    const std::string idx = std::to_string(k);
    const ImVec2 is = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0.0f, idx.c_str());
    dl->AddText(small, small->FontSize, ImVec2(centred ? x - is.x * 0.5f : x - is.x, y - is.y * 0.5f),
                hot ? pal.highlight : pal.muted_text, idx.c_str());
  };
  const float ky = KeysBottom(g, a, seq);  // below it, rows show; above, the keys' strip
  if (g.labels) ImGui::PushFont(g.label_font);
  if (g.labels && place.row_labels) {
    const float right = a.x - fs * 0.3f;  // the labels' right edge
    for (int i = 0; i < seq; ++i) {
      const float y = a.y + i * ch;
      const bool hot = i == s.ui.hover_token;
      const std::string tok = ForDisplay(t.in.tokens[static_cast<std::size_t>(i)]);
      // (+0.5: the widest label's own width comes back through float sums a hair short)
      const std::string l = Ellipsize(tok, g.row_label_w - g.index_w - fs * 0.4f + 0.5f);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      dl->AddText(ImVec2(right - g.index_w - ts.x, y + (ch - ts.y) * 0.5f), hot ? pal.highlight : text, l.c_str());
      if (index_keys) number(i, right, y + ch * 0.5f, false, hot);  // matches the numbers above the columns
      if (place.hovered && m.x >= a.x - g.row_label_w && m.x < a.x && m.y >= std::max(y, ky) && m.y < y + ch) {
        ImGui::SetTooltip(_("query %d: \"%s\""), i, tok.c_str());
        s.ui.hover_token_next = i;
      }
    }
  }
  if (g.labels && place.col_labels) {
    // The keys' strip, in the window's colour (KeysBottom): over this map's cells, the
    // lesson's outlines beside them and, in the first column, its row labels; not over
    // the map to its left, whose keys are drawn already.
    if (ky > a.y)
      dl->AddRectFilled(ImVec2(a.x - (place.row_labels ? g.row_label_w : 4.0f), ImGui::GetWindowPos().y),
                        ImVec2(a.x + static_cast<float>(skv) * cw + 4.0f, ky), ImGui::GetColorU32(ImGuiCol_WindowBg));
    if (place.row_labels)
      s.ui.probe["map keys"] = {a.x, ky - g.col_label_h, static_cast<float>(skv) * cw, g.col_label_h};
    // Index numbers wider than a cell: every k-th column.
    int every = 1;
    if (index_keys) {
      const float wmax = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0.0f, std::to_string(skv - 1).c_str()).x;
      every = std::max(1, static_cast<int>(std::ceil((wmax + 2.0f) / cw)));
    }
    for (int j = 0; j < skv; ++j) {
      const float x = a.x + j * cw;
      const std::string tok = ForDisplay(keys[static_cast<std::size_t>(j)]);
      const bool hot = !t.in.cross() && j == s.ui.hover_token;
      if (place.hovered && m.x >= x && m.x < x + cw && m.y >= ky - g.col_label_h && m.y < ky)
        ImGui::SetTooltip(_("key %d: \"%s\""), j, tok.c_str());
      if (index_keys) {
        if (j % every == 0) number(j, x + cw * 0.5f, ky - fs * 0.1f - small->FontSize * 0.5f, true, hot);
        continue;
      }
      const float max_w = g.keys == Keys::kRotated     ? g.col_label_h - fs * 0.3f
                          : g.keys == Keys::kStaggered ? 2.0f * cw - 4.0f
                                                       : cw - 2.0f;
      const std::string l = Ellipsize(tok, max_w);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      if (g.keys == Keys::kRotated) {
        AddTextVertical(dl, ImVec2(x + (cw - ts.y) * 0.5f, ky - fs * 0.3f), hot ? pal.highlight : text, l.c_str());
      } else {
        // Staggered: odd columns on the upper line, with a tick down to their column.
        const bool upper = g.keys == Keys::kStaggered && j % 2 == 1;
        const float y = ky - fs * 0.15f - ts.y - (upper ? ts.y : 0.0f);
        dl->AddText(ImVec2(x + (cw - ts.x) * 0.5f, y), hot ? pal.highlight : text, l.c_str());
        place.keys_lo[upper] = std::min(place.keys_lo[upper], x + (cw - ts.x) * 0.5f);
        place.keys_hi[upper] = std::max(place.keys_hi[upper], x + (cw + ts.x) * 0.5f);
        if (upper)
          dl->AddLine(ImVec2(std::round(x + cw * 0.5f), y + ts.y), ImVec2(std::round(x + cw * 0.5f), ky - 2.0f),
                      pal.grid_line);
      }
    }
  }
  if (g.labels) ImGui::PopFont();
}

// The lesson reveal (its step and cell), or the row a question asks about, that the
// maps last scrolled to.
struct RevealScroll {
  std::string key;
};

bool DrawMap(AppState& s, const HeatmapNorms* n, int index, const Geometry& g, MapPlace& place, bool values_allowed) {
  const Result& r = s.result;
  const Trace& t = r.trace;
  const Palette& pal = Pal();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const int seq = t.seq, skv = t.seq_kv;
  const float cw = g.cw, ch = g.ch;
  const ImVec2 a = place.origin;
  const ImVec2 b(a.x + cw * skv, a.y + ch * seq);

  // Title above the labels.
  const float title_y = a.y - (place.col_labels ? g.col_label_h : 0.0f) - g.title_h;
  // Titles may run into the gap to the next map (past the last map of a row, further);
  // too long, the mean's becomes "mean" and a head's "h3".
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  const float title_w = b.x - a.x + g.gap_x * 0.8f;
  const float room = place.last_in_row ? std::max(title_w, fs * 3.0f) : title_w;
  std::string title = MapTitle(t, index);
  if (ImGui::CalcTextSize(title.c_str()).x > room)
    title = index == t.cfg.num_heads ? std::string(_("mean")) : i18n::Format(_("head %d"), index);
  if (ImGui::CalcTextSize(title.c_str()).x > room && index < t.cfg.num_heads) title = "h" + std::to_string(index);
  title = Ellipsize(title, room);
  dl->AddText(ImVec2(a.x, title_y + (g.title_h - fs) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), title.c_str());
  if (s.ui.font_bold) ImGui::PopFont();

  int rows_ready = seq;  // the norms' texture fills a few rows a frame
  const unsigned int name = n ? NormsTexture(s, *n, index, &rows_ready) : s.ui.textures.Texture(index);
  const ImTextureID tex = reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(name));
  if (rows_ready > 0)
    dl->AddImage(tex, a, ImVec2(b.x, a.y + ch * rows_ready), ImVec2(0, 0),
                 ImVec2(1, static_cast<float>(rows_ready) / static_cast<float>(seq)));
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

  if (values_allowed && ValuesFit(s, g)) DrawCellValues(s, n, index, g, a);

  // Highlight the row of a hovered token chip.
  if (s.ui.hover_token >= 0 && s.ui.hover_token < seq) {
    const float y = a.y + s.ui.hover_token * ch;
    dl->AddRect(ImVec2(a.x - 1, y - 1), ImVec2(b.x + 1, y + ch + 1), pal.highlight, 0.0f, 0, 2.0f);
  }
  // A lesson's revealed answer on its head's map, and the class's pick when it was wrong.
  const TourOutline& o = s.ui.tour.outline;
  const auto reveal = [&](int i, int j, bool answer) {
    if (i >= 0 && i < seq && j >= 0 && j < skv)
      DrawRevealCell(s, dl, ImVec2(a.x + j * cw, a.y + i * ch), ImVec2(a.x + (j + 1) * cw, a.y + (i + 1) * ch), answer);
  };
  // A question about a row, not answered yet ("at the second 쥐"): the row outlined,
  // and on a map taller than its panel scrolled into view once per step, so the class
  // sees the row it is asked about and the teacher can still scroll away.
  if (o.pending && o.head == index && o.row >= 0 && o.row < seq) {
    const float y = a.y + static_cast<float>(o.row) * ch;
    dl->AddRect(ImVec2(a.x - 2, y - 2), ImVec2(b.x + 2, y + ch + 2), pal.highlight, 0.0f, 0, 3.0f);
    s.ui.probe["map asked row"] = {a.x, y, b.x - a.x, ch};
    auto& shown = s.views.Get<RevealScroll>();
    const std::string key = "asked " + std::to_string(s.ui.tour.step) + " " + std::to_string(o.row);
    // (below the keys' strip, which stays at the top of a scrolled panel)
    const float strip = KeysStick(g) ? g.col_label_h : 0.0f;
    const float top = ImGui::GetWindowPos().y, bottom = top + ImGui::GetWindowHeight();
    if (shown.key != key) {
      // Once: where the row is in view or the map does not scroll, nothing to do; else
      // as soon as the panel knows its scroll range (not in its first frame).
      if (!g.scroll || (y >= top + strip - 1.0f && y + ch <= bottom + 1.0f)) {
        shown.key = key;
      } else if (ImGui::GetScrollMaxY() > 0.0f) {
        ImGui::SetScrollFromPosY(y + 0.5f * (ch - strip) - top, 0.5f);
        shown.key = key;
      }
    }
  }
  if (o.on && o.head == index) {
    reveal(o.pick_row, o.pick_col, false);
    reveal(o.row, o.col, true);
    // A map taller than the panel scrolls the answer into view, once per reveal, so the
    // class sees it and the teacher can still scroll away.
    auto& shown = s.views.Get<RevealScroll>();
    const std::string key = std::to_string(s.ui.tour.step) + " " + std::to_string(o.row) + " " + std::to_string(o.col);
    if (shown.key != key) {
      shown.key = key;
      ImGui::SetScrollFromPosY(a.y + (static_cast<float>(o.row) + 0.5f) * ch - ImGui::GetWindowPos().y, 0.5f);
    }
  }

  // The labels last: the keys' strip covers what scrolls under it.
  DrawTokenLabels(s, g, place, a);
  s.ui.probe["map " + std::to_string(index)] = {a.x, a.y, b.x - a.x, b.y - a.y};
  // Hover: tooltip for the cell, outline of its row; click enlarges.
  const ImVec2 m = ImGui::GetIO().MousePos;
  // (not under the keys' strip of a scrolled map: the keys are hovered there)
  const bool over = place.hovered && m.x >= a.x && m.x < b.x && m.y >= KeysBottom(g, a, seq) && m.y < b.y;
  if (!over) return false;
  const int i = std::clamp(static_cast<int>((m.y - a.y) / ch), 0, seq - 1);
  const int j = std::clamp(static_cast<int>((m.x - a.x) / cw), 0, skv - 1);
  dl->AddRect(ImVec2(a.x - 1, a.y + i * ch - 1), ImVec2(b.x + 1, a.y + (i + 1) * ch + 1), pal.highlight, 0.0f, 0, 1.5f);
  dl->AddRect(ImVec2(a.x + j * cw, a.y + i * ch), ImVec2(a.x + (j + 1) * cw, a.y + (i + 1) * ch),
              IM_COL32(255, 255, 255, 255), 0.0f, 0, 2.0f);
  CellTooltip(r, n, index, i, j);
  return place.clicked;
}

// The maps on screen: every head and the mean, the enlarged one, or in presentation
// mode one map, a 2 x 2 page, or all of them.
std::vector<int> ShownMaps(AppState& s, int H) {
  std::vector<int> shown;
  if (s.ui.present) {
    s.ui.present_head = std::clamp(s.ui.present_head, 0, H);
    if (s.ui.present_layout == 0) return {s.ui.present_head};
    if (s.ui.present_layout == 1) {
      const int page = s.ui.present_head / 4;
      for (int k = page * 4; k < std::min(page * 4 + 4, H + 1); ++k) shown.push_back(k);
      return shown;
    }
  } else if (s.ui.enlarged >= 0) {
    return {s.ui.enlarged};
  }
  for (int k = 0; k <= H; ++k) shown.push_back(k);
  return shown;
}

// The switch (on the scale's line, presented too), and with "what each key adds" its line and the
// shares in *out; false when there are none to draw (still computing, or the core's
// error, which the line shows).
bool NormsShown(AppState& s, const HeatmapNorms** out) {
  DrawNormsSwitch(s);  // presented too: a teacher switches in front of the class
  if (!s.choice.heatmap_norms) return true;
  // Presented: no line over the maps, only why there are none.
  *out = DrawNormsExplanation(s, /*line=*/!s.ui.present);
  return *out != nullptr;
}

}  // namespace

void DrawHeatmapsPanel(AppState& s) {
  const Result& r = s.result;
  const Trace& t = r.trace;
  if (!s.ui.present) {
    // One line: the title, its explanation behind (?), and the colour scale; the maps
    // get the height.
    SectionTitle(s, s.choice.heatmap_norms ? _("What each key adds") : _("Attention weights"));
    ImGui::SameLine();
    HelpMarker(
        _("softmax(Q\xC2\xB7K^T / \xE2\x88\x9A"
          "d_k) per head. Row = query token (who looks), column = key "
          "token (what it looks at); each row sums to 1. Click a head to enlarge it; hover a cell for its "
          "weight and score."));
    ImGui::SameLine();
    DrawWeightsBadge(s);
    ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  }
  if (!r.ok && r.generation == 0) {  // (the error itself is over the results)
    ImGui::NewLine();
    if (r.error.empty()) MessageBox(_("Nothing computed yet."), Pal().error_bg, Pal().error_text);
    return;
  }
  // An invalid configuration keeps the last valid maps on screen (the results area
  // dims them, VeilLastValid, under its banner saying why).
  s.ui.textures.SetScale(s.ui.colour_scale);
  {
    const auto t0 = std::chrono::steady_clock::now();
    if (s.ui.textures.Sync(r)) {
      s.ui.timing.last_upload_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      s.ui.timing.upload_ms.push_back(s.ui.timing.last_upload_ms);
    }
  }
  const int H = t.cfg.num_heads;
  if (s.ui.enlarged > H) s.ui.enlarged = -1;
  if (s.ui.present) PresentBar(s);
  ScaleControls(s, t);
  const HeatmapNorms* norms = nullptr;  // with "what each key adds": the shares the maps show
  if (!NormsShown(s, &norms)) return;
  const float fs = ImGui::GetFontSize();

  if (s.ui.enlarged >= 0 && !s.ui.present) {
    if (ImGui::Button(_("< All heads"))) s.ui.enlarged = -1;
    Probe(s, "all_heads");
    ImGui::SameLine();
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) s.ui.enlarged = (s.ui.enlarged + H) % (H + 1);
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right)) s.ui.enlarged = (s.ui.enlarged + 1) % (H + 1);
    ImGui::SameLine();
    ImGui::TextDisabled(_("Esc returns to all heads"));
  }

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Colour bar column: margin, bar, tick, the widest of its labels.
  // (only the labels drawn: every pixel counts at a projector's text size)
  const bool fixed_scale = s.ui.colour_scale == render::ColourScale::Fixed;
  const float bar_w =
      std::max(fs * 0.8f + ImGui::CalcTextSize(fixed_scale ? _("weight") : _("\xC3\xB7 row max")).x,
               fs * 2.3f + std::max(ImGui::CalcTextSize(fixed_scale ? "0.00" : _("max")).x,
                                    t.cfg.mask == Mask::Causal ? ImGui::CalcTextSize(_("masked")).x : 0.0f));
  const ImVec2 area(std::max(avail.x - bar_w, 1.0f), std::max(avail.y, 1.0f));
  const std::vector<int> shown = ShownMaps(s, H);
  const int n = static_cast<int>(shown.size());
  // Labels need rows as tall as the font (nearly), and one whole map in the panel's
  // height: beyond that (hundreds of tokens) the tokens are not even measured.
  const bool labels_possible = 0.85f * fs * t.seq <= std::max(area.y, 4.0f * fs * 10.0f);
  const Labels labels = labels_possible ? MeasureLabels(s, ImGui::GetFont()) : Labels{};
  const int only_cols = s.ui.present && s.ui.present_layout == 1 ? 2 : 0;
  // Presentation's pages of several maps show every map they hold: no scroll.
  const bool allow_scroll = !(s.ui.present && s.ui.present_layout > 0);
  const Geometry g = FitGrid(n, t.seq, t.seq_kv, area, labels, allow_scroll, only_cols, s.ui.text_size > 100);
  s.ui.textures.SetMinified(g.cw < 1.0f || g.ch < 1.0f);

  // The maps' own region, which scrolls when the layout is taller than the panel.
  const ImGuiWindowFlags view_flags =
      g.scroll ? ImGuiWindowFlags_None : ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  ImGui::BeginChild("##maps_view", area, false, view_flags);
  s.ui.probe["maps view"] = {ImGui::GetWindowPos().x, ImGui::GetWindowPos().y, ImGui::GetWindowSize().x,
                             ImGui::GetWindowSize().y};
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float content_w = area.x - (g.scroll ? ImGui::GetStyle().ScrollbarSize : 0.0f);
  // One button over all maps: its hover and click are what the maps respond to
  // (the window itself counts as blocked while the button is being pressed).
  ImGui::InvisibleButton("##maps", ImVec2(std::max(content_w, 1.0f), std::max(g.scroll ? g.content_h : area.y, 1.0f)));
  const bool maps_hovered = ImGui::IsItemHovered();
  const bool maps_clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  Probe(s, "heatmaps");
  const float map_w = g.cw * t.seq_kv, map_h = g.ch * t.seq;
  MapPlace left;  // the map before in the same grid row: its key labels
  int overlaps = 0;
  for (int k = 0; k < n; ++k) {
    const int gx = k % g.cols, gy = k / g.cols;
    MapPlace p;
    p.row_labels = gx == 0;
    p.last_in_row = gx == g.cols - 1 || k == n - 1;
    p.col_labels = gy == 0 || g.keys_every_row;
    p.hovered = maps_hovered;
    p.clicked = maps_clicked && n > 1;
    const float keys_above = (g.keys_every_row ? gy + 1 : 1) * g.col_label_h;
    // Whole pixels: a map edge between pixels is drawn stepped by the rasteriser.
    p.origin = ImVec2(std::round(o.x + g.row_label_w + gx * (map_w + g.gap_x)),
                      std::round(o.y + keys_above + g.title_h + gy * (map_h + g.title_h + g.gap_y)));
    const int index = shown[static_cast<std::size_t>(k)];
    const bool clicked = DrawMap(s, norms, index, g, p, true);
    for (int line = 0; line < 2 && gx > 0; ++line)  // labels of neighbouring maps on one line
      if (p.keys_lo[line] < FLT_MAX && left.keys_hi[line] > -FLT_MAX && p.keys_lo[line] < left.keys_hi[line] + 2.0f)
        ++overlaps;
    left = p;
    if (clicked) {
      if (s.ui.present) {
        s.ui.present_head = index;
        s.ui.present_layout = 0;
      } else {
        s.ui.enlarged = index;
      }
    }
    if (s.ui.present && n > 1 && index == s.ui.present_head)  // the map the arrow keys are on
      ImGui::GetWindowDrawList()->AddRect(ImVec2(p.origin.x - 3, p.origin.y - 3),
                                          ImVec2(p.origin.x + map_w + 3, p.origin.y + map_h + 3), Pal().highlight, 0.0f,
                                          0, 2.0f);
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
  rep.values = ValuesFit(s, g);
  rep.values_px = rep.values ? ValuesFont(s, g).px : 0.0f;
  rep.scroll = g.scroll;
  rep.key_label_overlaps = overlaps;
  rep.content_h = g.content_h;
  rep.view_h = area.y;

  DrawColourBar(ImVec2(origin.x + area.x + fs * 0.8f, origin.y),
                ImVec2(bar_w - fs * 0.8f, std::max(std::min(area.y - fs * 2.5f, fs * 16.0f), fs * 6.0f)),
                t.cfg.mask == Mask::Causal, s.ui.colour_scale, norms != nullptr);
}

}  // namespace mha::gui
