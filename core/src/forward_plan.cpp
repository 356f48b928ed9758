// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// Planning one forward pass (forward_pass.hpp): its sizes from the configuration, the
// trace's tensors and the scratch at those sizes, which weights are packed, and the
// phases with their task counts. The tasks themselves run in forward.cpp.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "flash_kernel.hpp"
#include "forward_pass.hpp"
#include "mha/flash.hpp"
#include "simd.hpp"
#include "weight_packs.hpp"
#include "workspace.hpp"

namespace mha::detail {
namespace {

// The pass's sizes and constants, from cfg and the trace's sequence lengths.
Pass Dimensions(const Config& cfg, const Weights& w, Trace& t, Workspace& ws) {
  Pass p;
  p.cfg = &cfg;
  p.w = &w;
  p.t = &t;
  p.ws = &ws;
  p.seq = t.seq;
  p.seq_kv = t.seq_kv;
  p.batch = t.batch;
  p.rows = p.batch * p.seq;
  p.d = cfg.d_model;
  p.H = cfg.num_heads;
  p.G = cfg.kv_heads();
  p.hd = cfg.head_dim();
  p.group = p.H / p.G;
  p.causal = cfg.mask == Mask::Causal;
  p.flash = cfg.attention == Attention::Flash;
  p.br = std::min(FlashBr(cfg), p.seq);
  p.bc = FlashBc(cfg);
  p.scale = (cfg.scale ? 1.0f / std::sqrt(static_cast<float>(p.hd)) : 1.0f) / cfg.temperature;
  // Large traces are written past the caches: they would only evict the working set,
  // and a cache-bypassing store skips reading each line before overwriting it.
  // (Only when every row starts on a cache line.)
  p.stream = !p.flash && p.seq_kv % simd::kWidth == 0 && 2.0 * p.H * p.seq * p.seq_kv * sizeof(float) > 8e6;
  return p;
}

// The trace's tensors at this pass's shapes (empty where the pass writes nothing),
// and the matrices the projections read. `full`: the whole layer (pre-LN, residual,
// norm, the encoder block's FFN); else the attention sublayer alone.
void SizeTrace(Pass& p, bool full) {
  const Config& cfg = *p.cfg;
  Trace& t = *p.t;
  // Per sequence; the position-wise tensors have `seq` rows of all sequences, the
  // per-head ones a (batch * heads) blocks.
  const int seq = p.rows, seq_kv = p.batch * p.seq_kv, d = p.d, H = p.H, G = p.G, hd = p.hd;
  const bool pre = full && cfg.norm == Norm::Pre;
  SafeResize(t.x_ln, pre ? seq : 0, pre ? d : 0);
  p.src = pre ? &t.x_ln : &t.in.x;
  p.mem = t.in.cross() ? &t.in.memory : p.src;
  SafeResize(t.q, static_cast<Eigen::Index>(H) * seq, hd);
  SafeResize(t.k, static_cast<Eigen::Index>(G) * seq_kv, hd);
  SafeResize(t.v, static_cast<Eigen::Index>(G) * seq_kv, hd);
  const bool lean = p.lean, post = cfg.norm == Norm::Post;
  const bool nn = !p.flash;  // Flash keeps no seq x seq_kv matrix
  SafeResize(t.scores, lean || !nn ? 0 : static_cast<Eigen::Index>(H) * seq, lean || !nn ? 0 : p.seq_kv);
  SafeResize(t.attn, nn ? static_cast<Eigen::Index>(H) * seq : 0, nn ? p.seq_kv : 0);
  SafeResize(t.context, lean ? 0 : static_cast<Eigen::Index>(H) * seq, lean ? 0 : hd);
  SafeResize(t.concat, seq, d);
  SafeResize(t.attn_out, lean ? 0 : seq, lean ? 0 : d);
  const bool residual = full && (!lean || post);
  SafeResize(t.residual, residual ? seq : 0, residual ? d : 0);
  SafeResize(t.out, full ? seq : 0, full ? d : 0);
  p.attn_sum = !lean ? &t.attn_out : post ? &t.residual : &t.out;
  p.attn_res = residual ? &t.residual : &t.out;
  const bool ffn = full && cfg.block == Block::Encoder;
  p.f = ffn ? cfg.ffn_dim() : 0;
  SafeResize(t.ffn_ln, ffn && cfg.norm == Norm::Pre ? seq : 0, ffn && cfg.norm == Norm::Pre ? d : 0);
  SafeResize(t.ffn_hidden, ffn ? seq : 0, p.f);
  SafeResize(t.ffn_out, ffn && !lean ? seq : 0, ffn && !lean ? d : 0);
  const bool ffn_res = ffn && (!lean || post);
  SafeResize(t.ffn_residual, ffn_res ? seq : 0, ffn_res ? d : 0);
  SafeResize(t.block_out, ffn ? seq : 0, ffn ? d : 0);
  p.ffn_sum = !lean ? &t.ffn_out : post ? &t.ffn_residual : &t.block_out;
  p.ffn_res = ffn_res ? &t.ffn_residual : &t.block_out;
  const bool norm = full && cfg.norm != Norm::None;
  SafeResize(t.ln_stats, lean && norm ? seq : 0, 2);
  SafeResize(t.ln2_stats, lean && norm && ffn ? seq : 0, 2);
  const bool act_grad = lean && ffn && cfg.activation == Activation::Gelu;
  SafeResize(t.ffn_act_grad, act_grad ? seq : 0, act_grad ? p.f : 0);
}

// Per-thread scratch (a pack buffer for the deepest panel, k = d_model or d_ff, and
// one row block of scores and weights), and the packed K^T and V panels.
void SizeScratch(Pass& p, int threads) {
  Workspace& ws = *p.ws;
  p.ld = (p.seq_kv + 15) / 16 * 16 + 16;
  if (static_cast<int>(ws.panel.size()) < threads) ws.panel.resize(threads);
  if (static_cast<int>(ws.block.size()) < threads) ws.block.resize(threads);
  // Flash's workers hold one tile of scores each (flash_kernel.hpp), not a block of rows.
  const std::size_t block =
      p.flash ? std::max(FlashScratchFloats(p.br, p.bc, p.hd), static_cast<std::size_t>(kRowBlock) * kNR)
              : static_cast<std::size_t>(kRowBlock) * std::max(2 * p.ld, kNR);
  for (int i = 0; i < threads; ++i) {
    ws.panel[i].Get(PanelFloats(std::max(p.d, p.f)));
    ws.block[i].Get(block);  // and ProjectRows
  }
  p.pkv = Panels(p.seq_kv);
  p.phd = Panels(p.hd);
  p.kt_panel = PanelFloats(p.hd);
  // kNR floats more than the panels: a Flash tile that starts inside a panel reads a
  // panel's width from there. Zeros, so nothing reads uninitialised floats.
  const std::size_t kt_floats = static_cast<std::size_t>(p.batch) * p.G * p.pkv * p.kt_panel;
  p.kt = ws.kt.Get(kt_floats + kNR);
  std::fill(p.kt + kt_floats, p.kt + kt_floats + kNR, 0.0f);
  // Every panel of a V head is full width, or the head is one narrow panel (gemm.hpp).
  p.v_in_place = p.hd % kNR == 0 || p.hd <= simd::kWidth;
  p.vp_panel = PanelFloats(p.seq_kv);
  p.vp = p.v_in_place ? nullptr : ws.vp.Get(static_cast<std::size_t>(p.batch) * p.G * p.phd * p.vp_panel);
}

// The weights are packed once per Weights object and reused by every later pass
// (measured 5-15% faster than packing or reading in place each time, at every
// size). Capped so the copy stays modest in memory; past the cap each pass packs
// (or, for few rows, reads in place) again.
void PlanPacking(Pass& p) {
  Workspace& ws = *p.ws;
  const int d = p.d;
  const PackSizes z = SizesOf(d, p.G * p.hd, p.f);
  p.wpanel = z.wpanel;
  p.w1_at = z.w1_at;
  p.w2_at = z.w2_at;
  p.qkv_pack = p.out_pack = nullptr;
  p.qkv_ready = p.out_ready = false;
  p.shared = false;
  const Workspace::PackKey qkv_key{p.w, d, p.H, p.G, 0}, out_key{p.w, d, 0, 0, p.f};
  if (ws.shared && ws.shared->qkv_key == qkv_key && ws.shared->out_key == out_key) {
    // Read only: every panel is ready, so no task writes to them.
    p.qkv_pack = const_cast<float*>(ws.shared->qkv.data());
    p.out_pack = const_cast<float*>(ws.shared->out.data());
    p.qkv_ready = p.out_ready = p.shared = true;
    ws.qkv_key = ws.out_key = {};  // this trace's own panels are not what was used
    return;
  }
  if ((z.qkv_floats + z.out_floats) * sizeof(float) <= kMaxPackBytes) {
    p.qkv_pack = ws.qkv_pack.Get(z.qkv_floats);
    p.out_pack = ws.out_pack.Get(z.out_floats);
    p.qkv_ready = ws.qkv_key == qkv_key;
    p.out_ready = ws.out_key == out_key;
    // New weights on a short input: the first pass reads them in place, because
    // packing every d x d matrix costs more than it saves on one pass of <= 64 rows
    // (measured: a seed change at 32 tokens, 1.60 -> 1.41 ms). The second pass with
    // the same weights packs them for every pass after.
    if (std::max(p.seq, p.seq_kv) <= 64) {
      if (!p.qkv_ready && !(ws.qkv_seen == qkv_key)) p.qkv_pack = nullptr, ws.qkv_seen = qkv_key;
      if (!p.out_ready && !(ws.out_seen == out_key)) p.out_pack = nullptr, ws.out_seen = out_key;
    }
  }
  ws.qkv_key = ws.out_key = {};  // until this pass has filled them
}

// The phases and their task counts; each phase starts when the one before is done.
void PlanPhases(Pass& p, bool full) {
  Workspace& ws = *p.ws;
  const Config& cfg = *p.cfg;
  const int norm_tasks = (p.rows + kNormRows - 1) / kNormRows;
  // One sequence: one block of rows, as ever. A batch: blocks of 256 rows, the work of
  // one pass at 256 tokens per task, unless a task would pack the weights' panels as
  // it goes (the first pass with new weights), which only one task per panel may do.
  p.gemm_rows = p.batch > 1 && (p.out_ready || !p.out_pack) ? std::min(p.rows, 256) : p.rows;
  const int row_blocks = (p.rows + p.gemm_rows - 1) / p.gemm_rows;
  if (full && cfg.norm == Norm::Pre) p.Add(Step::PreNorm, norm_tasks);
  // Nothing to project (or to repack) if no input row changed; else every panel of
  // every head, over the rows that changed.
  p.project = !ws.q_rows.empty() || !ws.kv_rows.empty();
  p.Add(Step::Project, p.project ? ProjectionJobs(p.d, p.G * p.hd) : 0);
  const bool pack = !ws.kv_rows.empty() || ws.repack_kv;
  ws.repack_kv = false;
  p.Add(Step::Pack, pack ? p.batch * (p.G * p.pkv + (p.v_in_place ? 0 : p.G * p.phd)) : 0);
  if (p.flash)
    p.Add(Step::FlashAttend, p.batch * p.H * ((p.seq + p.br - 1) / p.br));
  else
    p.Add(Step::Attend, p.batch * p.H * ((p.seq + kRowBlock - 1) / kRowBlock));
  if (!p.t->in.ablate.empty()) p.Add(Step::Ablate, norm_tasks);  // no ablation: no phase, bit for bit the plain pass
  p.Add(Step::Output, row_blocks * Panels(p.d));
  if (full) p.Add(Step::Finish, norm_tasks);
  if (p.f > 0) {  // the encoder block: one more sublayer, after t.out is final
    if (cfg.norm == Norm::Pre) p.Add(Step::FfnNorm, norm_tasks);
    p.Add(Step::FfnUp, row_blocks * Panels(p.f));
    p.Add(Step::FfnDown, row_blocks * Panels(p.d));
    p.Add(Step::FfnFinish, norm_tasks);
  }
}

// Sizes the trace and the scratch, decides which weights are packed, and plans the
// phases. `full`: the whole layer (pre-LN, residual, norm); else the attention
// sublayer alone.
}  // namespace

Pass Plan(const Config& cfg, const Weights& w, Trace& t, Workspace& ws, int threads, bool full, bool lean) {
  Pass p = Dimensions(cfg, w, t, ws);
  p.lean = lean;
  SizeTrace(p, full);
  SizeScratch(p, threads);
  PlanPacking(p);
  PlanPhases(p, full);
  return p;
}

}  // namespace mha::detail
