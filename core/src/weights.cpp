#include "mha/weights.hpp"

#include <cmath>
#include <sstream>

#include "mha/ffn.hpp"
#include "init.hpp"

namespace mha {
namespace {

using detail::Bias;
using detail::Glorot;

template <typename M>
void CheckOne(const char* name, const M& m, Eigen::Index rows, Eigen::Index cols,
              const Config& cfg) {
  if (m.rows() != rows || m.cols() != cols) {
    std::ostringstream e;
    e << "Weight " << name << " has shape (";
    if (rows == 1 && M::RowsAtCompileTime == 1) e << m.cols() << ")";
    else e << m.rows() << ", " << m.cols() << ")";
    e << " but d_model = " << cfg.d_model << ", num_heads = " << cfg.num_heads
      << ", num_kv_heads = " << cfg.kv_heads() << " need (";
    if (rows == 1 && M::RowsAtCompileTime == 1) e << cols << ")";
    else e << rows << ", " << cols << ")";
    e << ". Check the d_model / --kv-heads flags or the file.";
    throw Error(e.str());
  }
  // One pass finds the first value that is NaN, Inf or too large (NaN fails every
  // comparison, so !(|v| <= cap) catches it too).
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    const float v = m.data()[i];
    if (std::abs(v) <= Limits::kMaxAbsValue) continue;
    std::ostringstream e;
    std::ostringstream where;
    if (M::RowsAtCompileTime == 1) where << "index " << i;
    else where << "row " << i / m.cols() << ", column " << i % m.cols();
    if (!std::isfinite(v))
      e << "Weight " << name << " contains NaN or Inf values (" << v << " at " << where.str()
        << "); every weight must be a finite number. Replace them (numpy.nan_to_num) or re-export the weights.";
    else
      e << "Weight " << name << " holds " << v << " at " << where.str() << ", over the limit of |value| <= "
        << Limits::kMaxAbsValue
        << " that keeps every product of the layer inside float32 (max 3.4e38). Scale the weights down.";
    throw Error(e.str());
  }
}

}  // namespace

Weights InitWeights(const Config& cfg) {
  const int d = cfg.d_model, kvd = cfg.kv_heads() * cfg.head_dim();
  Weights w;
  w.W_q = Glorot(cfg.seed, "W_q", d, d);
  w.W_k = Glorot(cfg.seed, "W_k", d, kvd);
  w.W_v = Glorot(cfg.seed, "W_v", d, kvd);
  w.W_o = Glorot(cfg.seed, "W_o", d, d);
  w.b_q = Bias(cfg.seed, "b_q", d, d);
  w.b_k = Bias(cfg.seed, "b_k", d, kvd);
  w.b_v = Bias(cfg.seed, "b_v", d, kvd);
  w.b_o = Bias(cfg.seed, "b_o", d, d);
  w.ln_gamma = RowVec::Ones(d);
  w.ln_beta = RowVec::Zero(d);
  if (cfg.block == Block::Encoder) InitFfnWeights(cfg, w);
  return w;
}

void CheckWeights(const Weights& w, const Config& cfg) {
  const Eigen::Index d = cfg.d_model, kvd = cfg.kv_heads() * cfg.head_dim();
  CheckOne("W_q", w.W_q, d, d, cfg);
  CheckOne("W_k", w.W_k, d, kvd, cfg);
  CheckOne("W_v", w.W_v, d, kvd, cfg);
  CheckOne("W_o", w.W_o, d, d, cfg);
  CheckOne("b_q", w.b_q, 1, d, cfg);
  CheckOne("b_k", w.b_k, 1, kvd, cfg);
  CheckOne("b_v", w.b_v, 1, kvd, cfg);
  CheckOne("b_o", w.b_o, 1, d, cfg);
  CheckOne("ln_gamma", w.ln_gamma, 1, d, cfg);
  CheckOne("ln_beta", w.ln_beta, 1, d, cfg);
  if (cfg.block == Block::Encoder) CheckFfnWeights(w, cfg);
}

}  // namespace mha
