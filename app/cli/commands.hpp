// The headless subcommands. None of them touches GLFW or needs a display.
#pragma once

#include "lm/model_trace.hpp"
#include "options/model_flags.hpp"

#include <string>
#include <vector>

#include "options/flags.hpp"
#include "prepare.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

// Each subcommand: its flags (one struct), the function that declares them (flags.hpp)
// and the command that runs them. Parse*Args parse without touching files or running
// anything, so the parsers can be fuzzed and tested on their own. They throw UsageError.

// `mhaviz trace`.
struct TraceArgs {
  RunOptions run;
  std::string npz_path, json_path;
  bool quiet = false;
  options::ModelFlags source;    // a trained checkpoint's layer instead of a sentence
  bool grid = false;             // with --model: every layer x head on one picture
  bool attention_given = false;  // --attention: kept for --model's layers too
  bool help = false;             // --help seen: print help_text, ignore the rest
  std::string help_text;
};
void DeclareTraceFlags(CLI::App& app, TraceArgs& t);
TraceArgs ParseTraceArgs(const std::vector<std::string>& args);

// `mhaviz export`.
struct ExportArgs {
  RunOptions run;
  std::string png_path, svg_path;
  int head = 0;
  bool head_given = false;
  int scale = 0;  // 0: the renderer's default
  bool values = true;
  std::string colour_scale = "fixed";  // --color-scale fixed|map|row
  int columns = 0;                     // --columns N; 0: chosen
  bool header = true;                  // --no-header
  std::string fit;                     // --fit W:H, e.g. 16:9
  bool quiet = false;
  options::ModelFlags source;     // a trained checkpoint's layer instead of a sentence
  bool grid = false;              // with --model: every layer x head on one picture
  std::string view = "heatmaps";  // --view heatmaps|head|cost|flash
  std::string tile;               // --tile BRxBC (--view flash), parsed into:
  int tile_br = 4, tile_bc = 4;
  std::string preset;         // --preset lesson|hand|heads: a hand-built example instead of seeded weights
  std::string notebook_path;  // --notebook OUT.ipynb: a Jupyter notebook (and OUT.npz) instead of pictures
  bool help = false;
  std::string help_text;
};
void DeclareExportFlags(CLI::App& app, ExportArgs& e);
ExportArgs ParseExportArgs(const std::vector<std::string>& args);
// export --model M.npz --grid: the layers x heads grid (export_grid.cpp).
int ExportGrid(const ExportArgs& e);
// export --notebook OUT.ipynb: the notebook and the OUT.npz it reads (export_notebook.cpp).
int ExportNotebook(const ExportArgs& e);
// OUT.ipynb -> OUT.npz: where the notebook's tensors go.
std::string NotebookNpzPath(const std::string& ipynb_path);
// export --view cost|flash: the Cost or Flash view's picture of layer `t` (export_views.cpp).
int WriteCostOrFlash(const ExportArgs& e, const Trace& t, const std::string& sentence, double computed_ms);

int TraceCommand(const std::vector<std::string>& args);
int ExportCommand(const std::vector<std::string>& args);
int BenchCommand(const std::vector<std::string>& args);
// `mhaviz ablate`: knock heads out of a trained model (ablate_cmd.cpp).
int AblateCommand(const std::vector<std::string>& args);
// `mhaviz patch`: activation patching of a language model's heads (patch_cmd.cpp).
int PatchCommand(const std::vector<std::string>& args);
// `mhaviz generate`: a language model continues a prompt with the KV cache (generate_cmd.cpp).
int GenerateCommand(const std::vector<std::string>& args);
// bench --train: one training step (bench_train.cpp).
int BenchTrainCommand(const std::vector<std::string>& args);

// "33,554,432"
std::string Thousands(long long n);
// trace --attention flash: a line saying how the scores were computed (the tiles) and
// that no seq x seq_kv tensor was kept (`files`: so the written files hold none).
std::string FlashNote(const Config& c, int seq, int seq_kv, bool files);

}  // namespace mha::cli
