// Training: the same forward pass run backwards, then AdamW.
//
// Gradients are hand-written beside the forward pass they differentiate (backward.cpp:
// LayerNorm, projections, split heads, scaled and masked scores, softmax, context,
// concat, W_O, residuals, FFN with ReLU or exact GELU, GQA's shared K/V heads;
// train.cpp: embedding gather, positional encoding, final LayerNorm, unembedding and
// cross-entropy). They are checked against torch autograd (tests/cli/test_train_torch.py)
// and against finite differences in double precision (tests/core/test_backward.cpp).
//
// Every sum over the batch runs in one fixed order, whatever the thread count, so a
// run is bit-identical on 1 or 2 threads and fully determined by its seed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mha/model.hpp"

namespace mha {

// A batch of token sequences and their targets. targets holds num_targets values per
// position, -1 where there is nothing to predict.
struct Batch {
  int batch = 0, seq = 0, num_targets = 1;
  std::vector<std::int32_t> tokens;   // (batch, seq), C order
  std::vector<std::int32_t> targets;  // (batch, seq, num_targets), C order

  std::int32_t token(int b, int i) const { return tokens[static_cast<std::size_t>(b) * seq + i]; }
  std::int32_t target(int b, int i, int k) const {
    return targets[(static_cast<std::size_t>(b) * seq + i) * num_targets + k];
  }
};

// Throws mha::Error if the batch does not fit the model: shapes, token ids outside
// the vocabulary, targets outside [-1, vocab) or none at all (every one -1), seq > max_seq,
// more targets than heads.
void CheckBatch(const ModelConfig& cfg, const Batch& b);

// What one pass over a batch measured.
struct StepStats {
  double loss = 0;                    // mean cross-entropy over counted targets
  std::vector<double> accuracy;       // per target: argmax == target, over counted positions
  std::vector<std::int64_t> counted;  // per target: positions with a target (not -1)
};

// Runs forward and backward passes over batches for one model, keeping every
// activation and scratch buffer between calls: once the shapes are fixed, a step
// allocates nothing. `threads` is the most it may use (0: one per core).
class AdamW;
namespace detail {
class Pool;
}

class Trainer {
 public:
  explicit Trainer(int threads = 0);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Loss and accuracy of the model on the batch (forward only), with the heads of
  // `ablate` knocked out (one per layer, see mha/ablation.hpp) if given.
  // The result lives in the Trainer until its next call.
  const StepStats& Evaluate(const Model& m, const Batch& b, const std::vector<HeadAblation>* ablate = nullptr);
  // Forward and backward: the loss, and in `grads` (shaped like m, overwritten) the
  // gradient of the loss with respect to every parameter.
  const StepStats& Gradients(const Model& m, const Batch& b, Model& grads);
  // opt.Step(m, grads) on this Trainer's threads, with the same bits: each tensor's
  // sum of squares stays one chain, and the update is element by element. Returns the
  // gradient norm before clipping.
  double Update(AdamW& opt, Model& m, Model& grads);

  // Layer `layer`'s trace of the last batch, every sequence in it (ForwardBatch's
  // layout: sequence b's weights of head h are AttnHead(h, b)).
  const Trace& LayerTrace(int layer) const;

  // The threads the last pass ran on: at most the count asked for, and fewer for a
  // small model, whose step is too short to share (the result is the same on any count).
  int threads() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// AdamW with torch.optim.AdamW's meaning and defaults (Loshchilov & Hutter 2019):
// decoupled weight decay p -= lr * weight_decay * p, then the Adam step with bias
// correction. Weight decay applies to matrices (tok_embed, pos_embed, W_*, ffn_W*,
// unembed.*) and not to biases or LayerNorm gains, as minGPT and nanoGPT do.
struct OptimConfig {
  float lr = 3e-3f;  // peak learning rate
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weight_decay = 0.01f;
  int warmup = 0;             // steps of linear warm-up from lr / warmup to lr
  int total_steps = 0;        // cosine decay from lr to min_lr over the steps after warm-up
                              // (0: constant lr after warm-up)
  float min_lr_ratio = 0.1f;  // min_lr = lr * min_lr_ratio
  float clip = 1.0f;          // global gradient-norm clipping (0: off), as
                              // torch.nn.utils.clip_grad_norm_
};

// The learning rate of step `step` (0-based): linear warm-up, then cosine decay.
float LearningRate(const OptimConfig& o, int step);

class AdamW {
 public:
  AdamW(const Model& m, const OptimConfig& o);
  // One update of m from grads (clipped in place first if o.clip > 0). Returns the
  // gradient norm before clipping.
  double Step(Model& m, Model& grads);
  int steps() const { return step_; }
  const OptimConfig& config() const { return o_; }

 private:
  OptimConfig o_;
  Model m1_, m2_;  // first and second moments
  int step_ = 0;
  struct Slot {
    float *p, *g, *m1, *m2;
    std::int64_t n;
    bool decayed;
    double sq = 0;  // the gradient's sum of squares
  };
  std::vector<Slot> slots_;   // rebuilt every step in the kept capacity
  std::vector<int> by_size_;  // slot indices by size (SumsOfSquares), in the kept capacity
  struct Chunk {
    int slot;
    std::int64_t begin, end;
  };
  std::vector<Chunk> chunks_;  // the update's tasks (Step on threads), in the kept capacity
  void Collect(Model& m, Model& grads);
  void SumsOfSquares(detail::Pool* pool, int threads);
  void Update(const Slot& s, std::int64_t begin, std::int64_t end, float lr, float step_size, float bc2_sqrt) const;
  friend class Trainer;
  double Step(Model& m, Model& grads, detail::Pool* pool, int threads);
};

}  // namespace mha
