// A deliberately naive model for the training tests: the stack of oracle::Mha layers,
// the embedding, the final LayerNorm, the unembeddings and the mean cross-entropy, in
// double precision and sharing no code with core/src.
#pragma once

#include <cmath>
#include <vector>

#include "mha/mha.hpp"
#include "oracle.hpp"

namespace oracle {

// The mean cross-entropy of the model over every target that is not -1.
inline double ModelLoss(const mha::Model& m, const mha::Batch& b) {
  const mha::ModelConfig& c = m.cfg;
  const int d = c.layer.d_model, V = c.vocab_size();
  const mha::Config lc = c.LayerConfig();
  double total = 0;
  long count = 0;
  for (int s = 0; s < b.batch; ++s) {
    Matrix x(b.seq, std::vector<double>(d));
    for (int i = 0; i < b.seq; ++i)
      for (int j = 0; j < d; ++j) {
        double v = m.tok_embed(b.token(s, i), j);
        if (c.positional == mha::Positional::Learned) v += m.pos_embed(i, j);
        if (c.positional == mha::Positional::Sinusoidal) {
          // Vaswani et al. 2017, Section 3.5, straight from the formula
          const double angle = i / std::pow(10000.0, (j - j % 2) / static_cast<double>(d));
          v += j % 2 == 0 ? std::sin(angle) : std::cos(angle);
        }
        x[i][j] = v;
      }
    for (const auto& w : m.layers) {
      const Result r = Mha(lc, *w, x);
      x = lc.block == mha::Block::Encoder ? r.block_out : r.out;
    }
    if (lc.norm == mha::Norm::Pre) x = LayerNorm(x, FromVec(m.lnf_gamma), FromVec(m.lnf_beta), lc.ln_eps);
    for (int k = 0; k < c.num_targets; ++k) {
      const Matrix logits = Linear(x, FromMat(m.unembed[k]), FromVec(m.unembed_b[k]));
      for (int i = 0; i < b.seq; ++i) {
        const int t = b.target(s, i, k);
        if (t < 0) continue;
        double mx = logits[i][0], sum = 0;
        for (int j = 0; j < V; ++j) mx = std::max(mx, logits[i][j]);
        for (int j = 0; j < V; ++j) sum += std::exp(logits[i][j] - mx);
        total += mx + std::log(sum) - logits[i][t];
        ++count;
      }
    }
  }
  return count > 0 ? total / count : 0.0;
}

}  // namespace oracle
