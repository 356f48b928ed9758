// The Cost and Flash views as pictures for slides (`mhaviz export --view cost|flash`),
// drawn on the CPU like the heatmaps, PNG and SVG from one Scene.
//
//   - cost: lesson 001's table (RNN / CNN / self-attention, their O() and the numbers at
//     this n and d_model), FLOPs against n on log-log axes for the attention core and
//     the projections (and the FFN with the encoder block) from the core's shape-flow
//     table, n = 2d marked and this sentence's n as dots; beside it the shape flow's
//     FLOPs at this n and the bytes of the n x n weights against Flash attention's tile.
//   - flash: one head's seq x seq_kv grid cut into Br x Bc tiles, run to the end with
//     mha::FlashTiles (the arithmetic the Flash view steps through): each cell shaded by
//     the weight recovered from m and l, the tile edges drawn, and the largest
//     difference between O / l and the standard path's context.
#pragma once

#include <cstddef>
#include <string>

#include "mha/trace.hpp"
#include "render/render.hpp"  // Image, EncodePng

namespace mha::render {

struct CostPictureOptions {
  double scale = 2;      // pixels per point, clamped to [1, 8]
  std::string sentence;  // the header's sentence ("" leaves it out)
};

// What the cost picture states, for the command's summary and the tests.
struct CostNumbers {
  int n = 0, d_model = 0;
  long long core_flops = 0, projection_flops = 0, ffn_flops = 0;  // the shape flow's, grouped
  long long rnn = 0, cnn = 0, self_attention = 0;                 // n d^2, 3 n d^2, n^2 d
  int crossover_n = 0;  // the smallest n whose core FLOPs reach the projections'
  long long weights_bytes = 0, standard_bytes = 0, flash_bytes = 0;
};
CostNumbers CostNumbersOf(const Trace& t);

Image DrawCostPicture(const Trace& t, const CostPictureOptions& o);
std::string CostPictureSvg(const Trace& t, const CostPictureOptions& o);

struct FlashPictureOptions {
  double scale = 2;
  int head = 0;
  int br = 4, bc = 4;  // the tile: query rows by keys (the Flash view's default)
  std::string sentence;
};

// What the Flash picture states. `t` must be a standard trace (it has the context
// the tiles are compared with, and the scores that say which cells are masked).
struct FlashNumbers {
  int head = 0, br = 0, bc = 0, tiles = 0, skipped = 0, seq = 0, seq_kv = 0, head_dim = 0;
  double max_diff = 0;  // max |O / l - context| over every row and column of the head
  std::size_t standard_bytes = 0, held_bytes = 0;
};
FlashNumbers FlashNumbersOf(const Trace& t, const FlashPictureOptions& o);

// Throws mha::Error for a head out of range, a Flash trace (no scores), or a grid
// over kMaxSvgCells cells in the SVG.
Image DrawFlashPicture(const Trace& t, const FlashPictureOptions& o);
std::string FlashPictureSvg(const Trace& t, const FlashPictureOptions& o);

}  // namespace mha::render
