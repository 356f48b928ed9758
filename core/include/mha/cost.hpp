// What attention costs as n grows (lesson 001's table): the shape flow's FLOPs grouped
// as the lesson groups them, and the n at which the attention core overtakes the
// projections. One definition for the Cost view and `mhaviz export --view cost`.
#pragma once

#include <cstdint>
#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"

namespace mha {

struct FlopGroups {
  std::int64_t core = 0;         // scores, softmax, weights x V: ~4 n^2 d
  std::int64_t projections = 0;  // Q, K, V and the output projection: ~8 n d^2
  std::int64_t ffn = 0;          // the encoder block's feed-forward: ~16 n d^2
};

// The rows of a shape flow (ShapeFlow) summed into the three groups.
FlopGroups GroupFlops(const std::vector<FlowRow>& flow);

// The smallest n (self-attention, seq = seq_kv = n) at which the core's FLOPs reach the
// projections', by the shape flow's exact counts (about 2 d_model for attention alone);
// -1 past 2^28.
int CoreOvertakesProjectionsAt(const Config& cfg);

// What the layer holds in memory at one n, from the same table (float32, 4 bytes a
// number): the n x n scores and softmax weights of every head (standard attention;
// Flash holds a tile in their place), every other step's output (Q, K, V, the heads'
// context, the projection, the residual, the FFN's; reshapes that copy nothing are not
// counted twice), and the learned parameters.
struct ByteGroups {
  std::int64_t weights = 0;      // Scores + Softmax: 2 x heads x n x n_kv x 4
  std::int64_t activations = 0;  // the n x d-sized outputs
  std::int64_t parameters = 0;   // every step's param_count x 4
};
ByteGroups GroupBytes(const std::vector<FlowRow>& flow);

// The smallest n (self-attention) at which the n x n weights' bytes reach all the
// other bytes together (activations + parameters); -1 past 2^28.
int WeightsOvertakeTheRestAt(const Config& cfg);

}  // namespace mha
