#include "mha/trace.hpp"
#include "mha/flash.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <sstream>

namespace mha {

std::int64_t TensorView::size() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

Eigen::Map<const Mat> Trace::AttnHead(int h, int b) const {
  return Eigen::Map<const Mat>(attn.data() + (std::int64_t(b) * cfg.num_heads + h) * seq * seq_kv, seq, seq_kv);
}
Eigen::Map<const Mat> Trace::ScoresHead(int h, int b) const {
  return Eigen::Map<const Mat>(scores.data() + (std::int64_t(b) * cfg.num_heads + h) * seq * seq_kv, seq, seq_kv);
}

std::string ShapeString(const std::vector<std::int64_t>& shape) {
  std::ostringstream os;
  os << "(";
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) os << ",";
  os << ")";
  return os.str();
}

namespace {

// The weights of one sublayer (attention with its LayerNorm, or the encoder block's
// FFN with LN2) under their .npz names, in ForEachWeight's order.
void AppendWeights(const Trace& t, bool ffn, std::vector<TensorView>& v) {
  if (!t.weights) return;
  ForEachWeight(*t.weights, t.cfg, [&](const WeightSpec& s, const auto& m) {
    if (s.ffn != ffn) return;
    v.push_back(
        {s.name, s.vector ? std::vector<std::int64_t>{s.cols} : std::vector<std::int64_t>{s.rows, s.cols}, m.data()});
  });
}

// The encoder block's weights, then ffn_ln (pre-LN only), ffn_hidden, ffn_out,
// ffn_residual, block_out. Nothing for attention only.
void AppendFfnTensors(const Trace& t, std::vector<TensorView>& v) {
  if (t.cfg.block != Block::Encoder || t.block_out.size() == 0) return;
  using S = std::vector<std::int64_t>;
  const std::int64_t b = t.batch, s = t.seq, d = t.cfg.d_model, f = t.cfg.ffn_dim();
  AppendWeights(t, /*ffn=*/true, v);
  if (t.ffn_ln.size() > 0) v.push_back({"ffn_ln", S{b, s, d}, t.ffn_ln.data()});
  v.push_back({"ffn_hidden", S{b, s, f}, t.ffn_hidden.data()});
  v.push_back({"ffn_out", S{b, s, d}, t.ffn_out.data()});
  v.push_back({"ffn_residual", S{b, s, d}, t.ffn_residual.data()});
  v.push_back({"block_out", S{b, s, d}, t.block_out.data()});
}

}  // namespace

std::vector<TensorView> Tensors(const Trace& t) {
  using S = std::vector<std::int64_t>;
  const std::int64_t b = t.batch, s = t.seq, skv = t.seq_kv, d = t.cfg.d_model, H = t.cfg.num_heads,
                     G = t.cfg.kv_heads(), hd = t.cfg.head_dim();
  std::vector<TensorView> v;
  v.push_back({"x", S{b, s, d}, t.in.x.data()});
  if (t.in.cross()) v.push_back({"memory", S{b, skv, d}, t.in.memory.data()});
  AppendWeights(t, /*ffn=*/false, v);
  v.push_back({"ln_eps", S{}, &t.cfg.ln_eps});
  if (t.x_ln.size() > 0) v.push_back({"x_ln", S{b, s, d}, t.x_ln.data()});
  v.push_back({"q", S{b, H, s, hd}, t.q.data()});
  v.push_back({"k", S{b, G, skv, hd}, t.k.data()});
  v.push_back({"v", S{b, G, skv, hd}, t.v.data()});
  if (t.cfg.attention == Attention::Standard) {  // Flash keeps no seq x seq_kv tensor
    v.push_back({"scores", S{b, H, s, skv}, t.scores.data()});
    v.push_back({"attn", S{b, H, s, skv}, t.attn.data()});
  }
  v.push_back({"context", S{b, H, s, hd}, t.context.data()});
  v.push_back({"concat", S{b, s, d}, t.concat.data()});
  v.push_back({"attn_out", S{b, s, d}, t.attn_out.data()});
  // Left empty by ForwardAttention (the sublayer alone).
  if (t.residual.size() > 0) v.push_back({"residual", S{b, s, d}, t.residual.data()});
  if (t.out.size() > 0) v.push_back({"out", S{b, s, d}, t.out.data()});
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

// FLOPs counted per activated element. ReLU is one comparison. GELU is x / sqrt 2,
// erf (a short polynomial, counted as 4), 1 +, * 0.5 and * x: 8. Conventions differ;
// what matters for the lesson is that both are tiny next to the two matrix products.
constexpr std::int64_t kReluFlops = 1;
constexpr std::int64_t kGeluFlops = 8;

// Rows are rebuilt in place: row i keeps its strings' memory from the last build.
struct Rows {
  std::vector<FlowRow>& rows;
  std::size_t i = 0;

  FlowRow& Add(StepId id, const char* step, const char* formula, const char* tensor,
               std::initializer_list<std::int64_t> shape) {
    if (rows.size() <= i) {
      // Room for the longest text of this row under any setting, so moving a slider
      // (temperature, scaling, mask) never grows a string.
      rows.emplace_back();
      rows.back().step.reserve(32);
      rows.back().formula.reserve(48);
      rows.back().params.reserve(96);
    }
    FlowRow& r = rows[i++];
    r.id = id;
    r.step.assign(step);
    r.formula.assign(formula);
    r.tensor.assign(tensor);
    r.shape.assign(shape);
    r.params.clear();
    r.param_count = 0;
    r.flops = 0;
    return r;
  }
};

// The attention sublayer, from the input to the residual after W_O.
// Q reads x (x_ln under pre-LN); K and V read the same for self-attention and the
// memory m for cross-attention (not normalised), so the table writes m only there,
// where it says what m is.
void AttentionRows(const Config& cfg, std::int64_t s, std::int64_t skv, bool cross, Rows& rows) {
  const bool pre = cfg.norm == Norm::Pre;
  const std::int64_t d = cfg.d_model, H = cfg.num_heads, G = cfg.kv_heads(), hd = cfg.head_dim(), kvd = G * hd;
  FlowRow* r = &rows.Add(StepId::Input, "input",
                         cfg.positional_encoding ? "x = embed(tokens) + PE" : "x = embed(tokens)", "x", {1, s, d});
  Assign(r->params, "seq = ", s, ", d_model = ", d, cfg.positional_encoding ? ", sinusoidal PE" : ", no PE");
  r->flops = cfg.positional_encoding ? s * d : 0;
  if (cfg.norm == Norm::Pre) {
    r = &rows.Add(StepId::PreNorm, "pre-LayerNorm", "x_ln = LN(x)", "x_ln", {1, s, d});
    Assign(r->params, "gamma, beta (", d, "), eps ", cfg.ln_eps);
    r->param_count = 2 * d;
    r->flops = 8 * s * d;
  }
  r = &rows.Add(StepId::QProj, "Q projection", cfg.norm == Norm::Pre ? "Q = x_ln W_Q + b_Q" : "Q = x W_Q + b_Q", "q",
                {1, s, d});
  Assign(r->params, "W_Q (", d, ", ", d, "), b_Q (", d, ")");
  r->param_count = d * d + d;
  r->flops = 2 * s * d * d + s * d;
  r = &rows.Add(StepId::KProj, "K projection",
                cross ? "K = m W_K + b_K, m = memory"
                : pre ? "K = x_ln W_K + b_K"
                      : "K = x W_K + b_K",
                "k", {1, skv, kvd});
  Assign(r->params, "W_K (", d, ", ", kvd, "), b_K (", kvd, ")");
  r->param_count = d * kvd + kvd;
  r->flops = 2 * skv * d * kvd + skv * kvd;
  r = &rows.Add(StepId::VProj, "V projection",
                cross ? "V = m W_V + b_V, m = memory"
                : pre ? "V = x_ln W_V + b_V"
                      : "V = x W_V + b_V",
                "v", {1, skv, kvd});
  Assign(r->params, "W_V (", d, ", ", kvd, "), b_V (", kvd, ")");
  r->param_count = d * kvd + kvd;
  r->flops = 2 * skv * d * kvd + skv * kvd;
  r = &rows.Add(StepId::SplitHeads, "split heads", "reshape + transpose", "q", {1, H, s, hd});
  if (G == H)
    Assign(r->params, H, H == 1 ? " head x head_dim " : " heads x head_dim ", hd, " (K, V alike)");
  else
    Assign(r->params, H, " query heads, ", G, G == 1 ? " K/V head x head_dim " : " K/V heads x head_dim ", hd);
  // Flash computes the same numbers one Br x Bc tile at a time and keeps none of them:
  // the rows say so, and name no tensor of the trace.
  const bool flash = cfg.attention == Attention::Flash;
  r = &rows.Add(StepId::Scores, flash ? "scores, tile by tile" : "scores", cfg.scale ? "Q K^T / sqrt(d_k)" : "Q K^T",
                flash ? "" : "scores", {1, H, s, skv});
  {
    Text t;
    if (cfg.scale)
      t << "/ sqrt(d_k) = / sqrt(" << hd << ")";
    else
      t << "no scaling";
    if (cfg.temperature != 1.0f) t << ", / T = " << cfg.temperature;
    if (cfg.mask == Mask::Causal) t << ", causal mask";
    if (flash) t << "; Flash: " << FlashBr(cfg) << " x " << FlashBc(cfg) << " tiles, not kept";
    t.Into(r->params);
  }
  r->flops = 2 * H * s * skv * hd + H * s * skv;
  if (flash) {
    r = &rows.Add(StepId::Softmax, "online softmax", "m, l per row; O = rescaled sum of exp(S - m) V", "",
                  {1, H, s, skv});
    Assign(r->params, "over the ", skv, " keys of each row, tile by tile; attn not kept");
  } else {
    r = &rows.Add(StepId::Softmax, "softmax", "attn = softmax(scores)", "attn", {1, H, s, skv});
    Assign(r->params, "over the ", skv, " keys of each row");
  }
  r->flops = 5 * H * s * skv;
  r = &rows.Add(StepId::Context, "context", flash ? "O / l" : "attn V", "context", {1, H, s, hd});
  Assign(r->params, "weighted sum of ", skv, " value rows");
  r->flops = 2 * H * s * skv * hd;
  r = &rows.Add(StepId::Concat, "concat", "concat(head_1..head_h)", "concat", {1, s, d});
  Assign(r->params, H, " x ", hd, " = ", d);
  r = &rows.Add(StepId::OutProj, "output projection", "concat W_O + b_O", "attn_out", {1, s, d});
  Assign(r->params, "W_O (", d, ", ", d, "), b_O (", d, ")");
  r->param_count = d * d + d;
  r->flops = 2 * s * d * d + s * d;
  switch (cfg.norm) {
    case Norm::Post:
      r = &rows.Add(StepId::Residual, "residual + LayerNorm", "out = LN(x + attn_out)", "out", {1, s, d});
      Assign(r->params, "post-LN: gamma, beta (", d, "), eps ", cfg.ln_eps);
      r->param_count = 2 * d;
      r->flops = s * d + 8 * s * d;
      break;
    case Norm::Pre:
      r = &rows.Add(StepId::Residual, "residual", "out = x + attn_out", "out", {1, s, d});
      r->params.assign("pre-LN: the norm came before attention");
      r->flops = s * d;
      break;
    case Norm::None:
      r = &rows.Add(StepId::Residual, "residual", "out = x + attn_out", "out", {1, s, d});
      r->params.assign("no LayerNorm");
      r->flops = s * d;
      break;
  }
}

// The encoder block's feed-forward sublayer after `out` (mha/ffn.hpp has the formulas).
void FfnRows(const Config& cfg, std::int64_t s, Rows& rows) {
  const std::int64_t d = cfg.d_model, f = cfg.ffn_dim();
  const bool gelu = cfg.activation == Activation::Gelu;
  const std::int64_t act_flops = gelu ? kGeluFlops : kReluFlops;
  FlowRow* r;
  if (cfg.norm == Norm::Pre) {
    r = &rows.Add(StepId::FfnPreNorm, "pre-LayerNorm 2", "ffn_ln = LN2(out)", "ffn_ln", {1, s, d});
    Assign(r->params, "gamma2, beta2 (", d, "), eps ", cfg.ln_eps);
    r->param_count = 2 * d;
    r->flops = 8 * s * d;
  }
  r = &rows.Add(StepId::FfnUp, gelu ? "FFN expand + GELU" : "FFN expand + ReLU", "", "ffn_hidden", {1, s, f});
  Assign(r->formula, "ffn_hidden = ", gelu ? "gelu" : "relu", "(", cfg.norm == Norm::Pre ? "ffn_ln" : "out",
         " W1 + b1)");
  Assign(r->params, "W1 (", d, ", ", f, "), b1 (", f, "), d_ff = ", f);
  r->param_count = d * f + f;
  r->flops = 2 * s * d * f + s * f + act_flops * s * f;
  r = &rows.Add(StepId::FfnDown, "FFN contract", "ffn_out = ffn_hidden W2 + b2", "ffn_out", {1, s, d});
  Assign(r->params, "W2 (", f, ", ", d, "), b2 (", d, ")");
  r->param_count = f * d + d;
  r->flops = 2 * s * f * d + s * d;
  switch (cfg.norm) {
    case Norm::Post:
      r = &rows.Add(StepId::FfnResidual, "residual + LayerNorm 2", "block_out = LN2(out + ffn_out)", "block_out",
                    {1, s, d});
      Assign(r->params, "post-LN: gamma2, beta2 (", d, "), eps ", cfg.ln_eps);
      r->param_count = 2 * d;
      r->flops = s * d + 8 * s * d;
      break;
    case Norm::Pre:
      r = &rows.Add(StepId::FfnResidual, "residual 2", "block_out = out + ffn_out", "block_out", {1, s, d});
      r->params.assign("pre-LN: the norm came before the FFN");
      r->flops = s * d;
      break;
    case Norm::None:
      r = &rows.Add(StepId::FfnResidual, "residual 2", "block_out = out + ffn_out", "block_out", {1, s, d});
      r->params.assign("no LayerNorm");
      r->flops = s * d;
      break;
  }
}

}  // namespace

void ShapeFlowInto(const Config& cfg, int seq, int seq_kv, std::vector<FlowRow>& rows, bool cross) {
  Rows r{rows};
  AttentionRows(cfg, seq, seq_kv, cross, r);
  if (cfg.block == Block::Encoder) FfnRows(cfg, seq, r);
  rows.resize(r.i);
}

std::vector<FlowRow> ShapeFlow(const Config& cfg, int seq, int seq_kv, bool cross) {
  std::vector<FlowRow> rows;
  ShapeFlowInto(cfg, seq, seq_kv, rows, cross);
  return rows;
}

int FindStep(const std::vector<FlowRow>& rows, StepId id) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].id == id) return static_cast<int>(i);
  return -1;
}

}  // namespace mha
