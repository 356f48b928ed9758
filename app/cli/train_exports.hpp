// `mhaviz train`'s pictures for slides: --png/--svg (the layers x heads grid at the end
// of the run), --gif (the grid over the run's snapshots), --curves (loss and accuracy,
// .png or .svg), --curves-csv. They are checked before training, so a typo in a path
// does not cost a run, and written with the checkpoint in one atomic step.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "mha/training_run.hpp"
#include "render/train_render.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

struct TrainExports {
  std::string png, svg, gif, curves, curves_csv;
  bool Pictures() const { return !png.empty() || !svg.empty() || !gif.empty(); }
};

void AddTrainExportFlags(CLI::App& app, TrainExports& e);

// Before anything is trained. UsageError: an extension that does not match its flag,
// two outputs that are one file (however spelled: ./x, a symlink). mha::Error: a
// directory that does not exist or cannot be written, or an output path that is a
// directory (io::CheckOutputs). `others` are the run's other outputs as (flag, path):
// --out, --log.
void CheckExportPaths(const TrainExports& e, const std::vector<std::pair<std::string, std::string>>& others);

// Draws the untrained snapshot's pictures and throws away the result: a grid too big
// to draw or a missing font shows up before training instead of after it.
void TryExports(const TrainExports& e, const Snapshot& first, const render::GridOptions& grid);

// The pictures of a finished (or stopped) run, appended to `files` as (path, bytes).
// Notes on what was simplified go to `notes`.
void RenderExports(const TrainExports& e, const Progress& p, const render::GridOptions& grid, int num_targets,
                   std::vector<std::pair<std::string, std::string>>& files, std::vector<std::string>& notes);

}  // namespace mha::cli
