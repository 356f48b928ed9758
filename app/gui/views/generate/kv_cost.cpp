// The Generate view's cost panels (generate.cpp draws them under the cache): each
// step's cost with and without the KV cache, measured or from the formulas, and the
// cache's bytes for the model's K/V heads and for the fewer that GQA and MQA keep.
#include "gui/views/generate/kv_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/style/theme.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// A small table: the first row its header, the first column labels, the other
// columns numbers aligned right. Each column is as wide as its widest cell, so the
// numbers never wrap (wrapped text breaks them at '.' and ',').
void NumberTable(const char* id, const std::vector<std::vector<std::string>>& cells) {
  const int cols = static_cast<int>(cells[0].size());
  if (!ImGui::BeginTable(id, cols, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerH)) return;
  for (int c = 0; c < cols; ++c) {
    float w = 0;
    for (const auto& row : cells) w = std::max(w, ImGui::CalcTextSize(row[static_cast<std::size_t>(c)].c_str()).x);
    ImGui::TableSetupColumn(cells[0][static_cast<std::size_t>(c)].c_str(), ImGuiTableColumnFlags_WidthFixed, w);
  }
  ImGui::TableHeadersRow();
  for (std::size_t r = 1; r < cells.size(); ++r)
    for (int c = 0; c < cols; ++c) {
      ImGui::TableNextColumn();
      const std::string& t = cells[r][static_cast<std::size_t>(c)];
      if (c > 0)
        ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x -
                             ImGui::CalcTextSize(t.c_str()).x);
      ImGui::TextUnformatted(t.c_str());
    }
  ImGui::EndTable();
}

// A coloured dot and its wrapped text: a plot's legend entry.
void LegendLine(ImU32 col, const char* text) {
  const float fs = ImGui::GetFontSize();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddCircleFilled(ImVec2(p.x + fs * 0.35f, p.y + fs * 0.55f), fs * 0.22f, col);
  ImGui::Indent(fs);
  ImGui::TextWrapped("%s", text);
  ImGui::Unindent(fs);
}

}  // namespace

// Each step's cost with and without the cache against the new piece's position:
// the measured CPU time of the worker thread, or the FLOPs of the formulas.
void DrawGenerateCostPlot(AppState& s, bool& show_flops, const GenSnapshot& snap) {
  ImGui::Checkbox(_("FLOPs instead of measured time"), &show_flops);
  Probe(s, "generate_flops");
  const auto& steps = snap.steps;
  if (steps.empty()) return;
  const float fs = ImGui::GetFontSize();
  const ImU32 col_full = Col32(render::Rgb{214, 96, 77}), col_cached = Col32(render::Rgb{33, 102, 172});
  ImGui::TextUnformatted(show_flops ? _("FLOPs per step (from the formulas)") : _("ms of CPU per step (measured)"));
  LegendLine(col_full, _("without the cache: the whole text again"));
  LegendLine(col_cached, _("with the cache: one row (hollow: the prefill, the whole prompt)"));
  const float w = ImGui::GetContentRegionAvail().x, h = fs * 10.0f;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float left = fs * 3.2f, bottom = fs * 2.6f, top = fs * 0.5f, right = fs * 0.8f;
  const ImVec2 a(o.x + left, o.y + top), b(o.x + w - right, o.y + h - bottom);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = Pal();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  // The prefill's FLOPs with the cache are those of its whole pass: the prompt but its
  // last piece through RunModel, then that piece as one step (its "cached" count is the
  // step's alone).
  const ModelConfig& cfg = s.choice.source.lm->model.cfg;
  const double prefill_flops =
      (steps[0].position > 2 ? DecodeFlops(cfg, steps[0].position - 2).full : 0.0) + steps[0].flops.cached;
  auto cached_flops = [&](const lm::GeneratedPiece& p) { return &p == &steps[0] ? prefill_flops : p.flops.cached; };
  auto cached = [&](const lm::GeneratedPiece& p) { return show_flops ? cached_flops(p) : p.cpu_cached; };
  auto full = [&](const lm::GeneratedPiece& p) { return show_flops ? p.flops.full : p.cpu_full; };
  double ymax = 0;
  for (const auto& p : steps) ymax = std::max({ymax, cached(p), full(p)});
  ymax = ymax > 0 ? ymax * 1.1 : 1.0;
  const int ctx = cfg.max_seq;
  const float x0 = 1.0f, x1 = static_cast<float>(ctx);
  auto X = [&](double pos) { return a.x + (b.x - a.x) * static_cast<float>((pos - x0) / (x1 - x0)); };
  auto Y = [&](double v) { return b.y - (b.y - a.y) * static_cast<float>(v / ymax); };
  dl->AddRectFilled(a, b, pal.block_bg);
  dl->AddRect(a, b, pal.grid_line);
  char buf[64];
  for (int t = 0; t <= 4; ++t) {
    const double v = ymax * t / 4.0;
    const float y = Y(v);
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), pal.grid_line);
    if (show_flops)
      std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
    else
      std::snprintf(buf, sizeof buf, "%.3g", v);
    dl->AddText(ImVec2(a.x - ImGui::CalcTextSize(buf).x - fs * 0.3f, y - fs * 0.5f), muted, buf);
  }
  for (int pos = 8; pos <= ctx; pos += 8) {
    std::snprintf(buf, sizeof buf, "%d", pos);
    dl->AddLine(ImVec2(X(pos), b.y), ImVec2(X(pos), b.y + fs * 0.25f), muted);
    dl->AddText(ImVec2(X(pos) - ImGui::CalcTextSize(buf).x * 0.5f, b.y + fs * 0.25f), muted, buf);
  }
  for (int series = 0; series < 2; ++series) {
    const ImU32 col = series == 0 ? col_full : col_cached;
    ImVec2 prev;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const double v = series == 0 ? full(steps[i]) : cached(steps[i]);
      const ImVec2 p(X(steps[i].position), Y(std::max(v, 0.0)));
      // The first pass with the cache is the prefill (the whole prompt): a hollow point,
      // not joined to the steps after it.
      const bool prefill = series == 1 && i == 0;
      if (i > 0 && !(series == 1 && i == 1)) dl->AddLine(prev, p, col, 1.5f);
      if (prefill)
        dl->AddCircle(p, fs * 0.28f, col, 0, 1.5f);
      else
        dl->AddCircleFilled(p, fs * 0.2f, col);
      prev = p;
    }
  }
  const char* xl = _("position of the new piece");
  dl->AddText(ImVec2(b.x - ImGui::CalcTextSize(xl).x, b.y + fs * 1.3f), text, xl);
  ImGui::Dummy(ImVec2(w, h));
  Probe(s, "generate_plot");
  // The last step's numbers in a table: wrapped text would break them at '.' or ','.
  const lm::GeneratedPiece& last = steps.back();
  char head[64], ratio[32];
  std::snprintf(head, sizeof head, _("position %d"), last.position);
  std::snprintf(ratio, sizeof ratio, " (%.1fx)", last.cpu_cached > 0 ? last.cpu_full / last.cpu_cached : 0.0);
  const std::string ms_full = Sig(last.cpu_full, 3) + ratio;
  // FLOPs as the plot counts them (the prefill's whole pass).
  std::snprintf(ratio, sizeof ratio, " (%.0fx)", last.flops.full / cached_flops(last));
  const std::string flops_full = Thousands(static_cast<long long>(last.flops.full)) + ratio;
  const std::vector<std::vector<std::string>> cells = {
      {head, _("with the cache"), _("without")},
      {_("ms of CPU"), Sig(last.cpu_cached, 3), ms_full},
      {"FLOPs", Thousands(static_cast<long long>(cached_flops(last))), flops_full}};
  NumberTable("##generate_last", cells);
}

// The K/V head counts below the model's that divide num_heads: what GQA and MQA keep.
std::vector<int> FewerKvHeads(int num_heads, int kv_heads) {
  std::vector<int> r;
  for (int g = kv_heads - 1; g >= 1; --g)
    if (num_heads % g == 0) r.push_back(g);
  return r;
}

// The cache's bytes now and at the full context, for the model's K/V heads and for
// the fewer that GQA and MQA would keep (as the Head count view counts them).
void DrawGenerateCacheBytes(const GenSnapshot& snap, int context) {
  ImGui::TextWrapped(_("KV cache now: 2 (K and V) x %d layers x %d K/V heads x head_dim %d x %d pieces x 4 bytes = %s "
                       "bytes (%s)."),
                     snap.layers, snap.kv_heads, snap.head_dim, snap.n, Thousands(snap.bytes).c_str(),
                     Bytes(snap.bytes).c_str());
  char now[64], full[64], label[64];
  std::snprintf(now, sizeof now, _("bytes, %d pieces"), snap.n);
  std::snprintf(full, sizeof full, _("bytes, %d pieces"), context - 1);
  std::vector<std::vector<std::string>> cells = {{_("K/V heads"), now, full}};
  std::vector<int> counts{snap.kv_heads};
  for (int g : FewerKvHeads(snap.num_heads, snap.kv_heads)) counts.push_back(g);
  for (int g : counts) {
    if (g == snap.kv_heads)
      std::snprintf(label, sizeof label, _("%d (this model)"), g);
    else if (g == 1)
      std::snprintf(label, sizeof label, "%s", _("1 (MQA)"));
    else
      std::snprintf(label, sizeof label, _("%d (GQA)"), g);
    cells.push_back({label, Thousands(KvCache::Bytes(snap.layers, g, snap.head_dim, snap.n)),
                     Thousands(KvCache::Bytes(snap.layers, g, snap.head_dim, context - 1))});
  }
  NumberTable("##generate_bytes", cells);
}

}  // namespace mha::gui
