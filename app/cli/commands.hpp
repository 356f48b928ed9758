// The headless subcommands. None of them touches GLFW or needs a display.
#pragma once

#include <string>
#include <vector>

namespace mha::cli {

int TraceCommand(const std::vector<std::string>& args);
int ExportCommand(const std::vector<std::string>& args);
int BenchCommand(const std::vector<std::string>& args);

// "33,554,432"
std::string Thousands(long long n);

}  // namespace mha::cli
