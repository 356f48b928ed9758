// How a layer's weights are packed as B panels for the forward pass (forward.cpp's
// PlanPacking and tasks), and the same packing done once for many passes
// (PackShared: the Trainer runs every sequence of a batch through one layer's weights).
#pragma once

#include <cstddef>

#include "mha/config.hpp"
#include "mha/weights.hpp"
#include "workspace.hpp"

namespace mha::detail {

// Job j of the fused projection: Q heads first, then K heads, then V heads.
struct ProjectionJob {
  int kind;  // 0: Q, 1: K, 2: V
  const Mat* W;
  int head;
};
inline ProjectionJob JobOf(const Weights& w, int H, int G, int job) {
  if (job < H) return {0, &w.W_q, job};
  if (job < H + G) return {1, &w.W_k, job - H};
  return {2, &w.W_v, job - H - G};
}

// Where a pass's packed weights live: the Q/K/V heads' panels (qkv_floats), then
// W_O's panels, W1's at w1_at and W2's at w2_at (out_floats in all).
struct PackSizes {
  std::size_t wpanel, qkv_floats, w1_at, w2_at, out_floats;
};
PackSizes SizesOf(int d, int H, int G, int phd, int f);
// Past this, passes do not pack the weights at all (they read them in place).
constexpr std::size_t kMaxPackBytes = std::size_t(96) << 20;

// One layer's weights packed once for many passes: the Trainer runs every sequence of
// a batch through the same weights, so it packs them once per step (PackShared) and
// lends the panels to each sequence's Workspace, instead of each pass reading them
// strided in place or packing its own copy.
struct SharedPacks {
  Buffer qkv, out;
  Workspace::PackKey qkv_key, out_key;  // of == nullptr: nothing packed (past the cap)
};

// Packs w's panels for cfg as a pass's own packing would lay them out.
void PackShared(const Config& cfg, const Weights& w, SharedPacks& out);

}  // namespace mha::detail
