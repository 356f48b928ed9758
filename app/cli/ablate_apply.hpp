// The --ablate flag of trace and export (RunOptions::ablate, declared once in
// options/ablate_flags.cpp): what the command's forward pass knocks out, with the
// heads checked against the model (exit 2 with the valid range) and the mean contexts
// of --ablate-mode mean measured on the model's reference text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lm/model_trace.hpp"
#include "mha/ablation.hpp"
#include "options/run_options.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

// A seeded or preset layer (one layer, layer 0): sets in.ablate. Mean ablation
// averages each head's context over the input itself (a seeded layer has no other text).
void AblateOwnLayer(const RunOptions& o, const Config& cfg, const std::shared_ptr<const Weights>& weights, Inputs& in);

// A trained checkpoint at `path`: one HeadAblation per layer, or none (empty) without
// --ablate. Mean ablation averages over the model's reference text: a language model's
// validation windows, a task model's held-out examples, and for a model trained on
// other data, the input tokens themselves.
std::vector<HeadAblation> AblateModel(const RunOptions& o, const std::string& path, const Model& m,
                                      const std::vector<int>& tokens);

// How trace and export run a checkpoint at `path` (lm::LoadForTrace): every layer's
// attention core as --attention says, and the heads --ablate knocks out. `o` must
// outlive the call to LoadForTrace.
lm::TraceHow TraceHowFor(const RunOptions& o, const std::string& path);

// "knocked out (zero ablation): L1H3, L0H2" and, if every head is out, why only the
// residual path is left; "" without --ablate.
std::string AblationBanner(const RunOptions& o, int num_layers, int num_heads);

}  // namespace mha::cli
