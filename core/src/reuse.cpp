// Which projections a forward pass can keep from the pass before on the same Trace.
#include "reuse.hpp"

#include <algorithm>
#include <cstring>

namespace mha::detail {
namespace {

// The runs of rows [0, n) where a and b differ (all of them if `all`).
void ChangedRows(const Mat* a, const Mat* b, int n, bool all, std::vector<std::pair<int, int>>& runs) {
  runs.clear();
  if (runs.capacity() < static_cast<std::size_t>(n)) runs.reserve(n);  // at most n runs
  const std::size_t row_bytes = sizeof(float) * static_cast<std::size_t>(a->cols());
  for (int i = 0; i < n; ++i) {
    const bool changed = all || std::memcmp(a->data() + i * a->cols(), b->data() + i * b->cols(), row_bytes) != 0;
    if (!changed) continue;
    if (!runs.empty() && runs.back().second == i)
      ++runs.back().second;
    else
      runs.emplace_back(i, i + 1);
  }
}

// A (from, rows, width / from) tensor (heads of a (rows, width) matrix) re-split into
// (to, rows, width / to): the same numbers, moved.
void Resplit(Mat& m, int rows, int width, int from, int to, Buffer& scratch) {
  if (from == to) return;
  const int a = width / from, b = width / to;
  const std::size_t n = static_cast<std::size_t>(rows) * width;
  float* whole = scratch.Get(n);  // (rows, width), row-major
  for (int h = 0; h < from; ++h)
    for (int i = 0; i < rows; ++i)
      std::memcpy(whole + static_cast<std::ptrdiff_t>(i) * width + h * a,
                  m.data() + (static_cast<std::ptrdiff_t>(h) * rows + i) * a, sizeof(float) * a);
  m.resize(static_cast<Eigen::Index>(to) * rows, b);
  for (int h = 0; h < to; ++h)
    for (int i = 0; i < rows; ++i)
      std::memcpy(m.data() + (static_cast<std::ptrdiff_t>(h) * rows + i) * b,
                  whole + static_cast<std::ptrdiff_t>(i) * width + h * b, sizeof(float) * b);
}

}  // namespace

void PlanProjections(const Config& cfg, const Weights* weights, bool same_weights, const Inputs& in, int batch,
                     bool full, Trace& t, Workspace& ws) {
  const int seq = static_cast<int>(in.x.rows());
  const int seq_kv = in.cross() ? static_cast<int>(in.memory.rows()) : seq;
  using ProjKey = Workspace::ProjectionKey;
  ProjKey key;
  key.weights = weights;
  key.d = cfg.d_model;
  key.heads = cfg.num_heads;
  key.kv_heads = cfg.kv_heads();
  key.seq = seq;
  key.seq_kv = seq_kv;
  key.batch = batch;
  key.pre_norm = full && cfg.norm == Norm::Pre;
  key.cross = in.cross();
  key.ln_eps = key.pre_norm ? cfg.ln_eps : 0.0f;
  // t.in still holds the last pass's input (unless the caller passed it back in).
  bool all = !(ws.proj_valid && key == ws.proj_key && same_weights) || &t.in == &in;
  bool resplit = false;
  // (One sequence only: a batch's heads are cut per sequence.)
  if (all && batch == 1 && ws.proj_valid && key.SameProjections(ws.proj_key) && same_weights && &t.in != &in) {
    // Only the head count changed (the num_heads slider): Q, K and V are the same
    // matrices, cut into heads at other columns. Re-split them; no GEMM.
    const ProjKey& old = ws.proj_key;
    ws.proj_valid = false;  // if a re-split below cannot allocate, the next pass starts over
    Resplit(t.q, seq, cfg.d_model, old.heads, key.heads, ws.resplit);
    const int kv_width = static_cast<int>(t.k.size() / std::max(1, seq_kv));
    Resplit(t.k, seq_kv, kv_width, old.kv_heads, key.kv_heads, ws.resplit);
    Resplit(t.v, seq_kv, kv_width, old.kv_heads, key.kv_heads, ws.resplit);
    all = false;
    resplit = true;
    ws.repack_kv = true;  // K^T and V panels are per head: pack them again
  }
  ChangedRows(&in.x, &t.in.x, seq, all, ws.q_rows);
  if (in.cross())
    ChangedRows(&in.memory, &t.in.memory, seq_kv, all, ws.kv_rows);
  else {
    if (ws.kv_rows.capacity() < static_cast<std::size_t>(seq)) ws.kv_rows.reserve(seq);  // once
    ws.kv_rows.assign(ws.q_rows.begin(), ws.q_rows.end());
  }
  ws.proj_key = key;
  ws.proj_valid = false;  // until this pass has projected
  const auto rows = [](const std::vector<std::pair<int, int>>& runs) {
    int n = 0;
    for (const auto& [r0, r1] : runs) n += r1 - r0;
    return n;
  };
  t.reuse.q_rows = rows(ws.q_rows);
  t.reuse.kv_rows = rows(ws.kv_rows);
  t.reuse.resplit = resplit;
}

}  // namespace mha::detail
