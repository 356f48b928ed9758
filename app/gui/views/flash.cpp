// Flash attention, tile by tile (lesson 003): the current head's seq x seq_kv grid cut
// into Br x Bc tiles, stepped in the order the forward pass runs them, with each query
// row's running max m, sum l, rescale factor and partial output, a memory gauge, and
// at the end the context against the trace's. The arithmetic is mha::FlashTiles'.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gui/draw/table_fit.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "mha/flash.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;
using dump::Num;

namespace {

// The view's own state (AppState::views): the tiles stepped to choice.flash.tile,
// rebuilt when the trace, the head or the tile size changes (the tiles copy q, k, v,
// so they never read a stale trace).
struct FlashViewState {
  std::unique_ptr<FlashTiles> tiles;
  std::uint64_t generation = 0;
  int head = -1, built_br = 0, built_bc = 0;
  bool playing = false;
  double last_step = 0.0;
  std::string error;
};

FlashViewState& St(AppState& s) { return s.views.Get<FlashViewState>(); }

void StepTo(FlashTiles& ft, int target) {
  target = std::clamp(target, 0, ft.count());
  if (target < ft.done()) ft.Reset();
  while (ft.done() < target) ft.Next();
}

// The tiles for the current trace and head, at the chosen tile; null (with st.error)
// when they cannot run.
FlashTiles* Tiles(AppState& s) {
  FlashViewState& st = St(s);
  if (!HasResults(s)) return nullptr;
  const Trace& t = s.result.trace;
  ClampSelection(s);
  FlashChoice& c = s.choice.flash;
  c.br = std::clamp(c.br, 1, std::max(t.seq, 1));
  c.bc = std::clamp(c.bc, 1, std::max(t.seq_kv, 1));
  if (!st.tiles || st.generation != s.result.generation || st.head != s.choice.head || st.built_br != c.br ||
      st.built_bc != c.bc) {
    st.tiles.reset();
    st.error.clear();
    st.generation = s.result.generation;
    st.head = s.choice.head;
    st.built_br = c.br;
    st.built_bc = c.bc;
    try {
      st.tiles = std::make_unique<FlashTiles>(t, s.choice.head, c.br, c.bc);
    } catch (const std::exception& e) {
      st.error = e.what();
    }
  }
  if (!st.tiles) return nullptr;
  c.tile = std::clamp(c.tile, 0, st.tiles->count());
  StepTo(*st.tiles, c.tile);
  return st.tiles.get();
}

// The largest |context_flash - context_trace| over the rows whose block is finished.
double MaxDiff(const FlashTiles& ft, const Trace& t, int head) {
  const Mat c = ft.Context();
  double worst = 0.0;
  for (int i = 0; i < ft.seq(); ++i) {
    if (!ft.RowFinished(i)) continue;
    for (int j = 0; j < ft.head_dim(); ++j)
      worst = std::max(worst, std::abs(static_cast<double>(c(i, j)) -
                                       static_cast<double>(t.context(static_cast<Eigen::Index>(head) * t.seq + i, j))));
  }
  return worst;
}

// The player and the sliders write the choice (choice.flash); Tiles() follows it.
void DrawControls(AppState& s, FlashTiles& ft) {
  FlashViewState& st = St(s);
  FlashChoice& c = s.choice.flash;
  const float fs = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(fs * 8.0f);
  ImGui::SliderInt(_("Br (query rows)"), &c.br, 1, std::max(ft.seq(), 1));
  Probe(s, "flash br");
  // The row wraps at the view's edge at large text: the sliders, the player, the count.
  const ImGuiStyle& style = ImGui::GetStyle();
  SameLineIfFits(fs * 8.0f + style.ItemInnerSpacing.x + ImGui::CalcTextSize(_("Bc (keys)"), nullptr, true).x, fs);
  ImGui::SetNextItemWidth(fs * 8.0f);
  ImGui::SliderInt(_("Bc (keys)"), &c.bc, 1, std::max(ft.seq_kv(), 1));
  Probe(s, "flash bc");
  // The player: four buttons and the play switch, kept together.
  const char* const player[4] = {"\xE2\x97\x80\xE2\x97\x80", "\xE2\x97\x80", "\xE2\x96\xB6",
                                 "\xE2\x96\xB6\xE2\x96\xB6"};
  float buttons_w = 4 * style.ItemSpacing.x + ToggleWidth(_("play"));
  for (const char* b : player) buttons_w += ButtonWidth(b);
  SameLineIfFits(buttons_w, fs * 1.5f);
  if (ImGui::Button(player[0])) c.tile = 0;
  Probe(s, "flash start");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("Back to the start"));
  ImGui::SameLine();
  if (ImGui::Button(player[1])) c.tile = std::max(0, ft.done() - 1);
  Probe(s, "flash prev");
  ImGui::SameLine();
  if (ImGui::Button(player[2]) && !ft.finished()) c.tile = ft.done() + 1;
  Probe(s, "flash next");
  ImGui::SameLine();
  if (ImGui::Button(player[3])) c.tile = ft.count();
  Probe(s, "flash end");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("Run every remaining tile"));
  ImGui::SameLine();
  if (ImGui::Checkbox(_("play"), &st.playing)) st.last_step = ImGui::GetTime();
  Probe(s, "flash play");
  if (st.playing) {
    if (ft.finished()) {
      st.playing = false;
    } else if (ImGui::GetTime() - st.last_step >= 0.6) {
      c.tile = ft.done() + 1;
      st.last_step = ImGui::GetTime();
    }
  }
  const std::string tiles = i18n::Format(_("tile %d of %d"), c.tile, ft.count());
  SameLineIfFits(ImGui::CalcTextSize(tiles.c_str()).x, fs);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(tiles.c_str());
  // Tiles done and in all, for the GUI tests to wait on (the probe holds rectangles).
  s.ui.probe["flash_tiles"] = {static_cast<float>(c.tile), static_cast<float>(ft.count()), 0.0f, 0.0f};
}

// The grid: finished tiles shaded by the weights recovered so far, the current tile
// outlined, skipped tiles (causal, above the diagonal) hatched grey.
void DrawGrid(AppState& s, const FlashTiles& ft, float side) {
  const int n = ft.seq(), nk = ft.seq_kv();
  const float cell = std::max(1.0f, std::floor(side / static_cast<float>(std::max(n, nk))));
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const FlashTileStep& cur = ft.last();
  const bool shade = n <= 256 && nk <= 256;
  for (int i = 0; i < n && shade; ++i) {
    const std::vector<float> w = ft.Weights(i);
    for (int j = 0; j < nk; ++j) {
      if (w[static_cast<std::size_t>(j)] <= 0.0f) continue;
      const float a = std::sqrt(std::clamp(w[static_cast<std::size_t>(j)], 0.0f, 1.0f));
      ImVec4 c = ImGui::ColorConvertU32ToFloat4(Pal().accent);
      c.w = 0.15f + 0.85f * a;
      const ImVec2 p(o.x + static_cast<float>(j) * cell, o.y + static_cast<float>(i) * cell);
      dl->AddRectFilled(p, ImVec2(p.x + cell, p.y + cell), ImGui::ColorConvertFloat4ToU32(c));
    }
  }
  const float w = cell * static_cast<float>(nk), h = cell * static_cast<float>(n);
  dl->AddRect(o, ImVec2(o.x + w, o.y + h), Pal().block_border);
  // Tile boundaries.
  for (int j = ft.bc(); j < nk; j += ft.bc())
    dl->AddLine(ImVec2(o.x + static_cast<float>(j) * cell, o.y), ImVec2(o.x + static_cast<float>(j) * cell, o.y + h),
                Pal().muted_text);
  for (int i = ft.br(); i < n; i += ft.br())
    dl->AddLine(ImVec2(o.x, o.y + static_cast<float>(i) * cell), ImVec2(o.x + w, o.y + static_cast<float>(i) * cell),
                Pal().muted_text);
  // Skipped tiles seen so far: a cross.
  if (ft.done() > 0) {
    const ImVec2 a(o.x + static_cast<float>(cur.col0) * cell, o.y + static_cast<float>(cur.row0) * cell);
    const ImVec2 b(o.x + static_cast<float>(cur.col1) * cell, o.y + static_cast<float>(cur.row1) * cell);
    if (cur.skipped) {
      dl->AddLine(a, b, Pal().muted_text, 1.5f);
      dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), Pal().muted_text, 1.5f);
    }
    dl->AddRect(a, b, Pal().highlight, 0.0f, 0, 3.0f);
  }
  ImGui::Dummy(ImVec2(w, h));
  Probe(s, "flash grid");
}

// The gauge's two rows: what standard attention and Flash hold, each a bar against the
// larger. `compact` (short of height, as under a lesson's band): the label and its bar on
// one line, the label's parenthesis in the row's tooltip.
void MemoryGauge(const FlashTiles& ft, bool compact) {
  const std::size_t std_b = ft.StandardHeadBytes(), held = ft.HeldBytes();
  const float bar = ImGui::GetFrameHeight() * 0.8f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const std::string labels[2][2] = {
      {i18n::Format(_("standard attention holds (this head's scores and weights, seq x seq_kv x 2 floats): %s"),
                    Bytes(static_cast<std::int64_t>(std_b)).c_str()),
       i18n::Format(_("standard attention holds: %s"), Bytes(static_cast<std::int64_t>(std_b)).c_str())},
      {i18n::Format(_("Flash holds (one Br x Bc tile of scores and P, m, l and O of the block): %s"),
                    Bytes(static_cast<std::int64_t>(held)).c_str()),
       i18n::Format(_("Flash holds: %s"), Bytes(static_cast<std::int64_t>(held)).c_str())}};
  const float label_w =
      compact ? std::max(ImGui::CalcTextSize(labels[0][1].c_str()).x, ImGui::CalcTextSize(labels[1][1].c_str()).x) +
                    ImGui::GetFontSize() * 0.5f
              : 0.0f;
  const std::size_t bytes[2] = {std_b, held};
  const ImU32 colours[2] = {Pal().error_text, Pal().ok_text};
  for (int k = 0; k < 2; ++k) {
    const ImVec2 row0 = ImGui::GetCursorScreenPos();
    ImGui::TextUnformatted(labels[k][compact ? 1 : 0].c_str());
    if (compact) {
      ImGui::SameLine(0, 0);
      ImGui::SetCursorScreenPos(ImVec2(row0.x + label_w, row0.y));
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float width = ImGui::GetContentRegionAvail().x;
    // Both against the larger: at a few tokens Flash's block (O is Br x head_dim) can
    // outweigh the whole n x n matrix, and the bars must say so.
    const std::size_t most = std::max(std_b, held);
    const float frac = most > 0 ? static_cast<float>(static_cast<double>(bytes[k]) / static_cast<double>(most)) : 0.0f;
    const float y = compact ? p.y + (ImGui::GetTextLineHeight() - bar) * 0.5f : p.y;
    dl->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + width, y + bar), Pal().block_bg);
    dl->AddRectFilled(ImVec2(p.x, y), ImVec2(p.x + std::max(2.0f, width * frac), y + bar), colours[k]);
    ImGui::Dummy(ImVec2(width, compact ? ImGui::GetTextLineHeight() : bar));
    if (compact && ImGui::IsMouseHoveringRect(row0, ImVec2(p.x + width, y + bar)))
      ImGui::SetTooltip("%s", labels[k][0].c_str());
  }
}

// How the block table writes its cells: the vectors' digits, the headers on two lines.
struct BlockTableFit {
  int digits = 4;
  bool wrap = false;
  bool fits = true;  // false: the narrowest, still too wide (the table scrolls sideways)
};

// The block table's cells, one row per query row of the tile: the row and its token, m
// before and after, the rescale, l, O and O / l.
std::vector<std::vector<std::string>> BlockCells(AppState& s, const FlashTileStep& st, int digits) {
  const auto& tokens = s.result.trace.in.tokens;
  std::vector<std::vector<std::string>> out;
  for (int r = 0; r < st.row1 - st.row0; ++r) {
    const int i = st.row0 + r;
    const std::size_t k = static_cast<std::size_t>(r);
    RowVec ctx = st.o.row(r);
    if (st.l_new[k] > 0.0) ctx /= static_cast<float>(st.l_new[k]);
    out.push_back({std::to_string(i) + " " +
                       (i < static_cast<int>(tokens.size()) ? ForDisplay(tokens[static_cast<std::size_t>(i)]) : ""),
                   std::isfinite(st.m_old[k]) ? Sig(st.m_old[k]) : "-inf",
                   std::isfinite(st.m_new[k]) ? Sig(st.m_new[k]) : "-inf", Sig(st.rescale[k]), Sig(st.l_new[k]),
                   VecString(st.o.row(r), 3, digits), VecString(ctx, 3, digits)});
  }
  return out;
}

std::vector<std::string> BlockHeaders() {
  return {_("row"), _("m before"),        _("m after"),     _("rescale exp(m_old - m_new)"),
          "l",      _("O (not yet / l)"), _("O / l so far")};
}

// The widest writing whose columns fit `avail`: as written, then the headers wider than
// their numbers on two lines, then 3 digits in the vectors; else the narrowest, and the
// table scrolls sideways with the row frozen.
BlockTableFit FitBlockTable(AppState& s, const FlashTileStep& st, float avail) {
  const std::vector<std::string> headers = BlockHeaders();
  const float pad = 2 * ImGui::GetStyle().CellPadding.x + 1;
  for (const BlockTableFit f : {BlockTableFit{4, false}, BlockTableFit{4, true}, BlockTableFit{3, true}}) {
    const auto cells = BlockCells(s, st, f.digits);
    float w = 0.0f;
    for (std::size_t c = 0; c < headers.size(); ++c) {
      float cw = 0.0f;
      for (const auto& row : cells) cw = std::max(cw, ImGui::CalcTextSize(row[c].c_str()).x);
      w += std::max(cw, ImGui::CalcTextSize(FittedHeader(headers[c], cw, f.wrap).c_str()).x) + pad;
    }
    if (w <= avail) return f;
  }
  return {3, true, false};
}

// The block table's width at its narrowest writing, for any tile: every row's token, and
// numbers as wide as they come (a steady width, so the grid beside it keeps its size).
float BlockTableNeed(AppState& s, const FlashTiles& ft) {
  const auto& tokens = s.result.trace.in.tokens;
  float row = 0.0f;
  for (int i = 0; i < ft.seq() && i < static_cast<int>(tokens.size()); ++i)
    row = std::max(
        row,
        ImGui::CalcTextSize((std::to_string(i) + " " + ForDisplay(tokens[static_cast<std::size_t>(i)])).c_str()).x);
  const std::vector<std::string> headers = BlockHeaders();
  // (3 significant digits, as the narrowest writing has them)
  const float vec = ImGui::CalcTextSize("[-0.000, \xE2\x80\xA6, -0.000]").x, num = ImGui::CalcTextSize("-0.000").x;
  const float cells[7] = {row, num, num, num, num, vec, vec};
  float w = 0.0f;
  for (std::size_t c = 0; c < headers.size(); ++c)
    w += std::max(cells[c], ImGui::CalcTextSize(FittedHeader(headers[c], cells[c], true).c_str()).x) +
         2 * ImGui::GetStyle().CellPadding.x + 1;
  return w;
}

void DrawBlockTable(AppState& s, const FlashTiles& ft) {
  const FlashTileStep& st = ft.last();
  if (ft.done() == 0) {
    Muted(_("No tile yet: every row starts with m = -inf, l = 0 and O = 0. Press \xE2\x96\xB6."));
    return;
  }
  char head[1024];
  const char* fmt = st.skipped ? _("Tile %d: query rows %d..%d against keys %d..%d: every pair is masked (causal), so "
                                   "the tile is skipped and nothing changes")
                    : st.last_of_block
                        ? _("Tile %d: query rows %d..%d against keys %d..%d: the block's last key tile, its rows are "
                            "divided by l now")
                        : _("Tile %d: query rows %d..%d against keys %d..%d");
  std::snprintf(head, sizeof head, fmt, st.index + 1, st.row0, st.row1 - 1, st.col0, st.col1 - 1);
  ImGui::TextUnformatted(head);
  if (st.skipped) return;
  const int rows = st.row1 - st.row0;
  const float line = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const bool scroll_y = rows > 10;  // (12 lines at most, the header's included)
  const BlockTableFit fit =
      FitBlockTable(s, st, ImGui::GetContentRegionAvail().x - (scroll_y ? ImGui::GetStyle().ScrollbarSize : 0.0f));
  const auto cells = BlockCells(s, st, fit.digits);
  const std::vector<std::string> headers = BlockHeaders();
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX;
  // Just the rows' height: under a lesson's band every line counts (a sideways scrollbar
  // only where the narrowest writing does not fit).
  const float head_h = fit.wrap ? ImGui::GetTextLineHeight() : 0.0f;
  const float h = std::min(line * static_cast<float>(rows + 1), line * 12.0f) + head_h + 4.0f +
                  (fit.fits ? 0.0f : ImGui::GetStyle().ScrollbarSize);
  if (ImGui::BeginTable("##flash_rows", 7, flags, ImVec2(0, h))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    for (std::size_t c = 0; c < headers.size(); ++c) {
      float cw = 0.0f;
      for (const auto& row : cells) cw = std::max(cw, ImGui::CalcTextSize(row[c].c_str()).x);
      ImGui::TableSetupColumn(FittedHeader(headers[c], cw, fit.wrap).c_str());
    }
    ImGui::TableHeadersRow();
    for (int r = 0; r < rows; ++r) {
      ImGui::TableNextRow();
      for (const std::string& cell : cells[static_cast<std::size_t>(r)]) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(cell.c_str());
      }
      Probe(s, ("flash_row_end " + std::to_string(r)).c_str());  // the row's last cell
    }
    ImGui::EndTable();
  }
  Probe(s, "flash_rows");
}

// The memory gauge, then the rows finished so far against the trace's context. Where
// they would run below the window (a lesson's band under the view at 1280 x 800 and
// 150 %), each says it in one line: the gauge's labels without their parenthesis, the
// comparison without its explanation (both in their tooltips).
void DrawGaugeAndCheck(AppState& s, const FlashTiles& ft) {
  const double diff = MaxDiff(ft, s.result.trace, s.choice.head);
  char line[1024], brief[512];
  if (ft.finished()) {
    std::snprintf(line, sizeof line,
                  _("Done: O / l equals the trace's context for head %d: largest difference %.3g over %d x %d numbers "
                    "(float rounding in another order; 0 or about 1e-7)."),
                  s.choice.head, diff, ft.seq(), ft.head_dim());
    std::snprintf(brief, sizeof brief, _("Done: largest difference from the trace's context %.3g"), diff);
  } else {
    std::snprintf(line, sizeof line,
                  _("Rows whose block is finished so far differ from the trace's context by at most %.3g. Step on to "
                    "the end to compare every row."),
                  diff);
    std::snprintf(brief, sizeof brief, _("Finished rows: largest difference from the trace's context %.3g"), diff);
  }
  const float wrap_w = ImGui::GetContentRegionAvail().x, bar = ImGui::GetFrameHeight() * 0.8f,
              spacing = ImGui::GetStyle().ItemSpacing.y;
  const auto text_h = [&](const std::string& t) { return ImGui::CalcTextSize(t.c_str(), nullptr, false, wrap_w).y; };
  const float full =
      text_h(i18n::Format(_("standard attention holds (this head's scores and weights, seq x seq_kv x 2 floats): %s"),
                          "000.0 KiB")) +
      text_h(
          i18n::Format(_("Flash holds (one Br x Bc tile of scores and P, m, l and O of the block): %s"), "000.0 KiB")) +
      2 * bar + text_h(line) + 6 * spacing;
  const bool compact = full > ImGui::GetContentRegionAvail().y;
  MemoryGauge(ft, compact);
  Probe(s, "flash memory");
  ImGui::Spacing();
  ImGui::TextUnformatted(compact ? brief : line);
  Probe(s, "flash diff");
  if (compact && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", line);
}

}  // namespace

void DrawFlashView(AppState& s) {
  SectionTitle(s, _("Flash attention, tile by tile"),
               _("The same softmax(Q K^T / \xE2\x88\x9A"
                 "d_k) V without ever holding the seq x seq_kv matrix: "
                 "blocks of Br query rows meet blocks of Bc keys, and each row keeps a running max m, a running sum l "
                 "and an unnormalised output O, rescaled by exp(m_old - m_new) whenever a new tile raises the max."),
               true);
  if (!HaveResultsToShow(s)) return;
  HeadPicker(s, "##flash_head");
  FlashTiles* ft = Tiles(s);
  if (!ft) {
    MessageBox(St(s).error.empty() ? std::string(_("No trace to step through.")) : St(s).error, Pal().error_bg,
               Pal().error_text);
    return;
  }
  DrawControls(s, *ft);
  ft = Tiles(s);  // a control may have changed the tile size or the tile
  if (!ft) return;
  const float avail = ImGui::GetContentRegionAvail().x, fs = ImGui::GetFontSize();
  // The grid fits the height left too, so its last rows stay above the fold at 1280 x 800,
  // and leaves the block table its width (down to 6 fonts' side: a lesson's 20 tokens).
  const float side =
      std::max(fs * 6.0f, std::min({avail * 0.38f, fs * 24.0f, ImGui::GetContentRegionAvail().y - fs * 2.5f,
                                    avail - fs - BlockTableNeed(s, *ft) - ImGui::GetStyle().ScrollbarSize}));
  ImGui::BeginGroup();
  // (the caption wraps at the grid's edge: wider, it would push the table right)
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + std::max(side, fs * 5.0f));
  DrawGrid(s, *ft, side);
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextUnformatted(_("Shaded: the weights recovered so far, exp(s - m) / l."));
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  ImGui::SameLine(0, fs);
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(0.0f);
  DrawBlockTable(s, *ft);
  ImGui::Spacing();
  DrawGaugeAndCheck(s, *ft);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

json DumpFlashView(AppState& s) {
  FlashTiles* ft = Tiles(s);
  if (!ft) return dump::Error(St(s).error.empty() ? "no trace" : St(s).error);
  const FlashTileStep& st = ft->last();
  json j{{"head", s.choice.head},
         {"br", ft->br()},
         {"bc", ft->bc()},
         {"seq", ft->seq()},
         {"seq_kv", ft->seq_kv()},
         {"tiles", ft->count()},
         {"done", ft->done()},
         {"finished", ft->finished()},
         {"held_bytes", ft->HeldBytes()},
         {"standard_bytes", ft->StandardHeadBytes()},
         {"max_diff", ft->finished() ? Num(MaxDiff(*ft, s.result.trace, s.choice.head)) : json(nullptr)}};
  if (ft->done() > 0) {
    json rows = json::array();
    if (!st.skipped)
      for (int r = 0; r < st.row1 - st.row0; ++r) {
        const std::size_t k = static_cast<std::size_t>(r);
        rows.push_back({{"row", st.row0 + r},
                        {"m_old", Num(st.m_old[k])},
                        {"m_new", Num(st.m_new[k])},
                        {"rescale", Num(st.rescale[k])},
                        {"l", Num(st.l_new[k])},
                        {"o", dump::Vec(st.o.row(r))}});
      }
    j["tile"] = {{"index", st.index},     {"rows", {st.row0, st.row1}},        {"cols", {st.col0, st.col1}},
                 {"skipped", st.skipped}, {"last_of_block", st.last_of_block}, {"block_rows", rows}};
  }
  if (ft->finished() && static_cast<Eigen::Index>(ft->seq()) * ft->head_dim() <= dump::kMaxDumpValues)
    j["context"] = dump::Matrix(ft->Context());
  return j;
}

// Presentation mode's PgDn / PgUp: the next tile or the one before (the view clamps
// the tile to the grid's count when it draws).
void StepFlashTile(AppState& s, int dir) { s.choice.flash.tile = std::max(0, s.choice.flash.tile + dir); }

ViewEntry FlashView() {
  ViewEntry v{"flash", N_("Flash"), N_("Flash attention, tile by tile"),
              "Flash attention stepped tile by tile: m, l, rescale, memory, exact context"};
  v.draw = &DrawFlashView;
  v.dump = &DumpFlashView;
  v.shows = "flash grid";
  v.essentials = "flash grid;flash memory;flash next;flash end";
  v.step = &StepFlashTile;
  return v;
}

}  // namespace mha::gui
