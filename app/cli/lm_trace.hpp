// `mhaviz trace --model LM.npz --sentence "..." [--layer i] [--top-k K]`: a language
// model's layer on a typed sentence, cut into its tokenizer's pieces, with the K
// likeliest next pieces at every position (printed as a table, and in --json as
// "next").
#pragma once

#include "commands.hpp"
#include "lm/language_model.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

// Whether trace --model should go through the language model (a sentence or --top-k
// was given, or the checkpoint is one).
bool WantsLanguageModel(const TraceArgs& ta);
int TraceLanguageModel(const TraceArgs& ta);

// The language model a command that reads sentences was given (--model): a checkpoint
// that cannot be loaded, or that is a task model, is a usage error (exit 2) whose
// message names `command` and what it needs, and no flag the command does not have.
lm::LanguageModel LoadLanguageModelArg(const std::string& path, const std::string& command);

}  // namespace mha::cli
