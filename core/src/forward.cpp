// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "mha/forward.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <thread>

#include "check.hpp"
#include "gemm.hpp"
#include "reuse.hpp"
#include "rows.hpp"
#include "mha/embed.hpp"
#include "mha/ffn.hpp"
#include "mha/tokenizer.hpp"
#include "simd.hpp"
#include "forward_pass.hpp"
#include "flash_kernel.hpp"
#include "mha/flash.hpp"
#include "weight_packs.hpp"
#include "workspace.hpp"

namespace mha {

namespace detail {
WorkspaceHandle::WorkspaceHandle() : p_(std::make_unique<Workspace>()) {}
WorkspaceHandle::~WorkspaceHandle() = default;
WorkspaceHandle::WorkspaceHandle(const WorkspaceHandle&) : p_(std::make_unique<Workspace>()) {}
// The tensors of the Trace were replaced: keep this scratch's memory and threads,
// but none of what it cached about the old tensors.
WorkspaceHandle& WorkspaceHandle::operator=(const WorkspaceHandle&) {
  if (p_) p_->Invalidate();
  return *this;
}
WorkspaceHandle::WorkspaceHandle(WorkspaceHandle&& o) noexcept : p_(std::move(o.p_)) {}
WorkspaceHandle& WorkspaceHandle::operator=(WorkspaceHandle&& o) noexcept {
  std::swap(p_, o.p_);
  if (o.p_) o.p_->Invalidate();  // the moved-from Trace gets this one's old scratch
  return *this;
}
Workspace& WorkspaceHandle::get() {
  if (!p_) p_ = std::make_unique<Workspace>();  // a moved-from handle
  return *p_;
}
}  // namespace detail

namespace {

using detail::kNormRows;
using detail::Panels;
using detail::Pass;
using detail::Plan;
using detail::RowPanel;
using detail::RowPanelOf;
using detail::StatsOf;
using detail::Step;

// ---- threads -------------------------------------------------------------------

int ThreadsFor(const Config& cfg, int seq, int seq_kv, int batch) {
  int threads = cfg.threads;
  if (threads <= 0) {
    const unsigned n = std::thread::hardware_concurrency();
    threads = n > 0 ? static_cast<int>(n) : 1;
  }
  // A tiny pass is over before a sleeping thread wakes up (tens of microseconds):
  // give each thread at least ~2 MFLOP of work (about 20 us), or run alone.
  const double d = cfg.d_model, kvd = static_cast<double>(cfg.kv_heads()) * cfg.head_dim();
  double flops = 4.0 * seq * d * d + 4.0 * seq_kv * d * kvd + 4.0 * seq * seq_kv * d;
  if (cfg.block == Block::Encoder) flops += 4.0 * seq * d * cfg.ffn_dim();
  flops *= batch;
  return static_cast<int>(std::max(1.0, std::min<double>(threads, 1.0 + flops / 2e6)));
}

using detail::kRowBlock;

// One panel (<= kNR columns) of C = A B + bias, A m x k row-major, B k x n row-major.
// A B panel reused by many rows is packed (contiguous, no cache-set aliasing);
// one read by a few rows is used in place, which saves the copy.
void GemmPanel(int m, int k, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb, int nc, float* c,
               std::ptrdiff_t ldc, const float* bias, float* pack) {
  if (m > 64 || nc < detail::kNR) {
    detail::PackB(b, ldb, k, nc, pack);
    detail::Panel(m, k, a, lda, pack, detail::kNR, c, ldc, nc, bias, 1.0f);
  } else {
    detail::Panel(m, k, a, lda, b, ldb, c, ldc, nc, bias, 1.0f);
  }
}

// Pre-LN: x_ln = LN(x), rows [r0, r1).
void PreNormTask(Pass& p, int task) {
  const int r0 = task * kNormRows, r1 = std::min(p.rows, r0 + kNormRows), d = p.d;
  const Weights& w = *p.w;
  detail::LayerNormRows(p.t->in.x.data() + static_cast<std::ptrdiff_t>(r0) * d, w.ln_gamma.data(), w.ln_beta.data(), d,
                        p.cfg->ln_eps, p.t->x_ln.data() + static_cast<std::ptrdiff_t>(r0) * d, r1 - r0,
                        StatsOf(p.t->ln_stats, r0));
}

// Rows [i0, i1) of sequence b, one panel of columns (col0, nc) of a projection: C is
// the tile's place in head `head`'s block (b, head) of the (batch, heads, rows,
// head_dim) tensor, or, for a panel wider than what is left of its head (head_dim 16
// in 32-wide panels), per-thread scratch whose columns are then copied out head by
// head. Either way each number is the same chain of operations.
void ProjectRows(Pass& p, Mat& out, int heads, int rows, int b, int i0, int i1, const float* a, const float* panel,
                 std::ptrdiff_t ldb, int col0, int nc, const float* bias, int tid) {
  using detail::kNR;
  const int hd = p.hd, head = col0 / hd, off = col0 % hd;
  auto block = [&](int h, int i) {  // row i of head h of sequence b
    return out.data() + ((static_cast<std::ptrdiff_t>(b) * heads + h) * rows + i) * hd;
  };
  if (off + nc <= hd) {
    detail::Panel(i1 - i0, p.d, a, p.d, panel, ldb, block(head, i0) + off, hd, nc, bias, 1.0f);
    return;
  }
  if (off == 0 && hd == simd::kWidth) {
    // Whole heads of one vector (head_dim 16 with AVX-512): each straight into its
    // block on the one-vector kernel, reading its columns of the panel in place,
    // rather than through the tile and a copy.
    for (int c = 0; c < nc; c += hd)
      detail::Panel(i1 - i0, p.d, a, p.d, panel + c, ldb, block(head + c / hd, i0), hd, std::min(hd, nc - c), bias + c,
                    1.0f);
    return;
  }
  float* tile = p.ws->block[tid].Get(0);  // kRowBlock x kNR: the Attend phase's scratch, free here
  for (int r0 = i0; r0 < i1; r0 += kRowBlock) {
    const int m = std::min(kRowBlock, i1 - r0);
    detail::Panel(m, p.d, a + static_cast<std::ptrdiff_t>(r0 - i0) * p.d, p.d, panel, ldb, tile, kNR, nc, bias, 1.0f);
    for (int i = 0; i < m; ++i)
      for (int c = 0; c < nc;) {
        const int h = (col0 + c) / hd, o = (col0 + c) % hd, n = std::min(hd - o, nc - c);
        simd::CopyRow(block(h, r0 + i) + o, tile + i * kNR + c, n);
        c += n;
      }
  }
}

// Projections, one fused pass: tasks are panels of W_Q's, then W_K's, then W_V's
// columns, every one full width (kNR) but the last of each, so a head_dim below the
// panel width does not leave half of every tile empty; each head lands in its own
// contiguous (seq, head_dim) block: the split into heads costs no transpose.
void ProjectTask(Pass& p, int task, int tid) {
  using detail::kNR;
  const Weights& w = *p.w;
  Trace& t = *p.t;
  const detail::ProjectionJob jb = detail::JobOf(w, p.d, p.G * p.hd, task);
  const Mat* a = jb.kind == 0 ? p.src : p.mem;
  const Mat* W = jb.W;
  const RowVec* bias = jb.kind == 0 ? &w.b_q : jb.kind == 1 ? &w.b_k : &w.b_v;
  Mat* out = jb.kind == 0 ? &t.q : jb.kind == 1 ? &t.k : &t.v;
  const int rows = jb.kind == 0 ? p.seq : p.seq_kv, heads = jb.kind == 0 ? p.H : p.G;
  const int col = jb.col, nc = jb.nc;
  const auto& runs = jb.kind == 0 ? p.ws->q_rows : p.ws->kv_rows;  // rows whose input changed
  const float* panel;
  std::ptrdiff_t ldb;
  if (p.qkv_pack) {  // packed even if no row of this side changed: every panel is then ready
    float* packed = p.qkv_pack + task * p.wpanel;
    if (!p.qkv_ready) detail::PackB(W->data() + col, W->cols(), p.d, nc, packed);
    panel = packed, ldb = kNR;
  } else if (runs.empty()) {
    return;
  } else if (p.batch * rows > 64 || nc < kNR) {  // reused by many rows: pack it
    float* packed = p.ws->panel[tid].Get(0);
    detail::PackB(W->data() + col, W->cols(), p.d, nc, packed);
    panel = packed, ldb = kNR;
  } else {  // a few rows: read the weights in place
    panel = W->data() + col, ldb = W->cols();
  }
  // Runs of input rows, cut where a sequence ends.
  for (const auto& [g0, g1] : runs)
    for (int r0 = g0; r0 < g1;) {
      const int b = r0 / rows, i0 = r0 - b * rows, i1 = std::min(g1 - b * rows, rows);
      ProjectRows(p, *out, heads, rows, b, i0, i1, a->data() + static_cast<std::ptrdiff_t>(r0) * p.d, panel, ldb, col,
                  nc, bias->data() + col, tid);
      r0 = b * rows + i1;
    }
}

// K^T of each K/V head packed as B panels, so the scores need no transposed copy of
// K in the trace; V too if its heads are not a whole number of panels.
void PackTask(Pass& p, int task) {
  using detail::kNR;
  const Trace& t = *p.t;
  const int per_seq = p.G * p.pkv + (p.v_in_place ? 0 : p.G * p.phd);
  const int b = task / per_seq;
  task %= per_seq;
  // Sequence b's K/V heads and panels follow those of the sequences before it.
  const std::ptrdiff_t kv0 = static_cast<std::ptrdiff_t>(b) * p.G;
  if (task < p.G * p.pkv) {
    const int g = task / p.pkv, j0 = (task % p.pkv) * kNR;
    detail::PackBT(t.k.data() + ((kv0 + g) * p.seq_kv + j0) * p.hd, p.hd, p.hd, std::min(kNR, p.seq_kv - j0),
                   p.kt + (kv0 * p.pkv + task) * p.kt_panel);
  } else {
    const int i = task - p.G * p.pkv, g = i / p.phd, j0 = (i % p.phd) * kNR;
    detail::PackB(t.v.data() + (kv0 + g) * p.seq_kv * p.hd + j0, p.hd, p.seq_kv, std::min(kNR, p.hd - j0),
                  p.vp + (kv0 * p.phd + i) * p.vp_panel);
  }
}

// Attention for one head and one block of query rows: scores, mask, softmax, attn V,
// while the block is in cache.
void AttendTask(Pass& p, int task, int tid) {
  using detail::kNR;
  Trace& t = *p.t;
  const int blocks = (p.seq + kRowBlock - 1) / kRowBlock;
  const int b = task / (p.H * blocks);
  task %= p.H * blocks;
  const int h = task / blocks, seq_kv = p.seq_kv, hd = p.hd, ld = p.ld;
  const int g = b * p.G + h / p.group;  // the K/V head of this sequence
  const int r0 = (task % blocks) * kRowBlock, r1 = std::min(p.seq, r0 + kRowBlock), m = r1 - r0;
  const std::ptrdiff_t row0 = (static_cast<std::ptrdiff_t>(b) * p.H + h) * p.seq + r0;
  const float* qb = t.q.data() + row0 * hd;
  float* concat = t.concat.data() + (static_cast<std::ptrdiff_t>(b) * p.seq + r0) * p.d + h * hd;
  float* cb = p.lean ? concat : t.context.data() + row0 * hd;
  const int ldcb = p.lean ? p.d : hd;
  // The block's scores and weights are computed in per-thread scratch that stays in
  // L2 (its row stride is off a 4 KiB multiple, so rows do not fight over cache
  // sets), then copied to the trace once.
  float* sbuf = p.ws->block[tid].Get(0);
  float* abuf = sbuf + kRowBlock * ld;
  for (int q = 0; q < p.pkv; ++q) {
    const int j0 = q * kNR, nc = std::min(kNR, seq_kv - j0);
    if (p.causal && j0 >= r1) break;  // these keys are after every query row: masked
    detail::Panel(m, hd, qb, hd, p.kt + (static_cast<std::size_t>(g) * p.pkv + q) * p.kt_panel, kNR, sbuf + j0, ld, nc,
                  nullptr, p.scale);
  }
  // Key j is visible to query i if j <= i (causal) or always.
  const int visible_max = p.causal ? std::min(seq_kv, r1) : seq_kv;
  if (seq_kv <= simd::kWidth && !p.stream) {
    detail::AttentionRowsNarrow(sbuf, ld, m, seq_kv, p.causal, r0 + 1, abuf, visible_max,
                                p.lean ? nullptr : t.scores.data() + row0 * seq_kv, t.attn.data() + row0 * seq_kv);
  } else {
    for (int i = 0; i < m; ++i) {
      const int visible = p.causal ? std::min(seq_kv, r0 + i + 1) : seq_kv;
      float* so = p.lean ? nullptr : t.scores.data() + (row0 + i) * seq_kv;
      float* ao = t.attn.data() + (row0 + i) * seq_kv;
      if (p.stream)
        detail::AttentionRow<true>(sbuf + i * ld, visible, seq_kv, abuf + i * ld, visible_max, so, ao);
      else
        detail::AttentionRow<false>(sbuf + i * ld, visible, seq_kv, abuf + i * ld, visible_max, so, ao);
    }
  }
  if (p.stream) simd::StoreFence();  // order the cache-bypassing stores before "done"
  // context = attn V; zero weights past visible_max contribute exactly nothing.
  for (int q = 0; q < p.phd; ++q) {
    const int j0 = q * kNR, nc = std::min(kNR, hd - j0);
    const float* b = p.v_in_place ? t.v.data() + static_cast<std::ptrdiff_t>(g) * seq_kv * hd + j0
                                  : p.vp + (static_cast<std::size_t>(g) * p.phd + q) * p.vp_panel;
    detail::Panel(m, visible_max, abuf, ld, b, p.v_in_place ? hd : kNR, cb + j0, ldcb, nc, nullptr, 1.0f);
  }
  // concat: the heads side by side again.
  if (!p.lean)
    for (int i = 0; i < m; ++i) simd::CopyRow(concat + static_cast<std::ptrdiff_t>(i) * p.d, cb + i * hd, hd);
}

// Output projection, one panel of columns: attn_out = concat W_O + b_O.
void OutputTask(Pass& p, int task, int tid) {
  using detail::kNR;
  const Weights& w = *p.w;
  Trace& t = *p.t;
  const RowPanel rp = RowPanelOf(p, task, Panels(p.d));
  const int j0 = rp.panel * kNR, nc = std::min(kNR, p.d - j0);
  const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(rp.r0) * p.d;
  float* c = p.attn_sum->data() + at + j0;
  const float* a = t.concat.data() + at;
  if (p.out_pack) {
    float* panel = p.out_pack + rp.panel * p.wpanel;
    if (!p.out_ready) detail::PackB(w.W_o.data() + j0, p.d, p.d, nc, panel);
    detail::Panel(rp.m, p.d, a, p.d, panel, kNR, c, p.d, nc, w.b_o.data() + j0, 1.0f);
  } else {
    GemmPanel(rp.m, p.d, a, p.d, w.W_o.data() + j0, p.d, nc, c, p.d, w.b_o.data() + j0, p.ws->panel[tid].Get(0));
  }
}

// Residual, then the norm (post-LN) or not, rows [r0, r1). The end of the layer:
// a further sublayer (e.g. the feed-forward block) would be one more phase after it.
void FinishTask(Pass& p, int task) {
  const int r0 = task * kNormRows, r1 = std::min(p.rows, r0 + kNormRows), d = p.d;
  Trace& t = *p.t;
  const Weights& w = *p.w;
  for (int i = r0; i < r1; ++i) {
    const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(i) * d;
    const float* x = t.in.x.data() + o;
    const float* a = p.attn_sum->data() + o;
    float* res = p.attn_res->data() + o;  // may be a itself (lean)
    for (int c = 0; c < d; ++c) res[c] = x[c] + a[c];
    if (p.cfg->norm != Norm::Post && p.attn_res != &t.out) std::memcpy(t.out.data() + o, res, sizeof(float) * d);
  }
  // Post-LN: the block's rows together, eight at a time (the bits of one at a time;
  // one row alone waited on its scalar chains, 4% of a post-LN step at d_model 64).
  if (p.cfg->norm == Norm::Post) {
    const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(r0) * d;
    detail::LayerNormRows(p.attn_res->data() + o, w.ln_gamma.data(), w.ln_beta.data(), d, p.cfg->ln_eps,
                          t.out.data() + o, r1 - r0, StatsOf(t.ln_stats, r0));
  }
}

void RunTask(void* ctx, int phase, int task, int tid) {
  Pass& p = *static_cast<Pass*>(ctx);
  switch (p.steps[phase]) {
    case Step::PreNorm: PreNormTask(p, task); break;
    case Step::Project: ProjectTask(p, task, tid); break;
    case Step::Pack: PackTask(p, task); break;
    case Step::Attend: AttendTask(p, task, tid); break;
    case Step::Ablate: detail::AblateTask(p, task); break;
    case Step::FlashAttend: detail::FlashAttendTask(p, task, tid); break;
    case Step::Output: OutputTask(p, task, tid); break;
    case Step::Finish: FinishTask(p, task); break;
    case Step::FfnNorm: detail::FfnNormTask(p, task); break;
    case Step::FfnUp: detail::FfnUpTask(p, task, tid); break;
    case Step::FfnDown: detail::FfnDownTask(p, task, tid); break;
    case Step::FfnFinish: detail::FfnFinishTask(p, task); break;
  }
}

void Run(Pass& p, int threads) {
  (p.ws->lent_pool ? *p.ws->lent_pool : p.ws->pool).Run(threads, p.tasks, p.phases, &RunTask, &p);
  p.ws->proj_valid = true;
  if (p.shared) return;
  if (p.qkv_pack && (p.project || p.qkv_ready)) p.ws->qkv_key = {p.w, p.d, p.H, p.G, 0};
  if (p.out_pack) p.ws->out_key = {p.w, p.d, 0, 0, p.f};
}

// Everything before the computation: validation, inputs, weights, and which input
// rows changed since the last pass on this trace (reuse.cpp). Returns the weights to use.
const Weights& Begin(const Config& cfg, std::shared_ptr<const Weights>& weights, const Inputs& in, int batch, Trace& t,
                     bool full) {
  if (batch < 1 || in.x.rows() % batch != 0 || (batch > 1 && in.cross()))
    throw Error("A batch of " + std::to_string(batch) + " sequences needs their " + std::to_string(in.x.rows()) +
                " input rows to split evenly into sequences of one length, and self-attention.");
  const int seq = static_cast<int>(in.x.rows()) / batch;
  const int seq_kv = in.cross() ? static_cast<int>(in.memory.rows()) : seq;
  Validate(cfg, seq, seq_kv);
  detail::CheckInputs(cfg, in);
  if (!weights) throw Error("No weights were given to the forward pass.");
  // Values once per Weights object (they are immutable behind the pointer), shapes
  // whenever the sizes change; the FFN's values when the encoder block is switched
  // on (an attention-only check never looked at them).
  if (t.weights != weights) {
    CheckWeights(*weights, cfg);
  } else if (t.cfg.d_model != cfg.d_model || t.cfg.num_heads != cfg.num_heads || t.cfg.kv_heads() != cfg.kv_heads() ||
             t.cfg.block != cfg.block || t.cfg.ffn_dim() != cfg.ffn_dim()) {
    detail::CheckWeightShapes(*weights, cfg);
    if (cfg.block == Block::Encoder && t.cfg.block != Block::Encoder) CheckFfnWeights(*weights, cfg);
  }
  detail::Workspace& ws = t.workspace.get();
  if (t.weights != weights) ws.qkv_key = ws.out_key = {};

  // Which rows of Q, K, V this pass projects, and which it keeps (reuse.cpp); t.in
  // still holds the last pass's input.
  detail::PlanProjections(cfg, weights.get(), t.weights == weights, in, batch, full, t, ws);

  t.cfg = cfg;
  if (&t.in != &in) {
    if (t.in.x.size() == in.x.size() && t.in.memory.size() == in.memory.size()) {
      t.in = in;  // no reallocation
    } else {
      Inputs copy = in;  // allocate before letting go of the old (see SafeResize)
      t.in = std::move(copy);
    }
  }
  t.weights = std::move(weights);
  t.seq = seq;
  t.seq_kv = seq_kv;
  t.batch = batch;
  return *t.weights;
}

bool SameFlow(const detail::Workspace& ws, const Config& c, int seq, int seq_kv) {
  const Config& o = ws.flow_cfg;
  return ws.flow_valid && ws.flow_seq == seq && ws.flow_seq_kv == seq_kv && o.d_model == c.d_model &&
         o.num_heads == c.num_heads && o.kv_heads() == c.kv_heads() && o.mask == c.mask && o.norm == c.norm &&
         o.scale == c.scale && o.temperature == c.temperature && o.positional_encoding == c.positional_encoding &&
         o.ln_eps == c.ln_eps && o.block == c.block && o.ffn_dim() == c.ffn_dim() && o.activation == c.activation &&
         o.attention == c.attention && FlashBr(o) == FlashBr(c) && FlashBc(o) == FlashBc(c);
}

void UpdateFlow(Trace& t, detail::Workspace& ws) {
  if (SameFlow(ws, t.cfg, t.seq, t.seq_kv)) return;
  ws.flow_valid = false;
  ShapeFlowInto(t.cfg, t.seq, t.seq_kv, t.flow, t.in.cross());  // in place: no allocation once grown
  ws.flow_cfg = t.cfg;
  ws.flow_seq = t.seq;
  ws.flow_seq_kv = t.seq_kv;
  ws.flow_valid = true;
}

// The value cap keeps every product of the attention sublayer inside float32, and a
// LayerNorm rescales what follows it; but an encoder block without one (norm none)
// multiplies already large values by W1 and W2 again, and can overflow. Checking the
// output is enough: Inf or NaN anywhere earlier reaches it (a ReLU can drop -Inf, but
// only one the trace never stores). Refused rather than shown or written.
void CheckFiniteOutput(const Trace& t) {
  const Mat& out = t.block_out.size() > 0 ? t.block_out : t.out;
  if (detail::AllFinite(out.data(), static_cast<std::size_t>(out.size()))) return;
  const std::pair<const char*, const Mat*> order[] = {{"attn_out", &t.attn_out}, {"residual", &t.residual},
                                                      {"out", &t.out},           {"ffn_hidden", &t.ffn_hidden},
                                                      {"ffn_out", &t.ffn_out},   {"block_out", &t.block_out}};
  std::string first = "the output";
  for (const auto& [name, m] : order)
    if (m->size() > 0 && !m->allFinite()) {
      first = name;
      break;
    }
  throw Error("The layer's values overflowed float32 (Inf or NaN from " + first +
              " on), so there is nothing "
              "meaningful to show. With norm none nothing rescales the values between the attention and the "
              "feed-forward network, and large weights multiply them past 3.4e38. Use norm post or pre, or "
              "scale the weights (or the input) down.");
}

}  // namespace

void ForwardBatch(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, int batch, Trace& t,
                  bool for_backward) {
  if (for_backward && cfg.attention == Attention::Flash)
    throw Error(
        "Training needs every head's attention weights for the backward pass, which Flash attention does "
        "not keep: train with the standard attention path.");
  const Weights& w = Begin(cfg, weights, in, batch, t, /*full=*/true);
  detail::Workspace& ws = t.workspace.get();
  const int threads = ThreadsFor(cfg, t.seq, t.seq_kv, batch);
  Pass p = Plan(cfg, w, t, ws, threads, /*full=*/true, for_backward);
  Run(p, threads);
  if (batch == 1) {
    UpdateFlow(t, ws);
  } else {  // the table describes one sequence
    ws.flow_valid = false;
    t.flow.clear();
  }
  CheckFiniteOutput(t);
}

void Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, Trace& t) {
  ForwardBatch(cfg, std::move(weights), in, 1, t);
}

void ForwardAttention(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, Trace& t) {
  const Weights& w = Begin(cfg, weights, in, 1, t, /*full=*/false);
  detail::Workspace& ws = t.workspace.get();
  const int threads = ThreadsFor(cfg, t.seq, t.seq_kv, 1);
  Pass p = Plan(cfg, w, t, ws, threads, /*full=*/false);
  Run(p, threads);
  ws.flow_valid = false;
  t.flow.clear();
}

Trace Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in) {
  Trace t;
  Forward(cfg, std::move(weights), in, t);
  return t;
}

}  // namespace mha
