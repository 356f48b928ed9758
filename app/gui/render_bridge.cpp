#include "gui/render_bridge.hpp"

#include <algorithm>
#include <cmath>

#include <stb/stb_image_write.h>

#ifdef MHAVIZ_HAVE_RENDER
#include "render/heatmap.hpp"
#endif

namespace mha::gui {

#ifdef MHAVIZ_HAVE_RENDER

std::array<std::uint8_t, 3> Colormap(float v) { return render::Colormap(v); }

std::string EncodePng(int width, int height, const std::vector<std::uint8_t>& rgba) {
  render::Image img;
  img.width = width;
  img.height = height;
  img.rgba = rgba;
  return render::EncodePng(img);
}

std::string HeatmapsPng(const Trace& t, int head, int scale, bool values, int* width, int* height) {
  render::HeatmapOptions o;
  o.head = head;
  o.scale = scale;
  o.values = values;
  const render::Image img = render::RenderHeatmaps(t, o);
  if (width) *width = img.width;
  if (height) *height = img.height;
  return render::EncodePng(img);
}

std::string HeatmapsSvg(const Trace& t, int head, int scale, bool values) {
  render::HeatmapOptions o;
  o.head = head;
  o.scale = scale;
  o.values = values;
  return render::RenderHeatmapsSvg(t, o);
}

#else  // until app/render is merged: the same colour map, PNG through libstb

std::array<std::uint8_t, 3> Colormap(float v) {
  // viridis at 9 evenly spaced points, linearly interpolated
  static const std::uint8_t k[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},   {44, 113, 142}, {33, 144, 141},
                                       {39, 173, 129}, {92, 200, 99},  {170, 220, 50},  {253, 231, 37}};
  if (!(v >= 0.0f)) v = 0.0f;
  v = std::min(v, 1.0f) * 8.0f;
  const int i = std::min(static_cast<int>(v), 7);
  const float f = v - static_cast<float>(i);
  std::array<std::uint8_t, 3> c{};
  for (int ch = 0; ch < 3; ++ch)
    c[ch] = static_cast<std::uint8_t>(std::lround(k[i][ch] + f * (k[i + 1][ch] - k[i][ch])));
  return c;
}

std::string EncodePng(int width, int height, const std::vector<std::uint8_t>& rgba) {
  std::string out;
  auto sink = [](void* ctx, void* data, int size) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(sink, &out, width, height, 4, rgba.data(), width * 4))
    throw Error("Could not encode the PNG image.");
  return out;
}

std::string HeatmapsPng(const Trace&, int, int, bool, int*, int*) {
  throw Error("Heatmap export is not built into this version yet (it needs app/render).");
}
std::string HeatmapsSvg(const Trace&, int, int, bool) {
  throw Error("Heatmap export is not built into this version yet (it needs app/render).");
}

#endif

}  // namespace mha::gui
