// The encoder block's FFN sublayer as tasks of a forward pass (mha/ffn.hpp has the
// formulas): LN2 for pre-LN, the two products, the residual and LN2 for post-LN.
#include <algorithm>
#include <cstring>

#include "forward_pass.hpp"
#include "gelu.hpp"
#include "mha/ffn.hpp"
#include "rows.hpp"

namespace mha::detail {
namespace {

// One packed panel of a weight matrix b (depth rows, ld columns; the panel's nc
// columns start at b): the pass's packed copy at out_pack + at (packed now unless it
// already is), or, past the memory cap, packed into this thread's scratch.
const float* WeightPanel(Pass& p, const float* b, int ld, int depth, int nc, std::size_t at, int tid) {
  float* packed = p.out_pack ? p.out_pack + at : p.ws->panel[tid].Get(0);
  if (!p.out_pack || !p.out_ready) PackB(b, ld, depth, nc, packed);
  return packed;
}

}  // namespace

// Pre-LN: ffn_ln = LN2(out), rows [r0, r1).
void FfnNormTask(Pass& p, int task) {
  const int r0 = task * kNormRows, r1 = std::min(p.rows, r0 + kNormRows), d = p.d;
  const Weights& w = *p.w;
  LayerNormRows(p.t->out.data() + static_cast<std::ptrdiff_t>(r0) * d, w.ln2_gamma.data(), w.ln2_beta.data(), d,
                p.cfg->ln_eps, p.t->ffn_ln.data() + static_cast<std::ptrdiff_t>(r0) * d, r1 - r0,
                StatsOf(p.t->ln2_stats, r0));
}

// ffn_hidden = act(in W1 + b1), one panel of d_ff columns.
void FfnUpTask(Pass& p, int task, int tid) {
  const Weights& w = *p.w;
  Trace& t = *p.t;
  const Mat& in = p.cfg->norm == Norm::Pre ? t.ffn_ln : t.out;
  const RowPanel rp = RowPanelOf(p, task, Panels(p.f));
  const int panel_index = rp.panel, j0 = panel_index * kNR, nc = std::min(kNR, p.f - j0);
  float* c = t.ffn_hidden.data() + static_cast<std::ptrdiff_t>(rp.r0) * p.f + j0;
  const float* panel = WeightPanel(p, w.ffn_W1.data() + j0, p.f, p.d, nc, p.w1_at + panel_index * p.wpanel, tid);
  Panel(rp.m, p.d, in.data() + static_cast<std::ptrdiff_t>(rp.r0) * p.d, p.d, panel, kNR, c, p.f, nc,
        w.ffn_b1.data() + j0, 1.0f);
  const bool gelu = p.cfg->activation == Activation::Gelu;
  // The backward pass's GELU' where the pass keeps it (ffn_act_grad sized), at the same place.
  float* grad = t.ffn_act_grad.size() > 0 ? t.ffn_act_grad.data() + (c - t.ffn_hidden.data()) : nullptr;
  for (int i = 0; i < rp.m; ++i) {
    const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(i) * p.f;
    float* row = c + o;
    if (!gelu)
      for (int j = 0; j < nc; ++j) row[j] = row[j] > 0.0f ? row[j] : 0.0f;
    else if (grad)
      GeluRowWithGrad(row, grad + o, nc);
    else
      GeluRow(row, nc);
  }
}

// ffn_out = ffn_hidden W2 + b2, one panel of d_model columns.
void FfnDownTask(Pass& p, int task, int tid) {
  const Weights& w = *p.w;
  Trace& t = *p.t;
  const RowPanel rp = RowPanelOf(p, task, Panels(p.d));
  const int panel_index = rp.panel, j0 = panel_index * kNR, nc = std::min(kNR, p.d - j0);
  const float* panel =
      WeightPanel(p, w.ffn_W2.data() + j0, p.d, p.f, nc, p.w2_at + panel_index * PanelFloats(p.f), tid);
  Panel(rp.m, p.f, t.ffn_hidden.data() + static_cast<std::ptrdiff_t>(rp.r0) * p.f, p.f, panel, kNR,
        p.ffn_sum->data() + static_cast<std::ptrdiff_t>(rp.r0) * p.d + j0, p.d, nc, w.ffn_b2.data() + j0, 1.0f);
}

// ffn_residual = out + ffn_out, then LN2 (post-LN) or not: block_out, rows [r0, r1).
void FfnFinishTask(Pass& p, int task) {
  const int r0 = task * kNormRows, r1 = std::min(p.rows, r0 + kNormRows), d = p.d;
  Trace& t = *p.t;
  const Weights& w = *p.w;
  for (int i = r0; i < r1; ++i) {
    const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(i) * d;
    const float* a = t.out.data() + o;
    const float* b = p.ffn_sum->data() + o;
    float* res = p.ffn_res->data() + o;  // may be b itself (lean)
    for (int c = 0; c < d; ++c) res[c] = a[c] + b[c];
    if (p.cfg->norm != Norm::Post && p.ffn_res != &t.block_out)
      std::memcpy(t.block_out.data() + o, res, sizeof(float) * d);
  }
  if (p.cfg->norm == Norm::Post) {  // the block's rows together, as FinishTask
    const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(r0) * d;
    LayerNormRows(p.ffn_res->data() + o, w.ln2_gamma.data(), w.ln2_beta.data(), d, p.cfg->ln_eps,
                  t.block_out.data() + o, r1 - r0, StatsOf(t.ln2_stats, r0));
  }
}

}  // namespace mha::detail
