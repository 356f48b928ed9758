#include "mha/influence.hpp"

#include <cmath>
#include <string>

namespace mha {

Mat ValueOutputNorms(const Trace& t) {
  if (!t.weights) throw Error("The value-weighted norms need the layer's weights; the trace has none.");
  if (t.batch != 1)
    throw Error("The value-weighted norms are computed for one sequence; the trace holds " + std::to_string(t.batch) +
                ".");
  const int H = t.cfg.num_heads, hd = t.cfg.head_dim(), skv = t.seq_kv;
  const Mat& W_o = t.weights->W_o;
  Mat norms(H, skv);
  for (int h = 0; h < H; ++h) {
    const int g = t.KvHeadOf(h);
    // (seq_kv, hd) x (hd, d_model), in double: the norm sums d_model squares.
    const Eigen::MatrixXd f = t.v.middleRows(static_cast<Eigen::Index>(g) * skv, skv).cast<double>() *
                              W_o.middleRows(static_cast<Eigen::Index>(h) * hd, hd).cast<double>();
    for (int j = 0; j < skv; ++j) norms(h, j) = static_cast<float>(f.row(j).norm());
  }
  return norms;
}

Mat ValueWeightedNorms(const Trace& t) {
  if (t.cfg.attention != Attention::Standard || t.attn.rows() == 0)
    throw Error(
        "The value-weighted norms weigh each key's value by its attention weight, and Flash attention keeps no "
        "attention weights. Trace without --attention flash.");
  const Mat f = ValueOutputNorms(t);
  const int H = t.cfg.num_heads, seq = t.seq;
  Mat out(t.attn.rows(), t.attn.cols());
  for (int h = 0; h < H; ++h)
    out.middleRows(static_cast<Eigen::Index>(h) * seq, seq) =
        t.attn.middleRows(static_cast<Eigen::Index>(h) * seq, seq).array().rowwise() * f.row(h).array();
  return out;
}

}  // namespace mha
