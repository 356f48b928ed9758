// A trainable model around the layer of mha.hpp: a stack of num_layers layers, each
// exactly the layer Forward computes (attention with GQA, mask, post/pre/no LayerNorm,
// optional FFN), between a learned token embedding and one unembedding per target.
//
//     x_0      = tok_embed[tokens] + PE          (seq, d_model); PE sinusoidal, learned
//                                                 (pos_embed[0:seq]) or none
//     x_{l+1}  = Layer_l(x_l)                     Forward on layer l's Weights: its Trace's
//                                                 `out` (attention only) or `block_out`
//     h        = LN_f(x_L) for pre-LN, else x_L   (lnf_gamma, lnf_beta)
//     logits_k = h unembed.{k} + unembed_b.{k}    (seq, vocab), one per prediction target
//
// The loss of a batch is the mean softmax cross-entropy over every (sequence,
// position, target) whose target is not -1.
//
// Parameter names are the checkpoint's .npz keys: tok_embed, pos_embed (learned PE
// only), layers.{i}.<ForEachWeight name> (layers.0.W_q, ..., layers.0.ln2_beta),
// lnf_gamma, lnf_beta (pre-LN only), unembed.{k}, unembed_b.{k}.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha {

enum class Positional { Sinusoidal, Learned, None };
const char* ToString(Positional p);

// Caps of a trainable model, checked before anything is allocated.
struct ModelLimits {
  static constexpr int kMaxLayers = 6;
  static constexpr int kMaxVocab = 65536;
  static constexpr int kMaxSeq = 1024;
  static constexpr int kMaxTargets = 16;
  static constexpr int kMaxDModel = 1024;
  // Parameters of one model (4 layers of d_model 1024 with an FFN are ~50 M).
  static constexpr std::int64_t kMaxParams = std::int64_t(64) << 20;
};

struct ModelConfig {
  // Every layer's hyper-parameters: d_model, num_heads, num_kv_heads, mask, norm,
  // scale, temperature, ln_eps, block, d_ff, activation. layer.seed seeds the
  // initial weights; layer.threads is how many threads a pass uses.
  // layer.positional_encoding is ignored: `positional` decides.
  Config layer;
  int num_layers = 1;
  Positional positional = Positional::Sinusoidal;
  int max_seq = 64;                // longest sequence the model takes
  std::vector<std::string> vocab;  // token strings; the id of a token is its index
  int num_targets = 1;             // unembedding heads: predictions per position
  std::string task;                // the task it was made for, as JSON text ("" if none)

  int vocab_size() const { return static_cast<int>(vocab.size()); }
  // The Config each layer's Forward runs with (positional_encoding off: the model
  // adds its own PE below the stack).
  Config LayerConfig() const;
};

// Throws mha::Error with a teaching message if the model cannot be built.
void Validate(const ModelConfig& cfg);
// How many learned numbers the model has.
std::int64_t ParameterCount(const ModelConfig& cfg);

struct Model {
  ModelConfig cfg;
  Mat tok_embed;  // (vocab, d_model)
  Mat pos_embed;  // (max_seq, d_model), learned PE only
  std::vector<std::shared_ptr<Weights>> layers;
  RowVec lnf_gamma, lnf_beta;     // (d_model), pre-LN only
  std::vector<Mat> unembed;       // num_targets x (d_model, vocab)
  std::vector<RowVec> unembed_b;  // num_targets x (vocab)
};

// Seeded initial weights (cfg.layer.seed): tok_embed and pos_embed N(0, 1) as
// torch.nn.Embedding; each layer InitWeights with its own seed; unembed and its bias
// U(-1/sqrt(d_model), 1/sqrt(d_model)) as torch.nn.Linear; LN_f gamma 1, beta 0.
Model InitModel(const ModelConfig& cfg);
// The same shapes, every value zero (gradients, optimiser moments).
Model ZerosLike(const Model& m);
// A deep copy: the layers' Weights are copied too, not shared.
Model Clone(const Model& m);

// The one list of the model's parameters: calls f(name, index, tensor) for each tensor
// the configuration uses, in the checkpoint's order, where `tensor` is the Mat& or
// RowVec& member (const for a const Model) and the checkpoint key is `name` for
// index -1, "layers.{index}.{name}" for a layer's tensors and "{name}.{index}" for
// the unembedding heads. Allocates nothing, so a training step can walk it.
template <typename M, typename F>
void ForEachTensor(M& m, F&& f) {
  f("tok_embed", -1, m.tok_embed);
  if (m.cfg.positional == Positional::Learned) f("pos_embed", -1, m.pos_embed);
  const Config lc = m.cfg.LayerConfig();
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    ForEachWeight(*m.layers[i], lc, [&](const WeightSpec& s, auto& t) { f(s.name, static_cast<int>(i), t); });
  if (m.cfg.layer.norm == Norm::Pre) {
    f("lnf_gamma", -1, m.lnf_gamma);
    f("lnf_beta", -1, m.lnf_beta);
  }
  for (std::size_t k = 0; k < m.unembed.size(); ++k) {
    f("unembed", static_cast<int>(k), m.unembed[k]);
    f("unembed_b", static_cast<int>(k), m.unembed_b[k]);
  }
}
// The checkpoint key of ForEachTensor's (name, index): "tok_embed", "layers.0.W_q",
// "unembed.1".
std::string ParamKey(const char* name, int index);
// Sets every parameter to zero (no allocation).
void SetZero(Model& m);

// A parameter tensor of the model: its checkpoint name and where it lives.
struct ParamView {
  std::string name;
  std::vector<std::int64_t> shape;  // (rows, cols) or (cols,) for a vector
  float* data;
  std::int64_t size() const;
};
// Every parameter of the model in the checkpoint's order: tok_embed, pos_embed,
// layers.0.W_q ... layers.{L-1}.ln2_beta, lnf_gamma, lnf_beta, unembed.0, unembed_b.0, ...
// Only tensors the configuration uses are listed.
std::vector<ParamView> Parameters(Model& m);
// Throws mha::Error naming the tensor if a shape does not fit m.cfg or a value is
// not finite or beyond Limits::kMaxAbsValue.
void CheckModel(const Model& m);
// The name of the first parameter holding NaN, Inf or a value beyond
// Limits::kMaxAbsValue, or "" if none: CheckModel's range check, which training runs
// after every update too, so it never holds (or writes) weights a load would refuse.
std::string OutOfRangeParameter(const Model& m);

// Memory, estimated before anything is allocated: the one estimate every command that
// runs a model checks (trace --model and the app's model view, train, grad, bench
// --train), so that every accepted size peaks under the 1.5 GB budget. Each part is
// named, so a refusal blames what is large: the activations (num_heads x seq x seq
// attention per layer and sequence), the logits (seq x num_targets x vocab per
// sequence: 8 targets of a 1000-token vocabulary over 128 x 256 tokens are 1 GiB), or
// the parameters.
struct MemoryEstimate {
  double activations = 0;  // bytes of every layer's trace (and the backward's scratch)
  double logits = 0;       // bytes of the logits (a training pass keeps their gradient in place)
  double params = 0;       // bytes of the weights (and for training their gradients, AdamW's moments)
  double total() const { return activations + logits + params; }
  // "about 2101 MiB: 53 MiB of activations, 2048 MiB of logits, 0 MiB of parameters..."
  std::string Text() const;
  // The largest part: "activations", "logits" or "parameters".
  const char* Largest() const;
};
// RunModel on `seq` tokens: every layer's trace and the logits (the weights are the
// model's own, already loaded: params holds them for the total).
MemoryEstimate EstimateModelRun(const ModelConfig& cfg, int seq);
// One training pass (Trainer::Gradients) over `batch` sequences of `seq` tokens: the
// traces kept for the backward pass and its scratch (x1.25), the logits of every
// position (the gradient written in place), and per parameter the weight, its
// gradient, AdamW's two moments and the backward's per-thread partial sums (6 floats).
// Both factors were measured: 6 layers of d_model 1024 over 3 x 256 tokens peaked at
// 1254 MiB, 28% over the plain count of activations.
MemoryEstimate EstimateTrainingStep(const ModelConfig& cfg, int batch, int seq);
// A forward pass of another Trainer over `batch` sequences (held-out or validation
// sequences evaluated while the training pass's buffers are alive): traces and logits.
MemoryEstimate EstimateEvaluation(const ModelConfig& cfg, int batch, int seq);

// One sequence through the model, every layer's Trace kept.
struct ModelTrace {
  std::vector<int> tokens;
  Mat x;                      // x_0 = embedding + PE (seq, d_model)
  std::vector<Trace> layers;  // layer i's full Trace; its input is layer i-1's output
  Mat final_ln;               // LN_f(x_L) for pre-LN, else 0 x 0
  std::vector<Mat> logits;    // per target, (seq, vocab)

  // The stack's output x_L: the last layer's out or block_out.
  const Mat& Output() const;
  // What the unembedding reads: final_ln for pre-LN, else Output().
  const Mat& Head() const;
};

// Token ids must be in [0, vocab) and 1 <= seq <= cfg.max_seq (else mha::Error).
// Reuses `out`'s buffers when the shapes have not changed. `ablate` (one per layer, see
// mha/ablation.hpp), if given, knocks heads out.
void RunModel(const Model& m, const std::vector<int>& tokens, ModelTrace& out,
              const std::vector<HeadAblation>* ablate = nullptr);
// The tokens' strings, for labels.
std::vector<std::string> TokenLabels(const ModelConfig& cfg, const std::vector<int>& tokens);

// x_0 for tokens: tok_embed rows plus the positional encoding the model uses.
void EmbedTokens(const Model& m, const int* tokens, int seq, float* out);

}  // namespace mha
