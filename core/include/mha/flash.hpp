// Flash attention: the attention core computed tile by tile with an online softmax,
// so that no seq x seq_kv matrix is ever held (Dao et al. 2022, "FlashAttention:
// Fast and Memory-Efficient Exact Attention with IO-Awareness", Algorithm 1).
//
// For one head, the query rows are cut into blocks of Br rows and the keys/values into
// blocks of Bc rows. Each query row i keeps, while the key blocks go by,
//
//     m_i  the largest score seen so far        (starts at -inf)
//     l_i  sum_j exp(s_ij - m_i) so far          (starts at 0)
//     O_i  sum_j exp(s_ij - m_i) v_j so far      (starts at 0; not yet divided by l_i)
//
// and a new tile of scores S (Br x Bc) updates them as
//
//     m_new = max(m_i, max_j S_ij)
//     P_ij  = exp(S_ij - m_new)
//     l_i   = exp(m_i - m_new) l_i + sum_j P_ij
//     O_i   = exp(m_i - m_new) O_i + (P V)_i      exp(m_i - m_new): the rescale factor
//
// and after the last key block context_i = O_i / l_i: exactly softmax(S) V, because
// every term was multiplied by the same exp(-m) in the end. A row that sees no key at
// all (l_i = 0) gets zeros, as the standard path's fully masked row does.
//
// The loop order is FlashAttention-2's (query blocks outside, key blocks inside), so
// each worker owns its rows' m, l and O and normalises them once; Algorithm 1 of the
// 2022 paper runs the key blocks outside and rescales O in memory at every step. The
// arithmetic of a tile is the same. A worker holds one Br x Bc tile of scores, its
// Br x head_dim O, and m and l: memory O(seq x head_dim), not O(seq x seq_kv). O and l
// are kept in double: they are rescaled at every tile, and float's rounding there added
// up (the result is rounded to float once, at the end).
//
// Config::attention = Attention::Flash selects it inside mha::Forward (the one forward
// pass); the Trace then has context, concat and attn_out but no scores and no attn.
#pragma once

#include <cstddef>
#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"

namespace mha {

// The default tile: Br query rows by Bc keys (a 32 KiB tile of scores stays in L1/L2).
inline constexpr int kFlashBr = 64;
inline constexpr int kFlashBc = 128;

// The tile size a configuration runs with (its flash_br / flash_bc, or the default).
inline int FlashBr(const Config& cfg) { return cfg.flash_br > 0 ? cfg.flash_br : kFlashBr; }
inline int FlashBc(const Config& cfg) { return cfg.flash_bc > 0 ? cfg.flash_bc : kFlashBc; }

// Bytes of scores and weights the standard path keeps for these sizes (every head's
// seq x seq_kv scores and attn), and what Flash holds in their place per worker: one
// Br x Bc tile of scores, O (Br x head_dim), its P V (Br x head_dim), m, l and the
// rescale factors.
std::size_t StandardAttentionBytes(const Config& cfg, int seq, int seq_kv);
std::size_t FlashWorkerBytes(const Config& cfg);

// One head of attention, tiled: q (seq, head_dim), k and v (seq_kv, head_dim), all
// row-major and contiguous; out (seq, head_dim). Scores are scale * q k^T. Query row i
// sees keys [0, seq_kv), or with `causal` keys [0, i + 1 + causal_offset) (clamped to
// [0, seq_kv]: a negative offset leaves the first rows with no key at all, which gives
// them zeros). The same kernel as Forward's Flash tasks, single-threaded; br, bc >= 1.
void FlashAttentionHead(const float* q, const float* k, const float* v, int seq, int seq_kv, int head_dim, float scale,
                        bool causal, int causal_offset, int br, int bc, float* out);

// One tile of the algorithm as the step-by-step view shows it.
struct FlashTileStep {
  int index = 0;           // 0-based, in the algorithm's order
  int row0 = 0, row1 = 0;  // query rows [row0, row1): the current query block
  int col0 = 0, col1 = 0;  // keys [col0, col1): the current key/value block
  // Every (query, key) pair of the tile is masked (causal, above the diagonal): the
  // algorithm skips it and nothing below changes (the per-row vectors stay empty).
  bool skipped = false;
  bool last_of_block = false;  // the block's last key tile: its rows are divided by l now
  Mat scores;                  // (rows, cols) scale * q k^T, -inf where masked
  Mat p;                       // (rows, cols) exp(scores - m_new), 0 where masked
  // Per row of the block: m before and after this tile, l after it, and the rescale
  // factor exp(m_old - m_new) that O and l were multiplied by (0 while m_old = -inf).
  std::vector<float> m_old, m_new, rescale;
  std::vector<double> l_new;
  Mat o;  // (rows, head_dim) O after this tile, not yet divided by l
};

// Steps through one head's Flash attention tile by tile, in the order the forward
// pass runs them: query block 0 against key blocks 0, 1, ..., then query block 1, ...
// It copies that head's q, k, v out of the trace (any trace with q, k, v: standard or
// Flash), so it does not depend on the trace after construction. Single sequence.
class FlashTiles {
 public:
  FlashTiles(const Trace& t, int head, int br, int bc);

  int count() const { return row_blocks_ * col_blocks_; }  // tiles, skipped ones included
  int done() const { return done_; }                       // tiles processed so far
  bool finished() const { return done_ == count(); }
  int br() const { return br_; }
  int bc() const { return bc_; }
  int seq() const { return seq_; }
  int seq_kv() const { return seq_kv_; }
  int head_dim() const { return hd_; }

  // Processes the next tile and describes it. Throws mha::Error when finished().
  const FlashTileStep& Next();
  const FlashTileStep& last() const { return step_; }  // the tile Next() returned last
  void Reset();

  // The running state of every query row of the head: m (-inf before any key), l,
  // and O, not divided by l (seq x head_dim).
  const std::vector<float>& m() const { return m_; }
  const std::vector<double>& l() const { return l_; }  // kept in double, as the kernel keeps it
  Mat o() const { return o_.cast<float>(); }
  // context = O / l for the rows whose block is finished; zeros for the others.
  Mat Context() const;
  // Row `row`'s attention weights recovered from the state: exp(s_j - m) / l for the
  // keys its block has seen so far, 0 for the others (the final weights once done).
  std::vector<float> Weights(int row) const;
  // Whether `row`'s block has seen all of its key tiles.
  bool RowFinished(int row) const;

  // What the algorithm holds now (one tile of scores and P, m, l, O of the current
  // block) against what the standard path keeps for this head (scores and attn).
  std::size_t HeldBytes() const;
  std::size_t StandardHeadBytes() const;

 private:
  int visible(int row) const;  // keys [0, visible) are seen by this query row
  Mat q_, k_, v_;
  float scale_ = 1.0f;
  bool causal_ = false;
  int seq_ = 0, seq_kv_ = 0, hd_ = 0, br_ = 1, bc_ = 1, row_blocks_ = 0, col_blocks_ = 0, done_ = 0;
  using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::vector<float> m_;
  std::vector<double> l_;
  MatD o_;
  FlashTileStep step_;
};

}  // namespace mha
