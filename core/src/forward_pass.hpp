// One forward pass as the pool runs it (forward.cpp, planned in forward_plan.cpp): its
// sizes, buffers and phases,
// shared by the attention sublayer's tasks (forward.cpp) and the encoder block's FFN
// tasks (forward_ffn.cpp).
#pragma once

#include <algorithm>
#include <cstddef>

#include "gemm.hpp"
#include "mha/forward.hpp"
#include "workspace.hpp"

namespace mha::detail {

// Panels of at most kNR columns across n columns.
inline int Panels(int n) { return (n + kNR - 1) / kNR; }

// One forward pass, cut into phases of independent tasks for the pool. Phase k+1
// starts when phase k is done; a task never depends on which thread runs it.
enum class Step {
  PreNorm,
  Project,
  Pack,
  Attend,
  FlashAttend,
  Ablate,
  Output,
  Finish,
  FfnNorm,
  FfnUp,
  FfnDown,
  FfnFinish
};

struct Pass {
  const Config* cfg;
  const Weights* w;
  Trace* t;
  Workspace* ws;
  const Mat* src;  // queries' input: x, or LN(x) for pre-LN
  const Mat* mem;  // keys' and values' input: src, or the memory (cross-attention)
  int seq, seq_kv, d, H, G, hd, group, pkv, phd, ld;
  // Sequences stacked in the input (ForwardBatch; 1 otherwise), and rows = batch * seq
  // of the position-wise tensors. Their products run in blocks of gemm_rows rows.
  int batch = 1, rows = 0, gemm_rows = 0;
  // Only what the backward pass reads (ForwardBatch's for_backward): no scores, context,
  // attn_out, ffn_out, nor (but for post-LN) residual and ffn_residual. The products
  // that fed them land in the sums they feed: W_O's in out (or residual), the FFN's
  // in block_out (or ffn_residual), and the heads' context straight into concat.
  bool lean = false;
  Mat *attn_sum = nullptr, *attn_res = nullptr;  // concat W_O + b_O, and x + that
  Mat *ffn_sum = nullptr, *ffn_res = nullptr;    // hidden W2 + b2, and out + that
  bool causal, stream, v_in_place;
  // Attention::Flash: the Attend phase runs tiles of br query rows x bc keys instead,
  // and the trace keeps no scores and no attn.
  bool flash = false;
  int br = 0, bc = 0;
  bool project;  // some input row changed: the Project phase runs
  float scale;
  float* kt;
  float* vp;
  // The packed weights (workspace.hpp), or null past the memory cap: Q/K/V head
  // panels, and W_O's panels then W1's and W2's; *_ready: already packed.
  float* qkv_pack;
  float* out_pack;
  bool qkv_ready, out_ready;
  bool shared;  // the panels are a SharedPacks' (read only, not this trace's own)
  std::size_t kt_panel, vp_panel, wpanel;
  // Encoder block (FFN after attention): d_ff, and where W1's and W2's packed panels
  // start in out_pack (W2's panels are d_ff deep).
  int f = 0;
  std::size_t w1_at = 0, w2_at = 0;
  Step steps[Pool::kMaxPhases];
  int tasks[Pool::kMaxPhases];
  int phases = 0;

  void Add(Step s, int n) {
    static_assert(Pool::kMaxPhases >= 11, "a pass has up to 11 phases");
    steps[phases] = s;
    tasks[phases++] = n;
  }
};

inline constexpr int kNormRows = 16;  // rows per LayerNorm / residual task
// Rows of one attention task: a block of query rows of one head. Small enough that
// its scores and weights stay in L2 while attn V reads them back.
inline constexpr int kRowBlock = 4 * kMR;

// Sizes the trace and the scratch, decides which weights are packed, and plans the
// phases (forward_plan.cpp). `full`: the whole layer (pre-LN, residual, norm); else
// the attention sublayer alone. `lean`: keep only what the backward pass reads.
Pass Plan(const Config& cfg, const Weights& w, Trace& t, Workspace& ws, int threads, bool full, bool lean = false);

// Where row i's LayerNorm statistics are kept for the backward pass, or null.
inline double* StatsOf(LnStats& s, int i) {
  return s.rows() > 0 ? s.data() + 2 * static_cast<std::ptrdiff_t>(i) : nullptr;
}

// Tasks of the position-wise products: (block of gemm_rows rows, panel of columns).
struct RowPanel {
  int r0, m, panel;
};
inline RowPanel RowPanelOf(const Pass& p, int task, int panels) {
  const int r0 = task / panels * p.gemm_rows;
  return {r0, std::min(p.gemm_rows, p.rows - r0), task % panels};
}

// Knocked-out heads (Inputs::ablate): rows [task * kNormRows, ...) of concat get the
// replacement values before W_O reads them (ablation.cpp).
void AblateTask(Pass& p, int task);

// The encoder block's FFN sublayer, one task each (forward_ffn.cpp).
void FfnNormTask(Pass& p, int task);
void FfnUpTask(Pass& p, int task, int tid);
void FfnDownTask(Pass& p, int task, int tid);
void FfnFinishTask(Pass& p, int task);

// Flash attention's Attend phase, one block of br query rows of one head (flash.cpp).
void FlashAttendTask(Pass& p, int task, int tid);

}  // namespace mha::detail
