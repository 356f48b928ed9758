// Scratch buffers of the forward pass, kept in the Trace between calls. Every
// buffer only grows, so a repeated forward pass with unchanged shapes allocates
// nothing (tests/core/test_alloc.cpp checks it).
#pragma once

#include <utility>
#include <vector>

#include <Eigen/Core>

#include "mha/config.hpp"
#include "pool.hpp"

namespace mha::detail {

// A float buffer that keeps its memory when asked for the same size or less.
// Eigen vectors are 64-byte aligned, so packed panels start on a cache line.
class Buffer {
 public:
  float* Get(std::size_t n) {
    if (static_cast<std::size_t>(v_.size()) < n) {
      Eigen::VectorXf bigger(static_cast<Eigen::Index>(n));  // see SafeResize
      v_.swap(bigger);
    }
    return v_.data();
  }
  const float* data() const { return v_.data(); }

 private:
  Eigen::VectorXf v_;
};

// m.resize(r, c), but exception-safe: Eigen's resize frees the old block before it
// allocates the new one, so a failed allocation (std::bad_alloc, which the app
// catches and survives) would leave m pointing at freed memory. This allocates first.
template <class M>
inline void SafeResize(M& m, Eigen::Index r, Eigen::Index c) {
  if (m.size() != r * c) {
    M fresh(r, c);
    m.swap(fresh);
  } else {
    m.resize(r, c);
  }
}

struct SharedPacks;  // weight_packs.hpp

struct Workspace {
  std::vector<Buffer> panel;  // one packed B panel per thread
  std::vector<Buffer> block;  // per thread: one row block's scores and weights, kept in L2
  Buffer kt;                  // K^T of every K/V head, packed as B panels for the scores
  Buffer vp;                  // V packed as B panels (only when head_dim is not a panel multiple)

  // The weights packed as B panels, so a recompute with the same weights reads them
  // contiguously instead of repacking strided rows from L3. Two sets, each valid for
  // the Weights object the Trace holds (so its address cannot be reused while valid)
  // and the sizes in its key; reset whenever the Trace's weights change:
  //   qkv: the Q, K, V heads' panels, which depend on the head split;
  //   out: W_O's panels, then the FFN's W1 and W2 (d_ff 0: none), which do not, so
  //        moving the num_heads slider keeps them.
  struct PackKey {
    const void* of = nullptr;
    int d = 0, heads = 0, kv_heads = 0, d_ff = 0;
    bool operator==(const PackKey& o) const {
      return of == o.of && d == o.d && heads == o.heads && kv_heads == o.kv_heads && d_ff == o.d_ff;
    }
  };
  Buffer qkv_pack, out_pack;
  PackKey qkv_key, out_key;    // of == nullptr: not valid
  PackKey qkv_seen, out_seen;  // used once without packing (only decides when to pack)
  // Panels packed by someone else for many traces (read only), used instead of the
  // two sets above when their keys match this pass's; null: none.
  const SharedPacks* shared = nullptr;

  // What the last pass's q, k and v were computed from: rows of the input that did
  // not change since are not projected again (typing one word changes one row;
  // moving the temperature slider changes none). Exact: a row's projection does
  // not depend on the other rows, nor on which tile of the GEMM computes it.
  struct ProjectionKey {
    const void* weights = nullptr;
    int d = 0, heads = 0, kv_heads = 0, seq = 0, seq_kv = 0, batch = 1;  // seq: rows of all sequences
    bool pre_norm = false, cross = false;
    float ln_eps = 0;
    // The same projections, perhaps split into another number of heads.
    bool SameProjections(const ProjectionKey& o) const {
      return weights == o.weights && d == o.d && seq == o.seq && seq_kv == o.seq_kv && batch == o.batch &&
             pre_norm == o.pre_norm && cross == o.cross && ln_eps == o.ln_eps;
    }
    bool operator==(const ProjectionKey& o) const {
      return SameProjections(o) && heads == o.heads && kv_heads == o.kv_heads;
    }
  };
  ProjectionKey proj_key;
  bool proj_valid = false;
  std::vector<std::pair<int, int>> q_rows, kv_rows;  // [begin, end) runs to project
  Buffer resplit;          // scratch for re-splitting q, k, v when only the head count changed
  bool repack_kv = false;  // k, v were re-split: kt and vp must be packed again

  Pool pool;  // this trace's worker threads (created on first use with threads > 1)
  // A pool lent by the caller (the Trainer's, shared by every layer), used instead of
  // `pool`; null: none.
  Pool* lent_pool = nullptr;

  // The shape-flow table only depends on these; it is rebuilt when they change.
  bool flow_valid = false;
  Config flow_cfg;
  int flow_seq = 0, flow_seq_kv = 0;

  // The values behind the Trace's Weights object changed in place (training updates
  // them every step): its projections and packed panels are stale. The shape-flow
  // table depends only on the sizes, so it stays.
  void ForgetWeights() {
    proj_valid = false;
    qkv_key = out_key = {};
    qkv_seen = out_seen = {};
    shared = nullptr;
    repack_kv = true;
  }

  // Nothing cached may be trusted any more (the Trace's tensors were replaced by a
  // copy or a move): the next pass recomputes and repacks everything. Keeps the memory.
  void Invalidate() {
    proj_valid = false;
    qkv_key = out_key = {};
    repack_kv = true;
    flow_valid = false;
    shared = nullptr;
  }
};

}  // namespace mha::detail
