#include "mha/live.hpp"

#include <algorithm>

#include "init.hpp"
#include "inputs.hpp"
#include "mha/embed.hpp"
#include "mha/ffn.hpp"
#include "mha/forward.hpp"

namespace mha {
namespace {

// Embeddings kept at most: beyond this many floats (16 MB) the cache starts over.
constexpr std::size_t kMaxCachedFloats = std::size_t(4) << 20;

}  // namespace

void Live::Clear() { *this = Live(); }

// A token's embedding is its stream of N(0, 1) draws, so the first k values do not
// depend on d_model (mha/embed.hpp): one vector per token serves every d_model up to
// its length, and the d_model slider re-embeds a word only when d_model grows past it.
const float* Live::Embedding(const std::string& token, int d_model, std::uint64_t seed) {
  if (embed_seed_ != seed || (embeddings_.size() + 1) * static_cast<std::size_t>(d_model) > kMaxCachedFloats) {
    embeddings_.clear();
    embed_seed_ = seed;
  }
  RowVec& e = embeddings_[token];
  if (e.size() < d_model) {
    e = EmbedToken(token, d_model, seed);
    ++report_.embedded;
  }
  return e.data();
}

// x = embedding rows (+ PE): the same single float addition per element as Embed, so
// the same bits.
void Live::EmbedInto(const std::vector<std::string>& tokens, const Config& cfg, Mat& x) {
  const int seq = static_cast<int>(tokens.size()), d = cfg.d_model;
  if (cfg.positional_encoding && (pe_d_ != d || pe_.rows() < seq)) {
    const int first = pe_d_ == d ? static_cast<int>(pe_.rows()) : 0;  // rows kept when only seq grows
    pe_.conservativeResize(seq, d);
    detail::PositionalEncodingRows(first, d, pe_);
    pe_d_ = d;
  }
  x.resize(seq, d);
  for (int t = 0; t < seq; ++t) {
    const Eigen::Map<const RowVec> e(Embedding(tokens[t], d, cfg.seed), d);
    if (cfg.positional_encoding)
      x.row(t) = e + pe_.row(t);
    else
      x.row(t) = e;
  }
}

const Inputs& Live::CurrentInputs(const LiveChoice& c, std::string* notice) {
  const Config& cfg = c.cfg;
  if (c.inputs) {
    if (notice) notice->clear();
    return *c.inputs;
  }
  if (!(inputs_valid_ && sentence_ == c.sentence && memory_ == c.memory && inputs_d_ == cfg.d_model &&
        inputs_seed_ == cfg.seed && inputs_pe_ == cfg.positional_encoding)) {
    inputs_valid_ = false;
    detail::TokenizeInputs(c.sentence, c.memory, cfg, inputs_, &notice_);
    EmbedInto(inputs_.tokens, cfg, inputs_.x);
    if (inputs_.memory_tokens.empty())
      inputs_.memory.resize(0, cfg.d_model);
    else
      EmbedInto(inputs_.memory_tokens, cfg, inputs_.memory);
    sentence_.assign(c.sentence);
    memory_.assign(c.memory);
    inputs_d_ = cfg.d_model;
    inputs_seed_ = cfg.seed;
    inputs_pe_ = cfg.positional_encoding;
    inputs_valid_ = true;
  }
  if (notice) *notice = notice_;
  return inputs_;
}

std::shared_ptr<const Weights> Live::CurrentWeights(const LiveChoice& c) {
  const Config& cfg = c.cfg;
  const bool ffn = cfg.block == Block::Encoder;
  if (c.weights) {
    report_.weights = LiveReport::Weights::Given;
    // Given weights without (fitting) FFN weights get seeded W1, b1, W2, b2.
    const Weights& w = *c.weights;
    if (!ffn ||
        (w.ffn_W1.rows() == cfg.d_model && w.ffn_W1.cols() == cfg.ffn_dim() && w.ffn_W2.rows() == cfg.ffn_dim()))
      return c.weights;
    const WeightsKey key{cfg.d_model, 0, cfg.seed, cfg.ffn_dim()};
    if (ffn_base_ != c.weights || !(ffn_key_ == key)) {
      with_ffn_.reset();
      auto full = std::make_shared<Weights>(w);
      InitFfnWeights(cfg, *full);
      ffn_base_ = c.weights;
      with_ffn_ = std::move(full);
      ffn_key_ = key;
    }
    return with_ffn_;
  }
  // Seeded weights depend on num_heads only through the K/V width (num_kv_heads x
  // head_dim): moving the num_heads slider keeps the same weights, so the forward
  // pass can keep its projections and packed panels.
  const WeightsKey key{cfg.d_model, cfg.kv_heads() * cfg.head_dim(), cfg.seed, ffn ? cfg.ffn_dim() : 0};
  if (!weights_ || !(key == weights_key_)) {
    // Two sets of weights take turns: new ones are written into the matrices of the
    // set before last once nothing else holds it (a Trace lets go of its weights
    // when it moves to new ones), so no fresh memory is paged in per change (page
    // faults were most of InitWeights' time). Traces key their caches by the
    // Weights' address but drop them whenever their weights object changes, and a
    // trace never holds a set that is being rewritten (use_count() == 1).
    std::shared_ptr<Weights> next;
    WeightsKey next_key;
    if (spare_ && spare_.use_count() == 1)
      next = std::move(spare_), next_key = spare_key_;
    else
      next = std::make_shared<Weights>();
    spare_.reset();
    // The set before last with the same seed, d_model and d_ff differs (if at all)
    // only in the K/V width (the num_kv_heads slider): W_q, W_o, the norms and the
    // FFN are already right.
    if (next_key.d_model == key.d_model && next_key.seed == key.seed && next_key.d_ff == key.d_ff) {
      detail::InitKvWeights(cfg, *next);
      report_.weights = LiveReport::Weights::KvOnly;
    } else {
      InitWeights(cfg, *next);
      report_.weights = LiveReport::Weights::New;
    }
    spare_ = std::const_pointer_cast<Weights>(std::move(weights_));
    spare_key_ = weights_key_;
    weights_ = std::move(next);
    weights_key_ = key;
  }
  return weights_;
}

void Live::Recompute(const LiveChoice& c, Trace& t, Mat* mean_attn, std::string* notice) {
  // Sizes first: never embed or initialise weights for a configuration that cannot
  // run (d_model % num_heads != 0, absurd sizes).
  report_ = LiveReport();
  Validate(c.cfg, 1, 1);
  const Inputs& in = CurrentInputs(c, notice);
  Forward(c.cfg, CurrentWeights(c), in, t);
  if (mean_attn) MeanAttention(t, *mean_attn);
}

void MeanAttention(const Trace& t, Mat& mean) {
  mean.setZero(t.seq, t.seq_kv);
  for (int h = 0; h < t.cfg.num_heads; ++h) mean += t.AttnHead(h);
  mean /= static_cast<float>(t.cfg.num_heads);
}

}  // namespace mha
