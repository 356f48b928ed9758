// How a layer's weights are packed as B panels for the forward pass (forward.cpp's
// PlanPacking and tasks), and the same packing done once for many passes
// (PackShared: the Trainer runs every sequence of a batch through one layer's weights).
#pragma once

#include <algorithm>
#include <cstddef>

#include "mha/config.hpp"
#include "mha/weights.hpp"
#include "gemm.hpp"
#include "workspace.hpp"

namespace mha::detail {

// Job j of the fused projection: the kNR-wide panels of W_Q's d_model columns first,
// then W_K's, then W_V's kv_width = kv_heads * head_dim columns (the last panel of
// each may be narrower).
struct ProjectionJob {
  int kind;  // 0: Q, 1: K, 2: V
  const Mat* W;
  int col, nc;  // the panel's first column in W, and its width
};
inline int ProjectionJobs(int d, int kv_width) { return (d + kNR - 1) / kNR + 2 * ((kv_width + kNR - 1) / kNR); }
inline ProjectionJob JobOf(const Weights& w, int d, int kv_width, int job) {
  const int pq = (d + kNR - 1) / kNR, pkv = (kv_width + kNR - 1) / kNR;
  auto panel = [](int kind, const Mat* W, int width, int j) {
    return ProjectionJob{kind, W, j * kNR, std::min(kNR, width - j * kNR)};
  };
  if (job < pq) return panel(0, &w.W_q, d, job);
  if (job < pq + pkv) return panel(1, &w.W_k, kv_width, job - pq);
  return panel(2, &w.W_v, kv_width, job - pq - pkv);
}

// Where a pass's packed weights live: the Q/K/V heads' panels (qkv_floats), then
// W_O's panels, W1's at w1_at and W2's at w2_at (out_floats in all).
struct PackSizes {
  std::size_t wpanel, qkv_floats, w1_at, w2_at, out_floats;
};
PackSizes SizesOf(int d, int kv_width, int f);
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
