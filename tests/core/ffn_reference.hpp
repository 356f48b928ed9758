// The encoder block's feed-forward sublayer the plain Eigen way, one whole-matrix
// expression per formula of mha/ffn.hpp: the reference the fast, panel-by-panel
// FFN of core/src/forward.cpp is checked against (test_fast_paths.cpp).
#pragma once

#include "mha/mha.hpp"

namespace reference {

// The FFN sublayer after t.out is final: fills t.ffn_ln (pre-LN only), ffn_hidden,
// ffn_out, ffn_residual and block_out from t.out.
inline void ForwardFfn(const mha::Config& cfg, const mha::Weights& w, mha::Trace& t) {
  using mha::Norm;
  const mha::Mat* in = &t.out;
  if (cfg.norm == Norm::Pre) {
    mha::LayerNormRows(t.out, w.ln2_gamma, w.ln2_beta, cfg.ln_eps, t.ffn_ln);
    in = &t.ffn_ln;
  } else {
    t.ffn_ln.resize(0, 0);
  }
  t.ffn_hidden.noalias() = *in * w.ffn_W1;
  t.ffn_hidden.rowwise() += w.ffn_b1;
  float* h = t.ffn_hidden.data();
  for (Eigen::Index i = 0; i < t.ffn_hidden.size(); ++i) h[i] = mha::Activate(cfg.activation, h[i]);
  t.ffn_out.noalias() = t.ffn_hidden * w.ffn_W2;
  t.ffn_out.rowwise() += w.ffn_b2;
  t.ffn_residual = t.out + t.ffn_out;
  if (cfg.norm == Norm::Post)
    mha::LayerNormRows(t.ffn_residual, w.ln2_gamma, w.ln2_beta, cfg.ln_eps, t.block_out);
  else
    t.block_out = t.ffn_residual;
}

}  // namespace reference
