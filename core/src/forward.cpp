#include "mha/forward.hpp"

#include <cmath>
#include <limits>

#include "mha/embed.hpp"
#include "mha/ffn.hpp"
#include "mha/tokenizer.hpp"

namespace mha {

void SoftmaxRow(float* row, int n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < n; ++j) m = std::max(m, row[j]);
  if (m == -std::numeric_limits<float>::infinity()) {
    // Every key is masked: there is nothing to attend to. Zeros, not 0/0 = NaN.
    for (int j = 0; j < n; ++j) row[j] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - m);  // max-subtraction: the largest term is exp(0) = 1
    sum += row[j];
  }
  const float inv = 1.0f / sum;
  for (int j = 0; j < n; ++j) row[j] *= inv;
}

void LayerNormRows(const Mat& in, const RowVec& gamma, const RowVec& beta, float eps,
                   Mat& out) {
  out.resize(in.rows(), in.cols());
  const Eigen::Index d = in.cols();
  for (Eigen::Index r = 0; r < in.rows(); ++r) {
    // Two-pass mean/variance in double: cancellation-free for any input scale.
    double mean = 0.0;
    for (Eigen::Index c = 0; c < d; ++c) mean += in(r, c);
    mean /= d;
    double var = 0.0;
    for (Eigen::Index c = 0; c < d; ++c) {
      const double t = in(r, c) - mean;
      var += t * t;
    }
    var /= d;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (Eigen::Index c = 0; c < d; ++c)
      out(r, c) = static_cast<float>((in(r, c) - mean) * inv) * gamma[c] + beta[c];
  }
}

namespace {

void CheckInputs(const Config& cfg, const Inputs& in) {
  if (in.x.cols() != cfg.d_model) {
    throw Error("The input x has " + std::to_string(in.x.cols()) +
                " columns but d_model = " + std::to_string(cfg.d_model) +
                ": every token vector must have d_model numbers.");
  }
  if (in.cross() && in.memory.cols() != cfg.d_model) {
    throw Error("The memory has " + std::to_string(in.memory.cols()) +
                " columns but d_model = " + std::to_string(cfg.d_model) +
                ": queries and keys must live in the same d_model-dimensional space.");
  }
  if (in.cross() && cfg.mask == Mask::Causal) {
    throw Error(
        "A causal mask hides later positions of the same sequence, but in cross-attention the "
        "keys come from another sentence (the memory), so there is no 'later' to hide. Use mask "
        "none with a memory sentence, or drop the memory for causal self-attention.");
  }
  // |value| <= kMaxAbsValue (false for NaN too) is what guarantees no overflow later.
  const auto in_range = [](const Mat& m) { return (m.array().abs() <= Limits::kMaxAbsValue).all(); };
  if (!in_range(in.x) || (in.cross() && !in_range(in.memory))) {
    const bool finite = in.x.allFinite() && (!in.cross() || in.memory.allFinite());
    throw Error(finite ? "The input holds values larger than " + std::to_string(int(Limits::kMaxAbsValue)) +
                             " in magnitude; such values overflow float32 inside attention. Scale the input down."
                       : std::string("The input contains NaN or Inf values; every input number must be finite."));
  }
}

}  // namespace

void Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in,
             Trace& t) {
  const int seq = static_cast<int>(in.x.rows());
  const int seq_kv = in.cross() ? static_cast<int>(in.memory.rows()) : seq;
  Validate(cfg, seq, seq_kv);
  CheckInputs(cfg, in);
  if (!weights) throw Error("No weights were given to the forward pass.");
  if (t.weights != weights) CheckWeights(*weights, cfg);
  const Weights& w = *weights;

  const int d = cfg.d_model, H = cfg.num_heads, G = cfg.kv_heads(), hd = cfg.head_dim();
  const int group = H / G;
  t.cfg = cfg;
  t.in = in;
  t.weights = std::move(weights);
  t.seq = seq;
  t.seq_kv = seq_kv;

  // Pre-LN normalises the sublayer's input; post-LN normalises after the residual.
  const Mat* src = &in.x;
  if (cfg.norm == Norm::Pre) {
    LayerNormRows(in.x, w.ln_gamma, w.ln_beta, cfg.ln_eps, t.x_ln);
    src = &t.x_ln;
  } else {
    t.x_ln.resize(0, 0);
  }
  const Mat& mem = in.cross() ? in.memory : *src;

  // Projections in the row-vector convention: Q = x W_Q + b_Q.
  Mat Q = *src * w.W_q;
  Q.rowwise() += w.b_q;
  Mat K = mem * w.W_k;
  K.rowwise() += w.b_k;
  Mat V = mem * w.W_v;
  V.rowwise() += w.b_v;

  // Split: columns [h*hd, (h+1)*hd) of Q are head h -> rows [h*seq, (h+1)*seq) of q.
  t.q.resize(H * seq, hd);
  for (int h = 0; h < H; ++h) t.q.middleRows(h * seq, seq) = Q.middleCols(h * hd, hd);
  t.k.resize(G * seq_kv, hd);
  t.v.resize(G * seq_kv, hd);
  for (int g = 0; g < G; ++g) {
    t.k.middleRows(g * seq_kv, seq_kv) = K.middleCols(g * hd, hd);
    t.v.middleRows(g * seq_kv, seq_kv) = V.middleCols(g * hd, hd);
  }

  const float scale =
      (cfg.scale ? 1.0f / std::sqrt(static_cast<float>(hd)) : 1.0f) / cfg.temperature;
  t.scores.resize(H * seq, seq_kv);
  t.attn.resize(H * seq, seq_kv);
  t.context.resize(H * seq, hd);
  t.concat.resize(seq, d);
  for (int h = 0; h < H; ++h) {
    const int g = h / group;
    auto qh = t.q.middleRows(h * seq, seq);
    auto kh = t.k.middleRows(g * seq_kv, seq_kv);
    auto vh = t.v.middleRows(g * seq_kv, seq_kv);
    auto sh = t.scores.middleRows(h * seq, seq);
    sh.noalias() = (qh * kh.transpose()) * scale;
    if (cfg.mask == Mask::Causal) {
      for (int i = 0; i < seq; ++i)
        for (int j = i + 1; j < seq_kv; ++j) sh(i, j) = -std::numeric_limits<float>::infinity();
    }
    auto ah = t.attn.middleRows(h * seq, seq);
    ah = sh;
    for (int i = 0; i < seq; ++i) SoftmaxRow(&ah(i, 0), seq_kv);
    auto ch = t.context.middleRows(h * seq, seq);
    ch.noalias() = ah * vh;
    t.concat.middleCols(h * hd, hd) = ch;  // concat: heads side by side again
  }

  t.attn_out.noalias() = t.concat * w.W_o;
  t.attn_out.rowwise() += w.b_o;
  t.residual = in.x + t.attn_out;
  if (cfg.norm == Norm::Post)
    LayerNormRows(t.residual, w.ln_gamma, w.ln_beta, cfg.ln_eps, t.out);
  else
    t.out = t.residual;

  t.flow = ShapeFlow(cfg, seq, seq_kv);
  ForwardFfn(cfg, w, t);  // encoder block: the FFN sublayer after attention (ffn.cpp)
}

Trace Forward(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in) {
  Trace t;
  Forward(cfg, std::move(weights), in, t);
  return t;
}

Inputs MakeInputs(const std::string& sentence, const std::string& memory_sentence,
                  const Config& cfg, std::string* notice) {
  Inputs in;
  const Tokenized tq = Tokenize(sentence, Limits::kMaxTokens);
  std::string note = TokenizeNotice(tq, Limits::kMaxTokens);
  if (tq.tokens.empty())
    throw Error("The sentence is empty: type at least one word, e.g. \"the cat sat on the mat\".");
  for (const auto& tok : tq.tokens) in.tokens.push_back(tok.text);
  if (!memory_sentence.empty()) {
    const Tokenized tm = Tokenize(memory_sentence, Limits::kMaxTokens);
    const std::string mnote = TokenizeNotice(tm, Limits::kMaxTokens);
    if (!mnote.empty()) note += (note.empty() ? "Memory: " : " Memory: ") + mnote;
    if (tm.tokens.empty())
      throw Error("The memory sentence has no tokens: cross-attention needs at least one key. "
                  "Leave it empty for self-attention.");
    for (const auto& tok : tm.tokens) in.memory_tokens.push_back(tok.text);
  }
  Validate(cfg, static_cast<int>(in.tokens.size()),
           in.memory_tokens.empty() ? static_cast<int>(in.tokens.size())
                                    : static_cast<int>(in.memory_tokens.size()));
  in.x = Embed(in.tokens, cfg);
  if (!in.memory_tokens.empty()) in.memory = Embed(in.memory_tokens, cfg);
  if (notice) *notice = note;
  return in;
}

}  // namespace mha
