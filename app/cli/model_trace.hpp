// A trained model's pass over one sequence, for `trace` and `export`: load the
// checkpoint, take the tokens (typed ids, or a held-out example of the model's task),
// run every layer, and pick the layer to show.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "mha/model.hpp"
#include "mha/tasks.hpp"
#include "mha/train.hpp"

namespace mha::cli {

// The held-out examples of a task: the same generator as training, on a seed stream
// training never draws from (seed + 1), so accuracy on them is not memorised.
void HeldOutBatch(const TaskSpec& t, std::uint64_t seed, std::uint64_t index, int batch, Batch& out);

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
// `run`, if given, brings --ablate (heads knocked out, cli/ablate_apply.hpp) and
// --attention (how every layer computes its attention core; Flash keeps no weights).
struct RunOptions;
LoadedModelTrace LoadForTrace(const std::string& path, const std::string& tokens_text, int example, int layer,
                              const RunOptions* run = nullptr);

// The flags that pick a trained model's layer instead of a sentence, declared once
// for `trace` and `export`: --model M.npz, --tokens IDS, --example N, --layer i.
struct ModelSource {
  std::string model, tokens;
  int example = 0, layer = 0;
  int top_k = 0;  // trace: the likeliest next pieces per position (language models)
};
void AddModelSourceFlags(CLI::App& app, ModelSource& m);
// --model M.npz alone, with mhaviz-small standing for the shipped language model.
CLI::Option* ModelPathFlag(CLI::App& app, std::string& path, const std::string& help);
// --model's transform: "mhaviz-small" (unless a file of that name is here) becomes the
// shipped checkpoint's path; an error if it is not installed.
CLI::Validator ShippedModelName();
// After parsing: with --model, any flag of argv outside `allowed` (which sets the input
// or the configuration the checkpoint fixes) is a usage error; without it, --tokens,
// --example and --layer are.
void CheckModelSourceFlags(const std::vector<std::string>& argv, const ModelSource& m,
                           const std::vector<std::string>& allowed);

}  // namespace mha::cli
