// A trained model's pass over one sequence, for `trace`, `export` and the app: load
// the checkpoint, take the tokens (typed ids, or a held-out example of the model's
// task), run every layer, and pick the layer to show. (The flags that ask for it,
// --model --tokens --example --layer: options/model_flags.hpp.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
LoadedModelTrace LoadForTrace(const std::string& path, const std::string& tokens_text, int example, int layer);

}  // namespace mha::lm
