// The Heatmaps view's other reading of each head: what each key adds to the head's
// output (Kobayashi et al. 2020's value-weighted norms, core/include/mha/influence.hpp),
// each query row as shares that sum to 1, instead of the attention weights. A head that
// gives <s> most of its weight but adds almost nothing from it then shows as such.
#pragma once

#include <nlohmann/json.hpp>

#include "gui/state/app_state.hpp"
#include "gui/state/recompute_state.hpp"
#include "gui/views/registry.hpp"

namespace mha::gui {

struct HeatmapNorms {
  Mat raw;    // alpha_ij * ||(x_j W_V^h + b_V^h) W_O^h||, laid out as Trace::attn
  Mat share;  // raw, each (head, query) row divided by its sum (a row of zeros stays 0)
  Mat mean;   // (seq, seq_kv): the heads' shares averaged, the mean map's cells
  // Each map's largest share (the heads, then the mean): the per-map colour scale's
  // divisor, found once rather than each frame a texture is filled.
  std::vector<float> map_max;
};

// The norms of the trace shown, or null while the recompute's worker computes them
// (a big trace). A small trace computes them here, in the frame; with `wait`, a big one
// too (the dump). Their error (Flash attention keeps no weights) is the cache's.
const Cached<HeatmapNorms>* HeatmapNormsCache(AppState& s, bool wait = false);
// Beside a big trace on the recompute's task, while the learner shows the norms.
Primed PrimeHeatmapNorms(const Trace& t, const Choice& c);
// Whether cell (i, j) of map `index` (a head, or the mean at num_heads: masked in every
// head) is hidden by the mask (-inf score), as the exporter decides it.
bool HeatmapMasked(const Trace& t, int index, int i, int j);

// The switch "weights | what each key adds", on the header's line.
void DrawNormsSwitch(AppState& s);
// With the norms on: the line that says what the maps show, and why (with `line`); the
// norms to draw, or null when the maps cannot be drawn (still computing, or the core's
// error, which it shows).
const HeatmapNorms* DrawNormsExplanation(AppState& s, bool line = true);
// The GL texture of map `index` (a head, or the mean at num_heads) coloured from the
// shares at the view's colour scale, filled a few rows a frame; `rows_ready` says how
// many rows are coloured.
unsigned int NormsTexture(AppState& s, const HeatmapNorms& n, int index, int* rows_ready);

// --dump-state's heatmaps_view.norms, --probe's "heatmaps_view", --heatmap-show.
nlohmann::json DumpHeatmapNorms(AppState& s);
nlohmann::json ProbeHeatmaps(const AppState& s);
void DeclareHeatmapFlags(CLI::App& app, const std::string& group, ViewFlagActions& actions);

}  // namespace mha::gui
