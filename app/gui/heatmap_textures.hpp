// The attention maps as OpenGL textures: one texel per (query, key) cell, coloured
// once per recompute, so drawing even 16 maps of 512 x 512 cells is 16 quads.
#pragma once

#include <cstdint>
#include <vector>

namespace mha::gui {

struct Result;

class HeatmapTextures {
 public:
  // Re-colours and uploads the maps if `r` is newer than what the textures hold:
  // heads 0..H-1, then the mean over heads at index H. Returns true if it uploaded.
  bool Sync(const Result& r);
  // The GL texture name of map i (as an ImTextureID-compatible integer).
  unsigned int Texture(int i) const { return i >= 0 && i < static_cast<int>(ids_.size()) ? ids_[i] : 0u; }
  // Whether the maps are drawn smaller than one pixel per cell. Then they are
  // sampled through mipmaps (each pixel averages its cells; built on demand);
  // otherwise with plain nearest sampling, which is exact and cheapest.
  void SetMinified(bool minified);
  void Release();  // needs the GL context; called before the window closes

 private:
  std::vector<unsigned int> ids_;
  int w_ = 0, h_ = 0;
  std::uint64_t generation_ = 0;
  bool minified_ = false, mipmaps_ = false;
  void BuildMipmaps();
  void ApplyFilter();
  std::vector<std::uint8_t> rgba_;
  std::vector<unsigned char> masked_;
};

}  // namespace mha::gui
