// The layers x heads grid as a Scene, for the PNG, the SVG and the GIF's frames.
// Internal to mha_render.
#pragma once

#include "render/scene.hpp"
#include "render/train_render.hpp"

namespace mha::render {

// The grid laid out within max_pixels (the scale is lowered to fit; mha::Error if even
// the smallest layout does not). `svg`: give every cell its data attributes and tooltip
// (a raster needs neither, and a big grid has hundreds of thousands of cells).
Scene GridScene(const GridInput& in, const GridOptions& o, Text& text, long long max_pixels, bool svg = false);
// A snapshot's probe, head labels and caption ("step 300 of 800 · held-out loss ...").
GridInput SnapshotGridInput(const Snapshot& s, const GridOptions& o);

}  // namespace mha::render
