// `mhaviz export`: placeholder until the CPU heatmap renderer lands (issue: desktop app).
#include <iostream>

#include "commands.hpp"

namespace mha::cli {
int ExportCommand(const std::vector<std::string>&) {
  std::cerr << "mhaviz export: error: heatmap export is not built yet in this version.\n";
  return 1;
}
}  // namespace mha::cli
