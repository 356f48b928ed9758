#include "train_options.hpp"

#include "options/flags.hpp"

namespace mha::cli {
namespace {

template <typename E>
E Pick(const std::string& v, std::initializer_list<E> options) {
  for (E e : options)
    if (v == ToString(e)) return e;
  throw Error("unreachable: '" + v + "' passed CLI11's IsMember check");
}

// CLI11's own checks word their errors without the flag (ParseFlags shows a
// validator's message as it is), so these name it.
CLI::Validator InRange(const std::string& flag, long long lo, long long hi) {
  return WholeNumber(flag, -(1LL << 62), 1LL << 62, [flag, lo, hi](long long n) {
    return n >= lo && n <= hi ? std::string()
                              : flag + " must be " + std::to_string(lo) + " to " + std::to_string(hi) + "; got " +
                                    std::to_string(n) + ".";
  });
}

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

constexpr long long kAny = 1LL << 30;  // sizes are checked precisely with the model

}  // namespace

void AddTrainOptions(CLI::App& app, TrainOptions& o) {
  const std::string model = "Model", task = "Task", run = "Optimiser and run";
  app.add_option("--layers", o.layers, "num_layers: attention layers stacked (1 to 6)")
      ->check(InRange("--layers", 1, ModelLimits::kMaxLayers))->capture_default_str()->group(model);
  app.add_option("--heads", o.heads, "num_heads per layer (divides d_model)")
      ->check(InRange("--heads", 1, kAny))->capture_default_str()->group(model);
  app.add_option("--d-model", o.d_model, "d_model: the width of every token's vector")
      ->check(InRange("--d-model", 1, ModelLimits::kMaxDModel))->capture_default_str()->group(model);
  app.add_option("--kv-heads", o.kv_heads, "num_kv_heads for grouped-query attention (divides num_heads); "
                 "query head h reads K/V head h / (num_heads / num_kv_heads)")
      ->check(InRange("--kv-heads", 1, kAny))->group(model);
  app.add_option("--norm", o.norm, "post: LN(x + MHA(x)); pre: x + MHA(LN(x)) with a final LN; none: x + MHA(x)")
      ->check(OneOf("--norm", {"post", "pre", "none"}))->capture_default_str()->group(model);
  app.add_option("--block", o.block, "attention: the attention layer only; encoder: attention then a feed-forward network")
      ->check(OneOf("--block", {"attention", "encoder"}))->capture_default_str()->group(model);
  app.add_option("--d-ff", o.d_ff, "the feed-forward network's hidden width (encoder block; default 4 x d_model)")
      ->check(InRange("--d-ff", 1, Limits::kMaxDFf))->group(model);
  app.add_option("--activation", o.activation, "the feed-forward network's nonlinearity: relu, or gelu (exact erf form)")
      ->check(OneOf("--activation", {"relu", "gelu"}))->capture_default_str()->group(model);
  app.add_option("--mask", o.mask, "none, or causal (a token sees only itself and earlier ones); default: what the task needs")
      ->check(OneOf("--mask", {"none", "causal"}))->group(model);
  app.add_option("--pos", o.pos, "positional encoding: sinusoidal, learned (a trained vector per position) or none")
      ->check(OneOf("--pos", {"sinusoidal", "learned", "none"}))->capture_default_str()->group(model);

  app.add_option("--task", o.task, "offsets, reverse, sort or induction (mhaviz explains each before training)")
      ->group(task);
  app.add_option("--offsets", o.offsets, "offsets task: predict the tokens 1..K back (one target per offset)")
      ->check(InRange("--offsets", 1, kAny))->capture_default_str()->group(task);
  app.add_option("--seq", o.seq, "tokens per sequence")->check(InRange("--seq", 1, kAny))->capture_default_str()->group(task);
  app.add_option("--vocab", o.vocab, "distinct tokens")->check(InRange("--vocab", 1, kAny))->capture_default_str()->group(task);

  app.add_option("--steps", o.steps, "optimiser steps (0: write the initial model)")
      ->check(InRange("--steps", 0, 10000000))->capture_default_str()->group(run);
  app.add_option("--batch", o.batch, "sequences per step")->check(InRange("--batch", 1, 1 << 16))->capture_default_str()->group(run);
  app.add_option("--lr", o.lr, "peak learning rate of AdamW")->capture_default_str()->group(run);
  app.add_option("--warmup", o.warmup, "steps of linear warm-up before the cosine decay")
      ->check(InRange("--warmup", 0, kAny))->capture_default_str()->group(run);
  app.add_option("--weight-decay", o.weight_decay, "AdamW's decoupled weight decay (matrices only)")
      ->capture_default_str()->group(run);
  app.add_option("--clip", o.clip, "clip the global gradient norm to this (0: off)")->capture_default_str()->group(run);
  app.add_option("--seed", o.seed, "seeds the initial weights and the task's batches")->capture_default_str()->group(run);
  app.add_option("--threads", o.threads, "CPU threads (0: one per core); results are the same for any count")
      ->check(InRange("--threads", 0, Limits::kMaxThreads))->capture_default_str()->group(run);
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

void CheckStepMemory(const ModelConfig& m, int batch, int seq) {
  const double bytes = static_cast<double>(EstimateTraceBytes(m.LayerConfig(), seq, seq)) * m.num_layers * batch;
  if (bytes > static_cast<double>(Limits::kMaxTraceBytes))
    throw Error("A step over " + std::to_string(batch) + " sequences of " + std::to_string(seq) + " tokens through " +
                std::to_string(m.num_layers) + " layer(s) would keep about " +
                std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                " MiB of activations for the backward pass, over the cap of " +
                std::to_string(Limits::kMaxTraceBytes >> 20) + " MiB. Use a smaller --batch (or --seq, --d-model).");
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
