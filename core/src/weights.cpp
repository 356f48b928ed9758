#include "mha/weights.hpp"

#include <cmath>
#include <sstream>

#include "mha/ffn.hpp"
#include "check.hpp"
#include "init.hpp"

namespace mha {
namespace {

using detail::Bias;
using detail::Glorot;

template <typename M>
void CheckShape(const char* name, const M& m, Eigen::Index rows, Eigen::Index cols, const Config& cfg) {
  if (m.rows() == rows && m.cols() == cols) return;
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

}  // namespace

namespace detail {

void InitKvWeights(const Config& cfg, Weights& w) {
  const int d = cfg.d_model, kvd = cfg.kv_heads() * cfg.head_dim();
  Glorot(cfg.seed, "W_k", d, kvd, w.W_k);
  Glorot(cfg.seed, "W_v", d, kvd, w.W_v);
  Bias(cfg.seed, "b_k", d, kvd, w.b_k);
  Bias(cfg.seed, "b_v", d, kvd, w.b_v);
}

}  // namespace detail

void InitWeights(const Config& cfg, Weights& w) {
  const int d = cfg.d_model;
  Glorot(cfg.seed, "W_q", d, d, w.W_q);
  Glorot(cfg.seed, "W_o", d, d, w.W_o);
  Bias(cfg.seed, "b_q", d, d, w.b_q);
  Bias(cfg.seed, "b_o", d, d, w.b_o);
  detail::InitKvWeights(cfg, w);
  w.ln_gamma.setOnes(d);
  w.ln_beta.setZero(d);
  if (cfg.block == Block::Encoder) {
    InitFfnWeights(cfg, w);
  } else {
    w.ffn_W1.resize(0, 0);
    w.ffn_W2.resize(0, 0);
    w.ffn_b1.resize(0);
    w.ffn_b2.resize(0);
    w.ln2_gamma.resize(0);
    w.ln2_beta.resize(0);
  }
}

Weights InitWeights(const Config& cfg) {
  Weights w;
  InitWeights(cfg, w);
  return w;
}

namespace {

// f(name, tensor, rows, cols) for each attention-layer tensor and the shape cfg needs
// (rows 1 for a vector): one list for the shape and the value checks.
template <typename F>
void ForEachAttentionWeight(const Weights& w, const Config& cfg, F&& f) {
  const Eigen::Index d = cfg.d_model, kvd = cfg.kv_heads() * cfg.head_dim();
  f("W_q", w.W_q, d, d);
  f("W_k", w.W_k, d, kvd);
  f("W_v", w.W_v, d, kvd);
  f("W_o", w.W_o, d, d);
  f("b_q", w.b_q, 1, d);
  f("b_k", w.b_k, 1, kvd);
  f("b_v", w.b_v, 1, kvd);
  f("b_o", w.b_o, 1, d);
  f("ln_gamma", w.ln_gamma, 1, d);
  f("ln_beta", w.ln_beta, 1, d);
}

}  // namespace

namespace detail {

void CheckWeightShapes(const Weights& w, const Config& cfg) {
  ForEachAttentionWeight(w, cfg, [&](const char* name, const auto& m, Eigen::Index r, Eigen::Index c) {
    CheckShape(name, m, r, c, cfg);
  });
  if (cfg.block == Block::Encoder) CheckFfnShapes(w, cfg);
}

}  // namespace detail

void CheckWeights(const Weights& w, const Config& cfg) {
  detail::CheckWeightShapes(w, cfg);
  ForEachAttentionWeight(w, cfg, [](const char* name, const auto& m, Eigen::Index, Eigen::Index) {
    detail::CheckValues(name, m);
  });
  if (cfg.block == Block::Encoder) CheckFfnWeights(w, cfg);
}

}  // namespace mha
