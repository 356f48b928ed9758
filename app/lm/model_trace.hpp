// A trained model's pass over one sequence, for `trace`, `export` and the app: load
// the checkpoint, take the tokens (typed ids, or a held-out example of the model's
// task), run every layer, and pick the layer to show. (The flags that ask for it,
// --model --tokens --example --layer: options/model_flags.hpp.)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mha/ablation.hpp"
#include "mha/model.hpp"
#include "mha/tasks.hpp"
#include "mha/train.hpp"

namespace mha::lm {

// "3 1 4 1 5" (spaces or commas) as token ids; throws mha::Error naming the first
// entry that is not a whole number, or an empty list.
std::vector<int> ParseTokenIds(const std::string& text);

struct LoadedModelTrace {
  Model model;
  ModelTrace trace;
  int layer = 0;  // the layer to show: trace.layers[layer]

  const Trace& Layer() const { return trace.layers[static_cast<std::size_t>(layer)]; }
};

// Loads the checkpoint at `path` and runs it on `tokens_text` (ids in the model's
// vocabulary) or, if tokens_text is empty, on held-out example `example` of the task
// the checkpoint was trained on. Throws mha::Error with a teaching message: a bad
// checkpoint, ids outside the vocabulary, no task to take an example from, a layer
// out of range.
// `how`, if given, says how to compute, not what: the attention core every layer uses
// (Flash keeps no weights), and the heads to knock out, chosen once the model and the
// tokens are known (a mean ablation measures its means on them or the model's text).
struct TraceHow {
  std::optional<Attention> attention;
  std::function<std::vector<HeadAblation>(const Model&, const std::vector<int>& tokens)> ablate;
};
LoadedModelTrace LoadForTrace(const std::string& path, const std::string& tokens_text, int example, int layer,
                              const TraceHow& how = {});

}  // namespace mha::lm
