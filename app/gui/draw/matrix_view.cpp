#include "gui/draw/matrix_view.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <imgui_internal.h>

#include "gui/draw/widgets.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

bool IsMasked(float score) { return std::isinf(score) && score < 0; }

render::Rgb Rgb(ColourScale scale, float range, float v) {
  if (std::isinf(v) && v < 0) return render::kMaskedColour;
  if (scale == ColourScale::Sequential) return render::Colormap(range > 0 ? v / range : v);
  return render::Diverging(range > 0 && std::isfinite(v) ? v / range : 0.0f);
}

float MaxLabel(const std::vector<std::string>* labels, int n, float cap) {
  float w = 0.0f;
  if (labels) {
    for (const auto& l : *labels) w = std::max(w, ImGui::CalcTextSize(ForDisplay(l).c_str()).x);
  } else {
    w = ImGui::CalcTextSize(std::to_string(std::max(n - 1, 0)).c_str()).x;
  }
  return std::min(w, cap);
}

// Whether a label holds Hangul (syllables, jamo, compatibility jamo): Korean keys are
// never turned on their side, as the heatmaps keep them (docs/presenting.md).
bool HasHangul(const std::string& s) {
  for (std::size_t i = 0; i + 2 < s.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if ((b0 & 0xF0) != 0xE0) continue;
    const unsigned cp = ((b0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                        (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
    if ((cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0x1100 && cp <= 0x11FF) || (cp >= 0x3130 && cp <= 0x318F)) return true;
  }
  return false;
}

bool AnyHangul(const std::vector<std::string>* labels) {
  if (!labels) return false;
  for (const std::string& l : *labels)
    if (HasHangul(l)) return true;
  return false;
}

std::string Label(const std::vector<std::string>* labels, int i) {
  if (labels && i < static_cast<int>(labels->size())) return ForDisplay((*labels)[static_cast<std::size_t>(i)]);
  return std::to_string(i);
}

}  // namespace

ImU32 ScaleColour(ColourScale scale, float range, float v) { return Col32(Rgb(scale, range, v)); }

std::string FormatValue(float v, int decimals) {
  if (std::isinf(v)) return v < 0 ? "-\xE2\x88\x9E" : "\xE2\x88\x9E";  // -∞
  if (std::isnan(v)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(v));
  if (std::strlen(buf) > static_cast<std::size_t>(decimals) + 5)
    std::snprintf(buf, sizeof buf, "%.2g", static_cast<double>(v));
  if (std::strcmp(buf, "-0") == 0 || (buf[0] == '-' && std::strspn(buf + 1, "0.") == std::strlen(buf + 1)))
    std::memmove(buf, buf + 1, std::strlen(buf));  // "-0.00" reads as a sign error
  return buf;
}

std::string SigValue(float v, int digits) {
  if (!std::isfinite(v)) return FormatValue(v, 0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", std::max(digits, 1), static_cast<double>(v));
  if (std::strcmp(buf, "-0") == 0) return "0";
  return buf;
}

// Where DrawMatrix put the matrix: its cells' size, its corners, whether its labels
// fit, and the clip rectangle (what is out of sight is not drawn).
struct Placed {
  float fs = 0, cw = 0, ch = 0, row_w = 0, col_h = 0;
  int stride = 0;
  bool vertical = false, row_labels = false, col_labels = false;
  bool staggered = false;  // Hangul keys wider than a cell: upright, on two alternating lines
  ImVec2 p0, p1;
  ImVec4 clip;
  ImFont* small = nullptr;  // the font a number too wide for the regular one tries (small_values)
};

// The text of a cell's value and the font it fits in: the regular font with fewer
// digits until it fits, else the small font (small_values), else "…"; font null: no room.
struct CellText {
  std::string text;
  ImFont* font = nullptr;
  ImVec2 size;
  bool number = false;  // the value itself, not "…"
};

ImVec2 TextSize(ImFont* f, const std::string& t) { return f->CalcTextSizeA(f->FontSize, FLT_MAX, 0.0f, t.c_str()); }

CellText FitValue(const MatrixArgs& a, const Placed& q, float v) {
  ImFont* fonts[2] = {ImGui::GetFont(), a.small_values ? q.small : nullptr};
  CellText c;
  for (ImFont* f : fonts) {
    if (!f) continue;
    if (a.fixed_decimals) {
      c.text = FormatValue(v, 2);
      c.size = TextSize(f, c.text);
    } else {
      for (int d = a.digits; d >= 1; --d) {  // fewer digits until it fits
        c.text = SigValue(v, d);
        c.size = TextSize(f, c.text);
        if (c.size.x <= q.cw - 3.0f) break;
      }
      // A value under 0.05 ("-0.04") has no shorter significant form: "0.0" says it
      // (rounding any other value to fewer places would print a wrong number).
      if (c.size.x > q.cw - 3.0f && std::abs(v) < 0.05f) {
        c.text = FormatValue(v, 1);
        c.size = TextSize(f, c.text);
      }
    }
    c.font = f;
    c.number = c.size.x <= q.cw - 3.0f;
    if (c.number) return c;
  }
  // A number that does not fit is marked, never left out: a blank cell reads as 0.
  c.text = "\xE2\x80\xA6";
  c.font = ImGui::GetFont();
  c.size = TextSize(c.font, c.text);
  if (c.size.x > q.cw - 1.0f) c.font = nullptr;
  return c;
}

bool Fits(const CellText& c) { return c.font && c.number; }

// For tests: how many numbers fit their cells, in view or scrolled away (asked for, and
// small matrices only: every cell's text is measured each frame).
void CountValues(const MatrixArgs& a, const Placed& q, MatrixResult& res) {
  const float fs = q.fs, cw = q.cw, ch = q.ch;
  const int stride = q.stride;
  if (a.values && a.count_values && static_cast<long long>(a.rows) * a.cols <= 256) {
    const bool room = ch >= fs + 2.0f && cw >= fs * 1.2f;
    for (int i = 0; i < a.rows; ++i)
      for (int j = 0; j < a.cols; ++j) {
        if (a.masked_by && IsMasked(a.masked_by[std::size_t(i) * stride + j])) continue;
        const bool fits = room && Fits(FitValue(a, q, a.data[std::size_t(i) * stride + j]));
        ++(fits ? res.values_shown : res.values_hidden);
      }
  }
}

// The values written in the cells, where they fit.
void DrawValues(const MatrixArgs& a, const Placed& q) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = q.fs, cw = q.cw, ch = q.ch;
  const int stride = q.stride;
  const ImVec2 p0 = q.p0;
  const ImVec4 clip = q.clip;
  if (a.values && ch >= fs + 2.0f && cw >= fs * 1.2f) {
    for (int i = 0; i < a.rows; ++i) {
      const float y = p0.y + i * ch;
      if (y + ch < clip.y || y > clip.w) continue;
      for (int j = 0; j < a.cols; ++j) {
        const float x = p0.x + j * cw;
        if (x + cw < clip.x || x > clip.z) continue;
        if (a.masked_by && IsMasked(a.masked_by[std::size_t(i) * stride + j])) continue;  // grey, weight 0
        const float v = a.data[std::size_t(i) * stride + j];
        const CellText c = FitValue(a, q, v);
        if (!c.font) continue;
        dl->AddText(c.font, c.font->FontSize,
                    ImVec2(std::round(x + (cw - c.size.x) * 0.5f), std::round(y + (ch - c.size.y) * 0.5f)),
                    Col32(render::TextColourOn(Rgb(a.scale, a.range, v))), c.text.c_str());
      }
    }
  }
}

// The row labels left of the rows, the column labels above the columns (upright or
// rotated).
void DrawLabels(const MatrixArgs& a, const Placed& q) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = Pal();
  const float fs = q.fs, cw = q.cw, ch = q.ch, row_w = q.row_w, col_h = q.col_h;
  const bool vertical = q.vertical, row_labels = q.row_labels, col_labels = q.col_labels;
  const ImVec2 p0 = q.p0;
  const ImVec4 clip = q.clip;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  if (row_labels && a.show_row_labels) {
    for (int i = 0; i < a.rows; ++i) {
      const float y = p0.y + i * ch;
      if (y + ch < clip.y || y > clip.w) continue;
      const std::string l = Ellipsize(Label(a.row_labels, i), row_w - fs * 0.5f);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      dl->AddText(ImVec2(p0.x - fs * 0.3f - ts.x, y + (ch - ts.y) * 0.5f), i == a.highlight_row ? pal.highlight : text,
                  l.c_str());
    }
  }
  if (col_labels) {
    for (int j = 0; j < a.cols; ++j) {
      const float x = p0.x + j * cw;
      if (x + cw < clip.x || x > clip.z) continue;
      const ImU32 c = j == a.highlight_col ? pal.highlight : text;
      if (vertical) {
        const std::string l = Ellipsize(Label(a.col_labels, j), col_h - fs * 0.4f);
        const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
        AddTextVertical(dl, ImVec2(x + (cw - ts.y) * 0.5f, p0.y - fs * 0.3f), c, l.c_str());
      } else if (q.staggered) {
        // Odd columns on the upper line: each label has two cells' width.
        const std::string l = Ellipsize(Label(a.col_labels, j), 2.0f * cw - 4.0f);
        const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
        const bool upper = j % 2 == 1;
        dl->AddText(ImVec2(x + (cw - ts.x) * 0.5f, p0.y - fs * 0.1f - ts.y * (upper ? 2.0f : 1.0f)), c, l.c_str());
      } else {
        const std::string l = Label(a.col_labels, j);
        const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
        dl->AddText(ImVec2(x + (cw - ts.x) * 0.5f, p0.y - fs * 0.1f - ts.y), c, l.c_str());
      }
    }
  }
}

MatrixResult DrawMatrix(AppState& s, const MatrixArgs& a) {
  MatrixResult res;
  if (a.rows <= 0 || a.cols <= 0 || !a.data) return res;
  const float fs = ImGui::GetFontSize();
  const int stride = a.row_stride > 0 ? a.row_stride : a.cols;
  ImVec2 room = a.size;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (room.x <= 0) room.x = avail.x;
  if (room.y <= 0) room.y = avail.y;
  const float max_cell = a.max_cell > 0 ? a.max_cell : fs * 2.6f;

  // Labels: rows to the left; columns above, upright if they fit in a cell, else rotated
  // (Hangul: upright on two staggered lines instead, each label two cells wide).
  const float row_w = a.show_row_labels ? MaxLabel(a.row_labels, a.rows, fs * 7.0f) + fs * 0.5f : 0.0f;
  const float col_text = MaxLabel(a.col_labels, a.cols, fs * 6.0f);
  const bool groups = a.col_group > 0 && a.col_group < a.cols && a.col_group_label;
  const float group_h = groups ? fs * 1.3f : 0.0f;
  // Square cells, except that a wide, short matrix (ffn_hidden: seq x d_ff) may have
  // cells up to kTall times taller than wide, so its rows stay readable.
  constexpr float kTall = 6.0f;
  float cw = 0.0f, ch = 0.0f, col_h = 0.0f;
  bool vertical = false, staggered = false;
  const bool hangul = AnyHangul(a.col_labels);
  for (int pass = 0; pass < 2; ++pass) {
    vertical = pass == 1 && !hangul;
    staggered = pass == 1 && hangul;
    col_h = vertical ? col_text + fs * 0.4f : staggered ? fs * 2.4f : fs * 1.25f;
    const float fit_w = (room.x - row_w) / a.cols, fit_h = (room.y - col_h - group_h) / a.rows;
    cw = std::floor(std::min({max_cell, fit_w, fit_h}));
    ch = a.square ? cw : std::floor(std::min({max_cell, fit_h, std::max(cw, 1.0f) * kTall}));
    if (!vertical && col_text <= cw - 3.0f) break;
  }
  cw = std::max(cw, 1.0f);
  ch = std::max(ch, cw);
  const bool row_labels = ch >= fs * 0.9f, col_labels = cw >= fs * 0.9f;
  // For tests: how the Korean keys of each matrix are laid out, in view or scrolled away.
  if (hangul && col_labels) ++(vertical ? s.ui.report.matrix_hangul_rotated : s.ui.report.matrix_hangul_upright);
  const float lw = row_labels ? row_w : 0.0f, lh = (col_labels ? col_h : 0.0f) + group_h;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 p0(o.x + lw, o.y + lh);
  const ImVec2 p1(p0.x + cw * a.cols, p0.y + ch * a.rows);
  ImGui::PushID(a.id.c_str());
  ImGui::InvisibleButton("##cells", ImVec2(p1.x - o.x + 1.0f, p1.y - o.y + 1.0f));
  const bool hovered = ImGui::IsItemHovered();
  res.clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  ImGui::PopID();
  res.min = p0;
  res.max = p1;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = Pal();
  const ImVec4 clip = dl->_CmdHeader.ClipRect;
  const Placed q{fs,         cw,         ch,        row_w, col_h, stride, vertical,
                 row_labels, col_labels, staggered, p0,    p1,    clip,   s.ui.font_small};
  CountValues(a, q, res);
  if (p1.y < clip.y || o.y > clip.w) return res;  // scrolled out of view

  // Cells: a texture, one texel per value.
  const auto fill = [&](std::uint8_t* rgba, int row0, int row1) {
    for (int i = row0; i < row1; ++i)
      for (int j = 0; j < a.cols; ++j) {
        const bool masked = a.masked_by && IsMasked(a.masked_by[std::size_t(i) * stride + j]);
        const auto c = masked ? render::kMaskedColour : Rgb(a.scale, a.range, a.data[std::size_t(i) * stride + j]);
        std::uint8_t* px = &rgba[(std::size_t(i - row0) * a.cols + j) * 4];
        px[0] = c[0];
        px[1] = c[1];
        px[2] = c[2];
      }
  };
  const std::string key = a.key + "|" + std::to_string(static_cast<int>(a.scale)) + "|" + std::to_string(a.range);
  int ready = 0;
  const unsigned tex = s.ui.matrices.Get(a.id, key, a.rows, a.cols, fill, &ready);
  AddImageRows(dl, tex, p0, p1, ready, a.rows);  // a big matrix: coloured over a few frames
  if (ch >= 10.0f)
    for (int i = 1; i < a.rows; ++i)
      dl->AddLine(ImVec2(p0.x, p0.y + i * ch), ImVec2(p1.x, p0.y + i * ch), pal.grid_line);
  if (cw >= 10.0f)
    for (int j = 1; j < a.cols; ++j)
      dl->AddLine(ImVec2(p0.x + j * cw, p0.y), ImVec2(p0.x + j * cw, p1.y), pal.grid_line);
  dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), pal.block_border);
  if (a.col_group > 0 && a.col_group < a.cols) {
    const ImU32 strong = ImGui::GetColorU32(ImGuiCol_Text);
    for (int j = a.col_group; j < a.cols; j += a.col_group)
      dl->AddLine(ImVec2(p0.x + j * cw, p0.y - 2.0f), ImVec2(p0.x + j * cw, p1.y + 2.0f), strong, 2.0f);
    if (groups) {
      for (int g = 0; g * a.col_group < a.cols; ++g) {
        const float gx0 = p0.x + g * a.col_group * cw, gw = a.col_group * cw;
        const std::string l = Ellipsize(std::string(a.col_group_label) + " " + std::to_string(g), gw - 4.0f);
        const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
        dl->AddText(ImVec2(gx0 + (gw - ts.x) * 0.5f, o.y), ImGui::GetColorU32(ImGuiCol_Text), l.c_str());
      }
    }
  }

  DrawValues(a, q);
  DrawLabels(a, q);
  if (a.highlight_row >= 0 && a.highlight_row < a.rows) {
    const float y = p0.y + a.highlight_row * ch;
    dl->AddRect(ImVec2(p0.x - 1, y - 1), ImVec2(p1.x + 1, y + ch + 1), pal.highlight, 0.0f, 0, 2.0f);
  }
  if (a.highlight_col >= 0 && a.highlight_col < a.cols) {
    const float x = p0.x + a.highlight_col * cw;
    dl->AddRect(ImVec2(x - 1, p0.y - 1), ImVec2(x + cw + 1, p1.y + 1), pal.highlight, 0.0f, 0, 2.0f);
  }
  const auto reveal = [&](int i, int j, bool answer) {
    if (i >= 0 && i < a.rows && j >= 0 && j < a.cols)
      DrawRevealCell(s, dl, ImVec2(p0.x + j * cw, p0.y + i * ch), ImVec2(p0.x + (j + 1) * cw, p0.y + (i + 1) * ch),
                     answer);
  };
  reveal(a.pick_row, a.pick_col, false);
  reveal(a.answer_row, a.answer_col, true);

  // Hover: the exact value.
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y) {
    const int i = std::clamp(static_cast<int>((m.y - p0.y) / ch), 0, a.rows - 1);
    const int j = std::clamp(static_cast<int>((m.x - p0.x) / cw), 0, a.cols - 1);
    res.hover_row = i;
    res.hover_col = j;
    dl->AddRect(ImVec2(p0.x + j * cw, p0.y + i * ch), ImVec2(p0.x + (j + 1) * cw, p0.y + (i + 1) * ch),
                IM_COL32(255, 255, 255, 255), 0.0f, 0, 2.0f);
    ImGui::BeginTooltip();
    ImGui::Text("%s %d%s%s%s", a.row_axis ? a.row_axis : "row", i, a.row_labels ? " \"" : "",
                a.row_labels ? Label(a.row_labels, i).c_str() : "", a.row_labels ? "\"" : "");
    ImGui::Text("%s %d%s%s%s", a.col_axis ? a.col_axis : "column", j, a.col_labels ? " \"" : "",
                a.col_labels ? Label(a.col_labels, j).c_str() : "", a.col_labels ? "\"" : "");
    const float v = a.data[std::size_t(i) * stride + j];
    if (std::isinf(v) && v < 0)
      ImGui::TextUnformatted(_("value -inf (masked)"));
    else
      ImGui::Text(_("value %.7g"), static_cast<double>(v));
    if (a.tooltip) a.tooltip(i, j);
    ImGui::EndTooltip();
  }
  return res;
}

void DrawRevealCell(AppState& s, ImDrawList* dl, ImVec2 a, ImVec2 b, bool answer) {
  // Magenta is in neither viridis nor blue-white-red; the dark edge under it keeps it
  // apart from the yellow and the white cells too.
  constexpr ImU32 kAnswer = IM_COL32(255, 40, 220, 255), kPick = IM_COL32(255, 255, 255, 255);
  constexpr ImU32 kEdge = IM_COL32(0, 0, 0, 230);
  const float w = std::max(2.0f, ImGui::GetFontSize() * 0.14f);
  const ImVec2 lo(a.x + w * 0.5f, a.y + w * 0.5f), hi(b.x - w * 0.5f, b.y - w * 0.5f);
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), kEdge, 0.0f, 0, w + 2.0f);
  if (answer) {
    dl->AddRect(lo, hi, kAnswer, 0.0f, 0, w);
  } else {  // dashed: the class's pick, not the answer
    const float dash = std::max(3.0f, ImGui::GetFontSize() * 0.3f);
    const ImVec2 corners[5] = {lo, ImVec2(hi.x, lo.y), hi, ImVec2(lo.x, hi.y), lo};
    for (int e = 0; e < 4; ++e) {
      const ImVec2 p = corners[e], q = corners[e + 1];
      const float len = std::hypot(q.x - p.x, q.y - p.y);
      for (float t = 0; t < len; t += 2 * dash) {
        const float t1 = std::min(t + dash, len);
        dl->AddLine(ImVec2(p.x + (q.x - p.x) * t / len, p.y + (q.y - p.y) * t / len),
                    ImVec2(p.x + (q.x - p.x) * t1 / len, p.y + (q.y - p.y) * t1 / len), kPick, w);
      }
    }
  }
  s.ui.probe[answer ? "reveal_answer" : "reveal_pick"] = {a.x, a.y, b.x - a.x, b.y - a.y};
}

void DrawRevealRow(AppState& s, float line, bool answer) {
  ImGuiTable* tb = ImGui::GetCurrentTable();
  if (!tb) return;
  // Drawn in the table's own window, over the rows' backgrounds, and not clipped to the
  // last column's cell as that cell's drawing would be.
  const ImRect& clip = tb->InnerClipRect;
  ImGui::PushClipRect(clip.Min, clip.Max, false);
  DrawRevealCell(s, ImGui::GetWindowDrawList(), ImVec2(clip.Min.x + 2, tb->RowPosY1),
                 ImVec2(clip.Max.x - 2, tb->RowPosY1 + line), answer);
  ImGui::PopClipRect();
}

void DrawScaleLegend(ColourScale scale, float range, float width, const char* label, bool masked_entry) {
  const float fs = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float label_w = label ? ImGui::CalcTextSize(label).x + fs * 0.5f : 0.0f;
  const float lo = scale == ColourScale::Sequential ? 0.0f : -range, hi = range;
  const std::string lo_s = scale == ColourScale::Sequential && hi == 1.0f ? "0.00" : SigValue(lo, 3),
                    hi_s = scale == ColourScale::Sequential && hi == 1.0f ? "1.00" : SigValue(hi, 3);
  const float lo_w = ImGui::CalcTextSize(lo_s.c_str()).x, hi_w = ImGui::CalcTextSize(hi_s.c_str()).x;
  const float bar_x0 = o.x + label_w + lo_w + fs * 0.3f;
  const float bar_w = std::max(fs * 3.0f, width - label_w - lo_w - hi_w - fs * 1.4f -
                                              (masked_entry ? ImGui::CalcTextSize("masked").x + fs * 1.8f : 0.0f));
  const float h = fs * 0.8f, y = o.y + (fs - h) * 0.5f + 1.0f;
  if (label) dl->AddText(o, text, label);
  dl->AddText(ImVec2(o.x + label_w, o.y), text, lo_s.c_str());
  constexpr int kSteps = 48;
  for (int k = 0; k < kSteps; ++k) {
    const float v0 = lo + (hi - lo) * k / kSteps, v1 = lo + (hi - lo) * (k + 1) / kSteps;
    const ImU32 c0 = ScaleColour(scale, range, v0), c1 = ScaleColour(scale, range, v1);
    const float x0 = bar_x0 + bar_w * k / kSteps, x1 = bar_x0 + bar_w * (k + 1) / kSteps;
    dl->AddRectFilledMultiColor(ImVec2(x0, y), ImVec2(x1 + 0.5f, y + h), c0, c1, c1, c0);
  }
  dl->AddRect(ImVec2(bar_x0 - 1, y - 1), ImVec2(bar_x0 + bar_w + 1, y + h + 1), Pal().block_border);
  if (scale == ColourScale::Diverging) {
    const float zx = bar_x0 + bar_w * 0.5f;
    dl->AddLine(ImVec2(zx, y + h), ImVec2(zx, y + h + fs * 0.25f), text);
  }
  float x = bar_x0 + bar_w + fs * 0.3f;
  dl->AddText(ImVec2(x, o.y), text, hi_s.c_str());
  x += hi_w + fs * 0.8f;
  if (masked_entry) {
    dl->AddRectFilled(ImVec2(x, y), ImVec2(x + fs * 0.9f, y + h), Col32(render::kMaskedColour));
    dl->AddRect(ImVec2(x - 1, y - 1), ImVec2(x + fs * 0.9f + 1, y + h + 1), Pal().block_border);
    dl->AddText(ImVec2(x + fs * 1.2f, o.y), text, _("masked"));
    x += fs * 1.2f + ImGui::CalcTextSize("masked").x;
  }
  ImGui::Dummy(ImVec2(x - o.x, fs));
}

}  // namespace mha::gui
