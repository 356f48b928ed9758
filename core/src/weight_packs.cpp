// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "weight_packs.hpp"

#include <algorithm>

#include "gemm.hpp"

namespace mha::detail {

namespace {
int Panels(int n) { return (n + kNR - 1) / kNR; }
}  // namespace

PackSizes SizesOf(int d, int kv_width, int f) {
  PackSizes z;
  z.wpanel = PanelFloats(d);
  z.qkv_floats = static_cast<std::size_t>(ProjectionJobs(d, kv_width)) * z.wpanel;
  z.w1_at = static_cast<std::size_t>(Panels(d)) * z.wpanel;
  z.w2_at = z.w1_at + static_cast<std::size_t>(Panels(f)) * z.wpanel;
  z.out_floats = z.w2_at + (f > 0 ? static_cast<std::size_t>(Panels(d)) * PanelFloats(f) : 0);
  return z;
}

void PackShared(const Config& cfg, const Weights& w, SharedPacks& sp) {
  const int d = cfg.d_model, kvd = cfg.kv_heads() * cfg.head_dim();
  const int f = cfg.block == Block::Encoder ? cfg.ffn_dim() : 0;
  const PackSizes z = SizesOf(d, kvd, f);
  sp.qkv_key = sp.out_key = {};
  if ((z.qkv_floats + z.out_floats) * sizeof(float) > kMaxPackBytes) return;  // passes read in place
  float* qkv = sp.qkv.Get(z.qkv_floats);
  float* out = sp.out.Get(z.out_floats);
  for (int task = 0; task < ProjectionJobs(d, kvd); ++task) {  // as ProjectTask packs them
    const ProjectionJob jb = JobOf(w, d, kvd, task);
    PackB(jb.W->data() + jb.col, jb.W->cols(), d, jb.nc, qkv + task * z.wpanel);
  }
  for (int i = 0; i < Panels(d); ++i)  // as OutputTask
    PackB(w.W_o.data() + i * kNR, d, d, std::min(kNR, d - i * kNR), out + i * z.wpanel);
  for (int i = 0; i < Panels(f); ++i)  // as FfnUpTask
    PackB(w.ffn_W1.data() + i * kNR, f, d, std::min(kNR, f - i * kNR), out + z.w1_at + i * z.wpanel);
  if (f > 0)
    for (int i = 0; i < Panels(d); ++i)  // as FfnDownTask
      PackB(w.ffn_W2.data() + i * kNR, d, f, std::min(kNR, d - i * kNR), out + z.w2_at + i * PanelFloats(f));
  sp.qkv_key = {&w, d, cfg.num_heads, cfg.kv_heads(), 0};
  sp.out_key = {&w, d, 0, 0, f};
}

}  // namespace mha::detail
