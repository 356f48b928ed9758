#include "gui/state/textures.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

#include <glad/gl.h>

#include "gui/state/app_state.hpp"
#include "options/timing.hpp"
#include "render/colormap.hpp"

namespace mha::gui {

namespace {
double g_upload_cpu_ms = 0;  // the window thread's only: textures are made there
// Adds the calling thread's CPU time between its construction and destruction.
struct UploadClock {
  double t0 = options::ThreadCpuMs();
  ~UploadClock() { g_upload_cpu_ms += options::ThreadCpuMs() - t0; }
};
}  // namespace

double TakeUploadCpuMs() {
  const double ms = g_upload_cpu_ms;
  g_upload_cpu_ms = 0;
  return ms;
}
namespace {

// 4096 steps of the exporter's colour map: the 8-bit colours equal render::Colormap's
// (to within one level at a step boundary), so the window matches exported slides.
constexpr int kLut = 4096;

const std::array<std::array<std::uint8_t, 4>, kLut>& Lut() {
  static const auto lut = [] {
    std::array<std::array<std::uint8_t, 4>, kLut> t{};
    for (int i = 0; i < kLut; ++i) {
      const auto c = render::Colormap(static_cast<float>(i) / (kLut - 1));
      t[i] = {c[0], c[1], c[2], 255};
    }
    return t;
  }();
  return lut;
}

// Colours n weights; cells whose `masked` count reaches `masked_if` get the
// exporter's masked grey (a causal mask hides them; their weight is exactly 0).
// Each row is divided by its divisor first (the colour scale: 1 for the fixed one).
void Colour(const float* v, const unsigned char* masked, const std::vector<float>& divisor, std::size_t cols,
            std::size_t n, std::uint8_t* out) {
  const auto& lut = Lut();
  for (std::size_t i = 0; i < n; ++i) {
    float x = v[i] / divisor[i / cols];
    x = x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;  // also maps NaN to 0
    std::array<std::uint8_t, 4> c = lut[static_cast<int>(x * (kLut - 1) + 0.5f)];
    if (masked && masked[i]) c = {render::kMaskedColour[0], render::kMaskedColour[1], render::kMaskedColour[2], 255};
    out[4 * i + 0] = c[0];
    out[4 * i + 1] = c[1];
    out[4 * i + 2] = c[2];
    out[4 * i + 3] = 255;
  }
}

// Binds a fresh texture and sets how it is sampled: magnified cells stay sharp
// squares, and nothing wraps around at the edges.
void BindNewTexture(GLuint id, GLint min_filter) {
  glBindTexture(GL_TEXTURE_2D, id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, min_filter);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
}

}  // namespace

namespace {

// The mean of each k x k block of the rows x cols map `v` (edge blocks over the cells
// they have), and whether every cell of the block is masked.
void Reduce(const float* v, const unsigned char* masked, int rows, int cols, int k, std::vector<float>& block,
            std::vector<unsigned char>& block_masked) {
  const int tw = (cols + k - 1) / k, th = (rows + k - 1) / k;
  for (int bi = 0; bi < th; ++bi)
    for (int bj = 0; bj < tw; ++bj) {
      double sum = 0;
      int count = 0;
      bool all_masked = true;
      for (int i = bi * k; i < std::min(rows, bi * k + k); ++i)
        for (int j = bj * k; j < std::min(cols, bj * k + k); ++j) {
          const std::size_t c = static_cast<std::size_t>(i) * cols + j;
          sum += v[c];
          ++count;
          if (masked) all_masked = all_masked && masked[c];
        }
      const std::size_t b = static_cast<std::size_t>(bi) * tw + bj;
      block[b] = static_cast<float>(sum / count);
      if (masked) block_masked[b] = all_masked;
    }
}

}  // namespace

// Mipmap level sizes below w x h, down to 1 x 1.
std::vector<std::array<int, 2>> MipLevels(int w, int h) {
  std::vector<std::array<int, 2>> levels;
  while (w > 1 || h > 1) {
    w = std::max(1, w / 2);
    h = std::max(1, h / 2);
    levels.push_back({w, h});
  }
  return levels;
}

// Level `dst` (dw x dh) from level `src` (sw x sh): each texel the mean of its 2 x 2
// block (a 1-texel side keeps its one texel).
void HalveLevel(const std::uint8_t* src, int sw, int sh, std::uint8_t* dst, int dw, int dh) {
  for (int y = 0; y < dh; ++y)
    for (int x = 0; x < dw; ++x) {
      const int x0 = std::min(2 * x, sw - 1), x1 = std::min(2 * x + 1, sw - 1);
      const int y0 = std::min(2 * y, sh - 1), y1 = std::min(2 * y + 1, sh - 1);
      for (int c = 0; c < 4; ++c) {
        const int sum = src[(static_cast<std::size_t>(y0) * sw + x0) * 4 + c] +
                        src[(static_cast<std::size_t>(y0) * sw + x1) * 4 + c] +
                        src[(static_cast<std::size_t>(y1) * sw + x0) * 4 + c] +
                        src[(static_cast<std::size_t>(y1) * sw + x1) * 4 + c];
        dst[(static_cast<std::size_t>(y) * dw + x) * 4 + c] = static_cast<std::uint8_t>((sum + 2) / 4);
      }
    }
}

void ColourHeatmaps(const Trace& t, const Mat& mean, std::uint64_t generation, render::ColourScale scale,
                    HeatmapPixels& out, bool mipmaps) {
  const int n = t.cfg.num_heads + 1;
  // One texel per cell while all maps together fit kMaxTexels; beyond, each texel is
  // the mean weight of a k x k block of cells (what minified sampling shows anyway),
  // so the textures stay bounded: 255 maps of 1024 x 1024 cells were 1 GiB.
  const double total = static_cast<double>(n) * t.seq * t.seq_kv;
  const double cap = HeatmapTextures::kMaxTexels;
  const int k = total <= cap ? 1 : static_cast<int>(std::ceil(std::sqrt(total / cap)));
  const int tw = (t.seq_kv + k - 1) / k, th = (t.seq + k - 1) / k;
  const std::size_t cells = static_cast<std::size_t>(t.seq) * t.seq_kv;
  const std::size_t texels = static_cast<std::size_t>(tw) * th;
  out.maps = n;
  out.w = tw;
  out.h = th;
  out.cells_per_texel = k;
  out.generation = generation;
  out.scale = scale;
  out.uploaded = 0;
  out.mipmaps = mipmaps;
  const auto levels = mipmaps ? MipLevels(tw, th) : std::vector<std::array<int, 2>>();
  out.map_bytes = texels * 4;
  for (const auto& l : levels) out.map_bytes += static_cast<std::size_t>(l[0]) * l[1] * 4;
  out.rgba.resize(out.map_bytes * static_cast<std::size_t>(n));
  // Masked cells: -inf scores. Only a causal mask makes them, and it hides the same
  // cells in every head, so head 0's mask is every map's (the mean's included: the
  // exporter greys a mean cell when every head's is masked).
  const bool any_mask = t.cfg.mask == Mask::Causal;
  std::vector<unsigned char> masked;
  if (any_mask) {
    masked.resize(cells);
    for (std::size_t c = 0; c < cells; ++c) masked[c] = std::isinf(t.scores.data()[c]) && t.scores.data()[c] < 0;
  }
  std::vector<float> block(k > 1 ? texels : 0);
  std::vector<unsigned char> block_masked(k > 1 && any_mask ? texels : 0);
  for (int i = 0; i < n; ++i) {
    const float* src = i < t.cfg.num_heads ? t.attn.data() + static_cast<std::size_t>(i) * cells : mean.data();
    const float* values = src;
    const unsigned char* mask = any_mask ? masked.data() : nullptr;
    int rows = t.seq, cols = t.seq_kv;
    if (k > 1) {
      Reduce(src, mask, t.seq, t.seq_kv, k, block, block_masked);
      values = block.data();
      mask = any_mask ? block_masked.data() : nullptr;
      rows = th;
      cols = tw;
    }
    // The colour scale divides by the largest weight shown (of the map, or of the row).
    std::uint8_t* map = out.rgba.data() + out.map_bytes * static_cast<std::size_t>(i);
    Colour(values, mask, render::ScaleDivisors(scale, values, mask, rows, cols), static_cast<std::size_t>(cols), texels,
           map);
    std::uint8_t* level = map;
    int lw = tw, lh = th;
    for (const auto& l : levels) {
      std::uint8_t* next = level + static_cast<std::size_t>(lw) * lh * 4;
      HalveLevel(level, lw, lh, next, l[0], l[1]);
      level = next;
      lw = l[0];
      lh = l[1];
    }
  }
}

bool HeatmapTextures::Stale(const Result& r) const {
  return r.ok && (r.generation != generation_ || want_scale_ != scale_);
}

bool HeatmapTextures::Sync(const Result& r) {
  if (!Stale(r)) return false;
  ColourHeatmaps(r.trace, r.mean_attn, r.generation, want_scale_, pixels_);  // GL makes mipmaps if minified
  Upload(pixels_, 1e30);
  // Sync's pixels are only needed until they are uploaded: a big set is not kept.
  if (pixels_.rgba.size() > (std::size_t(1) << 22)) std::vector<std::uint8_t>().swap(pixels_.rgba);
  return true;
}

bool HeatmapTextures::Upload(HeatmapPixels& p, double budget_ms) {
  if (!p.valid()) return true;
  const auto t0 = std::chrono::steady_clock::now();
  if (p.uploaded == 0) {
    if (static_cast<int>(ids_.size()) != p.maps) {
      if (!ids_.empty()) glDeleteTextures(static_cast<GLsizei>(ids_.size()), ids_.data());
      ids_.assign(static_cast<std::size_t>(p.maps), 0u);
      glGenTextures(p.maps, ids_.data());
      for (unsigned id : ids_) BindNewTexture(id, minified_ ? GL_LINEAR_MIPMAP_LINEAR : GL_NEAREST);
      w_ = h_ = 0;
    }
    // (levels given need textures that have them: the last set may have had none)
    upload_resize_ = p.w != w_ || p.h != h_ || (p.mipmaps && !mipmaps_);
    // Half-uploaded textures are never shown: the window shows the last frame's
    // picture until the last map is in (recompute.cpp), or Sync uploads all at once.
    generation_ = 0;
  }
  // Mipmaps come with the pixels (the worker made them) or from GL when the maps are
  // drawn minified, so that SetMinified never has to build them all in one frame.
  const bool mip = p.mipmaps || minified_;
  const auto levels = p.mipmaps ? MipLevels(p.w, p.h) : std::vector<std::array<int, 2>>();
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  const UploadClock clock;
  while (p.uploaded < p.maps) {
    const int i = p.uploaded++;
    glBindTexture(GL_TEXTURE_2D, ids_[static_cast<std::size_t>(i)]);
    const std::uint8_t* data = p.rgba.data() + p.map_bytes * static_cast<std::size_t>(i);
    int level = 0, lw = p.w, lh = p.h;
    for (std::size_t l = 0; l <= levels.size(); ++l) {
      if (upload_resize_)
        glTexImage2D(GL_TEXTURE_2D, level, GL_RGBA8, lw, lh, 0, GL_RGBA, GL_UNSIGNED_BYTE, data);
      else
        glTexSubImage2D(GL_TEXTURE_2D, level, 0, 0, lw, lh, GL_RGBA, GL_UNSIGNED_BYTE, data);
      data += static_cast<std::size_t>(lw) * lh * 4;
      if (l == levels.size()) break;
      ++level;
      lw = levels[l][0];
      lh = levels[l][1];
    }
    if (mip && !p.mipmaps) glGenerateMipmap(GL_TEXTURE_2D);
    if (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >= budget_ms) break;
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  if (p.uploaded < p.maps) return false;
  w_ = p.w;
  h_ = p.h;
  cells_per_texel_ = p.cells_per_texel;
  generation_ = p.generation;
  scale_ = p.scale;
  mipmaps_ = mip;
  if (minified_ && !mipmaps_) BuildMipmaps();
  return true;
}

void HeatmapTextures::WarmUp() {
  GLuint id = 0;
  glGenTextures(1, &id);
  BindNewTexture(id, GL_LINEAR_MIPMAP_LINEAR);
  const std::vector<std::uint8_t> texels(1024 * 1024 * 4, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 1024, 1024, 0, GL_RGBA, GL_UNSIGNED_BYTE, texels.data());
  glGenerateMipmap(GL_TEXTURE_2D);
  // ... and its copy from the framebuffer into a texture (the worker's picture of the
  // results area), 42 ms on first use.
  glCopyTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 0, 0, 64, 64, 0);
  glFinish();
  glBindTexture(GL_TEXTURE_2D, 0);
  glDeleteTextures(1, &id);
}

void HeatmapTextures::BuildMipmaps() {
  for (unsigned id : ids_) {
    glBindTexture(GL_TEXTURE_2D, id);
    glGenerateMipmap(GL_TEXTURE_2D);
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  mipmaps_ = true;
}

void HeatmapTextures::ApplyFilter() {
  for (unsigned id : ids_) {
    glBindTexture(GL_TEXTURE_2D, id);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, minified_ ? GL_LINEAR_MIPMAP_LINEAR : GL_NEAREST);
  }
  glBindTexture(GL_TEXTURE_2D, 0);
}

void HeatmapTextures::SetMinified(bool minified) {
  if (minified == minified_) return;
  minified_ = minified;
  if (minified_ && !mipmaps_ && !ids_.empty()) BuildMipmaps();
  ApplyFilter();
}

void HeatmapTextures::Release() {
  if (!ids_.empty()) glDeleteTextures(static_cast<GLsizei>(ids_.size()), ids_.data());
  ids_.clear();
  w_ = h_ = 0;
  generation_ = 0;
  mipmaps_ = false;
}

unsigned int MatrixTextures::Get(const std::string& id, const std::string& key, int rows, int cols, const Fill& fill,
                                 int* rows_ready) {
  Entry& e = entries_[id];
  e.idle = 0;
  if (e.tex == 0 || e.key != key || e.rows != rows || e.cols != cols) {
    if (e.tex == 0) {
      glGenTextures(1, &e.tex);
      BindNewTexture(e.tex, GL_LINEAR);
    } else {
      glBindTexture(GL_TEXTURE_2D, e.tex);
    }
    // Storage only (a new size): the rows are coloured below, all at once when they fit
    // this frame's budget (the usual case), else over the next frames.
    if (e.rows != rows || e.cols != cols) {
      const UploadClock clock;
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, cols, rows, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    }
    glBindTexture(GL_TEXTURE_2D, 0);
    e.key = key;
    e.rows = rows;
    e.cols = cols;
    e.done_rows = 0;
  }
  if (e.done_rows < rows && cells_left_ > 0) {
    const int n = std::clamp(static_cast<int>(cells_left_ / std::max(cols, 1)), 1, rows - e.done_rows);
    rgba_.assign(static_cast<std::size_t>(n) * cols * 4, 255);
    fill(rgba_.data(), e.done_rows, e.done_rows + n);
    glBindTexture(GL_TEXTURE_2D, e.tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    {
      const UploadClock clock;
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, e.done_rows, cols, n, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
    }
    glBindTexture(GL_TEXTURE_2D, 0);
    e.done_rows += n;
    cells_left_ -= static_cast<long long>(n) * cols;
  }
  if (rgba_.size() > (std::size_t(1) << 22)) std::vector<std::uint8_t>().swap(rgba_);  // do not hold big buffers
  if (rows_ready) *rows_ready = e.done_rows;
  return e.tex;
}

int MatrixTextures::Filling() const {
  int n = 0;
  for (const auto& [id, e] : entries_) n += e.idle == 0 && e.done_rows < e.rows;
  return n;
}

void MatrixTextures::EndFrame() {
  cells_left_ = kCellsPerFrame;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (++it->second.idle > 300) {
      if (it->second.tex) glDeleteTextures(1, &it->second.tex);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

void MatrixTextures::Release() {
  for (auto& [id, e] : entries_)
    if (e.tex) glDeleteTextures(1, &e.tex);
  entries_.clear();
}

}  // namespace mha::gui
