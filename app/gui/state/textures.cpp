#include "gui/state/textures.hpp"

#include <algorithm>
#include <cmath>

#include <glad/gl.h>

#include "gui/state/app_state.hpp"
#include "render/colormap.hpp"

namespace mha::gui {
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

bool HeatmapTextures::Sync(const Result& r) {
  const render::ColourScale scale = want_scale_;
  if (!r.ok || (r.generation == generation_ && scale == scale_)) return false;
  const Trace& t = r.trace;
  const int n = t.cfg.num_heads + 1;
  // One texel per cell while all maps together fit kMaxTexels; beyond, each texel is
  // the mean weight of a k x k block of cells (what minified sampling shows anyway),
  // so the textures stay bounded: 255 maps of 1024 x 1024 cells were 1 GiB.
  const double total = static_cast<double>(n) * t.seq * t.seq_kv;
  const int k = total <= kMaxTexels ? 1 : static_cast<int>(std::ceil(std::sqrt(total / kMaxTexels)));
  const int tw = (t.seq_kv + k - 1) / k, th = (t.seq + k - 1) / k;
  const bool resize = tw != w_ || th != h_;
  if (static_cast<int>(ids_.size()) != n) {
    if (!ids_.empty()) glDeleteTextures(static_cast<GLsizei>(ids_.size()), ids_.data());
    ids_.assign(static_cast<std::size_t>(n), 0u);
    glGenTextures(n, ids_.data());
    for (unsigned id : ids_) BindNewTexture(id, minified_ ? GL_LINEAR_MIPMAP_LINEAR : GL_NEAREST);
    w_ = h_ = 0;
  }
  const std::size_t cells = static_cast<std::size_t>(t.seq) * t.seq_kv;
  const std::size_t texels = static_cast<std::size_t>(tw) * th;
  rgba_.resize(texels * 4);
  // Masked cells: -inf scores. Only a causal mask makes them, and it hides the same
  // cells in every head, so head 0's mask is every map's (the mean's included: the
  // exporter greys a mean cell when every head's is masked).
  const bool any_mask = t.cfg.mask == Mask::Causal;
  if (any_mask) {
    masked_.resize(cells);
    for (std::size_t c = 0; c < cells; ++c) masked_[c] = std::isinf(t.scores.data()[c]) && t.scores.data()[c] < 0;
  }
  if (k > 1) {
    block_.resize(texels);
    block_masked_.resize(any_mask ? texels : 0);
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  for (int i = 0; i < n; ++i) {
    const float* src = i < t.cfg.num_heads ? t.attn.data() + static_cast<std::size_t>(i) * cells : r.mean_attn.data();
    const float* values = src;
    const unsigned char* mask = any_mask ? masked_.data() : nullptr;
    int rows = t.seq, cols = t.seq_kv;
    if (k > 1) {
      Reduce(src, mask, t.seq, t.seq_kv, k);
      values = block_.data();
      mask = any_mask ? block_masked_.data() : nullptr;
      rows = th;
      cols = tw;
    }
    // The colour scale divides by the largest weight shown (of the map, or of the row).
    Colour(values, mask, render::ScaleDivisors(scale, values, mask, rows, cols), static_cast<std::size_t>(cols), texels,
           rgba_.data());
    glBindTexture(GL_TEXTURE_2D, ids_[i]);
    if (resize || w_ == 0)
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, tw, th, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
    else
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, tw, th, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  w_ = tw;
  h_ = th;
  cells_per_texel_ = k;
  generation_ = r.generation;
  scale_ = scale;
  mipmaps_ = false;
  if (minified_) BuildMipmaps();
  return true;
}

// block_ = the mean of each k x k block of the rows x cols map `v` (edge blocks over
// the cells they have); block_masked_ = whether every cell of the block is masked.
void HeatmapTextures::Reduce(const float* v, const unsigned char* masked, int rows, int cols, int k) {
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
      block_[b] = static_cast<float>(sum / count);
      if (masked) block_masked_[b] = all_masked;
    }
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

unsigned int MatrixTextures::Get(const std::string& id, const std::string& key, int rows, int cols,
                                 const std::function<void(std::vector<std::uint8_t>&)>& fill) {
  Entry& e = entries_[id];
  e.idle = 0;
  if (e.tex != 0 && e.key == key && e.rows == rows && e.cols == cols) return e.tex;
  rgba_.assign(static_cast<std::size_t>(rows) * cols * 4, 255);
  fill(rgba_);
  if (e.tex == 0) {
    glGenTextures(1, &e.tex);
    BindNewTexture(e.tex, GL_LINEAR);
  } else {
    glBindTexture(GL_TEXTURE_2D, e.tex);
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, cols, rows, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
  glBindTexture(GL_TEXTURE_2D, 0);
  e.key = key;
  e.rows = rows;
  e.cols = cols;
  if (rgba_.size() > (std::size_t(1) << 22)) std::vector<std::uint8_t>().swap(rgba_);  // do not hold big buffers
  return e.tex;
}

void MatrixTextures::EndFrame() {
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
