#include "mha/ffn.hpp"

#include <cmath>
#include <sstream>

#include "mha/forward.hpp"
#include "check.hpp"
#include "init.hpp"

namespace mha {
namespace {

using detail::Bias;
using detail::Glorot;

// FLOPs counted per activated element. ReLU is one comparison. GELU is x / sqrt 2,
// erf (a short polynomial, counted as 4), 1 +, * 0.5 and * x: 8. Conventions differ;
// what matters for the lesson is that both are tiny next to the two matrix products.
constexpr std::int64_t kReluFlops = 1;
constexpr std::int64_t kGeluFlops = 8;

std::string Shape2(Eigen::Index r, Eigen::Index c, bool vec) {
  return vec ? "(" + std::to_string(c) + ")" : "(" + std::to_string(r) + ", " + std::to_string(c) + ")";
}

template <typename M>
void CheckShape(const char* name, const M& m, Eigen::Index rows, Eigen::Index cols, const Config& cfg) {
  if (m.rows() == rows && m.cols() == cols) return;
  const bool vec = M::RowsAtCompileTime == 1;
  std::ostringstream e;
  if (m.size() == 0) {
    e << "The encoder block needs the feed-forward weight " << name << " " << Shape2(rows, cols, vec)
      << ", but these weights have none (they were made for an attention-only layer). Create the weights "
         "with block = encoder, or load a weights file that has ffn_W1 and ffn_W2.";
  } else {
    e << "Weight " << name << " has shape " << Shape2(m.rows(), m.cols(), vec) << " but d_model = " << cfg.d_model
      << " and d_ff = " << cfg.ffn_dim() << " need " << Shape2(rows, cols, vec)
      << ". Check the d_model / --d-ff flags or the file.";
  }
  throw Error(e.str());
}


}  // namespace

float Activate(Activation a, float x) {
  if (a == Activation::Gelu) return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
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

namespace {

// f(name, tensor, rows, cols) for each FFN tensor and the shape cfg needs (rows 1 for
// a vector): one list for the shape and the value checks.
template <typename F>
void ForEachFfnWeight(const Weights& w, const Config& cfg, F&& f) {
  const Eigen::Index d = cfg.d_model, ff = cfg.ffn_dim();
  f("ffn_W1", w.ffn_W1, d, ff);
  f("ffn_b1", w.ffn_b1, 1, ff);
  f("ffn_W2", w.ffn_W2, ff, d);
  f("ffn_b2", w.ffn_b2, 1, d);
  f("ln2_gamma", w.ln2_gamma, 1, d);
  f("ln2_beta", w.ln2_beta, 1, d);
}

}  // namespace

namespace detail {
void CheckFfnShapes(const Weights& w, const Config& cfg) {
  ForEachFfnWeight(w, cfg, [&](const char* name, const auto& m, Eigen::Index r, Eigen::Index c) {
    CheckShape(name, m, r, c, cfg);
  });
}
}  // namespace detail

void CheckFfnWeights(const Weights& w, const Config& cfg) {
  detail::CheckFfnShapes(w, cfg);
  // Finite is not enough: |value| <= kMaxAbsValue is what keeps the FFN's products
  // (d_ff up to 16384 terms) inside float32, as for the attention weights.
  ForEachFfnWeight(w, cfg, [](const char* name, const auto& m, Eigen::Index, Eigen::Index) {
    detail::CheckValues(name, m);
  });
}

void ForwardFfn(const Config& cfg, const Weights& w, Trace& t) {
  if (cfg.block != Block::Encoder) {
    t.ffn_ln.resize(0, 0);
    t.ffn_hidden.resize(0, 0);
    t.ffn_out.resize(0, 0);
    t.ffn_residual.resize(0, 0);
    t.block_out.resize(0, 0);
    return;
  }
  CheckFfnWeights(w, cfg);
  const Mat* in = &t.out;
  if (cfg.norm == Norm::Pre) {
    LayerNormRows(t.out, w.ln2_gamma, w.ln2_beta, cfg.ln_eps, t.ffn_ln);
    in = &t.ffn_ln;
  } else {
    t.ffn_ln.resize(0, 0);
  }
  t.ffn_hidden.noalias() = *in * w.ffn_W1;
  t.ffn_hidden.rowwise() += w.ffn_b1;
  const Activation act = cfg.activation;
  float* h = t.ffn_hidden.data();
  for (Eigen::Index i = 0; i < t.ffn_hidden.size(); ++i) h[i] = Activate(act, h[i]);
  t.ffn_out.noalias() = t.ffn_hidden * w.ffn_W2;
  t.ffn_out.rowwise() += w.ffn_b2;
  t.ffn_residual = t.out + t.ffn_out;
  if (cfg.norm == Norm::Post)
    LayerNormRows(t.ffn_residual, w.ln2_gamma, w.ln2_beta, cfg.ln_eps, t.block_out);
  else
    t.block_out = t.ffn_residual;
}

void AppendFfnFlow(const Config& cfg, int seq, std::vector<FlowRow>& rows) {
  if (cfg.block != Block::Encoder) return;
  using S = std::vector<std::int64_t>;
  const std::int64_t s = seq, d = cfg.d_model, f = cfg.ffn_dim();
  auto str = [](auto&&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
  };
  const char* act = cfg.activation == Activation::Gelu ? "gelu" : "relu";
  const std::int64_t act_flops = cfg.activation == Activation::Gelu ? kGeluFlops : kReluFlops;
  if (cfg.norm == Norm::Pre)
    rows.push_back({"pre-LayerNorm 2", "ffn_ln = LN2(out)", "ffn_ln", S{1, s, d},
                    str("gamma2, beta2 (", d, "), eps ", cfg.ln_eps), 2 * d, 8 * s * d});
  const char* src = cfg.norm == Norm::Pre ? "ffn_ln" : "out";
  rows.push_back({str("FFN expand + ", cfg.activation == Activation::Gelu ? "GELU" : "ReLU"),
                  str("ffn_hidden = ", act, "(", src, " W1 + b1)"), "ffn_hidden", S{1, s, f},
                  str("W1 (", d, ", ", f, "), b1 (", f, "), d_ff = ", f), d * f + f,
                  2 * s * d * f + s * f + act_flops * s * f});
  rows.push_back({"FFN contract", "ffn_out = ffn_hidden W2 + b2", "ffn_out", S{1, s, d},
                  str("W2 (", f, ", ", d, "), b2 (", d, ")"), f * d + d, 2 * s * f * d + s * d});
  switch (cfg.norm) {
    case Norm::Post:
      rows.push_back({"residual + LayerNorm 2", "block_out = LN2(out + ffn_out)", "block_out", S{1, s, d},
                      str("post-LN: gamma2, beta2 (", d, "), eps ", cfg.ln_eps), 2 * d, s * d + 8 * s * d});
      break;
    case Norm::Pre:
      rows.push_back({"residual 2", "block_out = out + ffn_out", "block_out", S{1, s, d},
                      "pre-LN: the norm came before the FFN", 0, s * d});
      break;
    case Norm::None:
      rows.push_back({"residual 2", "block_out = out + ffn_out", "block_out", S{1, s, d}, "no LayerNorm", 0, s * d});
      break;
  }
}

void AppendFfnTensors(const Trace& t, std::vector<TensorView>& v) {
  if (t.cfg.block != Block::Encoder || t.block_out.size() == 0) return;
  using S = std::vector<std::int64_t>;
  const std::int64_t s = t.seq, d = t.cfg.d_model, f = t.cfg.ffn_dim();
  if (t.weights) {
    const Weights& w = *t.weights;
    v.push_back({"ffn_W1", S{d, f}, w.ffn_W1.data()});
    v.push_back({"ffn_b1", S{f}, w.ffn_b1.data()});
    v.push_back({"ffn_W2", S{f, d}, w.ffn_W2.data()});
    v.push_back({"ffn_b2", S{d}, w.ffn_b2.data()});
    v.push_back({"ln2_gamma", S{d}, w.ln2_gamma.data()});
    v.push_back({"ln2_beta", S{d}, w.ln2_beta.data()});
  }
  if (t.ffn_ln.size() > 0) v.push_back({"ffn_ln", S{1, s, d}, t.ffn_ln.data()});
  v.push_back({"ffn_hidden", S{1, s, f}, t.ffn_hidden.data()});
  v.push_back({"ffn_out", S{1, s, d}, t.ffn_out.data()});
  v.push_back({"ffn_residual", S{1, s, d}, t.ffn_residual.data()});
  v.push_back({"block_out", S{1, s, d}, t.block_out.data()});
}

}  // namespace mha
