#include "gui/heatmap_textures.hpp"

#include <glad/gl.h>

#include "gui/app_state.hpp"
#include "gui/render_bridge.hpp"

namespace mha::gui {
namespace {

// 1024 steps of the colour map: finer than 8-bit colour can show.
constexpr int kLut = 1024;

const std::array<std::array<std::uint8_t, 4>, kLut>& Lut() {
  static const auto lut = [] {
    std::array<std::array<std::uint8_t, 4>, kLut> t{};
    for (int i = 0; i < kLut; ++i) {
      const auto c = Colormap(static_cast<float>(i) / (kLut - 1));
      t[i] = {c[0], c[1], c[2], 255};
    }
    return t;
  }();
  return lut;
}

void Colour(const float* v, std::size_t n, std::uint8_t* out) {
  const auto& lut = Lut();
  for (std::size_t i = 0; i < n; ++i) {
    float x = v[i];
    x = x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;  // also maps NaN to 0
    const auto& c = lut[static_cast<int>(x * (kLut - 1) + 0.5f)];
    out[4 * i + 0] = c[0];
    out[4 * i + 1] = c[1];
    out[4 * i + 2] = c[2];
    out[4 * i + 3] = 255;
  }
}

}  // namespace

bool HeatmapTextures::Sync(const Result& r) {
  if (!r.ok || r.generation == generation_) return false;
  const Trace& t = r.trace;
  const int n = t.cfg.num_heads + 1;
  const bool resize = t.seq_kv != w_ || t.seq != h_;
  if (static_cast<int>(ids_.size()) != n) {
    if (!ids_.empty()) glDeleteTextures(static_cast<GLsizei>(ids_.size()), ids_.data());
    ids_.assign(static_cast<std::size_t>(n), 0u);
    glGenTextures(n, ids_.data());
    for (unsigned id : ids_) {
      glBindTexture(GL_TEXTURE_2D, id);
      // Minified (many tokens, small map): average neighbouring cells through the
      // mipmaps instead of aliasing. Magnified: hard cell edges.
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    w_ = h_ = 0;
  }
  const std::size_t cells = static_cast<std::size_t>(t.seq) * t.seq_kv;
  rgba_.resize(cells * 4);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  for (int i = 0; i < n; ++i) {
    const float* src = i < t.cfg.num_heads ? t.attn.data() + static_cast<std::size_t>(i) * cells : r.mean_attn.data();
    Colour(src, cells, rgba_.data());
    glBindTexture(GL_TEXTURE_2D, ids_[i]);
    if (resize || w_ == 0)
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, t.seq_kv, t.seq, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
    else
      glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, t.seq_kv, t.seq, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
    glGenerateMipmap(GL_TEXTURE_2D);
  }
  glBindTexture(GL_TEXTURE_2D, 0);
  w_ = t.seq_kv;
  h_ = t.seq;
  generation_ = r.generation;
  return true;
}

void HeatmapTextures::Release() {
  if (!ids_.empty()) glDeleteTextures(static_cast<GLsizei>(ids_.size()), ids_.data());
  ids_.clear();
  w_ = h_ = 0;
  generation_ = 0;
}

}  // namespace mha::gui
