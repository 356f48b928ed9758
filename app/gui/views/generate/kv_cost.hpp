// The Generate view's cost panels: each step's cost with and without the KV cache,
// and the cache's bytes (with fewer K/V heads: GQA, MQA).
#pragma once

#include <vector>

#include "gui/state/app_state.hpp"
#include "gui/views/generate/generate_task.hpp"

namespace mha::gui {

// The plot of each step's cost against the new piece's position, with a switch between
// measured CPU time and the formulas' FLOPs (`show_flops`), and the last step's numbers.
void DrawGenerateCostPlot(AppState& s, bool& show_flops, const GenSnapshot& snap);
// The K/V head counts below `kv_heads` that divide `num_heads`: what GQA and MQA keep.
std::vector<int> FewerKvHeads(int num_heads, int kv_heads);
// The cache's bytes now and at `context` pieces, for the model's K/V heads and fewer.
void DrawGenerateCacheBytes(const GenSnapshot& snap, int context);

}  // namespace mha::gui
