// The headless subcommands. None of them touches GLFW or needs a display.
#pragma once

#include <string>
#include <vector>

#include "options.hpp"

namespace mha::cli {

// `mhaviz trace` flags, parsed without touching files or running anything, so the
// parser can be fuzzed and tested on its own. Throws UsageError.
struct TraceArgs {
  RunOptions run;
  std::string npz_path, json_path;
  bool quiet = false;
  bool help = false;  // --help seen: print help, ignore the rest
};
TraceArgs ParseTraceArgs(const std::vector<std::string>& args);

// `mhaviz export` flags, likewise parse-only.
struct ExportArgs {
  RunOptions run;
  std::string png_path, svg_path;
  int head = 0;
  bool head_given = false;
  int scale = 0;  // 0: the renderer's default
  bool values = true;
  bool quiet = false;
  bool help = false;
};
ExportArgs ParseExportArgs(const std::vector<std::string>& args);

int TraceCommand(const std::vector<std::string>& args);
int ExportCommand(const std::vector<std::string>& args);
int BenchCommand(const std::vector<std::string>& args);

// "33,554,432"
std::string Thousands(long long n);

}  // namespace mha::cli
