// Pictures of a training run for slides, drawn on the CPU like `mhaviz export`'s
// heatmaps (same viridis scale fixed to [0, 1], same grey for masked cells, same font):
//
//   - the layers x heads grid: every head of every layer as a heatmap of its attention
//     on the run's probe example (rows = query tokens, columns = key tokens), one row of
//     maps per layer, each map titled with its head label ("2-back 0.97"), under a
//     caption with the step, the held-out loss and the accuracy per target: PNG or SVG;
//   - the same grid over the run's snapshots as an animated GIF (giflib), one frame per
//     snapshot, each captioned with its step and accuracy, the last frame held longer;
//   - the curves: loss and accuracy per target against the step, as PNG or SVG, and
//     every step as CSV.
//
// Everything here takes the values TrainingRun publishes (a Snapshot, a Progress), so
// the app's Export buttons and `mhaviz train --png/--svg/--gif/--curves` draw the same
// pictures. The PNG and SVG of one picture come from one layout: the SVG's coordinates
// are the PNG's pixels.
//
// Sizes stay bounded: cells shrink (and labels go) before an image passes kMaxPixels;
// a GIF frame is capped at kMaxGifPixels and a GIF at kMaxGifFrames frames (snapshots
// are then skipped evenly, the first and last always kept). Thread-safe like
// RenderHeatmaps (one font, read-only, per process).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mha/training_run.hpp"
#include "render/render.hpp"  // Image, EncodePng

namespace mha::render {

struct GridOptions {
  double scale = 2;     // pixels per point, clamped to [1, 8]; 2 is sharp on slides
  bool values = false;  // print each weight inside its cell when the cell is big enough
  // The caption's first line; "" gives ModelTitle of the snapshot's model.
  std::string title;
  int total_steps = 0;  // > 0: the caption says "step 300 of 800"
};

// "offsets · 1 layer × 2 heads · d_model 16": the caption's first line for a model.
std::string ModelTitle(const ModelConfig& cfg);

// The layout's grid of maps, in Image::panels order: panel i is layer i / num_heads,
// head i % num_heads (PanelInfo::head is the head).
//
// Throws mha::Error if the snapshot has no probe trace, or no font can be read.
Image DrawModelGrid(const Snapshot& s, const GridOptions& o);
// The heatmap cells of a grid: layers x heads x seq x seq_kv. An SVG of more than
// kMaxSvgCells is refused (ModelGridSvg throws mha::Error).
long long GridCellCount(const ModelTrace& probe);
// The same picture as an SVG. Every cell is <rect class="cell" data-layer="l"
// data-head="h" data-row="r" data-col="c"> at the PNG's pixel coordinates, with a
// <title> holding the query, key and weight.
std::string ModelGridSvg(const Snapshot& s, const GridOptions& o);

// The pieces a grid is drawn from, for a model that is not in a Snapshot
// (`mhaviz export --model M.npz --grid`): a probe trace, its token labels, optional
// head labels, and the caption's second line.
struct GridInput {
  const ModelTrace* probe = nullptr;
  std::vector<std::string> tokens;                  // one label per probe token
  const std::vector<HeadProfile>* heads = nullptr;  // null or empty: no labels
  std::string title;                                // the caption's first line
  std::string subtitle;                             // its second line ("" for none)
};
Image DrawModelGrid(const GridInput& in, const GridOptions& o);
std::string ModelGridSvg(const GridInput& in, const GridOptions& o);

inline constexpr long long kMaxGifPixels = 2LL << 20;  // per frame
inline constexpr int kMaxGifFrames = 120;

struct GifOptions {
  GridOptions grid;    // grid.scale defaults to 1.5 here: GIFs stay small
  int frame_ms = 120;  // each snapshot's frame
  int first_ms = 800;  // the untrained heads, held a moment
  int last_ms = 3000;  // the trained heads, held longer before the loop restarts
  bool loop = true;    // loop forever (NETSCAPE2.0)
  GifOptions() { grid.scale = 1.5; }
};

// The grid over `snapshots` (step order, as Progress::snapshots) as an animated GIF:
// a fixed 256-colour palette (viridis, greys for text, the masked grey), and each frame
// after the first stores only the rectangle that changed. Throws mha::Error if there are
// no snapshots or giflib fails.
std::string EncodeGridGif(const std::vector<std::shared_ptr<const Snapshot>>& snapshots, const GifOptions& o);
// How many frames EncodeGridGif draws for n snapshots (at most kMaxGifFrames).
int GifFrameCount(int snapshots);

struct CurveOptions {
  double scale = 2;   // pixels per point, clamped to [1, 8]
  std::string title;  // "" gives "Training: loss and accuracy"
};

// Loss (left axis, log scale when it spans more than a decade) and accuracy per target
// (right axis, 0..1) against the step, from Progress::curve. Throws mha::Error if the
// curve is empty.
Image DrawCurves(const Progress& p, const CurveOptions& o);
std::string CurvesSvg(const Progress& p, const CurveOptions& o);
// Every step of Progress::curve: "step,lr,loss,accuracy_0,...,grad_norm", step 0-based
// (the step's index, as `mhaviz train --log` writes it). num_targets < 0: as many
// accuracy columns as the curve has targets (give it for a curve that may be empty).
std::string CurvesCsv(const Progress& p, int num_targets = -1);

}  // namespace mha::render
