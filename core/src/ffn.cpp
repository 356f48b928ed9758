#include "mha/ffn.hpp"

#include "gelu.hpp"
#include "init.hpp"

namespace mha {
namespace {

using detail::Bias;
using detail::Glorot;

}  // namespace

float Activate(Activation a, float x) {
  if (a == Activation::Gelu) return detail::GeluScalar(x);  // the forward pass's lanes, the same bits
  return x > 0.0f ? x : 0.0f;
}

void InitFfnWeights(const Config& cfg, Weights& w) {
  const int d = cfg.d_model, f = cfg.ffn_dim();
  Glorot(cfg.seed, "ffn_W1", d, f, w.ffn_W1);
  Bias(cfg.seed, "ffn_b1", d, f, w.ffn_b1);
  Glorot(cfg.seed, "ffn_W2", f, d, w.ffn_W2);
  Bias(cfg.seed, "ffn_b2", f, d, w.ffn_b2);
  w.ln2_gamma.setOnes(d);
  w.ln2_beta.setZero(d);
}

}  // namespace mha
