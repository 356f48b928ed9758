#include "mha/trace.hpp"

#include <cmath>
#include <sstream>

namespace mha {

std::int64_t TensorView::size() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

Eigen::Map<const Mat> Trace::AttnHead(int h) const {
  return Eigen::Map<const Mat>(attn.data() + std::int64_t(h) * seq * seq_kv, seq, seq_kv);
}
Eigen::Map<const Mat> Trace::ScoresHead(int h) const {
  return Eigen::Map<const Mat>(scores.data() + std::int64_t(h) * seq * seq_kv, seq, seq_kv);
}

std::string ShapeString(const std::vector<std::int64_t>& shape) {
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) os << ",";
  os << ")";
  return os.str();
}

std::vector<TensorView> Tensors(const Trace& t) {
  using S = std::vector<std::int64_t>;
  const std::int64_t s = t.seq, skv = t.seq_kv, d = t.cfg.d_model, H = t.cfg.num_heads,
                     G = t.cfg.kv_heads(), hd = t.cfg.head_dim();
  std::vector<TensorView> v;
  v.push_back({"x", S{1, s, d}, t.in.x.data()});
  if (t.in.cross()) v.push_back({"memory", S{1, skv, d}, t.in.memory.data()});
  if (t.weights) {
    const Weights& w = *t.weights;
    v.push_back({"W_q", S{d, d}, w.W_q.data()});
    v.push_back({"b_q", S{d}, w.b_q.data()});
    v.push_back({"W_k", S{d, G * hd}, w.W_k.data()});
    v.push_back({"b_k", S{G * hd}, w.b_k.data()});
    v.push_back({"W_v", S{d, G * hd}, w.W_v.data()});
    v.push_back({"b_v", S{G * hd}, w.b_v.data()});
    v.push_back({"W_o", S{d, d}, w.W_o.data()});
    v.push_back({"b_o", S{d}, w.b_o.data()});
    v.push_back({"ln_gamma", S{d}, w.ln_gamma.data()});
    v.push_back({"ln_beta", S{d}, w.ln_beta.data()});
  }
  v.push_back({"ln_eps", S{}, &t.cfg.ln_eps});
  if (t.x_ln.size() > 0) v.push_back({"x_ln", S{1, s, d}, t.x_ln.data()});
  v.push_back({"q", S{1, H, s, hd}, t.q.data()});
  v.push_back({"k", S{1, G, skv, hd}, t.k.data()});
  v.push_back({"v", S{1, G, skv, hd}, t.v.data()});
  v.push_back({"scores", S{1, H, s, skv}, t.scores.data()});
  v.push_back({"attn", S{1, H, s, skv}, t.attn.data()});
  v.push_back({"context", S{1, H, s, hd}, t.context.data()});
  v.push_back({"concat", S{1, s, d}, t.concat.data()});
  v.push_back({"attn_out", S{1, s, d}, t.attn_out.data()});
  // Left empty by ForwardAttention (the sublayer alone).
  if (t.residual.size() > 0) v.push_back({"residual", S{1, s, d}, t.residual.data()});
  if (t.out.size() > 0) v.push_back({"out", S{1, s, d}, t.out.data()});
  return v;
}

std::vector<FlowRow> ShapeFlow(const Config& cfg, int seq_i, int seq_kv_i) {
  using S = std::vector<std::int64_t>;
  const std::int64_t s = seq_i, skv = seq_kv_i, d = cfg.d_model, H = cfg.num_heads,
                     G = cfg.kv_heads(), hd = cfg.head_dim(), kvd = G * hd;
  std::vector<FlowRow> rows;
  auto str = [](auto&&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
  };
  rows.push_back({"input", cfg.positional_encoding ? "x = embed(tokens) + PE" : "x = embed(tokens)",
                  "x", S{1, s, d},
                  str("seq = ", s, ", d_model = ", d, cfg.positional_encoding ? ", sinusoidal PE" : ", no PE"),
                  0, cfg.positional_encoding ? s * d : 0});
  if (cfg.norm == Norm::Pre)
    rows.push_back({"pre-LayerNorm", "x_ln = LN(x)", "x_ln", S{1, s, d},
                    str("gamma, beta (", d, "), eps ", cfg.ln_eps), 2 * d, 8 * s * d});
  const char* src = cfg.norm == Norm::Pre ? "x_ln" : "x";
  rows.push_back({"Q projection", str("Q = ", src, " W_Q + b_Q"), "q", S{1, s, d},
                  str("W_Q (", d, ", ", d, "), b_Q (", d, ")"), d * d + d, 2 * s * d * d + s * d});
  rows.push_back({"K projection", "K = m W_K + b_K", "k", S{1, skv, kvd},
                  str("W_K (", d, ", ", kvd, "), b_K (", kvd, ")"), d * kvd + kvd,
                  2 * skv * d * kvd + skv * kvd});
  rows.push_back({"V projection", "V = m W_V + b_V", "v", S{1, skv, kvd},
                  str("W_V (", d, ", ", kvd, "), b_V (", kvd, ")"), d * kvd + kvd,
                  2 * skv * d * kvd + skv * kvd});
  rows.push_back({"split heads", "reshape + transpose", "q", S{1, H, s, hd},
                  G == H ? str(H, " heads x head_dim ", hd, " (K, V alike)")
                         : str(H, " query heads, ", G, " K/V heads x head_dim ", hd),
                  0, 0});
  std::string sp = cfg.scale ? str("/ sqrt(d_k) = / sqrt(", hd, ")") : std::string("no scaling");
  if (cfg.temperature != 1.0f) sp += str(", / T = ", cfg.temperature);
  if (cfg.mask == Mask::Causal) sp += ", causal mask";
  rows.push_back({"scores", cfg.scale ? "Q K^T / sqrt(d_k)" : "Q K^T", "scores", S{1, H, s, skv}, sp,
                  0, 2 * H * s * skv * hd + H * s * skv});
  rows.push_back({"softmax", "attn = softmax(scores)", "attn", S{1, H, s, skv},
                  str("over the ", skv, " keys of each row"), 0, 5 * H * s * skv});
  rows.push_back({"context", "attn V", "context", S{1, H, s, hd},
                  str("weighted sum of ", skv, " value rows"), 0, 2 * H * s * skv * hd});
  rows.push_back({"concat", "concat(head_1..head_h)", "concat", S{1, s, d},
                  str(H, " x ", hd, " = ", d), 0, 0});
  rows.push_back({"output projection", "concat W_O + b_O", "attn_out", S{1, s, d},
                  str("W_O (", d, ", ", d, "), b_O (", d, ")"), d * d + d, 2 * s * d * d + s * d});
  switch (cfg.norm) {
    case Norm::Post:
      rows.push_back({"residual + LayerNorm", "out = LN(x + attn_out)", "out", S{1, s, d},
                      str("post-LN: gamma, beta (", d, "), eps ", cfg.ln_eps), 2 * d,
                      s * d + 8 * s * d});
      break;
    case Norm::Pre:
      rows.push_back({"residual", "out = x + attn_out", "out", S{1, s, d},
                      "pre-LN: the norm came before attention", 0, s * d});
      break;
    case Norm::None:
      rows.push_back({"residual", "out = x + attn_out", "out", S{1, s, d}, "no LayerNorm", 0, s * d});
      break;
  }
  return rows;
}

}  // namespace mha
