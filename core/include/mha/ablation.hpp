// Knocking heads out: causal evidence of what each head does. A picture of a head's
// weights shows what it looks at; taking the head away and measuring what the model
// loses shows whether the model uses it (Michel et al. 2019, "Are Sixteen Heads Really
// Better than One?"; Olsson et al. 2022 for induction heads).
//
// The ablation is a variant inside the one forward pass (mha/head_ablation.hpp): the
// knocked-out head's context is replaced before W_O reads it, by zeros (zero ablation)
// or by the head's mean context over a reference text (mean ablation: the validation
// windows of a language model, held-out examples of a task model, the sentence itself
// for a seeded layer). Ablating no head runs exactly the plain pass, bit for bit.
//
//   ContextMeans means = MeanContexts(trainer, model, reference_batches);
//   std::vector<HeadAblation> a = LayerAblations(model.cfg.num_layers, model.cfg.LayerConfig(),
//                                                AblationMode::Mean, {{1, 3}}, &means);
//   RunModel(model, tokens, trace, &a);           // or trainer.Evaluate(model, batch, &a)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mha/head_ablation.hpp"
#include "mha/model.hpp"
#include "mha/train.hpp"

namespace mha {

enum class AblationMode { Zero, Mean };
const char* ToString(AblationMode m);

// Query head `head` of layer `layer`.
struct HeadRef {
  int layer = 0, head = 0;
  bool operator==(const HeadRef& o) const { return layer == o.layer && head == o.head; }
  bool operator<(const HeadRef& o) const { return layer != o.layer ? layer < o.layer : head < o.head; }
};
// "L1H3"
std::string HeadName(const HeadRef& h);

// Each head's mean context over a reference text: means[l] is (num_heads, head_dim),
// row h the mean over every position of every reference sequence of layer l's head h
// context, from the plain (un-ablated) model. Sums run in double, in sequence order.
using ContextMeans = std::vector<Mat>;
// Over reference batches, through the trainer's forward pass (its pool and threads).
ContextMeans MeanContexts(Trainer& trainer, const Model& m, const std::vector<Batch>& reference);
// Over the positions of traces already computed (one per layer; a seeded layer: its
// own sentence).
ContextMeans MeanContexts(const std::vector<const Trace*>& layers);

// Throws mha::Error if a head does not exist (the message names the valid range) or
// is listed twice.
void CheckHeads(int num_layers, int num_heads, const std::vector<HeadRef>& heads);

// What each layer's forward pass knocks out: one HeadAblation per layer (empty where
// no head of it is listed). `means` is needed for mean ablation only. Checks the heads.
std::vector<HeadAblation> LayerAblations(int num_layers, const Config& layer, AblationMode mode,
                                         const std::vector<HeadRef>& heads, const ContextMeans* means);

// Activation patching (the causal tracing of Meng et al. 2022; Wang et al. 2022's
// path patching of the IOI circuit): run one input (the corrupt sentence) with some
// heads' context taken from another run (the clean sentence's `source`, of the same
// length), at `positions` (empty: every position), so the later layers and the logits
// see what those heads carried in the clean run. One HeadAblation per layer, for
// RunModel; `source` holds the clean run's every layer (its concat). Checks the heads.
std::vector<HeadAblation> PatchHeads(const ModelTrace& source, const std::vector<HeadRef>& heads,
                                     const std::vector<int>& positions = {});

// A loss measured with some heads knocked out (null: none), e.g. the validation loss.
using AblatedLoss = std::function<StepStats(const std::vector<HeadAblation>* ablate)>;

struct HeadImportance {
  HeadRef head;         // head = -1: every head of the layer at once
  StepStats stats;      // with the head (or layer) knocked out
  double increase = 0;  // stats.loss - the plain model's loss
};

struct ImportanceTable {
  StepStats base;                      // nothing knocked out
  std::vector<HeadImportance> heads;   // every head alone, largest increase first
  std::vector<HeadImportance> layers;  // every layer's heads at once, largest increase first
};

// Every head alone, then every layer's heads at once, each measured by `loss`. Sorted
// by the increase, largest first, ties by (layer, head): with a loss that is bit for
// bit the same on any thread count (the Trainer's) the order is too.
ImportanceTable MeasureImportance(int num_layers, const Config& layer, AblationMode mode, const ContextMeans* means,
                                  const AblatedLoss& loss);

// The in-context learning signature of an induction head (Olsson et al. 2022): a span
// A of distinct random tokens, then A again. In the first copy the next token is
// unpredictable; in the second it is the one that followed the current token last
// time, which an induction head finds.
struct RepeatedSpans {
  std::vector<std::vector<int>> sequences;  // [prefix] A A
  int prefix = 0;                           // tokens before A (a BOS), 0 or 1
  int span = 0;                             // |A|
};
// `count` sequences; A's tokens drawn from `candidates` without replacement (with
// replacement only if there are fewer candidates than span), from `seed`.
RepeatedSpans MakeRepeatedSpans(const std::vector<int>& candidates, int prefix_token, int span, int count,
                                std::uint64_t seed);

struct RepeatLoss {
  // Mean cross-entropy (nats) of predicting A's token k+1 from its token k, k = 0 ..
  // span-2, in the first copy and in the second.
  std::vector<double> first, second;
  double first_mean = 0, second_mean = 0;
};
// The model on every sequence (RunModel, with `ablate` if not null).
RepeatLoss MeasureRepeatLoss(const Model& m, const RepeatedSpans& s, const std::vector<HeadAblation>* ablate);

}  // namespace mha
