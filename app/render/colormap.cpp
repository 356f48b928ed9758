#include "render/colormap.hpp"
#include "text/i18n.hpp"

#include <algorithm>
#include <cmath>

namespace mha::render {
namespace {

// Viridis (van der Walt & Smith, matplotlib's default colormap, CC0): every 8th entry
// of its 256-entry sRGB table (entries 0, 8, ..., 248 and 255), linearly interpolated
// in between. The curve is smooth enough that this stays within 1/255 of the table.
constexpr int kKnots = 33;
constexpr float kViridis[kKnots][3] = {
    {0.267004f, 0.004874f, 0.329415f}, {0.277018f, 0.050344f, 0.375715f}, {0.282327f, 0.094955f, 0.417331f},
    {0.282884f, 0.135920f, 0.453427f}, {0.278826f, 0.175490f, 0.483397f}, {0.270595f, 0.214069f, 0.507052f},
    {0.258965f, 0.251537f, 0.524736f}, {0.244972f, 0.287675f, 0.537260f}, {0.229739f, 0.322361f, 0.545706f},
    {0.214298f, 0.355619f, 0.551184f}, {0.199430f, 0.387607f, 0.554642f}, {0.185556f, 0.418570f, 0.556753f},
    {0.172719f, 0.448791f, 0.557885f}, {0.160665f, 0.478540f, 0.558115f}, {0.149039f, 0.508051f, 0.557250f},
    {0.137770f, 0.537492f, 0.554906f}, {0.127568f, 0.566949f, 0.550556f}, {0.120565f, 0.596422f, 0.543611f},
    {0.120638f, 0.625828f, 0.533488f}, {0.132268f, 0.655014f, 0.519661f}, {0.157851f, 0.683765f, 0.501686f},
    {0.196571f, 0.711827f, 0.479221f}, {0.246070f, 0.738910f, 0.452024f}, {0.304148f, 0.764704f, 0.419943f},
    {0.369214f, 0.788888f, 0.382914f}, {0.440137f, 0.811138f, 0.340967f}, {0.515992f, 0.831158f, 0.294279f},
    {0.595839f, 0.848717f, 0.243329f}, {0.678489f, 0.863742f, 0.189503f}, {0.762373f, 0.876424f, 0.137064f},
    {0.845561f, 0.887322f, 0.099702f}, {0.926106f, 0.897330f, 0.104071f}, {0.993248f, 0.906157f, 0.143936f},
};

float KnotPosition(int i) { return i == kKnots - 1 ? 1.0f : static_cast<float>(i * 8) / 255.0f; }

// RdBu (ColorBrewer), reversed: negative blue, zero near-white, positive red.
constexpr float kDiverging[5][3] = {{33, 102, 172}, {146, 197, 222}, {247, 247, 247}, {244, 165, 130}, {178, 24, 43}};

}  // namespace

Rgb Colormap(float v) {
  if (!(v > 0)) v = 0;  // also NaN
  if (v > 1) v = 1;
  // Knot i sits at i*8/255, so the segment is found directly (called per cell).
  int i = std::min(kKnots - 2, static_cast<int>(v * (255.0f / 8.0f)));
  while (i > 0 && v < KnotPosition(i)) --i;
  while (i < kKnots - 2 && v > KnotPosition(i + 1)) ++i;
  const float a = KnotPosition(i), b = KnotPosition(i + 1);
  const float f = (v - a) / (b - a);
  Rgb c{};
  for (int k = 0; k < 3; ++k) {
    const float x = kViridis[i][k] + f * (kViridis[i + 1][k] - kViridis[i][k]);
    c[k] = static_cast<std::uint8_t>(x * 255.0f + 0.5f);  // x in [0, 1]: rounds half up
  }
  return c;
}

Rgb Diverging(float t) {
  if (std::isnan(t)) t = 0;
  t = std::clamp(t, -1.0f, 1.0f);
  const float x = (t + 1.0f) * 2.0f;  // [0, 4]
  const int i = std::min(3, static_cast<int>(x));
  const float f = x - i;
  Rgb c{};
  for (int k = 0; k < 3; ++k)
    c[k] = static_cast<std::uint8_t>(kDiverging[i][k] + f * (kDiverging[i + 1][k] - kDiverging[i][k]) + 0.5f);
  return c;
}

const char* ToString(ColourScale s) {
  switch (s) {
    case ColourScale::Map: return "map";
    case ColourScale::Row: return "row";
    default: return "fixed";
  }
}

bool ParseColourScale(const std::string& name, ColourScale* out) {
  for (ColourScale s : kColourScales)
    if (name == ToString(s)) {
      *out = s;
      return true;
    }
  return false;
}

const char* ColourScaleTitle(ColourScale s) {
  switch (s) {
    case ColourScale::Map: return _("weight / map max");
    case ColourScale::Row: return _("weight / row max");
    default: return _("attention weight");
  }
}

const char* ColourScaleLabel(ColourScale s) {
  switch (s) {
    case ColourScale::Map: return _("per map");
    case ColourScale::Row: return _("per row");
    default: return _("fixed 0-1");
  }
}

const char* ColourScaleHelp(ColourScale s) {
  switch (s) {
    case ColourScale::Map: return _("per map: each map's largest weight is the brightest colour");
    case ColourScale::Row: return _("per row: each query's largest weight is the brightest colour");
    default: return _("fixed [0, 1]: one scale for every map, so heads compare by eye");
  }
}

std::vector<float> ScaleDivisors(ColourScale s, const float* w, const unsigned char* masked, int rows, int cols) {
  std::vector<float> div(static_cast<std::size_t>(std::max(rows, 0)), 1.0f);
  if (s == ColourScale::Fixed) return div;
  float map_max = 0.0f;
  for (int r = 0; r < rows; ++r) {
    float m = 0.0f;
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      if (masked && masked[i]) continue;
      if (w[i] > m) m = w[i];  // (NaN is never larger)
    }
    div[static_cast<std::size_t>(r)] = m > 0.0f ? m : 1.0f;
    map_max = std::max(map_max, m);
  }
  if (s == ColourScale::Map) std::fill(div.begin(), div.end(), map_max > 0.0f ? map_max : 1.0f);
  return div;
}

Rgb TextColourOn(Rgb bg) {
  const double luma = 0.2126 * bg[0] + 0.7152 * bg[1] + 0.0722 * bg[2];
  return luma < 128 ? Rgb{255, 255, 255} : Rgb{17, 17, 17};
}

}  // namespace mha::render
