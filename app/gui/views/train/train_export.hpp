// The Train view's exports for slides: the layers x heads grid at the timeline's step
// (PNG, SVG), the grid over the run's snapshots (GIF), and the curves (PNG, SVG, CSV),
// drawn by render/train_render.hpp, the pictures `mhaviz train --png/--gif/--curves`
// writes. They are drawn and written on a worker thread (a GIF of 50 snapshots takes
// a while), from the run's immutable snapshots, so the window keeps drawing.
#pragma once

#include "gui/state/app_state.hpp"

namespace mha::gui {

enum class TrainExport { GridPng, GridSvg, Gif, CurvesPng, CurvesSvg, CurvesCsv };

// The file `kind` goes to: the stem in Training(s).export_stem plus its suffix
// ("mhaviz-train-grid.png", "mhaviz-train.gif", "mhaviz-train-curves.csv").
std::string TrainExportPath(const AppState& s, TrainExport kind);
// Whether `kind` has something to draw now (a snapshot or a loaded model; a run's
// snapshots for the GIF and the curves).
bool TrainExportAvailable(const AppState& s, TrainExport kind);
// Starts the export in the background; the outcome lands in Training(s).message when done.
void StartTrainExport(AppState& s, TrainExport kind);
// Once per frame: collects a finished export. True while one is running.
bool PollTrainExport(AppState& s);
// --dump-state / --probe: whether an export is running.
bool TrainExportRunning(const AppState& s);

// The export row of the Train view.
void DrawTrainExportRow(AppState& s);

}  // namespace mha::gui
