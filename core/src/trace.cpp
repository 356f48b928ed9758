#include "mha/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <sstream>

#include "mha/ffn.hpp"

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
  AppendFfnTensors(t, v);
  return v;
}

namespace {

// Formats like std::ostream's defaults (%g for floating point) into a stack buffer,
// then assigns into a string that keeps its capacity: rebuilding the table for a
// moved slider allocates nothing once the strings have grown to fit.
class Text {
 public:
  Text& operator<<(const char* s) { return Put("%s", s); }
  Text& operator<<(const std::string& s) { return Put("%s", s.c_str()); }
  Text& operator<<(int v) { return Put("%d", v); }
  Text& operator<<(long v) { return Put("%ld", v); }
  Text& operator<<(long long v) { return Put("%lld", v); }
  Text& operator<<(float v) { return Put("%g", static_cast<double>(v)); }
  Text& operator<<(double v) { return Put("%g", v); }
  void Into(std::string& out) const { out.assign(buf_, static_cast<std::size_t>(n_)); }

 private:
  template <class T>
  Text& Put(const char* fmt, T v) {
    if (n_ < kCap) {
      const int w = std::snprintf(buf_ + n_, static_cast<std::size_t>(kCap - n_), fmt, v);
      if (w > 0) n_ = std::min(kCap - 1, n_ + w);
    }
    return *this;
  }
  static constexpr int kCap = 256;
  char buf_[kCap];
  int n_ = 0;
};

template <class... P>
void Assign(std::string& out, const P&... parts) {
  Text t;
  (t << ... << parts);
  t.Into(out);
}

void Row(std::vector<FlowRow>& rows, std::size_t& i, const char* step, const char* formula,
         const char* tensor, std::initializer_list<std::int64_t> shape) {
  if (rows.size() <= i) {
    // Room for the longest text of this row under any setting, so moving a slider
    // (temperature, scaling, mask) never grows a string.
    rows.emplace_back();
    rows.back().step.reserve(32);
    rows.back().formula.reserve(48);
    rows.back().params.reserve(96);
  }
  FlowRow& r = rows[i++];
  r.step.assign(step);
  r.formula.assign(formula);
  r.tensor.assign(tensor);
  r.shape.assign(shape);
  r.params.clear();
  r.param_count = 0;
  r.flops = 0;
}

}  // namespace

void ShapeFlowInto(const Config& cfg, int seq_i, int seq_kv_i, std::vector<FlowRow>& rows) {
  const std::int64_t s = seq_i, skv = seq_kv_i, d = cfg.d_model, H = cfg.num_heads,
                     G = cfg.kv_heads(), hd = cfg.head_dim(), kvd = G * hd;
  std::size_t i = 0;
  auto last = [&]() -> FlowRow& { return rows[i - 1]; };
  Row(rows, i, "input", cfg.positional_encoding ? "x = embed(tokens) + PE" : "x = embed(tokens)", "x",
      {1, s, d});
  Assign(last().params, "seq = ", s, ", d_model = ", d,
         cfg.positional_encoding ? ", sinusoidal PE" : ", no PE");
  last().flops = cfg.positional_encoding ? s * d : 0;
  if (cfg.norm == Norm::Pre) {
    Row(rows, i, "pre-LayerNorm", "x_ln = LN(x)", "x_ln", {1, s, d});
    Assign(last().params, "gamma, beta (", d, "), eps ", cfg.ln_eps);
    last().param_count = 2 * d;
    last().flops = 8 * s * d;
  }
  Row(rows, i, "Q projection",
      cfg.norm == Norm::Pre ? "Q = x_ln W_Q + b_Q" : "Q = x W_Q + b_Q", "q", {1, s, d});
  Assign(last().params, "W_Q (", d, ", ", d, "), b_Q (", d, ")");
  last().param_count = d * d + d;
  last().flops = 2 * s * d * d + s * d;
  Row(rows, i, "K projection", "K = m W_K + b_K", "k", {1, skv, kvd});
  Assign(last().params, "W_K (", d, ", ", kvd, "), b_K (", kvd, ")");
  last().param_count = d * kvd + kvd;
  last().flops = 2 * skv * d * kvd + skv * kvd;
  Row(rows, i, "V projection", "V = m W_V + b_V", "v", {1, skv, kvd});
  Assign(last().params, "W_V (", d, ", ", kvd, "), b_V (", kvd, ")");
  last().param_count = d * kvd + kvd;
  last().flops = 2 * skv * d * kvd + skv * kvd;
  Row(rows, i, "split heads", "reshape + transpose", "q", {1, H, s, hd});
  if (G == H) Assign(last().params, H, " heads x head_dim ", hd, " (K, V alike)");
  else Assign(last().params, H, " query heads, ", G, " K/V heads x head_dim ", hd);
  Row(rows, i, "scores", cfg.scale ? "Q K^T / sqrt(d_k)" : "Q K^T", "scores", {1, H, s, skv});
  {
    Text t;
    if (cfg.scale) t << "/ sqrt(d_k) = / sqrt(" << hd << ")";
    else t << "no scaling";
    if (cfg.temperature != 1.0f) t << ", / T = " << cfg.temperature;
    if (cfg.mask == Mask::Causal) t << ", causal mask";
    t.Into(last().params);
  }
  last().flops = 2 * H * s * skv * hd + H * s * skv;
  Row(rows, i, "softmax", "attn = softmax(scores)", "attn", {1, H, s, skv});
  Assign(last().params, "over the ", skv, " keys of each row");
  last().flops = 5 * H * s * skv;
  Row(rows, i, "context", "attn V", "context", {1, H, s, hd});
  Assign(last().params, "weighted sum of ", skv, " value rows");
  last().flops = 2 * H * s * skv * hd;
  Row(rows, i, "concat", "concat(head_1..head_h)", "concat", {1, s, d});
  Assign(last().params, H, " x ", hd, " = ", d);
  Row(rows, i, "output projection", "concat W_O + b_O", "attn_out", {1, s, d});
  Assign(last().params, "W_O (", d, ", ", d, "), b_O (", d, ")");
  last().param_count = d * d + d;
  last().flops = 2 * s * d * d + s * d;
  switch (cfg.norm) {
    case Norm::Post:
      Row(rows, i, "residual + LayerNorm", "out = LN(x + attn_out)", "out", {1, s, d});
      Assign(last().params, "post-LN: gamma, beta (", d, "), eps ", cfg.ln_eps);
      last().param_count = 2 * d;
      last().flops = s * d + 8 * s * d;
      break;
    case Norm::Pre:
      Row(rows, i, "residual", "out = x + attn_out", "out", {1, s, d});
      last().params.assign("pre-LN: the norm came before attention");
      last().flops = s * d;
      break;
    case Norm::None:
      Row(rows, i, "residual", "out = x + attn_out", "out", {1, s, d});
      last().params.assign("no LayerNorm");
      last().flops = s * d;
      break;
  }
  if (cfg.block == Block::Encoder) {
    // The encoder block's rows, the same as AppendFfnFlow (mha/ffn.hpp) gives but built
    // in place (a test keeps the two identical).
    const std::int64_t f = cfg.ffn_dim();
    const bool gelu = cfg.activation == Activation::Gelu;
    const std::int64_t act_flops = gelu ? 8 : 1;  // ffn.cpp: kGeluFlops, kReluFlops
    if (cfg.norm == Norm::Pre) {
      Row(rows, i, "pre-LayerNorm 2", "ffn_ln = LN2(out)", "ffn_ln", {1, s, d});
      Assign(last().params, "gamma2, beta2 (", d, "), eps ", cfg.ln_eps);
      last().param_count = 2 * d;
      last().flops = 8 * s * d;
    }
    Row(rows, i, gelu ? "FFN expand + GELU" : "FFN expand + ReLU", "", "ffn_hidden", {1, s, f});
    Assign(last().formula, "ffn_hidden = ", gelu ? "gelu" : "relu", "(",
           cfg.norm == Norm::Pre ? "ffn_ln" : "out", " W1 + b1)");
    Assign(last().params, "W1 (", d, ", ", f, "), b1 (", f, "), d_ff = ", f);
    last().param_count = d * f + f;
    last().flops = 2 * s * d * f + s * f + act_flops * s * f;
    Row(rows, i, "FFN contract", "ffn_out = ffn_hidden W2 + b2", "ffn_out", {1, s, d});
    Assign(last().params, "W2 (", f, ", ", d, "), b2 (", d, ")");
    last().param_count = f * d + d;
    last().flops = 2 * s * f * d + s * d;
    switch (cfg.norm) {
      case Norm::Post:
        Row(rows, i, "residual + LayerNorm 2", "block_out = LN2(out + ffn_out)", "block_out", {1, s, d});
        Assign(last().params, "post-LN: gamma2, beta2 (", d, "), eps ", cfg.ln_eps);
        last().param_count = 2 * d;
        last().flops = s * d + 8 * s * d;
        break;
      case Norm::Pre:
        Row(rows, i, "residual 2", "block_out = out + ffn_out", "block_out", {1, s, d});
        last().params.assign("pre-LN: the norm came before the FFN");
        last().flops = s * d;
        break;
      case Norm::None:
        Row(rows, i, "residual 2", "block_out = out + ffn_out", "block_out", {1, s, d});
        last().params.assign("no LayerNorm");
        last().flops = s * d;
        break;
    }
  }
  rows.resize(i);
}

std::vector<FlowRow> ShapeFlow(const Config& cfg, int seq, int seq_kv) {
  std::vector<FlowRow> rows;
  ShapeFlowInto(cfg, seq, seq_kv, rows);
  return rows;
}

}  // namespace mha
