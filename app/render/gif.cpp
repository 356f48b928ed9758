// The grid over a run's snapshots as an animated GIF (giflib).
//
// One fixed palette serves every frame: viridis is smooth, so 184 samples of it stay
// within about 1/255 of any cell colour; 70 greys cover the text's anti-aliasing on
// white; one entry is the masked grey and one is reserved as "unchanged". Each frame
// after the first stores only the rectangle where it differs from the previous one,
// with the unchanged pixels inside it transparent: between snapshots only the cells
// and the caption's numbers change, so a 50-frame GIF stays a few hundred KiB.
#include <gif_lib.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "render/grid_scene.hpp"

namespace mha::render {
namespace {

constexpr int kUnchanged = 0;  // the transparent index
constexpr int kViridisFirst = 1, kViridisCount = 184, kGreyFirst = 185, kGreyCount = 70, kMaskedIndex = 255;

struct Palette {
  std::array<Rgb, 256> colours{};
  std::unordered_map<std::uint32_t, std::uint8_t> nearest;  // cache: most pixels are flat colours

  Palette() {
    colours[kUnchanged] = {255, 0, 255};
    for (int i = 0; i < kViridisCount; ++i)
      colours[kViridisFirst + i] = Colormap(static_cast<float>(i) / (kViridisCount - 1));
    for (int i = 0; i < kGreyCount; ++i) {
      const auto v = static_cast<std::uint8_t>(std::lround(255.0 * i / (kGreyCount - 1)));
      colours[kGreyFirst + i] = {v, v, v};
    }
    colours[kMaskedIndex] = kMaskedColour;
  }

  std::uint8_t Index(const std::uint8_t* rgb) {
    const std::uint32_t key = (std::uint32_t(rgb[0]) << 16) | (std::uint32_t(rgb[1]) << 8) | rgb[2];
    const auto it = nearest.find(key);
    if (it != nearest.end()) return it->second;
    int best = 1;
    long best_d = -1;
    for (int i = 1; i < 256; ++i) {  // never the reserved index
      // Weighted by the eye's sensitivity (green most), as a cheap perceptual distance.
      const long dr = rgb[0] - colours[i][0], dg = rgb[1] - colours[i][1], db = rgb[2] - colours[i][2];
      const long d = 3 * dr * dr + 4 * dg * dg + 2 * db * db;
      if (best_d < 0 || d < best_d) {
        best_d = d;
        best = i;
      }
    }
    return nearest[key] = static_cast<std::uint8_t>(best);
  }
};

// Indices of the frames to draw: all snapshots, or an even choice keeping both ends.
std::vector<std::size_t> PickFrames(std::size_t n) {
  const std::size_t m = static_cast<std::size_t>(GifFrameCount(static_cast<int>(n)));
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < m; ++i) idx.push_back(m == 1 ? n - 1 : (i * (n - 1) + (m - 1) / 2) / (m - 1));
  return idx;
}

int WriteToString(GifFileType* gif, const GifByteType* data, int len) {
  static_cast<std::string*>(gif->UserData)->append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(len));
  return len;
}

class GifWriter {
 public:
  GifWriter(int w, int h, const Palette& pal, bool loop) : w_(w), h_(h) {
    int err = 0;
    gif_.reset(EGifOpen(&out_, WriteToString, &err));
    if (!gif_) Fail(err);
    EGifSetGifVersion(gif_.get(), true);
    GifColorType colours[256];
    for (int i = 0; i < 256; ++i) colours[i] = {pal.colours[i][0], pal.colours[i][1], pal.colours[i][2]};
    ColorMapObject* map = GifMakeMapObject(256, colours);
    const int ok = map ? EGifPutScreenDesc(gif_.get(), w, h, 8, 0, map) : GIF_ERROR;
    GifFreeMapObject(map);
    if (ok == GIF_ERROR) Fail(gif_->Error);
    if (loop) {
      static const GifByteType kLoop[3] = {1, 0, 0};  // sub-block 1: loop count 0 = forever
      if (EGifPutExtensionLeader(gif_.get(), APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
          EGifPutExtensionBlock(gif_.get(), 11, "NETSCAPE2.0") == GIF_ERROR ||
          EGifPutExtensionBlock(gif_.get(), 3, kLoop) == GIF_ERROR || EGifPutExtensionTrailer(gif_.get()) == GIF_ERROR)
        Fail(gif_->Error);
    }
  }

  // A frame of palette indices (w x h); only what changed since the last frame is stored.
  void Frame(const std::vector<std::uint8_t>& px, int delay_ms) {
    int x0 = 0, y0 = 0, x1 = w_, y1 = h_;
    if (!prev_.empty()) {
      x0 = w_, y0 = h_, x1 = 0, y1 = 0;
      for (int y = 0; y < h_; ++y)
        for (int x = 0; x < w_; ++x) {
          const std::size_t i = static_cast<std::size_t>(y) * w_ + x;
          if (px[i] == prev_[i]) continue;
          x0 = std::min(x0, x), x1 = std::max(x1, x + 1), y0 = std::min(y0, y), y1 = std::max(y1, y + 1);
        }
      if (x1 <= x0) x0 = y0 = 0, x1 = y1 = 1;  // nothing changed: one transparent pixel holds the delay
    }
    GraphicsControlBlock gcb{};
    gcb.DisposalMode = DISPOSE_DO_NOT;
    gcb.DelayTime = std::max(2, (delay_ms + 5) / 10);  // centiseconds
    gcb.TransparentColor = prev_.empty() ? NO_TRANSPARENT_COLOR : kUnchanged;
    GifByteType ext[4];
    const std::size_t len = EGifGCBToExtension(&gcb, ext);
    if (EGifPutExtension(gif_.get(), GRAPHICS_EXT_FUNC_CODE, static_cast<int>(len), ext) == GIF_ERROR ||
        EGifPutImageDesc(gif_.get(), x0, y0, x1 - x0, y1 - y0, false, nullptr) == GIF_ERROR)
      Fail(gif_->Error);
    std::vector<GifPixelType> row(static_cast<std::size_t>(x1 - x0));
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) {
        const std::size_t i = static_cast<std::size_t>(y) * w_ + x;
        row[static_cast<std::size_t>(x - x0)] = !prev_.empty() && px[i] == prev_[i] ? kUnchanged : px[i];
      }
      if (EGifPutLine(gif_.get(), row.data(), x1 - x0) == GIF_ERROR) Fail(gif_->Error);
    }
    prev_ = px;
  }

  std::string Finish() {
    int err = 0;
    const int ok = EGifCloseFile(gif_.release(), &err);
    if (ok == GIF_ERROR) Fail(err);
    return std::move(out_);
  }

 private:
  [[noreturn]] static void Fail(int err) {
    const char* why = GifErrorString(err);
    throw Error(std::string("GIF encoding failed (giflib: ") + (why ? why : "unknown error") + ").");
  }
  int w_, h_;
  struct Close {
    void operator()(GifFileType* g) const { EGifCloseFile(g, nullptr); }
  };
  std::unique_ptr<GifFileType, Close> gif_;  // closed (and freed) on every path
  std::string out_;
  std::vector<std::uint8_t> prev_;
};

}  // namespace

int GifFrameCount(int snapshots) { return std::clamp(snapshots, 0, kMaxGifFrames); }

std::string EncodeGridGif(const std::vector<std::shared_ptr<const Snapshot>>& snapshots, const GifOptions& o) {
  if (snapshots.empty()) throw Error("There are no snapshots to animate: the run has not started.");
  const std::vector<std::size_t> frames = PickFrames(snapshots.size());
  Text text;
  // Every frame on one canvas: the largest frame's size (captions differ in width).
  int W = 0, H = 0;
  for (std::size_t i : frames) {
    const Scene sc = GridScene(SnapshotGridInput(*snapshots[i], o.grid), o.grid, text, kMaxGifPixels);
    W = std::max(W, sc.width);
    H = std::max(H, sc.height);
  }
  Palette pal;
  GifWriter gif(W, H, pal, o.loop);
  std::vector<std::uint8_t> px(static_cast<std::size_t>(W) * H);
  for (std::size_t f = 0; f < frames.size(); ++f) {
    const Image img =
        Rasterise(GridScene(SnapshotGridInput(*snapshots[frames[f]], o.grid), o.grid, text, kMaxGifPixels), text);
    const std::uint8_t white[3] = {255, 255, 255};
    std::fill(px.begin(), px.end(), pal.Index(white));
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x)
        px[static_cast<std::size_t>(y) * W + x] =
            pal.Index(&img.rgba[(static_cast<std::size_t>(y) * img.width + x) * 4]);
    const bool last = f + 1 == frames.size();
    gif.Frame(px, last ? o.last_ms : f == 0 ? o.first_ms : o.frame_ms);
  }
  return gif.Finish();
}

}  // namespace mha::render
