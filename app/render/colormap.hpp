// The colour scales every picture of the app uses, the exported slides and the
// window alike, so a weight has one colour everywhere; and the one rule for the
// colour of text printed on a coloured cell.
#pragma once

#include <array>
#include <cstdint>

namespace mha::render {

using Rgb = std::array<std::uint8_t, 3>;

// Viridis (perceptually uniform, readable in greyscale and for colour-blind viewers).
// v is clamped to [0, 1]; NaN gives the colour of 0.
Rgb Colormap(float v);
// Blue below 0, near-white at 0, red above (ColorBrewer's RdBu, reversed), for
// values with a sign (scores, Q, weights). t is clamped to [-1, 1]; NaN gives white.
Rgb Diverging(float t);
// Colour of cells hidden by the causal mask.
inline constexpr Rgb kMaskedColour{222, 222, 222};

// Text readable on a cell of colour `bg`: white on dark colours, near-black on light
// ones (by the Rec. 709 luma of the sRGB values).
Rgb TextColourOn(Rgb bg);

}  // namespace mha::render
