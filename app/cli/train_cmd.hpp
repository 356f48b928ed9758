// `mhaviz train` and `mhaviz grad`: train a model on a task (or on a batch file) and
// write its checkpoint; one forward and backward pass, written as gradients.
#pragma once

#include <string>
#include <vector>

namespace mha::cli {

int TrainCommand(const std::vector<std::string>& args);
int GradCommand(const std::vector<std::string>& args);

}  // namespace mha::cli
