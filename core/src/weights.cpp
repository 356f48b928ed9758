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

std::string ShapeText(Eigen::Index rows, Eigen::Index cols, bool vector) {
  return vector ? "(" + std::to_string(cols) + ")" : "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
}

// The message names the flags that set this tensor's shape: d_model and the head
// counts for attention, d_model and d_ff for the feed-forward sublayer.
template <typename M>
void CheckShape(const WeightSpec& s, const M& m, const Config& cfg) {
  if (m.rows() == s.rows && m.cols() == s.cols) return;
  std::ostringstream e;
  if (s.ffn && m.size() == 0) {
    e << "The encoder block needs the feed-forward weight " << s.name << " " << ShapeText(s.rows, s.cols, s.vector)
      << ", but these weights have none (they were made for an attention-only layer). Create the weights "
         "with block = encoder, or load a weights file that has ffn_W1 and ffn_W2.";
  } else if (s.ffn) {
    e << "Weight " << s.name << " has shape " << ShapeText(m.rows(), m.cols(), s.vector)
      << " but d_model = " << cfg.d_model << " and d_ff = " << cfg.ffn_dim() << " need "
      << ShapeText(s.rows, s.cols, s.vector) << ". Check d_model and d_ff against the file.";
  } else {
    e << "Weight " << s.name << " has shape " << ShapeText(m.rows(), m.cols(), s.vector)
      << " but d_model = " << cfg.d_model << ", num_heads = " << cfg.num_heads << ", num_kv_heads = " << cfg.kv_heads()
      << " need " << ShapeText(s.rows, s.cols, s.vector) << ". Check the d_model / --kv-heads flags or the file.";
  }
  throw Error(e.str());
}

// Shapes, then values, of the tensors `which` selects: a value check reads every
// number, so it runs only on tensors whose shape is known to be right.
enum class Part { All, Ffn };

void CheckPart(const Weights& w, const Config& cfg, Part which, bool values) {
  auto in_part = [which](const WeightSpec& s) { return which == Part::All || s.ffn; };
  ForEachWeight(w, cfg, [&](const WeightSpec& s, const auto& m) {
    if (in_part(s)) CheckShape(s, m, cfg);
  });
  if (!values) return;
  ForEachWeight(w, cfg, [&](const WeightSpec& s, const auto& m) {
    if (in_part(s)) detail::CheckValues(s.name, m);
  });
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

namespace detail {

void CheckWeightShapes(const Weights& w, const Config& cfg) { CheckPart(w, cfg, Part::All, false); }

}  // namespace detail

void CheckWeights(const Weights& w, const Config& cfg) { CheckPart(w, cfg, Part::All, true); }

// Finite is not enough: |value| <= kMaxAbsValue is what keeps the FFN's products
// (d_ff up to 16384 terms) inside float32, as for the attention weights.
void CheckFfnWeights(const Weights& w, const Config& cfg) { CheckPart(w, cfg, Part::Ffn, true); }

}  // namespace mha
