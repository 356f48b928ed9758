// `mhaviz pairs --model M.npz|mhaviz-small [--pairs FILE] [--ablate all|found|HEADS
// [--mode zero|mean]] [--json]`: a language model on minimal pairs
// (app/lm/minimal_pairs.hpp): the accuracy per phenomenon and, for each, the head that
// attends most from the deciding position to the cue word; with --ablate, the proof
// table (app/lm/pairs_table.hpp): every phenomenon without each head, with the drops
// beyond chance marked.
#pragma once

#include <string>
#include <vector>

namespace mha::cli {

int PairsCommand(const std::vector<std::string>& args);

}  // namespace mha::cli
