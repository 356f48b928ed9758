// The tile kernel of Flash attention (flash.cpp), shared by Forward's Flash tasks, the
// single-head FlashAttentionHead and the step-by-step FlashTiles.
#pragma once

#include <algorithm>
#include <cstddef>

namespace mha::detail {

// One head's keys and values as the forward pass's Pack phase leaves them: K^T as
// kNR-wide B panels (panel c holds keys [c kNR, (c + 1) kNR), head_dim rows of kNR),
// followed by at least kNR readable floats; V row-major in place (v_in_place) or as
// panels of kNR of its head_dim columns, seq_kv rows each (vp, vp_panel apart).
struct FlashHead {
  const float* q = nullptr;  // the head's query rows, (seq, hd)
  const float* kt = nullptr;
  std::size_t kt_panel = 0;
  const float* v = nullptr;
  const float* vp = nullptr;
  std::size_t vp_panel = 0;
  bool v_in_place = true;
  int seq_kv = 0, hd = 0;
  float scale = 1.0f;
  bool causal = false;
  int offset = 0;  // causal: query row i sees keys [0, i + 1 + offset)
  int Visible(int row) const { return causal ? std::clamp(row + 1 + offset, 0, seq_kv) : seq_kv; }
};

// Floats of one worker's scratch for blocks of br rows and tiles of bc keys: O, l and
// the rescale factors (in double), the tile of scores (br x bc), P V (br x hd) and m.
// The scratch must be 8-byte aligned.
std::size_t FlashScratchFloats(int br, int bc, int hd);

// The online-softmax step of one tile (see flash.cpp).
void FlashUpdate(float* s, std::ptrdiff_t lds, int m, int bc, const int* vis, float* mrow, double* lrow, double* alpha);

// Context rows [r0, r1) of one head (r1 - r0 <= Limits::kMaxFlashTile), into out
// (row stride ldo), through tiles of bc keys; `scratch` has FlashScratchFloats(r1 - r0, bc, hd).
void FlashRows(const FlashHead& h, int r0, int r1, int bc, float* scratch, float* out, std::ptrdiff_t ldo);

}  // namespace mha::detail
