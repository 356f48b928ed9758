// Flash attention (mha/flash.hpp): the tile kernel that Forward's Flash tasks run,
// the single-head entry point the tests call, and the step-by-step tile iterator.
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "mha/flash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "flash_kernel.hpp"
#include "forward_pass.hpp"
#include "gemm.hpp"
#include "simd.hpp"

namespace mha {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
}

namespace detail {

std::size_t FlashScratchFloats(int br, int bc, int hd) {
  const std::size_t r = br;
  // O, l and the rescale factors in double (two floats each) first, so they stay
  // 8-byte aligned; then the tile, P V and m in float.
  return 2 * (r * hd + 2 * r) + r * bc + r * hd + r;
}

// The online-softmax update of one tile, row by row: s (m x bc, row stride lds) holds
// the tile's scores, of which row i sees the first vis[i]; they are replaced by
// P = exp(s - m_new) (0 past vis[i]), and m, l move on; alpha[i] receives the rescale
// factor exp(m_old - m_new) (1 for a row that sees nothing here: it is left alone).
// l and the factors are kept in double: each tile rescales them again, and float's
// rounding at every step added up to ~10 ulps against the standard path (measured).
void FlashUpdate(float* s, std::ptrdiff_t lds, int m, int bc, const int* vis, float* mrow, double* lrow,
                 double* alpha) {
  using namespace simd;
  constexpr int W = kWidth;
  for (int i = 0; i < m; ++i) {
    float* row = s + i * lds;
    const int n = vis[i];
    if (n <= 0) {
      std::fill(row, row + bc, 0.0f);
      alpha[i] = 1.0;
      continue;
    }
    V vm = Set1(kNegInf);
    int j = 0;
    for (; j + W <= n; j += W) vm = Max(vm, Load(row + j));
    if (j < n) vm = Max(vm, LoadPartial(row + j, n - j, kNegInf));
    const float m_new = std::max(mrow[i], ReduceMax(vm));
    // exp(-inf) = 0 for the first tile a row sees: O and l start from nothing.
    const double a = mrow[i] == kNegInf ? 0.0 : std::exp(static_cast<double>(mrow[i]) - m_new);
    const V vmax = Set1(m_new);
    V sum = Zero();
    for (j = 0; j + W <= n; j += W) {
      const V e = Exp(Sub(Load(row + j), vmax));
      Store(row + j, e);
      sum = Add(sum, e);
    }
    if (j < n) {
      const V e = Exp(Sub(LoadPartial(row + j, n - j, kNegInf), vmax));
      StorePartial(row + j, e, n - j);
      sum = Add(sum, e);
    }
    std::fill(row + n, row + bc, 0.0f);  // masked keys: weight exactly 0
    lrow[i] = a * lrow[i] + static_cast<double>(ReduceAdd(sum));
    mrow[i] = m_new;
    alpha[i] = a;
  }
}

// Rows [r0, r1) of one head against every key block, one tile at a time (see
// flash_kernel.hpp for the layout of K and V); writes context rows to out (stride ldo).
void FlashRows(const FlashHead& h, int r0, int r1, int bc, float* scratch, float* out, std::ptrdiff_t ldo) {
  const int m = r1 - r0, hd = h.hd;
  const std::ptrdiff_t mh = static_cast<std::ptrdiff_t>(m) * hd;
  double* o = reinterpret_cast<double*>(scratch);  // m x hd: O, not yet divided by l
  double* lrow = o + mh;
  double* alpha = lrow + m;
  float* s = reinterpret_cast<float*>(alpha + m);       // m x bc: the one tile of scores, then P
  float* pv = s + static_cast<std::ptrdiff_t>(m) * bc;  // m x hd: this tile's P V
  float* mrow = pv + mh;
  int vis[Limits::kMaxFlashTile];  // keys of this tile each row sees
  std::fill(o, o + mh, 0.0);
  std::fill(mrow, mrow + m, kNegInf);
  std::fill(lrow, lrow + m, 0.0);
  const float* qb = h.q + static_cast<std::ptrdiff_t>(r0) * hd;
  for (int j0 = 0; j0 < h.seq_kv; j0 += bc) {
    const int j1 = std::min(h.seq_kv, j0 + bc), nb = j1 - j0;
    // Keys visible to a row only grow with the row: if the block's last row sees none
    // of these keys, no row does, nor any key after them. Skip the rest.
    if (h.causal && h.Visible(r1 - 1) <= j0) break;
    // S = scale * q k^T over the tile, from the packed K^T panels: the same chain of
    // operations per score as the standard path's, whichever tile holds it.
    for (int c = j0; c < j1;) {
      const int panel = c / kNR, off = c % kNR, nc = std::min(kNR - off, j1 - c);
      Panel(m, hd, qb, hd, h.kt + panel * h.kt_panel + off, kNR, s + (c - j0), bc, nc, nullptr, h.scale);
      c += nc;
    }
    for (int i = 0; i < m; ++i) vis[i] = h.causal ? std::clamp(h.Visible(r0 + i) - j0, 0, nb) : nb;
    FlashUpdate(s, bc, m, nb, vis, mrow, lrow, alpha);
    // P V for the tile's keys, then O = rescale * O + P V.
    for (int c = 0; c < hd; c += kNR) {
      const int nc = std::min(kNR, hd - c);
      const float* b = h.v_in_place ? h.v + static_cast<std::ptrdiff_t>(j0) * hd + c
                                    : h.vp + (c / kNR) * h.vp_panel + static_cast<std::ptrdiff_t>(j0) * kNR;
      Panel(m, nb, s, bc, b, h.v_in_place ? hd : kNR, pv + c, hd, nc, nullptr, 1.0f);
    }
    for (int i = 0; i < m; ++i) {
      double* oi = o + static_cast<std::ptrdiff_t>(i) * hd;
      const float* pi = pv + static_cast<std::ptrdiff_t>(i) * hd;
      const double a = alpha[i];
      for (int c = 0; c < hd; ++c) oi[c] = a * oi[c] + pi[c];
    }
  }
  // context = O / l, as the standard path multiplies by 1 / sum; l = 0: no key seen.
  for (int i = 0; i < m; ++i) {
    float* dst = out + static_cast<std::ptrdiff_t>(i) * ldo;
    const double* oi = o + static_cast<std::ptrdiff_t>(i) * hd;
    const double inv = lrow[i] > 0.0 ? 1.0 / lrow[i] : 0.0;
    for (int c = 0; c < hd; ++c) dst[c] = static_cast<float>(oi[c] * inv);
  }
}

// One task of Forward's Flash phase: one block of Br query rows of one head of one
// sequence, against its K/V head (packed by the Pack phase as for the standard path).
void FlashAttendTask(Pass& p, int task, int tid) {
  Trace& t = *p.t;
  const int blocks = (p.seq + p.br - 1) / p.br;
  const int b = task / (p.H * blocks);
  task %= p.H * blocks;
  const int h = task / blocks, hd = p.hd;
  const int g = b * p.G + h / p.group;
  const int r0 = (task % blocks) * p.br, r1 = std::min(p.seq, r0 + p.br);
  FlashHead head;
  head.q = t.q.data() + (static_cast<std::ptrdiff_t>(b) * p.H + h) * p.seq * hd;
  head.kt = p.kt + static_cast<std::size_t>(g) * p.pkv * p.kt_panel;
  head.kt_panel = p.kt_panel;
  head.v_in_place = p.v_in_place;
  head.v = t.v.data() + static_cast<std::ptrdiff_t>(g) * p.seq_kv * hd;
  head.vp = p.v_in_place ? nullptr : p.vp + static_cast<std::size_t>(g) * p.phd * p.vp_panel;
  head.vp_panel = p.vp_panel;
  head.seq_kv = p.seq_kv;
  head.hd = hd;
  head.scale = p.scale;
  head.causal = p.causal;
  float* concat = t.concat.data() + (static_cast<std::ptrdiff_t>(b) * p.seq + r0) * p.d + h * hd;
  if (p.lean) {
    FlashRows(head, r0, r1, p.bc, p.ws->block[tid].Get(0), concat, p.d);
    return;
  }
  float* ctx = t.context.data() + ((static_cast<std::ptrdiff_t>(b) * p.H + h) * p.seq + r0) * hd;
  FlashRows(head, r0, r1, p.bc, p.ws->block[tid].Get(0), ctx, hd);
  for (int i = 0; i < r1 - r0; ++i)
    std::copy(ctx + static_cast<std::ptrdiff_t>(i) * hd, ctx + static_cast<std::ptrdiff_t>(i + 1) * hd,
              concat + static_cast<std::ptrdiff_t>(i) * p.d);
}

}  // namespace detail

std::size_t StandardAttentionBytes(const Config& cfg, int seq, int seq_kv) {
  return 2 * static_cast<std::size_t>(cfg.num_heads) * seq * seq_kv * sizeof(float);
}

std::size_t FlashWorkerBytes(const Config& cfg) {
  return detail::FlashScratchFloats(FlashBr(cfg), FlashBc(cfg), cfg.head_dim()) * sizeof(float);
}

void FlashAttentionHead(const float* q, const float* k, const float* v, int seq, int seq_kv, int hd, float scale,
                        bool causal, int causal_offset, int br, int bc, float* out) {
  using detail::kNR;
  if (seq <= 0 || seq_kv <= 0 || hd <= 0 || br < 1 || bc < 1 || br > Limits::kMaxFlashTile ||
      bc > Limits::kMaxFlashTile)
    throw Error("FlashAttentionHead needs seq, seq_kv, head_dim >= 1 and tiles of 1 to " +
                std::to_string(Limits::kMaxFlashTile) + " rows and columns.");
  // K^T and V packed as the forward pass packs them (forward.cpp's Pack phase), with
  // kNR floats of zeros after K^T: a tile starting inside a panel reads past its end.
  const int pkv = (seq_kv + kNR - 1) / kNR, phd = (hd + kNR - 1) / kNR;
  const std::size_t kt_panel = detail::PanelFloats(hd);
  std::vector<float> kt(static_cast<std::size_t>(pkv) * kt_panel + kNR, 0.0f);
  for (int c = 0; c < pkv; ++c)
    detail::PackBT(k + static_cast<std::ptrdiff_t>(c) * kNR * hd, hd, hd, std::min(kNR, seq_kv - c * kNR),
                   kt.data() + c * kt_panel);
  detail::FlashHead h;
  h.q = q;
  h.kt = kt.data();
  h.kt_panel = kt_panel;
  h.v = v;
  h.v_in_place = hd % kNR == 0 || hd <= simd::kWidth;
  std::vector<float> vp;
  if (!h.v_in_place) {
    h.vp_panel = detail::PanelFloats(seq_kv);
    vp.assign(static_cast<std::size_t>(phd) * h.vp_panel, 0.0f);
    for (int c = 0; c < phd; ++c)
      detail::PackB(v + c * kNR, hd, seq_kv, std::min(kNR, hd - c * kNR), vp.data() + c * h.vp_panel);
    h.vp = vp.data();
  }
  h.seq_kv = seq_kv;
  h.hd = hd;
  h.scale = scale;
  h.causal = causal;
  h.offset = causal_offset;
  br = std::min(br, seq);
  std::vector<float> scratch(detail::FlashScratchFloats(br, bc, hd));
  for (int r0 = 0; r0 < seq; r0 += br)
    detail::FlashRows(h, r0, std::min(seq, r0 + br), bc, scratch.data(), out + static_cast<std::ptrdiff_t>(r0) * hd,
                      hd);
}

// ---- the step-by-step iterator --------------------------------------------------

FlashTiles::FlashTiles(const Trace& t, int head, int br, int bc) {
  const Config& cfg = t.cfg;
  if (t.batch != 1 || t.q.rows() == 0)
    throw Error("The Flash tile view needs the trace of one sentence with its q, k and v.");
  if (head < 0 || head >= cfg.num_heads)
    throw Error("head " + std::to_string(head) + " does not exist: this layer has num_heads = " +
                std::to_string(cfg.num_heads) + " (heads 0 to " + std::to_string(cfg.num_heads - 1) + ").");
  if (br < 1 || bc < 1 || br > Limits::kMaxFlashTile || bc > Limits::kMaxFlashTile)
    throw Error("A Flash tile has 1 to " + std::to_string(Limits::kMaxFlashTile) + " rows (Br) and columns (Bc); got " +
                std::to_string(br) + " x " + std::to_string(bc) + ".");
  seq_ = t.seq;
  seq_kv_ = t.seq_kv;
  hd_ = cfg.head_dim();
  br_ = std::min(br, seq_);
  bc_ = std::min(bc, seq_kv_);
  q_ = t.q.middleRows(static_cast<Eigen::Index>(head) * seq_, seq_);
  const Eigen::Index g = t.KvHeadOf(head);
  k_ = t.k.middleRows(g * seq_kv_, seq_kv_);
  v_ = t.v.middleRows(g * seq_kv_, seq_kv_);
  // The forward pass's factor, computed the same way (forward.cpp, Dimensions).
  scale_ = (cfg.scale ? 1.0f / std::sqrt(static_cast<float>(hd_)) : 1.0f) / cfg.temperature;
  causal_ = cfg.mask == Mask::Causal;
  row_blocks_ = (seq_ + br_ - 1) / br_;
  col_blocks_ = (seq_kv_ + bc_ - 1) / bc_;
  Reset();
}

void FlashTiles::Reset() {
  done_ = 0;
  m_.assign(seq_, kNegInf);
  l_.assign(seq_, 0.0);
  o_ = MatD::Zero(seq_, hd_);
  step_ = FlashTileStep();
}

int FlashTiles::visible(int row) const { return causal_ ? std::min(seq_kv_, row + 1) : seq_kv_; }

bool FlashTiles::RowFinished(int row) const { return row >= 0 && row < seq_ && done_ >= (row / br_ + 1) * col_blocks_; }

const FlashTileStep& FlashTiles::Next() {
  if (finished()) throw Error("Every tile has been processed: Reset() to start again.");
  FlashTileStep& st = step_;
  st = FlashTileStep();
  st.index = done_;
  const int rb = done_ / col_blocks_, cb = done_ % col_blocks_;
  st.row0 = rb * br_;
  st.row1 = std::min(seq_, st.row0 + br_);
  st.col0 = cb * bc_;
  st.col1 = std::min(seq_kv_, st.col0 + bc_);
  st.last_of_block = cb + 1 == col_blocks_;
  ++done_;
  const int m = st.row1 - st.row0, n = st.col1 - st.col0;
  st.skipped = visible(st.row1 - 1) <= st.col0;
  if (st.skipped) return st;
  st.scores.resize(m, n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      st.scores(i, j) =
          st.col0 + j < visible(st.row0 + i) ? scale_ * q_.row(st.row0 + i).dot(k_.row(st.col0 + j)) : kNegInf;
  st.p = st.scores;
  std::vector<int> vis(m);
  for (int i = 0; i < m; ++i) vis[i] = std::clamp(visible(st.row0 + i) - st.col0, 0, n);
  st.m_old.assign(m_.begin() + st.row0, m_.begin() + st.row1);
  std::vector<double> rescale(m);
  // The kernel's own update (detail::FlashUpdate), on this tile.
  detail::FlashUpdate(st.p.data(), n, m, n, vis.data(), m_.data() + st.row0, l_.data() + st.row0, rescale.data());
  st.m_new.assign(m_.begin() + st.row0, m_.begin() + st.row1);
  st.l_new.assign(l_.begin() + st.row0, l_.begin() + st.row1);
  st.rescale.assign(rescale.begin(), rescale.end());
  const Mat pv = st.p * v_.middleRows(st.col0, n);
  for (int i = 0; i < m; ++i) {
    auto oi = o_.row(st.row0 + i);
    oi = rescale[i] * oi + pv.row(i).cast<double>();
  }
  st.o = o_.middleRows(st.row0, m).cast<float>();
  return st;
}

Mat FlashTiles::Context() const {
  Mat c = Mat::Zero(seq_, hd_);
  for (int i = 0; i < seq_; ++i)
    if (RowFinished(i) && l_[i] > 0.0) c.row(i) = (o_.row(i) * (1.0 / l_[i])).cast<float>();
  return c;
}

std::vector<float> FlashTiles::Weights(int row) const {
  std::vector<float> w(seq_kv_, 0.0f);
  if (row < 0 || row >= seq_ || !(l_[row] > 0.0)) return w;
  const int rb = row / br_;
  // Key blocks this row's block has been through so far.
  const int seen = std::clamp(done_ - rb * col_blocks_, 0, col_blocks_);
  const int end = std::min(std::min(seen * bc_, seq_kv_), visible(row));
  for (int j = 0; j < end; ++j)
    w[j] = static_cast<float>(std::exp(static_cast<double>(scale_ * q_.row(row).dot(k_.row(j))) - m_[row]) / l_[row]);
  return w;
}

std::size_t FlashTiles::HeldBytes() const {
  return detail::FlashScratchFloats(br_, bc_, hd_) * sizeof(float);  // what a worker of the forward pass holds
}

std::size_t FlashTiles::StandardHeadBytes() const {
  return 2 * static_cast<std::size_t>(seq_) * seq_kv_ * sizeof(float);
}

}  // namespace mha
