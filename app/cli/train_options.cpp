#include "train_options.hpp"

#include "mha/training_run.hpp"
#include "options/flags.hpp"
#include "options/shared_flags.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

template <typename E>
E Pick(const std::string& v, std::initializer_list<E> options) {
  for (E e : options)
    if (v == ToString(e)) return e;
  throw Error("unreachable: '" + v + "' passed CLI11's IsMember check");
}

// CLI11's own choice check words its error without the flag (ParseFlags shows a
// validator's message as it is), so this names it.
CLI::Validator OneOf(const std::string& flag, const std::vector<std::string>& names) {
  return CLI::Validator(
      [flag, names](std::string& v) {
        std::string list;
        for (const std::string& n : names) {
          if (n == v) return std::string();
          list += (list.empty() ? "" : ", ") + n;
        }
        return flag + " must be one of " + list + "; got '" + v + "'.";
      },
      "");
}

}  // namespace

void AddTrainOptions(CLI::App& app, TrainOptions& o) {
  const std::string model = "Model", task = "Task", run = "Optimiser and run";
  NumberFlag(app, "--layers", o.layers, 1, ModelLimits::kMaxLayers, "num_layers: attention layers stacked (1 to 6)")
      ->group(model);
  NumberFlag(app, "--heads", o.heads, 1, Limits::kMaxHeads, "num_heads per layer (divides d_model)")->group(model);
  NumberFlag(app, "--d-model", o.d_model, 1, ModelLimits::kMaxDModel, "d_model: the width of every token's vector")
      ->group(model);
  NumberFlag(app, "--kv-heads", o.kv_heads, 1, Limits::kMaxHeads,
             "num_kv_heads for grouped-query attention (divides num_heads); "
             "query head h reads K/V head h / (num_heads / num_kv_heads)")
      ->group(model);
  app.add_option("--norm", o.norm, "post: LN(x + MHA(x)); pre: x + MHA(LN(x)) with a final LN; none: x + MHA(x)")
      ->check(OneOf("--norm", {"post", "pre", "none"}))
      ->capture_default_str()
      ->group(model);
  app.add_option("--block", o.block,
                 "attention: the attention layer only; encoder: attention then a feed-forward network")
      ->check(CLI::IsMember({"attention", "encoder"}))
      ->capture_default_str()
      ->group(model);
  NumberFlag(app, "--d-ff", o.d_ff, 1, Limits::kMaxDFf,
             "the feed-forward network's hidden width (encoder block; default 4 x d_model)")
      ->group(model);
  app.add_option("--activation", o.activation,
                 "the feed-forward network's nonlinearity: relu, or gelu (exact erf form)")
      ->check(OneOf("--activation", {"relu", "gelu"}))
      ->capture_default_str()
      ->group(model);
  app.add_option("--mask", o.mask,
                 "none, or causal (a token sees only itself and earlier ones); default: what the task needs")
      ->check(OneOf("--mask", {"none", "causal"}))
      ->group(model);
  app.add_option("--pos", o.pos, "positional encoding: sinusoidal, learned (a trained vector per position) or none")
      ->check(OneOf("--pos", {"sinusoidal", "learned", "none"}))
      ->capture_default_str()
      ->group(model);

  app.add_option("--task", o.task,
                 "offsets, reverse, sort, induction, or text (a language model: --corpus,\n--tokenizer); "
                 "mhaviz explains each before training")
      ->group(task);
  // The task's own limits (TaskFromOptions) are checked with the task, which explains them.
  NumberFlag(app, "--offsets", o.offsets, 1, 1 << 20,
             "offsets task: predict the tokens 1..K back (one target per offset)")
      ->group(task);
  NumberFlag(app, "--seq", o.seq, 1, 1 << 20, "tokens per sequence")->group(task);
  NumberFlag(app, "--vocab", o.vocab, 1, 1 << 20, "distinct tokens")->group(task);

  NumberFlag(app, "--steps", o.steps, 0, TrainLimits::kMaxSteps, "optimiser steps (0: write the initial model)")
      ->group(run);
  NumberFlag(app, "--batch", o.batch, 1, TrainLimits::kMaxBatch, "sequences per step")->group(run);
  app.add_option("--lr", o.lr, "peak learning rate of AdamW")->capture_default_str()->group(run);
  NumberFlag(app, "--warmup", o.warmup, 0, 10000000, "steps of linear warm-up before the cosine decay")->group(run);
  app.add_option("--weight-decay", o.weight_decay, "AdamW's decoupled weight decay (matrices only)")
      ->capture_default_str()
      ->group(run);
  app.add_option("--clip", o.clip, "clip the global gradient norm to this (0: off)")->capture_default_str()->group(run);
  SeedFlag(
      app, "--seed", [&o](std::uint64_t v) { o.seed = v; }, "seeds the initial weights and the task's batches")
      ->default_str(std::to_string(o.seed))
      ->group(run);
  ThreadsFlag(
      app, [&o](int v) { o.threads = v; }, "CPU threads (0: one per core); results are the same for any count",
      /*every_core_at_zero=*/true)
      ->group(run);
}

TaskSpec TaskFromOptions(const TrainOptions& o) {
  TaskSpec t;
  t.kind = ParseTask(o.task);
  t.offsets = o.offsets;
  t.vocab = o.vocab;
  t.seq = o.seq;
  Validate(t);
  return t;
}

ModelConfig ModelFromOptions(const TrainOptions& o, const TaskSpec* task, int num_targets, int max_seq) {
  ModelConfig m;
  Config& c = m.layer;
  c.d_model = o.d_model;
  c.num_heads = o.heads;
  c.num_kv_heads = o.kv_heads;
  c.norm = Pick(o.norm, {Norm::Post, Norm::Pre, Norm::None});
  c.block = Pick(o.block, {Block::Attention, Block::Encoder});
  c.d_ff = o.d_ff;
  c.activation = Pick(o.activation, {Activation::Relu, Activation::Gelu});
  c.mask = o.mask.empty() ? (task ? TaskMask(*task) : Mask::Causal) : Pick(o.mask, {Mask::None, Mask::Causal});
  c.seed = o.seed;
  c.threads = o.threads;
  c.positional_encoding = false;
  m.num_layers = o.layers;
  m.positional = Pick(o.pos, {Positional::Sinusoidal, Positional::Learned, Positional::None});
  if (task) {
    m.vocab = TaskVocab(*task);
    m.num_targets = NumTargets(*task);
    m.max_seq = task->seq;
    m.task = TaskJson(*task);
  } else {
    if (o.vocab > ModelLimits::kMaxVocab)
      throw Error("--vocab = " + std::to_string(o.vocab) + " is over the limit of " +
                  std::to_string(ModelLimits::kMaxVocab) + " tokens.");
    for (int i = 0; i < o.vocab; ++i) m.vocab.push_back(std::to_string(i));
    m.num_targets = num_targets;
    m.max_seq = max_seq;
  }
  Validate(m);
  return m;
}

void CheckStepMemory(const ModelConfig& m, int batch, int seq, int eval_batch, int evaluators, double resident) {
  MemoryEstimate need = EstimateTrainingStep(m, batch, seq);
  const MemoryEstimate eval = EstimateEvaluation(m, eval_batch, seq);
  need.activations += evaluators * eval.activations;
  need.logits += evaluators * eval.logits;
  if (need.total() + resident <= static_cast<double>(kMaxStepBytes)) return;
  const std::string what = std::string(need.Largest());
  const std::string fix =
      what == "logits"        ? "The logits (batch x seq x targets x vocabulary numbers) are what is large: use "
                                "fewer or shorter sequences (--batch, --seq, or a smaller batch file), fewer targets "
                                "(--offsets) or a smaller vocabulary."
      : what == "activations" ? "The activations kept for the backward pass are what is large: use fewer or shorter "
                                "sequences (--batch, --seq, or a smaller batch file), a smaller --d-model or fewer "
                                "--layers."
                              : "The parameters (with their gradients and AdamW's moments) are what is large: use a "
                                "smaller --d-model, --d-ff or vocabulary, or fewer --layers.";
  throw Error("A step over " + std::to_string(batch) + " sequences of " + std::to_string(seq) + " tokens through " +
              std::to_string(m.num_layers) + " layer(s)" +
              (evaluators > 0 ? ", with " + std::to_string(eval_batch) + " sequences evaluated beside it," : "") +
              " would need " + need.Text() +
              (resident > 0 ? ", beside " + std::to_string(static_cast<long long>(resident / (1 << 20))) +
                                  " MiB of the corpus's pieces"
                            : "") +
              ", over the training memory cap of " + std::to_string(kMaxStepBytes >> 20) + " MiB. " + fix);
}

OptimConfig OptimFromOptions(const TrainOptions& o) {
  OptimConfig c;
  c.lr = o.lr;
  c.warmup = o.warmup;
  c.total_steps = o.steps;
  c.weight_decay = o.weight_decay;
  c.clip = o.clip;
  return c;
}

}  // namespace mha::cli
