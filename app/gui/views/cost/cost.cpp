// What attention costs as n grows (lesson 001's table, live): RNN / CNN /
// self-attention with the current n and d_model filled in; FLOPs against n on log-log
// axes for the attention core and the projections, from the core's shape-flow table
// (the same numbers the shape flow shows); and the bytes of the n x n weights against
// Flash attention's tile.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/cost/sweep.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "mha/cost.hpp"
#include "mha/flash.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;

namespace {

constexpr int kCnnKernel = 3;  // the CNN row's kernel width k

using FlopSplit = FlopGroups;

std::string Num(std::int64_t v) { return Thousands(static_cast<long long>(v)); }

struct CostNumbers {
  Config cfg;
  int n = 0, n_kv = 0, d = 0;
  FlopSplit now;  // the current trace's shape flow
  std::int64_t rnn = 0, cnn = 0, attn = 0;
  int crossover = 0;
  std::int64_t weights_bytes = 0, standard_bytes = 0, flash_bytes = 0;
};

bool Numbers(const AppState& s, CostNumbers& c) {
  if (!HasResults(s)) return false;
  const Trace& t = s.result.trace;
  c.cfg = t.cfg;
  c.n = t.seq;
  c.n_kv = t.seq_kv;
  c.d = t.cfg.d_model;
  c.now = GroupFlops(t.flow);
  const std::int64_t n = c.n, d = c.d;
  c.rnn = n * d * d;
  c.cnn = kCnnKernel * n * d * d;
  c.attn = n * n * d;
  c.crossover = CoreOvertakesProjectionsAt(c.cfg);
  c.weights_bytes = static_cast<std::int64_t>(n) * c.n_kv * t.cfg.num_heads * 4;
  c.standard_bytes = static_cast<std::int64_t>(StandardAttentionBytes(t.cfg, c.n, c.n_kv));
  c.flash_bytes = static_cast<std::int64_t>(FlashWorkerBytes(t.cfg));
  return true;
}

void ComplexityTable(const CostNumbers& c) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
  // Scrolls sideways where the view is narrower than the table (150-200% text, longer
  // Korean cells) instead of cutting its last columns off; tall enough for its 4 rows.
  const ImGuiStyle& st = ImGui::GetStyle();
  const float h = 4.0f * (ImGui::GetTextLineHeight() + 2.0f * st.CellPadding.y) + st.ScrollbarSize + 4.0f;
  if (!ImGui::BeginTable("##cost_table", 5, flags, ImVec2(0.0f, h))) return;
  char hdr[160];
  std::snprintf(hdr, sizeof hdr, _("at n = %d, d = %d"), c.n, c.d);
  ImGui::TableSetupColumn(_("layer"));
  ImGui::TableSetupColumn(_("time"));
  ImGui::TableSetupColumn(hdr);
  ImGui::TableSetupColumn(_("long-range dependency"));
  ImGui::TableSetupColumn(_("parallel"));
  ImGui::TableHeadersRow();
  auto row = [](const char* a, const std::string& b, const std::string& v, const std::string& dep, const char* par) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(a);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(b.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(v.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(dep.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(par);
  };
  const int apart = std::max(c.n - 1, 0), layers = std::max(1, (c.n + kCnnKernel - 2) / (kCnnKernel - 1));
  row("RNN",
      "O(n\xC2\xB7"
      "d^2)",
      Num(c.rnn),
      i18n::Format(P_("hard: the first and last word are %d step apart",
                      "hard: the first and last word are %d steps apart", apart),
                   apart),
      _("no"));
  row(_("CNN (k = 3)"),
      "O(k\xC2\xB7n\xC2\xB7"
      "d^2)",
      Num(c.cnn),
      i18n::Format(P_("grows with the layers: about %d layer of width 3 to span %d words",
                      "grows with the layers: about %d layers of width 3 to span %d words", layers),
                   layers, c.n),
      _("yes"));
  row(_("self-attention"),
      "O(n^2\xC2\xB7"
      "d)",
      Num(c.attn), _("one layer: every word sees every word"), _("yes"));
  ImGui::EndTable();
}

// Log-log FLOPs against n for the core, the projections (and the FFN), from
// ShapeFlow at each n; n = 2d marked; the current n as dots.
void Plot(AppState& s, const CostNumbers& c, ImVec2 size) {
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const float left = fs * 3.2f, bottom = fs * 1.8f;
  const ImVec2 a(o.x + left, o.y + fs * 0.5f), b(o.x + size.x - fs * 0.5f, o.y + size.y - bottom);
  dl->AddRectFilled(a, b, Pal().block_bg);
  dl->AddRect(a, b, Pal().block_border);
  const double x0 = 0.0, x1 = std::max(5.0, std::ceil(std::log10(std::max(4.0 * c.d, 2.0 * c.n))) + 1.0);
  const bool ffn = c.now.ffn > 0;
  const int samples = 48;
  std::vector<FlopSplit> pts(samples + 1);
  std::vector<double> ns(samples + 1);
  double y0 = 1e300, y1 = 0;
  for (int i = 0; i <= samples; ++i) {
    ns[i] = std::max(1.0, std::round(std::pow(10.0, x0 + (x1 - x0) * i / samples)));
    pts[i] = GroupFlops(ShapeFlow(c.cfg, static_cast<int>(ns[i]), static_cast<int>(ns[i])));
    for (std::int64_t v : {pts[i].core, pts[i].projections, ffn ? pts[i].ffn : pts[i].core}) {
      y0 = std::min(y0, std::log10(static_cast<double>(std::max<std::int64_t>(v, 1))));
      y1 = std::max(y1, std::log10(static_cast<double>(std::max<std::int64_t>(v, 1))));
    }
  }
  y0 = std::floor(y0);
  y1 = std::ceil(y1);
  auto X = [&](double n) { return a.x + static_cast<float>((std::log10(n) - x0) / (x1 - x0)) * (b.x - a.x); };
  auto Y = [&](double v) {
    return b.y - static_cast<float>((std::log10(std::max(v, 1.0)) - y0) / (y1 - y0)) * (b.y - a.y);
  };
  char buf[160];
  for (int e = static_cast<int>(x0); e <= static_cast<int>(x1); ++e) {
    const float x = X(std::pow(10.0, e));
    dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), Pal().grid_line);
    std::snprintf(buf, sizeof buf, "1e%d", e);
    dl->AddText(ImVec2(x - fs * 0.6f, b.y + fs * 0.2f), Pal().muted_text, buf);
  }
  const int ystep = std::max(1, static_cast<int>((y1 - y0) / 6));
  for (int e = static_cast<int>(y0); e <= static_cast<int>(y1); e += ystep) {
    const float y = Y(std::pow(10.0, e));
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), Pal().grid_line);
    std::snprintf(buf, sizeof buf, "1e%d", e);
    dl->AddText(ImVec2(o.x + fs * 0.3f, y - fs * 0.5f), Pal().muted_text, buf);
  }
  const ImU32 col_core = Pal().error_text, col_proj = Pal().accent, col_ffn = Pal().ok_text;
  auto curve = [&](std::int64_t FlopSplit::*m, ImU32 col) {
    std::vector<ImVec2> line;
    for (int i = 0; i <= samples; ++i) line.push_back(ImVec2(X(ns[i]), Y(static_cast<double>(pts[i].*m))));
    dl->AddPolyline(line.data(), static_cast<int>(line.size()), col, 0, 2.0f);
  };
  dl->PushClipRect(a, b, true);
  curve(&FlopSplit::core, col_core);
  curve(&FlopSplit::projections, col_proj);
  if (ffn) curve(&FlopSplit::ffn, col_ffn);
  const float xc = X(2.0 * c.d);
  dl->AddLine(ImVec2(xc, a.y), ImVec2(xc, b.y), Pal().highlight, 1.5f);
  std::snprintf(buf, sizeof buf, "n = 2d = %d", 2 * c.d);
  dl->AddText(ImVec2(xc + fs * 0.3f, b.y - fs * 2.6f), Pal().highlight, buf);
  const float xn = X(std::max(c.n, 1));
  for (auto [v, col] : {std::pair<std::int64_t, ImU32>{c.now.core, col_core}, {c.now.projections, col_proj}})
    dl->AddCircleFilled(ImVec2(xn, Y(static_cast<double>(v))), fs * 0.35f, col);
  if (ffn) dl->AddCircleFilled(ImVec2(xn, Y(static_cast<double>(c.now.ffn))), fs * 0.35f, col_ffn);
  dl->PopClipRect();
  DrawMeasuredTimes(dl, a, b, x0, x1, Sweep(s).Snapshot());
  // The sentence's label and the legend (top left) over the curves and the measured
  // points, each on a backing of the plot's colour, so these pass under their words.
  const ImU32 backing = (Pal().block_bg & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 225);
  dl->PushClipRect(a, b, true);
  std::snprintf(buf, sizeof buf, _("your sentence: n = %d"), c.n);
  const ImVec2 at(xn + fs * 0.4f, Y(static_cast<double>(c.now.core)) + fs * 0.2f);
  const ImVec2 ts = ImGui::CalcTextSize(buf);
  dl->AddRectFilled(ImVec2(at.x - fs * 0.15f, at.y), ImVec2(at.x + ts.x + fs * 0.15f, at.y + ts.y), backing, 3.0f);
  dl->AddText(at, ImGui::GetColorU32(ImGuiCol_Text), buf);
  const char* entries[3] = {_("attention core: scores, softmax, weights x V (~4 n^2 d)"),
                            _("projections: Q, K, V, W_O (~8 n d^2)"), _("feed-forward (~16 n d^2)")};
  const int shown = ffn ? 3 : 2;
  const ImVec2 measured = MeasuredLegendSize();
  float legend_w = measured.x;
  for (int i = 0; i < shown; ++i) legend_w = std::max(legend_w, fs * 1.5f + ImGui::CalcTextSize(entries[i]).x);
  const ImVec2 la(a.x + fs * 0.2f, a.y + fs * 0.15f);
  const ImVec2 lb(std::min(b.x - fs * 0.2f, la.x + fs * 0.6f + legend_w),
                  a.y + fs * 0.4f + shown * fs * 1.2f + measured.y);
  dl->AddRectFilled(la, lb, backing, 3.0f);
  dl->PopClipRect();
  float ly = a.y + fs * 0.3f;
  auto legend = [&](const char* t, ImU32 col) {
    dl->AddLine(ImVec2(a.x + fs * 0.4f, ly + fs * 0.5f), ImVec2(a.x + fs * 1.6f, ly + fs * 0.5f), col, 2.5f);
    dl->AddText(ImVec2(a.x + fs * 1.9f, ly), ImGui::GetColorU32(ImGuiCol_Text), t);
    ly += fs * 1.2f;
  };
  legend(entries[0], col_core);
  legend(entries[1], col_proj);
  if (ffn) legend(entries[2], col_ffn);
  MeasuredLegend(dl, ImVec2(a.x + fs * 0.4f, ly));
  const char* axis = _("n (tokens), log");
  dl->AddText(ImVec2(b.x - ImGui::CalcTextSize(axis).x - fs * 0.4f, b.y - fs * 1.3f), Pal().muted_text, axis);
  ImGui::Dummy(size);
  Probe(s, "cost plot");
}

}  // namespace

void DrawCostView(AppState& s) {
  SectionTitle(s, _("What attention costs"),
               _("Self-attention relates every word to every word in one layer, in parallel, and pays for it with n^2: "
                 "the scores and weights grow with the square of the sentence's length."),
               true);
  if (!HaveResultsToShow(s)) return;
  CostNumbers c;
  if (!Numbers(s, c)) return;
  ComplexityTable(c);
  Probe(s, "cost table");
  ImGui::PushTextWrapPos(0.0f);
  Explanation(i18n::Format(_("The numbers are the O() formulas with n = %d and d = d_model = %d (no constant factors): "
                             "self-attention is the cheaper while n < d."),
                           c.n, c.d)
                  .c_str());
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float fs = ImGui::GetFontSize();
  const ImVec2 size(std::min(avail * 0.62f, fs * 44.0f),
                    std::max(fs * 14.0f, std::min(fs * 22.0f, ImGui::GetContentRegionAvail().y - fs)));
  Sweep(s).Ensure(c.cfg);
  Plot(s, c, size);
  ImGui::SameLine(0, fs);
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(_("FLOPs of this layer at your n (the shape flow's):"));
  ImGui::BulletText(_("attention core: %s"), Num(c.now.core).c_str());
  ImGui::BulletText(_("projections: %s"), Num(c.now.projections).c_str());
  if (c.now.ffn > 0) ImGui::BulletText(_("feed-forward: %s"), Num(c.now.ffn).c_str());
  char line[1024];
  std::snprintf(line, sizeof line,
                _("The core overtakes the projections at n = %d by the shape flow's exact counts (4n^2"
                  "d = 8n"
                  "d^2 "
                  "at n = 2d = %d)."),
                c.crossover, 2 * c.d);
  ImGui::TextUnformatted(line);
  ImGui::Spacing();
  ImGui::TextUnformatted(_("Memory of the attention weights:"));
  ImGui::BulletText(_("weights n^2 x heads x 4 bytes: %s"), Bytes(c.weights_bytes).c_str());
  ImGui::BulletText(_("standard attention keeps scores and weights: %s"), Bytes(c.standard_bytes).c_str());
  ImGui::BulletText(_("Flash attention holds one %d x %d tile per worker: %s"), FlashBr(c.cfg), FlashBc(c.cfg),
                    Bytes(c.flash_bytes).c_str());
  Explanation(
      _("Flash attention does the same FLOPs (time still grows as n^2) but its memory grows only as n. "
        "See the Flash tab."));
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  DrawSweepStatus(Sweep(s).Snapshot());
}

json DumpCostView(AppState& s) {
  CostNumbers c;
  if (!Numbers(s, c)) return dump::Error("no trace");
  return {{"n", c.n},
          {"n_kv", c.n_kv},
          {"d_model", c.d},
          {"num_heads", c.cfg.num_heads},
          {"core_flops", c.now.core},
          {"projection_flops", c.now.projections},
          {"ffn_flops", c.now.ffn},
          {"rnn", c.rnn},
          {"cnn", c.cnn},
          {"cnn_kernel", kCnnKernel},
          {"self_attention", c.attn},
          {"crossover_n", c.crossover},
          {"crossover_2d", 2 * c.d},
          {"weights_bytes", c.weights_bytes},
          {"standard_bytes", c.standard_bytes},
          {"flash_tile_bytes", c.flash_bytes},
          {"sweep", SweepJson(s)}};
}

ViewEntry CostView() {
  ViewEntry v{"cost", N_("Cost"), N_("What attention costs as n grows"),
              "RNN / CNN / self-attention cost, FLOPs against n, the n x n bytes"};
  v.essentials = "cost plot;cost table";
  v.heads = false;
  v.draw = &DrawCostView;
  v.dump = &DumpCostView;
  v.shows = "cost table";
  v.update = [](AppState& st) {
    if (FindSweep(st)) Sweep(st).Tick();
  };
  v.animating = [](const AppState& st) {
    const CostSweep* sw = FindSweep(st);
    return sw && sw->Running();  // the measured points appear as they come
  };
  v.probe = &SweepProbeJson;
  return v;
}

}  // namespace mha::gui
