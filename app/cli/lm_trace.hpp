// `mhaviz trace --model LM.npz --sentence "..." [--layer i] [--top-k K]`: a language
// model's layer on a typed sentence, cut into its tokenizer's pieces, with the K
// likeliest next pieces at every position (printed as a table, and in --json as
// "next").
#pragma once

#include "commands.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

// Whether trace --model should go through the language model (a sentence or --top-k
// was given, or the checkpoint is one).
bool WantsLanguageModel(const TraceArgs& ta);
int TraceLanguageModel(const TraceArgs& ta);

}  // namespace mha::cli
