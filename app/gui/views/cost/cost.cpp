// What attention costs as n grows (lesson 001's table, live): RNN / CNN /
// self-attention with the current n and d_model filled in; FLOPs against n on log-log
// axes for the attention core and the projections, from the core's shape-flow table
// (the same numbers the shape flow shows); and the bytes of the n x n weights against
// Flash attention's tile.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <imgui_internal.h>  // ImRect
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
  ByteGroups bytes;         // the current trace's, by the shape flow
  int bytes_crossover = 0;  // where the n x n weights reach all the other bytes
};

// The plots' curves and the two crossings depend on the configuration and the
// sentence's length alone: about 150 shape-flow tables, made once per trace (the
// result's generation), not every frame.
struct CostSeries {
  std::vector<double> ns;                        // the n the curves are drawn at
  std::vector<std::vector<std::int64_t>> lines;  // one value per n, per curve
  double x1 = 5, y0 = 0, y1 = 1;                 // log10 ranges of the axes
};
struct CostCurves {
  std::uint64_t generation = ~std::uint64_t{0};
  int crossover = 0, bytes_crossover = 0;
  ByteGroups bytes;   // at the current n
  CostSeries flops;   // core, projections, feed-forward
  CostSeries memory;  // n x n weights, activations, parameters, Flash's tile
};

constexpr int kSamples = 48;

// The n values the curves are drawn at: kSamples + 1 steps, log-spaced from 1 to 10^x1.
std::vector<double> SampleNs(double x1) {
  std::vector<double> ns(kSamples + 1);
  for (int i = 0; i <= kSamples; ++i) ns[i] = std::max(1.0, std::round(std::pow(10.0, x1 * i / kSamples)));
  return ns;
}

// Each curve's value at every n of `ns` (from the shape flow at that n), and the log10
// range of those of `ranged` and of `floor`.
template <class Values>
CostSeries MakeSeries(double x1, int curves, Values values, const std::vector<bool>& ranged, std::int64_t floor) {
  CostSeries out;
  out.x1 = x1;
  out.ns = SampleNs(x1);
  out.lines.assign(static_cast<std::size_t>(curves), {});
  double y0 = floor > 0 ? std::log10(static_cast<double>(floor)) : 1e300, y1 = 0;
  for (double n : out.ns) {
    const std::vector<std::int64_t> v = values(static_cast<int>(n));
    for (std::size_t k = 0; k < v.size(); ++k) {
      out.lines[k].push_back(v[k]);
      if (!ranged[k]) continue;
      const double l = std::log10(static_cast<double>(std::max<std::int64_t>(v[k], 1)));
      y0 = std::min(y0, l);
      y1 = std::max(y1, l);
    }
  }
  out.y0 = std::floor(y0);
  out.y1 = std::ceil(y1);
  return out;
}

const CostCurves& Curves(AppState& s) {
  CostCurves& cc = s.views.Get<CostCurves>();
  if (cc.generation == s.result.generation) return cc;
  const Trace& t = s.result.trace;
  const Config& cfg = t.cfg;
  cc.generation = s.result.generation;
  cc.crossover = CoreOvertakesProjectionsAt(cfg);
  cc.bytes_crossover = WeightsOvertakeTheRestAt(cfg);
  cc.bytes = GroupBytes(ShapeFlow(cfg, t.seq, t.seq, false));
  const bool ffn = GroupFlops(t.flow).ffn > 0;
  const double d = cfg.d_model, n = t.seq;
  cc.flops = MakeSeries(
      std::max(5.0, std::ceil(std::log10(std::max(4.0 * d, 2.0 * n))) + 1.0), 3,
      [&](int k) {
        const FlopSplit f = GroupFlops(ShapeFlow(cfg, k, k));
        return std::vector<std::int64_t>{f.core, f.projections, f.ffn};
      },
      {true, true, ffn}, 0);
  const std::int64_t tile = static_cast<std::int64_t>(FlashWorkerBytes(cfg));
  cc.memory = MakeSeries(
      std::max(5.0, std::ceil(std::log10(std::max(4.0 * cc.bytes_crossover, 2.0 * n))) + 1.0), 4,
      [&](int k) {
        const ByteGroups b = GroupBytes(ShapeFlow(cfg, k, k));
        return std::vector<std::int64_t>{b.weights, b.activations, b.parameters, tile};
      },
      {true, true, true, false}, std::max<std::int64_t>(tile, 1));
  return cc;
}

bool Numbers(AppState& s, CostNumbers& c) {
  if (!HasResults(s)) return false;
  const CostCurves& cc = Curves(s);
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
  c.crossover = cc.crossover;
  c.weights_bytes = static_cast<std::int64_t>(n) * c.n_kv * t.cfg.num_heads * 4;
  c.standard_bytes = static_cast<std::int64_t>(StandardAttentionBytes(t.cfg, c.n, c.n_kv));
  c.flash_bytes = static_cast<std::int64_t>(FlashWorkerBytes(t.cfg));
  c.bytes = cc.bytes;
  c.bytes_crossover = cc.bytes_crossover;
  return true;
}

// `brief` (presented, short of height): the first three columns, the dependency and
// parallel columns folded into the "?".
void ComplexityTable(const CostNumbers& c, bool brief) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
  // Scrolls sideways where the view is narrower than the table (150-200% text, longer
  // Korean cells) instead of cutting its last columns off; tall enough for its 4 rows.
  const ImGuiStyle& st = ImGui::GetStyle();
  char hdr[160];
  std::snprintf(hdr, sizeof hdr, _("at n = %d, d = %d"), c.n, c.d);
  // Brief: room for the scrollbar only where its three columns do not fit (the plots
  // under it need every line).
  const auto tw = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
  const float three = std::max({tw(_("layer")), tw(_("self-attention")), tw(_("CNN (k = 3)"))}) +
                      std::max(tw(_("time")), tw("O(k\xC2\xB7n\xC2\xB7"
                                                 "d^2)")) +
                      std::max({tw(hdr), tw(Num(c.cnn)), tw(Num(c.attn)), tw(Num(c.rnn))}) + 6.0f * st.CellPadding.x +
                      3.0f;
  const bool slack = !brief || three > ImGui::GetContentRegionAvail().x;
  const float h =
      4.0f * (ImGui::GetTextLineHeight() + 2.0f * st.CellPadding.y) + (slack ? st.ScrollbarSize : 0.0f) + 4.0f;
  if (!ImGui::BeginTable("##cost_table", brief ? 3 : 5, flags, ImVec2(0.0f, h))) return;
  ImGui::TableSetupColumn(_("layer"));
  ImGui::TableSetupColumn(_("time"));
  ImGui::TableSetupColumn(hdr);
  if (!brief) {
    ImGui::TableSetupColumn(_("long-range dependency"));
    ImGui::TableSetupColumn(_("parallel"));
  }
  ImGui::TableHeadersRow();
  auto row = [brief](const char* a, const std::string& b, const std::string& v, const std::string& dep,
                     const char* par) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(a);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(b.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(v.c_str());
    if (brief) {
      Explanation((std::string(a) + ": " + dep + "; " + _("parallel") + ": " + par).c_str());
      return;
    }
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

// A log-log frame of `size` at the cursor: n from 10^x0 to 10^x1 across, values from
// 10^y0 to 10^y1 up; the y ticks every `ystep` decades, or at powers of 1024 in bytes.
struct LogAxes {
  ImVec2 o, a, b;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  float X(double n) const { return a.x + static_cast<float>((std::log10(n) - x0) / (x1 - x0)) * (b.x - a.x); }
  float Y(double v) const {
    return b.y - static_cast<float>((std::log10(std::max(v, 1.0)) - y0) / (y1 - y0)) * (b.y - a.y);
  }
};

LogAxes DrawAxes(ImDrawList* dl, ImVec2 size, double x1, double y0, double y1, bool bytes) {
  LogAxes ax;
  const float fs = ImGui::GetFontSize();
  ax.o = ImGui::GetCursorScreenPos();
  ax.a = ImVec2(ax.o.x + fs * (bytes ? 4.2f : 3.2f), ax.o.y + fs * 0.5f);
  ax.b = ImVec2(ax.o.x + size.x - fs * 1.2f, ax.o.y + size.y - fs * 1.8f);
  ax.x1 = x1;
  ax.y0 = y0;
  ax.y1 = y1;
  dl->AddRectFilled(ax.a, ax.b, Pal().block_bg);
  dl->AddRect(ax.a, ax.b, Pal().block_border);
  char buf[64];
  for (int e = 0; e <= static_cast<int>(x1); ++e) {
    const float x = ax.X(std::pow(10.0, e));
    dl->AddLine(ImVec2(x, ax.a.y), ImVec2(x, ax.b.y), Pal().grid_line);
    std::snprintf(buf, sizeof buf, "1e%d", e);
    dl->AddText(ImVec2(x - fs * 0.6f, ax.b.y + fs * 0.2f), Pal().muted_text, buf);
  }
  auto tick = [&](double v, const std::string& label) {
    const float y = ax.Y(v);
    dl->AddLine(ImVec2(ax.a.x, y), ImVec2(ax.b.x, y), Pal().grid_line);
    dl->AddText(ImVec2(ax.o.x + fs * 0.3f, y - fs * 0.5f), Pal().muted_text, label.c_str());
  };
  if (bytes) {
    const char* units[] = {"1 B", "1 KiB", "1 MiB", "1 GiB", "1 TiB", "1 PiB", "1 EiB"};
    for (int k = 0; k < 7; ++k) {
      const double v = std::pow(1024.0, k);
      if (std::log10(v) >= y0 && std::log10(v) <= y1) tick(v, units[k]);
    }
  } else {
    // Labels at least 1.4 lines apart, whatever the plot's height and the text size.
    const double decades_per_px = (y1 - y0) / std::max(1.0f, ax.b.y - ax.a.y);
    const int ystep = std::max(1, static_cast<int>(std::ceil(decades_per_px * fs * 1.4)));
    for (int e = static_cast<int>(y0); e <= static_cast<int>(y1); e += ystep) {
      std::snprintf(buf, sizeof buf, "1e%d", e);
      tick(std::pow(10.0, e), buf);
    }
  }
  return ax;
}

// The legend's lines (top left) on a backing of the plot's colour, so the curves pass
// under its words; `extra` is room kept under them (the measured points' entries).
float DrawLegend(ImDrawList* dl, const LogAxes& ax, const std::vector<std::pair<const char*, ImU32>>& entries,
                 ImVec2 extra = ImVec2(0, 0)) {
  const float fs = ImGui::GetFontSize();
  const ImU32 backing = (Pal().block_bg & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 225);
  float legend_w = extra.x;
  for (const auto& e : entries) legend_w = std::max(legend_w, fs * 1.5f + ImGui::CalcTextSize(e.first).x);
  const ImVec2 la(ax.a.x + fs * 0.2f, ax.a.y + fs * 0.15f);
  const ImVec2 lb(std::min(ax.b.x - fs * 0.2f, la.x + fs * 0.6f + legend_w),
                  ax.a.y + fs * 0.4f + static_cast<float>(entries.size()) * fs * 1.2f + extra.y);
  dl->PushClipRect(ax.a, ax.b, true);
  dl->AddRectFilled(la, lb, backing, 3.0f);
  dl->PopClipRect();
  float ly = ax.a.y + fs * 0.3f;
  for (const auto& e : entries) {
    dl->AddLine(ImVec2(ax.a.x + fs * 0.4f, ly + fs * 0.5f), ImVec2(ax.a.x + fs * 1.6f, ly + fs * 0.5f), e.second, 2.5f);
    dl->AddText(ImVec2(ax.a.x + fs * 1.9f, ly), ImGui::GetColorU32(ImGuiCol_Text), e.first);
    ly += fs * 1.2f;
  }
  return ly;
}

// A vertical marker at n with its label just right of it, near the bottom; returns
// where the label is. `right_kept`: the width at the plot's right edge its own labels
// take (the measured times' milliseconds).
ImRect Marker(ImDrawList* dl, const LogAxes& ax, double n, const char* label, float right_kept = 0.0f) {
  const float fs = ImGui::GetFontSize();
  const float x = ax.X(n);
  const ImVec2 ts = ImGui::CalcTextSize(label);
  dl->AddLine(ImVec2(x, ax.a.y), ImVec2(x, ax.b.y), Pal().highlight, 1.5f);
  // Right of the line, or left of it where the plot (or its right-hand labels) ends first.
  const float at = x + fs * 0.3f + ts.x <= ax.b.x - right_kept ? x + fs * 0.3f : x - fs * 0.3f - ts.x;
  const ImVec2 pos(at, ax.b.y - fs * 2.6f);
  dl->AddText(pos, Pal().highlight, label);
  return ImRect(pos, ImVec2(pos.x + ts.x, pos.y + ts.y));
}

void Curve(ImDrawList* dl, const LogAxes& ax, const std::vector<double>& ns, const std::vector<std::int64_t>& vs,
           ImU32 col) {
  std::vector<ImVec2> line;
  // One point per n: the rounded samples repeat the small n (1, 1, 2, 2, ...), and a
  // polyline's zero-length segments draw thick, ragged joins there.
  for (std::size_t i = 0; i < ns.size(); ++i)
    if (i == 0 || ns[i] != ns[i - 1]) line.push_back(ImVec2(ax.X(ns[i]), ax.Y(static_cast<double>(vs[i]))));
  dl->AddPolyline(line.data(), static_cast<int>(line.size()), col, 0, 2.0f);
}

// "your sentence: n = 7" beside the current n's dot, on a backing: below right of it,
// or where that would cover the marker's label (`avoid`) or leave the plot, above it,
// beside it within the plot, then the same left of it. Returns where it is.
ImRect SentenceLabel(ImDrawList* dl, const LogAxes& ax, const CostNumbers& c, double y_value, const ImRect& avoid) {
  const float fs = ImGui::GetFontSize();
  const ImU32 backing = (Pal().block_bg & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 225);
  char buf[96];
  std::snprintf(buf, sizeof buf, _("your sentence: n = %d"), c.n);
  const ImVec2 dot(ax.X(std::max(c.n, 1)), ax.Y(y_value));
  const ImVec2 ts = ImGui::CalcTextSize(buf);
  const float pad = fs * 0.15f;
  auto box = [&](ImVec2 at) { return ImRect(ImVec2(at.x - pad, at.y), ImVec2(at.x + ts.x + pad, at.y + ts.y)); };
  const float right = dot.x + fs * 0.4f, left = dot.x - fs * 0.4f - ts.x;
  const float below = dot.y + fs * 0.2f, above = dot.y - fs * 0.2f - ts.y;
  // Beside the dot, moved up or down into the plot (a short plot: near its floor).
  const float within = std::clamp(below, ax.a.y + 1.0f, std::max(ax.a.y + 1.0f, ax.b.y - ts.y - 1.0f));
  ImVec2 at(right, within);
  for (const ImVec2 p : {ImVec2(right, below), ImVec2(right, above), ImVec2(right, within), ImVec2(left, below),
                         ImVec2(left, above), ImVec2(left, within)}) {
    const ImRect r = box(p);
    if (!r.Overlaps(avoid) && ImRect(ax.a, ax.b).Contains(r)) {
      at = p;
      break;
    }
  }
  const ImRect r = box(at);
  dl->PushClipRect(ax.a, ax.b, true);
  dl->AddRectFilled(r.Min, r.Max, backing, 3.0f);
  dl->AddText(at, ImGui::GetColorU32(ImGuiCol_Text), buf);
  dl->PopClipRect();
  return r;
}

// Where a label drawn on the plot is, for --probe (the labels are not items).
void ProbeRect(AppState& s, const char* name, const ImRect& r) {
  s.ui.probe[name] = {r.Min.x, r.Min.y, r.Max.x - r.Min.x, r.Max.y - r.Min.y};
}

// Log-log FLOPs against n for the core, the projections (and the FFN), from
// ShapeFlow at each n; n = 2d marked; the current n as dots.
// `brief` (a short plot): without the measured times, which the "?" describes, so its
// legend leaves the curves and the crossing's mark in sight.
void Plot(AppState& s, const CostNumbers& c, const CostSeries& f, ImVec2 size, bool brief) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const bool ffn = c.now.ffn > 0;
  const LogAxes ax = DrawAxes(dl, size, f.x1, f.y0, f.y1, false);
  const ImU32 col_core = Pal().error_text, col_proj = Pal().accent, col_ffn = Pal().ok_text;
  dl->PushClipRect(ax.a, ax.b, true);
  Curve(dl, ax, f.ns, f.lines[0], col_core);
  Curve(dl, ax, f.ns, f.lines[1], col_proj);
  if (ffn) Curve(dl, ax, f.ns, f.lines[2], col_ffn);
  char buf[96];
  std::snprintf(buf, sizeof buf, "n = 2d = %d", 2 * c.d);
  const ImRect marker = Marker(dl, ax, 2.0 * c.d, buf, ImGui::CalcTextSize("10 ms").x + fs);
  const float xn = ax.X(std::max(c.n, 1));
  dl->AddCircleFilled(ImVec2(xn, ax.Y(static_cast<double>(c.now.core))), fs * 0.35f, col_core);
  dl->AddCircleFilled(ImVec2(xn, ax.Y(static_cast<double>(c.now.projections))), fs * 0.35f, col_proj);
  if (ffn) dl->AddCircleFilled(ImVec2(xn, ax.Y(static_cast<double>(c.now.ffn))), fs * 0.35f, col_ffn);
  dl->PopClipRect();
  if (!brief) DrawMeasuredTimes(dl, ax.a, ax.b, ax.x0, ax.x1, Sweep(s).Snapshot());
  ProbeRect(s, "cost axes", ImRect(ax.a, ax.b));
  ProbeRect(s, "cost marker label", marker);
  ProbeRect(s, "cost sentence label", SentenceLabel(dl, ax, c, static_cast<double>(c.now.core), marker));
  std::vector<std::pair<const char*, ImU32>> entries = {{_("attention core: ~4 n^2 d"), col_core},
                                                        {_("projections: ~8 n d^2"), col_proj}};
  if (ffn) entries.push_back({_("feed-forward: ~16 n d^2"), col_ffn});
  const float ly = DrawLegend(dl, ax, entries, brief ? ImVec2(0, 0) : MeasuredLegendSize());
  if (!brief) MeasuredLegend(dl, ImVec2(ax.a.x + fs * 0.4f, ly));
  const char* axis = _("n (tokens), log");
  dl->AddText(ImVec2(ax.b.x - ImGui::CalcTextSize(axis).x - fs * 0.4f, ax.b.y - fs * 1.3f), Pal().muted_text, axis);
  ImGui::Dummy(size);
  Probe(s, "cost plot");
}

// Log-log bytes against n: the n x n scores and weights (standard attention), the
// n x d activations, the parameters, and Flash's tile per worker; where the n x n
// weights reach all the rest marked; the current n as dots.
void BytesPlot(AppState& s, const CostNumbers& c, const CostSeries& m, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const LogAxes ax = DrawAxes(dl, size, m.x1, m.y0, m.y1, true);
  const ImU32 col_w = Pal().error_text, col_act = Pal().accent, col_par = Pal().ok_text, col_tile = Pal().notice_text;
  dl->PushClipRect(ax.a, ax.b, true);
  Curve(dl, ax, m.ns, m.lines[0], col_w);
  Curve(dl, ax, m.ns, m.lines[1], col_act);
  Curve(dl, ax, m.ns, m.lines[2], col_par);
  Curve(dl, ax, m.ns, m.lines[3], col_tile);
  char buf[128];
  ImRect marker(ax.a, ax.a);  // none: an empty box that covers nothing
  if (c.bytes_crossover > 0) {
    std::snprintf(buf, sizeof buf, "n = %d", c.bytes_crossover);
    marker = Marker(dl, ax, c.bytes_crossover, buf);
  }
  const float xn = ax.X(std::max(c.n, 1));
  dl->AddCircleFilled(ImVec2(xn, ax.Y(static_cast<double>(c.bytes.weights))), fs * 0.35f, col_w);
  dl->AddCircleFilled(ImVec2(xn, ax.Y(static_cast<double>(c.bytes.activations))), fs * 0.35f, col_act);
  dl->PopClipRect();
  ProbeRect(s, "cost bytes axes", ImRect(ax.a, ax.b));
  ProbeRect(s, "cost bytes marker label", marker);
  ProbeRect(s, "cost bytes sentence label", SentenceLabel(dl, ax, c, static_cast<double>(c.bytes.weights), marker));
  DrawLegend(dl, ax,
             {{_("scores + weights: 2 h n^2 x 4 B"), col_w},
              {_("activations: ~n d"), col_act},
              {_("parameters"), col_par},
              {_("Flash: one tile per worker"), col_tile}});
  const char* axis = _("n (tokens), log");
  dl->AddText(ImVec2(ax.b.x - ImGui::CalcTextSize(axis).x - fs * 0.4f, ax.b.y - fs * 1.3f), Pal().muted_text, axis);
  ImGui::Dummy(size);
  Probe(s, "cost bytes plot");
}

// A bullet whose text wraps at the column's edge (ImGui's BulletText does not wrap).
void WrappedBullet(const std::string& text) {
  ImGui::Bullet();
  ImGui::TextWrapped("%s", text.c_str());
}

// A note's line, or (`folded`) one of the presented view's "?".
void NoteLine(const std::string& text, bool folded, bool bullet) {
  if (folded)
    Explanation(text.c_str());
  else if (bullet)
    WrappedBullet(text);
  else
    ImGui::TextWrapped("%s", text.c_str());
}

// The FLOPs at this n (`brief`: folded into the "?"), and where the core overtakes the
// projections (`crossing`: only that, `brief` or not).
void FlopNotes(AppState& s, const CostNumbers& c, bool brief, bool crossing) {
  if (!crossing) {
    NoteLine(_("FLOPs of this layer at your n (the shape flow's):"), brief, false);
    NoteLine(i18n::Format(_("attention core: %s"), Num(c.now.core).c_str()), brief, true);
    NoteLine(i18n::Format(_("projections: %s"), Num(c.now.projections).c_str()), brief, true);
    if (c.now.ffn > 0) NoteLine(i18n::Format(_("feed-forward: %s"), Num(c.now.ffn).c_str()), brief, true);
    if (brief) return;
  }
  char line[1024];
  std::snprintf(line, sizeof line,
                _("The core overtakes the projections at n = %d by the shape flow's exact counts (4n^2"
                  "d = 8n"
                  "d^2 "
                  "at n = 2d = %d)."),
                c.crossover, 2 * c.d);
  ImGui::TextWrapped("%s", line);
  Probe(s, "cost crossing");
}

void ByteNotes(AppState& s, const CostNumbers& c, bool brief, bool crossing) {
  if (!crossing) {
    NoteLine(_("Memory of the attention weights:"), brief, false);
    NoteLine(i18n::Format(_("weights n^2 x heads x 4 bytes: %s"), Bytes(c.weights_bytes).c_str()), brief, true);
    NoteLine(i18n::Format(_("standard attention keeps scores and weights: %s"), Bytes(c.standard_bytes).c_str()), brief,
             true);
    NoteLine(i18n::Format(_("Flash attention holds one %d x %d tile per worker: %s"), FlashBr(c.cfg), FlashBc(c.cfg),
                          Bytes(c.flash_bytes).c_str()),
             brief, true);
  }
  if (c.bytes_crossover > 0 && (crossing || !brief)) {
    ImGui::TextWrapped("%s", i18n::Format(_("From n = %d the memory of the n x n weights exceeds the activations' "
                                            "and the parameters' together."),
                                          c.bytes_crossover)
                                 .c_str());
    Probe(s, "cost bytes crossing");
  }
  if (crossing) return;
  Explanation(
      _("Flash attention does the same FLOPs (time still grows as n^2) but its memory grows only as n. "
        "See the Flash tab."));
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
  // Presented where the table, the plots and their notes leave a plot short (a lesson's
  // band under the view at 1280 x 800 and 150 %): the table's first three columns with
  // the two crossings beside them, the plots under them, the rest in the "?".
  const float fs = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
  const float table_h = 4.0f * (ImGui::GetTextLineHeight() + 2.0f * ImGui::GetStyle().CellPadding.y) + line;
  const bool brief = s.ui.present && ImGui::GetContentRegionAvail().y - table_h - line * 9.0f < fs * 11.0f;
  if (brief && ImGui::BeginTable("##cost_top", 2, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("table", ImGuiTableColumnFlags_WidthStretch, 0.45f);
    ImGui::TableSetupColumn("crossings", ImGuiTableColumnFlags_WidthStretch, 0.55f);
    ImGui::TableNextColumn();
    ComplexityTable(c, true);
    Probe(s, "cost table");
    ImGui::TableNextColumn();
    FlopNotes(s, c, true, true);
    ByteNotes(s, c, true, true);
    ImGui::EndTable();
  } else {
    ComplexityTable(c, false);
    Probe(s, "cost table");
  }
  ImGui::PushTextWrapPos(0.0f);
  Explanation(i18n::Format(_("The numbers are the O() formulas with n = %d and d = d_model = %d (no constant factors): "
                             "self-attention is the cheaper while n < d."),
                           c.n, c.d)
                  .c_str());
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  // Time and memory side by side, each with its numbers under it; the plots take the
  // height the notes (about six lines) and the sweep's status leave.
  const float notes_h = brief ? ImGui::GetStyle().ItemSpacing.y * 2 : line * 7.5f;
  const float col_w = ImGui::GetContentRegionAvail().x * 0.5f;
  const float h =
      std::max(brief ? fs * 7.0f : fs * 11.0f, std::min(col_w * 0.75f, ImGui::GetContentRegionAvail().y - notes_h));
  Sweep(s).Ensure(c.cfg);
  if (ImGui::BeginTable("##cost_plots", 2, ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableNextColumn();
    const CostCurves& cc = Curves(s);
    Plot(s, c, cc.flops, ImVec2(ImGui::GetContentRegionAvail().x, h), brief);
    ImGui::TableNextColumn();
    BytesPlot(s, c, cc.memory, ImVec2(ImGui::GetContentRegionAvail().x, h));
    ImGui::TableNextColumn();
    FlopNotes(s, c, brief, false);
    ImGui::TableNextColumn();
    ByteNotes(s, c, brief, false);
    ImGui::EndTable();
  }
  DrawSweepStatus(Sweep(s).Snapshot(), brief);
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
          {"bytes",
           {{"weights", c.bytes.weights},
            {"activations", c.bytes.activations},
            {"parameters", c.bytes.parameters},
            {"weights_overtake_n", c.bytes_crossover}}},
          {"sweep", SweepJson(s)}};
}

ViewEntry CostView() {
  ViewEntry v{"cost", N_("Cost"), N_("What attention costs as n grows"),
              "RNN / CNN / self-attention cost, FLOPs against n, the n x n bytes"};
  v.essentials = "cost plot;cost bytes plot;cost table";
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
