// The colour scales every picture of the app uses, the exported slides and the
// window alike, so a weight has one colour everywhere; and the one rule for the
// colour of text printed on a coloured cell.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

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

// What a map's colours are relative to. Fixed: the weight itself on [0, 1], so maps
// and heads compare by eye. Map: the weight over the largest weight of its map. Row:
// over the largest of its row, so each query's favourite key is brightest; what long
// sentences need, since a row spread over 30 keys is ~0.03 everywhere and one dark
// colour on the fixed scale. Masked cells stay grey on every scale.
enum class ColourScale { Fixed, Map, Row };
inline constexpr ColourScale kColourScales[] = {ColourScale::Fixed, ColourScale::Map, ColourScale::Row};
const char* ToString(ColourScale s);  // "fixed", "map", "row"
// Parses "fixed", "map" or "row"; false for anything else.
bool ParseColourScale(const std::string& name, ColourScale* out);
// The colour bar's title for the scale ("attention weight", "weight / map max", ...).
const char* ColourScaleTitle(ColourScale s);
// Its short name in the app: "fixed 0-1", "per map", "per row".
const char* ColourScaleLabel(ColourScale s);
// One line for a menu or a tooltip: what the scale divides by.
const char* ColourScaleHelp(ColourScale s);
// The divisor of each row of a rows x cols map (row-major weights; masked cells
// skipped): 1 for Fixed, the map's largest weight for Map, the row's for Row. A
// divisor is never 0 (an all-zero row keeps 1). Colour cell (r, c) as
// Colormap(w[r * cols + c] / divisor[r]).
std::vector<float> ScaleDivisors(ColourScale s, const float* w, const unsigned char* masked, int rows, int cols);

// Text readable on a cell of colour `bg`: white on dark colours, near-black on light
// ones (by the Rec. 709 luma of the sRGB values).
Rgb TextColourOn(Rgb bg);

}  // namespace mha::render
