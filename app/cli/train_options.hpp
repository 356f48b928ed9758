// The model and optimiser flags of training, declared once (CLI11) for every command
// that builds or trains a model: `mhaviz train`, and later `bench --train`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "mha/model.hpp"
#include "mha/tasks.hpp"
#include "mha/train.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

// Defaults: the offsets task with K = 2 learns both offsets (accuracy 1.00 / 1.00)
// in 800 steps of batch 128 at lr 1e-2 with 2 heads of a d_model 16, pre-LN,
// attention-only layer with learned positions; with 1 head one of the two offsets
// stays near chance (which one depends on the seed).
struct TrainOptions {
  // the model
  int layers = 1, heads = 2, d_model = 16, kv_heads = 0, d_ff = 0;
  std::string norm = "pre", block = "attention", activation = "relu", mask = "", pos = "learned";
  // the task
  std::string task;
  int offsets = 2, seq = 16, vocab = 11;
  // the run
  int steps = 800, batch = 128, warmup = 0, threads = 0;
  float lr = 1e-2f, weight_decay = 0.01f, clip = 1.0f;
  std::uint64_t seed = 42;
};

// Declares --layers --heads --d-model --kv-heads --norm --block --d-ff --activation
// --mask --pos --task --offsets --seq --vocab --steps --batch --lr --warmup
// --weight-decay --clip --seed --threads on `app`, writing into `o`.
void AddTrainOptions(CLI::App& app, TrainOptions& o);

// The task the flags name (--task, --offsets, --vocab, --seq); throws mha::Error.
TaskSpec TaskFromOptions(const TrainOptions& o);
// The model the flags describe. With a task, its vocabulary, targets, sequence length
// and (unless --mask is given) mask; without one, `vocab` tokens "0".."vocab-1",
// `num_targets` targets and sequences up to `max_seq`. Throws mha::Error (Validate).
ModelConfig ModelFromOptions(const TrainOptions& o, const TaskSpec* task, int num_targets, int max_seq);
// What one training step may hold (CheckStepMemory's estimate, which is calibrated on
// measured peaks), so every accepted step stays under the 1.5 GB budget of every
// mhaviz command.
inline constexpr std::size_t kMaxStepBytes = std::size_t(1152) << 20;
// Throws mha::Error if a step would hold more than kMaxStepBytes (EstimateTrainingStep:
// the activations kept for the backward pass, the logits, the weights, gradients and
// AdamW moments), with `evaluators` passes over `eval_batch` held-out or validation
// sequences alive beside it (EstimateEvaluation each), and `resident` bytes held for
// the whole run (a text corpus's ids). The message names the part that is large.
// Refused before anything is allocated.
void CheckStepMemory(const ModelConfig& m, int batch, int seq, int eval_batch = 0, int evaluators = 0,
                     double resident = 0);
// The optimiser: AdamW at --lr with --warmup steps of warm-up, then a cosine decay
// over the rest of --steps; --weight-decay on matrices only; --clip.
OptimConfig OptimFromOptions(const TrainOptions& o);

}  // namespace mha::cli
