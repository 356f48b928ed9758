#include "gui/gl_textures.hpp"

#include <algorithm>
#include <cmath>

#include <glad/gl.h>

#include "gui/app_state.hpp"
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
  const bool resize = t.seq_kv != w_ || t.seq != h_;
  if (static_cast<int>(ids_.size()) != n) {
    if (!ids_.empty()) glDeleteTextures(static_cast<GLsizei>(ids_.size()), ids_.data());
    ids_.assign(static_cast<std::size_t>(n), 0u);
    glGenTextures(n, ids_.data());
    for (unsigned id : ids_) BindNewTexture(id, minified_ ? GL_LINEAR_MIPMAP_LINEAR : GL_NEAREST);
    w_ = h_ = 0;
  }
  const std::size_t cells = static_cast<std::size_t>(t.seq) * t.seq_kv;
  rgba_.resize(cells * 4);
  // Masked cells: -inf scores. The mean map's cell is masked when every head's is
  // (as the exporter draws it); with a causal mask that is the same set of cells.
  const bool any_mask = t.cfg.mask == Mask::Causal;
  if (any_mask) {
    masked_.assign(cells * static_cast<std::size_t>(t.cfg.num_heads + 1), 0);
    unsigned char* all = masked_.data() + cells * static_cast<std::size_t>(t.cfg.num_heads);
    std::fill(all, all + cells, 1);
    for (int h = 0; h < t.cfg.num_heads; ++h) {
      const float* sc = t.scores.data() + static_cast<std::size_t>(h) * cells;
      unsigned char* m = masked_.data() + static_cast<std::size_t>(h) * cells;
      for (std::size_t k = 0; k < cells; ++k) {
        m[k] = std::isinf(sc[k]) && sc[k] < 0;
        all[k] &= m[k];
      }
    }
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  for (int i = 0; i < n; ++i) {
    const float* src = i < t.cfg.num_heads ? t.attn.data() + static_cast<std::size_t>(i) * cells : r.mean_attn.data();
    const unsigned char* m = any_mask ? masked_.data() + static_cast<std::size_t>(i) * cells : nullptr;
    Colour(src, m, render::ScaleDivisors(scale, src, m, t.seq, t.seq_kv), static_cast<std::size_t>(t.seq_kv), cells,
           rgba_.data());
    glBindTexture(GL_TEXTURE_2D, ids_[i]);
    if (resize || w_ == 0)
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, t.seq_kv, t.seq, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
    else
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, t.seq_kv, t.seq, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  w_ = t.seq_kv;
  h_ = t.seq;
  generation_ = r.generation;
  scale_ = scale;
  mipmaps_ = false;
  if (minified_) BuildMipmaps();
  return true;
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
