// The app's OpenGL textures: the attention maps of the heatmaps tab, and the small
// matrices of the teaching views. Both colour with render/colormap.hpp, one texel per
// value, so a map of any size is one quad. They need the GL context, and Release()
// before it goes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mha/trace.hpp"
#include "render/colormap.hpp"

namespace mha::gui {

struct Result;

// The attention maps coloured for upload, heads 0..maps-2 then the mean: the CPU half
// of HeatmapTextures::Sync, which a worker thread can do (ColourHeatmaps) while the
// window keeps drawing; HeatmapTextures::Upload then sends it a few maps per frame.
struct HeatmapPixels {
  int maps = 0, w = 0, h = 0;    // texels per map
  int cells_per_texel = 1;       // k: each texel is a k x k block's mean weight
  std::uint64_t generation = 0;  // the Result it was coloured from
  render::ColourScale scale = render::ColourScale::Fixed;
  std::vector<std::uint8_t> rgba;  // maps x (h x w x 4, then each mipmap level's texels)
  // With mipmaps: each map's levels 1.. down to 1 x 1 follow its texels (2 x 2 box
  // means, made on the worker: a software GL builds them on the window's thread).
  bool mipmaps = false;
  std::size_t map_bytes = 0;  // one map with its levels
  int uploaded = 0;           // maps sent to the textures so far
  bool valid() const { return maps > 0; }
};

// Colours every map of `t` (heads, then `mean`) at `scale` into `out`: no GL, safe on
// any thread while nothing writes `t`.
void ColourHeatmaps(const Trace& t, const Mat& mean, std::uint64_t generation, render::ColourScale scale,
                    HeatmapPixels& out, bool mipmaps = false);

// The attention maps: one texel per (query, key) cell, coloured once per recompute,
// so drawing even 16 maps of 512 x 512 cells is 16 quads.
// The window thread's CPU time spent in texture uploads (glTexImage2D, glTexSubImage2D,
// glGenerateMipmap) since the last call: work the GL driver does on the caller's thread,
// which the frame log reports apart from the app's own (TakeUploadCpuMs).
double TakeUploadCpuMs();

class HeatmapTextures {
 public:
  // Re-colours and uploads the maps if `r` is newer than what the textures hold:
  // heads 0..H-1, then the mean over heads at index H. Returns true if it uploaded.
  bool Sync(const Result& r);
  // Whether Sync(r) has work to do (r is newer, or the scale changed), and how many
  // cells it would colour: the window hands big jobs to a worker (recompute.cpp).
  bool Stale(const Result& r) const;
  // Sends maps of `p` (coloured by ColourHeatmaps) to the textures for about
  // `budget_ms`, at least one map per call, with their mipmaps; returns true once every
  // map is uploaded, when the textures hold p's generation and scale.
  bool Upload(HeatmapPixels& p, double budget_ms);
  // What each map's colours are relative to; a new scale re-colours on the next Sync.
  void SetScale(render::ColourScale scale) { want_scale_ = scale; }
  // The GL texture name of map i (as an ImTextureID-compatible integer).
  unsigned int Texture(int i) const { return i >= 0 && i < static_cast<int>(ids_.size()) ? ids_[i] : 0u; }
  // Whether the maps are drawn smaller than one pixel per cell. Then they are
  // sampled through mipmaps (each pixel averages its cells; built on demand);
  // otherwise with plain nearest sampling, which is exact and cheapest.
  void SetMinified(bool minified);
  void Release();  // needs the GL context; called before the window closes
  // Builds one mipmap and copies the framebuffer into a texture once when the window
  // opens: a software GL (llvmpipe) compiles the code for each on first use, 40 ms
  // apiece that would otherwise land in a later frame.
  static void WarmUp();
  // Cells along each side of one texel: 1, or k when the maps were too many texels
  // for kMaxTexels and each texel shows a k x k block's mean weight.
  int CellsPerTexel() const { return cells_per_texel_; }
  // All maps together hold at most this many texels (RGBA: 64 MiB, 85 with mipmaps).
  static constexpr double kMaxTexels = 16.0 * (1 << 20);

 private:
  std::vector<unsigned int> ids_;
  int w_ = 0, h_ = 0, cells_per_texel_ = 1;
  std::uint64_t generation_ = 0;
  render::ColourScale scale_ = render::ColourScale::Fixed, want_scale_ = render::ColourScale::Fixed;
  bool minified_ = false, mipmaps_ = false;
  void BuildMipmaps();
  void ApplyFilter();
  HeatmapPixels pixels_;  // Sync's own, kept between calls
  bool upload_resize_ = false;
};

// Textures for the small heatmaps of the teaching views, one per widget id,
// re-uploaded only when their content key changes.
class MatrixTextures {
 public:
  // Colours rows [row0, row1) of the matrix: RGBA, `rgba` at row0's first pixel.
  using Fill = std::function<void(std::uint8_t* rgba, int row0, int row1)>;
  // Cells coloured and uploaded per frame, all textures together: a 1024 x 1024 map
  // (a softmax over 1024 keys) fills in a few frames instead of one long one.
  static constexpr long long kCellsPerFrame = 1 << 18;
  // The texture for `id`, filled by `fill` when `key` differs from what it holds: at
  // most kCellsPerFrame cells a frame, top rows first; `rows_ready` (if given) says how
  // many rows are coloured (draw only those: the others are undefined). Textures not
  // asked for in 300 frames are deleted.
  unsigned int Get(const std::string& id, const std::string& key, int rows, int cols, const Fill& fill,
                   int* rows_ready = nullptr);
  // Textures asked for this frame and not yet filled.
  int Filling() const;
  void EndFrame();
  void Release();  // needs the GL context

 private:
  struct Entry {
    unsigned int tex = 0;
    std::string key;
    int rows = 0, cols = 0;
    int done_rows = 0;  // rows coloured and uploaded
    int idle = 0;
  };
  std::map<std::string, Entry> entries_;
  std::vector<std::uint8_t> rgba_;
  long long cells_left_ = kCellsPerFrame;  // this frame's
};

}  // namespace mha::gui
