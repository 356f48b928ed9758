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

}  // namespace mha
