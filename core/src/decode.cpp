// Incremental decoding with a KV cache (mha/decode.hpp): the forward pass's kernels on
// one row, in the order forward.cpp and forward_ffn.cpp run them on every row.
#include "mha/decode.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "gemm.hpp"
#include "mha/embed.hpp"
#include "mha/ffn.hpp"
#include "mha/forward.hpp"
#include "rng.hpp"
#include "row_gemm.hpp"
#include "rows.hpp"

namespace mha {
namespace {

using detail::kNR;

int Panels(int n) { return (n + kNR - 1) / kNR; }

// One row times a weight matrix: the forward pass's kernel on one row (row_gemm.hpp).
void RowTimes(const float* a, int k, const Mat& B, const RowVec& bias, float* out, float* pack) {
  detail::RowsTimes(a, 1, k, B, bias, out, pack);
}

void CheckToken(const ModelConfig& c, int token, int position) {
  if (token < 0 || token >= c.vocab_size())
    throw Error("Token id " + std::to_string(token) + " at position " + std::to_string(position) +
                " is outside the model's vocabulary of " + std::to_string(c.vocab_size()) + " tokens (ids 0 to " +
                std::to_string(c.vocab_size() - 1) + ").");
}

}  // namespace

Eigen::Map<const Mat> KvCache::K(int layer, int g) const {
  return Eigen::Map<const Mat>(k[static_cast<std::size_t>(layer)].data() + std::ptrdiff_t(g) * capacity * head_dim, n,
                               head_dim);
}

Eigen::Map<const Mat> KvCache::V(int layer, int g) const {
  return Eigen::Map<const Mat>(v[static_cast<std::size_t>(layer)].data() + std::ptrdiff_t(g) * capacity * head_dim, n,
                               head_dim);
}

StepFlops DecodeFlops(const ModelConfig& cfg, int n) {
  const Config c = cfg.LayerConfig();
  const double d = c.d_model, kvd = double(c.kv_heads()) * c.head_dim(), H = c.num_heads, hd = c.head_dim();
  const double f = c.block == Block::Encoder ? c.ffn_dim() : 0, V = cfg.vocab_size(), T = cfg.num_targets;
  const double L = cfg.num_layers, rows = n;
  const double per_row = 2 * d * d + 2 * 2 * d * kvd + 2 * d * d + 2 * 2 * d * f;  // q; k, v; W_O; W1, W2
  const double attend = 2 * 2 * H * hd;                                            // scores and context, per key
  StepFlops s;
  s.cached = L * (per_row + attend * rows) + T * 2 * d * V;
  s.full = L * (rows * per_row + attend * rows * (rows + 1) / 2) + rows * T * 2 * d * V;
  return s;
}

Decoder::Decoder(const Model& model) : model_(&model) {
  const ModelConfig& c = model.cfg;
  const Config lc = c.LayerConfig();
  if (lc.mask != Mask::Causal)
    throw Error(
        "Generation needs a causal model (mask causal): this one lets every token see the tokens after it, "
        "so a new piece would change every row before it and there is nothing to cache. Train with "
        "--mask causal, as the language model was.");
  if (model.layers.size() != static_cast<std::size_t>(c.num_layers) || model.unembed.empty())
    throw Error("The model is incomplete: it has no weights for some of its layers or no unembedding.");
  const int d = lc.d_model, G = lc.kv_heads(), hd = lc.head_dim(), cap = c.max_seq, f = lc.ffn_dim();
  cache_.num_layers = c.num_layers;
  cache_.kv_heads = G;
  cache_.head_dim = hd;
  cache_.capacity = cap;
  cache_.k.assign(static_cast<std::size_t>(c.num_layers), Mat::Zero(std::ptrdiff_t(G) * cap, hd));
  cache_.v = cache_.k;
  key_panels_ = Panels(cap);
  v_in_place_ = hd % kNR == 0 || hd <= simd::kWidth;  // as the forward pass decides
  kt_.assign(static_cast<std::size_t>(c.num_layers),
             std::vector<float>(std::size_t(G) * key_panels_ * detail::PanelFloats(hd), 0.0f));
  if (!v_in_place_)
    vp_.assign(static_cast<std::size_t>(c.num_layers),
               std::vector<float>(std::size_t(G) * Panels(hd) * detail::PanelFloats(cap), 0.0f));
  // Score and weight rows have room for whole vectors past the last key (AttentionRow).
  ld_ = (cap + 15) / 16 * 16 + 16;
  const std::size_t kvd = std::size_t(G) * hd;
  x_.resize(d);
  x_ln_.resize(d);
  q_.resize(d);
  k_.resize(kvd);
  v_.resize(kvd);
  s_.resize(ld_);
  a_.resize(ld_);
  context_.resize(d);
  attn_out_.resize(d);
  res_.resize(d);
  out_.resize(d);
  ffn_ln_.resize(d);
  hidden_.resize(f);
  ffn_out_.resize(d);
  pack_.resize(detail::PanelFloats(std::max(d, f)));
  head_.resize(1, d);
  step_.attn.resize(static_cast<std::size_t>(c.num_layers));
  if (c.positional == Positional::Sinusoidal) pe_ = PositionalEncoding(cap, d);
}

// Row `position` of every K/V head of layer `layer`: into the cache, into K^T's
// panel (column position % kNR of panel position / kNR), and into V's panels.
void Decoder::Append(int layer, const float* k_row, const float* v_row) {
  const int hd = cache_.head_dim, cap = cache_.capacity, pos = cache_.n;
  const std::size_t l = static_cast<std::size_t>(layer);
  const std::size_t kt_panel = detail::PanelFloats(hd), vp_panel = detail::PanelFloats(cap);
  const int phd = Panels(hd);
  for (int g = 0; g < cache_.kv_heads; ++g) {
    const float* kr = k_row + std::ptrdiff_t(g) * hd;
    const float* vr = v_row + std::ptrdiff_t(g) * hd;
    std::memcpy(cache_.k[l].data() + (std::ptrdiff_t(g) * cap + pos) * hd, kr, sizeof(float) * hd);
    std::memcpy(cache_.v[l].data() + (std::ptrdiff_t(g) * cap + pos) * hd, vr, sizeof(float) * hd);
    float* kt = kt_[l].data() + (std::size_t(g) * key_panels_ + pos / kNR) * kt_panel + pos % kNR;
    for (int p = 0; p < hd; ++p) kt[std::ptrdiff_t(p) * kNR] = kr[p];
    if (v_in_place_) continue;
    for (int q = 0; q < phd; ++q) {
      const int j0 = q * kNR, nc = std::min(kNR, hd - j0);
      float* vp = vp_[l].data() + (std::size_t(g) * phd + q) * vp_panel + std::size_t(pos) * kNR;
      std::memcpy(vp, vr + j0, sizeof(float) * nc);
    }
  }
}

const DecodeStep& Decoder::Prefill(const std::vector<int>& prompt) {
  const ModelConfig& c = model_->cfg;
  const int n0 = static_cast<int>(prompt.size());
  if (n0 < 1 || n0 > c.max_seq)
    throw Error("The model takes 1 to " + std::to_string(c.max_seq) + " tokens (its max_seq); got " +
                std::to_string(n0) + ".");
  for (int i = 0; i < n0; ++i) CheckToken(c, prompt[i], i);
  // Every piece but the last through the one forward pass, its K and V into the cache;
  // the last is read as a step, which gives its row's weights over the cache whatever
  // the pass kept (Flash attention keeps no attn) and its logits.
  ModelTrace prefill;
  const int head = n0 - 1;
  if (head > 0) RunModel(*model_, std::vector<int>(prompt.begin(), prompt.end() - 1), prefill);
  const Config lc = c.LayerConfig();
  const int G = lc.kv_heads(), hd = lc.head_dim();
  for (int l = 0; l < c.num_layers && head > 0; ++l) {
    const Trace& t = prefill.layers[static_cast<std::size_t>(l)];
    for (cache_.n = 0; cache_.n < head; ++cache_.n) {
      // The trace keeps head g's rows together, (kv_heads, seq, head_dim): gather row i.
      const int i = cache_.n;
      for (int g = 0; g < G; ++g) {
        std::memcpy(k_.data() + std::ptrdiff_t(g) * hd, t.k.data() + (std::ptrdiff_t(g) * head + i) * hd,
                    sizeof(float) * hd);
        std::memcpy(v_.data() + std::ptrdiff_t(g) * hd, t.v.data() + (std::ptrdiff_t(g) * head + i) * hd,
                    sizeof(float) * hd);
      }
      Append(l, k_.data(), v_.data());
    }
  }
  cache_.n = head;
  return Step(prompt.back());
}

// One layer on the new row x (d_model values), in place: x becomes the layer's output
// row. The numbered phases are forward.cpp's (Step::PreNorm ... Step::FfnFinish).
void Decoder::Layer(int layer, float* x) {
  const ModelConfig& mc = model_->cfg;
  const Config c = mc.LayerConfig();
  const Weights& w = *model_->layers[static_cast<std::size_t>(layer)];
  const int d = c.d_model, H = c.num_heads, hd = c.head_dim(), group = H / c.kv_heads(), cap = cache_.capacity;
  const int n = cache_.n + 1;  // keys after this row's are appended
  const float eps = c.ln_eps;
  const float scale = (c.scale ? 1.0f / std::sqrt(static_cast<float>(hd)) : 1.0f) / c.temperature;
  // PreNorm, Project.
  const float* src = x;
  if (c.norm == Norm::Pre) {
    detail::LayerNormRow(x, w.ln_gamma.data(), w.ln_beta.data(), d, eps, x_ln_.data());
    src = x_ln_.data();
  }
  RowTimes(src, d, w.W_q, w.b_q, q_.data(), pack_.data());
  RowTimes(src, d, w.W_k, w.b_k, k_.data(), pack_.data());
  RowTimes(src, d, w.W_v, w.b_v, v_.data(), pack_.data());
  // Pack: the new K and V rows join the cache.
  Append(layer, k_.data(), v_.data());
  // Attend: per query head, its scores over the n cached keys, softmax, attn V.
  const std::size_t l = static_cast<std::size_t>(layer);
  Mat& attn = step_.attn[l];
  attn.resize(H, n);
  const std::size_t kt_panel = detail::PanelFloats(hd), vp_panel = detail::PanelFloats(cap);
  const int phd = Panels(hd);
  for (int h = 0; h < H; ++h) {
    const int g = h / group;
    const float* qh = q_.data() + std::ptrdiff_t(h) * hd;
    for (int q = 0; q * kNR < n; ++q) {
      const int j0 = q * kNR, nc = std::min(kNR, n - j0);
      detail::Panel(1, hd, qh, hd, kt_[l].data() + (std::size_t(g) * key_panels_ + q) * kt_panel, kNR, s_.data() + j0,
                    ld_, nc, nullptr, scale);
    }
    detail::AttentionRow<false>(s_.data(), n, n, a_.data(), n, nullptr, attn.data() + std::ptrdiff_t(h) * n);
    for (int q = 0; q < phd; ++q) {
      const int j0 = q * kNR, nc = std::min(kNR, hd - j0);
      const float* b = v_in_place_ ? cache_.v[l].data() + std::ptrdiff_t(g) * cap * hd + j0
                                   : vp_[l].data() + (std::size_t(g) * phd + q) * vp_panel;
      detail::Panel(1, n, a_.data(), ld_, b, v_in_place_ ? hd : kNR, context_.data() + std::ptrdiff_t(h) * hd + j0, hd,
                    nc, nullptr, 1.0f);
    }
  }
  // Output (context is already concat: the heads side by side), Finish.
  RowTimes(context_.data(), d, w.W_o, w.b_o, attn_out_.data(), pack_.data());
  for (int i = 0; i < d; ++i) res_[i] = x[i] + attn_out_[i];
  if (c.norm == Norm::Post)
    detail::LayerNormRow(res_.data(), w.ln_gamma.data(), w.ln_beta.data(), d, eps, out_.data());
  else
    out_ = res_;
  if (c.block != Block::Encoder) {
    std::memcpy(x, out_.data(), sizeof(float) * d);
    return;
  }
  // FfnNorm, FfnUp, FfnDown, FfnFinish.
  const float* in = out_.data();
  if (c.norm == Norm::Pre) {
    detail::LayerNormRow(out_.data(), w.ln2_gamma.data(), w.ln2_beta.data(), d, eps, ffn_ln_.data());
    in = ffn_ln_.data();
  }
  RowTimes(in, d, w.ffn_W1, w.ffn_b1, hidden_.data(), pack_.data());
  for (float& h : hidden_) h = Activate(c.activation, h);
  RowTimes(hidden_.data(), c.ffn_dim(), w.ffn_W2, w.ffn_b2, ffn_out_.data(), pack_.data());
  for (int i = 0; i < d; ++i) ffn_out_[i] = out_[i] + ffn_out_[i];
  if (c.norm == Norm::Post)
    detail::LayerNormRow(ffn_out_.data(), w.ln2_gamma.data(), w.ln2_beta.data(), d, eps, x);
  else
    std::memcpy(x, ffn_out_.data(), sizeof(float) * d);
}

const DecodeStep& Decoder::Step(int token) {
  const ModelConfig& c = model_->cfg;
  const int pos = cache_.n, d = c.layer.d_model;
  if (pos >= c.max_seq)
    throw Error("The model reads at most " + std::to_string(c.max_seq) +
                " pieces (its context, max_seq), and the cache already holds them all: it has no position " +
                std::to_string(pos) + " to put another piece at.");
  CheckToken(c, token, pos);
  // x_0 of the new row: its embedding plus its position's, as EmbedTokens adds them.
  const float* e = model_->tok_embed.data() + std::ptrdiff_t(token) * d;
  std::copy(e, e + d, x_.begin());
  if (c.positional == Positional::Learned)
    for (int i = 0; i < d; ++i) x_[i] += model_->pos_embed(pos, i);
  else if (c.positional == Positional::Sinusoidal)
    for (int i = 0; i < d; ++i) x_[i] += pe_(pos, i);
  for (int l = 0; l < c.num_layers; ++l) Layer(l, x_.data());
  // What the unembedding reads: LN_f of the last layer's row for pre-LN, else the row;
  // then the product on RunModel's kernel.
  if (c.layer.norm == Norm::Pre)
    detail::LayerNormRow(x_.data(), model_->lnf_gamma.data(), model_->lnf_beta.data(), d, c.layer.ln_eps, head_.data());
  else
    std::memcpy(head_.data(), x_.data(), sizeof(float) * d);
  logits_.resize(1, c.vocab_size());
  RowTimes(head_.data(), d, model_->unembed[0], model_->unembed_b[0], logits_.data(), pack_.data());
  if (!logits_.allFinite())
    throw Error("The model's logits overflowed float32 (Inf or NaN) at position " + std::to_string(pos) +
                ": its weights are too large to generate with. Use a trained checkpoint.");
  ++cache_.n;
  step_.position = pos;
  step_.token = token;
  step_.logits = logits_.row(0);
  return step_;
}

void CheckSampling(const Sampling& s, int vocab) {
  if (!std::isfinite(s.temperature) || s.temperature < 0)
    throw Error(
        "The sampling temperature must be a positive number (softmax(logits / T): below 1 sharper, above 1 "
        "flatter) or 0 for greedy decoding; got " +
        std::to_string(s.temperature) + ".");
  if (s.top_k < 0 || s.top_k > vocab)
    throw Error("top-k = " + std::to_string(s.top_k) + " is outside 1.." + std::to_string(vocab) +
                " (the model's vocabulary): it keeps the k likeliest pieces to draw from. Try 40.");
  if (s.no_repeat_ngram < 0 || s.no_repeat_ngram > kMaxNoRepeatNgram)
    throw Error("no-repeat n-gram = " + std::to_string(s.no_repeat_ngram) + " is outside 0.." +
                std::to_string(kMaxNoRepeatNgram) + ": n pieces in a row may not repeat (0 turns it off). Try 3 or 4.");
}

int BlockRepeatedNgrams(const std::vector<int>& ids, int n, float* logits, int vocab) {
  const int len = static_cast<int>(ids.size());
  if (n <= 0 || len < n - 1) return 0;
  // The run so far is ids[len - n + 1 .. len - 1]; wherever it occurred before, the piece
  // that followed it would repeat the whole n-gram.
  const int* tail = ids.data() + len - (n - 1);
  int blocked = 0;
  for (int start = 0; start + n - 1 < len; ++start) {
    if (!std::equal(tail, tail + (n - 1), ids.data() + start)) continue;
    const int next = ids[static_cast<std::size_t>(start + n - 1)];
    if (next < 0 || next >= vocab || logits[next] == -std::numeric_limits<float>::infinity()) continue;
    logits[next] = -std::numeric_limits<float>::infinity();
    ++blocked;
  }
  return blocked;
}

Sampler::Sampler(const Sampling& s) : s_(s), state_(detail::StreamSeed(s.seed, "sampling")) {}

int Sampler::Next(const float* logits, int vocab) {
  if (s_.temperature == 0) {
    int best = 0;
    for (int v = 1; v < vocab; ++v)
      if (logits[v] > logits[best]) best = v;
    return best;
  }
  const int k = s_.top_k > 0 ? std::min(s_.top_k, vocab) : vocab;
  order_.resize(static_cast<std::size_t>(vocab));
  std::iota(order_.begin(), order_.end(), 0);
  std::partial_sort(order_.begin(), order_.begin() + k, order_.end(),
                    [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  // softmax(logits / T) over the k kept pieces, in double: the largest term is exp(0).
  const double mx = logits[order_[0]];
  if (!std::isfinite(mx)) return order_[0];  // every piece blocked (BlockRepeatedNgrams)
  p_.resize(static_cast<std::size_t>(k));
  double sum = 0;
  for (int j = 0; j < k; ++j) sum += p_[j] = std::exp((static_cast<double>(logits[order_[j]]) - mx) / s_.temperature);
  // One uniform draw in [0, 1) with 53 random bits, scaled to the sum.
  const double u = static_cast<double>(detail::Mix64(state_ += 0x9E3779B97F4A7C15ull) >> 11) * 0x1.0p-53 * sum;
  double acc = 0;
  for (int j = 0; j < k; ++j) {
    acc += p_[j];
    if (u < acc) return order_[j];
  }
  return order_[k - 1];
}

}  // namespace mha
