// The GUI's door to the CPU heatmap renderer (app/render, target mha_render): the
// shared colour map, PNG encoding, and the heatmap images the export writes. One
// colour map for screen and files, so an exported slide matches the window.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mha/mha.hpp"

namespace mha::gui {

// Colour of a softmax weight v in [0, 1] (clamped).
std::array<std::uint8_t, 3> Colormap(float v);

// PNG bytes of a top-down RGBA image.
std::string EncodePng(int width, int height, const std::vector<std::uint8_t>& rgba);

// The heatmaps of `t` as the headless export draws them: all heads + mean
// (head = -1) or one head. Throws mha::Error if the renderer is not built in.
std::string HeatmapsPng(const Trace& t, int head, int scale, bool values, int* width, int* height);
std::string HeatmapsSvg(const Trace& t, int head, int scale, bool values);

}  // namespace mha::gui
