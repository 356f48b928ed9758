// `mhaviz bench`: placeholder until the benchmark lands (issue: speed).
#include <iostream>

#include "commands.hpp"

namespace mha::cli {
int BenchCommand(const std::vector<std::string>&) {
  std::cerr << "mhaviz bench: error: the benchmark is not built yet in this version.\n";
  return 1;
}
}  // namespace mha::cli
