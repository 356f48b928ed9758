// Naming heads on the command line, for `ablate --heads` and the --ablate flag of
// trace, export and gui: one parser, so every command accepts and refuses the same.
//
//   1.3          layer 1, head 3 (LAYER.HEAD, both counted from 0)
//   L1H3, l1h3   the same, as the Model view names heads
//   0.1,1.3      several, separated by commas
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "mha/ablation.hpp"

namespace mha::options {

struct RunOptions;

// The heads of `text`, in the order given. Throws UsageError naming `flag` for an
// empty list, an item that is not a head (1-3, 1.x, L1) or a head named twice.
std::vector<HeadRef> ParseHeadList(const std::string& flag, const std::string& text);

// After the model is known: throws UsageError naming `flag` and the valid range
// (L0H0 to L{layers-1}H{heads-1}) for a layer or head the model does not have, and,
// unless `allow_all`, for a list naming every head of a model that has more than one.
void CheckHeadsFit(const std::string& flag, const std::vector<HeadRef>& heads, int num_layers, int num_heads,
                   const std::string& model_name, bool allow_all = false);

// ParseHeadList's message, or "" if `text` is a head list (for a CLI11 check).
std::string HeadListError(const std::string& flag, const std::string& text);

// "zero" | "mean"; throws UsageError naming `flag`.
AblationMode ParseAblationMode(const std::string& flag, const std::string& text);

// --ablate L.H,... and --ablate-mode zero|mean, into o.ablate and o.ablate_mode
// (AddRunFlags calls it: trace, export and gui share the declaration).
void AddAblateFlags(CLI::App& app, RunOptions& o);

// The sentence a learner reads when all heads of a model are out, or "".
std::string ResidualOnlyNote(const std::vector<HeadRef>& heads, int num_layers, int num_heads);

}  // namespace mha::options
