// `mhaviz pairs --model M.npz|mhaviz-small [--pairs FILE] [--json]`: a language model on
// minimal pairs (app/lm/minimal_pairs.hpp): the accuracy per phenomenon and, for each,
// the head that attends most from the deciding position to the cue word.
#pragma once

#include <string>
#include <vector>

namespace mha::cli {

int PairsCommand(const std::vector<std::string>& args);

}  // namespace mha::cli
