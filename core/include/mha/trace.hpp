// Everything one forward pass computed, with names and shapes, plus the shape-flow
// table that the app and the CLI show.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mha/config.hpp"
#include "mha/head_ablation.hpp"
#include "mha/weights.hpp"

namespace mha {

// What goes into a forward pass: the query-side sentence, and for cross-attention
// a second "memory" sentence that keys and values are read from.
struct Inputs {
  std::vector<std::string> tokens;         // labels of the rows of x
  Mat x;                                   // (seq, d_model)
  std::vector<std::string> memory_tokens;  // empty for self-attention
  Mat memory;                              // (seq_kv, d_model); 0 rows for self-attention
  HeadAblation ablate;                     // heads knocked out before W_O; empty: none

  bool cross() const { return memory.rows() > 0; }
};

// The steps of the shape-flow table, one id per row kind (as llama.cpp names its
// tensors LLM_TENSOR_*): the block diagram and the tests find a row by its id, never
// by its display text, which changes with the configuration.
enum class StepId {
  Input,        // x = embed(tokens) (+ PE)
  PreNorm,      // x_ln = LN(x); pre-LN only
  QProj,        // Q = x W_Q + b_Q
  KProj,        // K = x W_K + b_K (m W_K: the memory, cross-attention)
  VProj,        // V = x W_V + b_V (m W_V: the memory, cross-attention)
  SplitHeads,   // reshape + transpose into heads
  Scores,       // Q K^T / sqrt(d_k), masked
  Softmax,      // attn = softmax(scores)
  Context,      // attn V
  Concat,       // the heads side by side
  OutProj,      // concat W_O + b_O
  Residual,     // out = x + attn_out, then LN for post-LN
  FfnPreNorm,   // ffn_ln = LN2(out); encoder block, pre-LN only
  FfnUp,        // ffn_hidden = act(. W1 + b1); encoder block
  FfnDown,      // ffn_out = ffn_hidden W2 + b2; encoder block
  FfnResidual,  // block_out = out + ffn_out, then LN2 for post-LN; encoder block
};

// One row of the shape-flow table: one step of the computation.
struct FlowRow {
  StepId id = StepId::Input;
  std::string step;                 // "Q projection", "split heads", ...
  std::string formula;              // "Q = x W_Q + b_Q"
  std::string tensor;               // the .npz key holding the result ("q", "scores", ...)
  std::vector<std::int64_t> shape;  // with the batch axis
  std::string params;               // human-readable parameters of this step
  std::int64_t param_count = 0;     // learned numbers this step uses
  std::int64_t flops = 0;           // a multiply-add counts as 2 FLOPs
};

// A read-only view of one named tensor (C order, float32).
struct TensorView {
  std::string name;
  std::vector<std::int64_t> shape;
  const float* data = nullptr;
  std::int64_t size() const;
};

namespace detail {
struct Workspace;  // scratch buffers of the forward pass (core/src/workspace.hpp)

// Owns the scratch buffers Forward reuses between calls, so a repeated forward pass
// with unchanged shapes allocates nothing. Copying a Trace gives the copy fresh,
// empty scratch: buffers are never shared, so two traces can be computed at once.
class WorkspaceHandle {
 public:
  WorkspaceHandle();
  ~WorkspaceHandle();
  WorkspaceHandle(const WorkspaceHandle&);
  WorkspaceHandle& operator=(const WorkspaceHandle&);
  WorkspaceHandle(WorkspaceHandle&&) noexcept;
  WorkspaceHandle& operator=(WorkspaceHandle&&) noexcept;
  Workspace& get();

 private:
  std::unique_ptr<Workspace> p_;
};
}  // namespace detail

// Read its tensors freely, but do not write into them: the next Forward on the same
// Trace keeps the q, k and v rows whose input did not change.
struct Trace {
  Config cfg;
  Inputs in;
  std::shared_ptr<const Weights> weights;
  int seq = 0, seq_kv = 0;
  int batch = 1;  // sequences (ForwardBatch): every tensor below gains this axis in front

  Mat x_ln;      // (seq, d_model) LN(x), the sublayer input; pre-LN only
  Mat q;         // (H*seq, hd)      = (1, H, seq, hd)
  Mat k, v;      // (G*seq_kv, hd)   = (1, G, seq_kv, hd)
  Mat scores;    // (H*seq, seq_kv)  = (1, H, seq, seq_kv), -inf where masked
  Mat attn;      // (H*seq, seq_kv)
  Mat context;   // (H*seq, hd)
  Mat concat;    // (seq, d_model)
  Mat attn_out;  // (seq, d_model)
  Mat residual;  // (seq, d_model) x + attn_out
  Mat out;       // (seq, d_model)

  // Encoder block only (0 x 0 otherwise). `out` above is then the attention
  // sublayer's output, and the FFN sublayer follows (see mha/ffn.hpp).
  Mat ffn_ln;        // (seq, d_model) LN2(out), the FFN's input; pre-LN only
  Mat ffn_hidden;    // (seq, d_ff) act(ffn_in W1 + b1)
  Mat ffn_out;       // (seq, d_model) ffn_hidden W2 + b2
  Mat ffn_residual;  // (seq, d_model) out + ffn_out
  Mat block_out;     // (seq, d_model) the encoder block's output

  // Kept only by ForwardBatch's for_backward pass (else 0 rows): per row of LN1's and
  // LN2's input, its mean and 1 / sqrt(variance + eps) in double, exactly as the
  // forward pass normalised with them, so the backward pass does not recompute them.
  LnStats ln_stats, ln2_stats;
  // Kept only by ForwardBatch's for_backward pass of a GELU encoder block (else 0 rows):
  // GELU'(ffn_in W1 + b1), (seq, d_ff), computed with ffn_hidden from the same exp and
  // erfc, so the backward pass only multiplies by it.
  Mat ffn_act_grad;

  std::vector<FlowRow> flow;

  // What the last Forward on this Trace recomputed of Q, K and V; everything after
  // them is always recomputed. Rows whose input did not change keep their projections,
  // and a new head count re-splits the kept Q, K, V (no GEMM): the projections do not
  // depend on how many heads they are cut into.
  struct Reuse {
    int q_rows = 0;   // query rows projected this pass (of seq)
    int kv_rows = 0;  // key/value rows projected this pass (of seq_kv)
    bool resplit = false;
  } reuse;

  detail::WorkspaceHandle workspace;  // not part of the result: reused scratch

  // Head h's (seq, seq_kv) block of attn (of sequence b of a batch), and the K/V head it reads.
  Eigen::Map<const Mat> AttnHead(int h, int b = 0) const;
  Eigen::Map<const Mat> ScoresHead(int h, int b = 0) const;
  int KvHeadOf(int h) const { return h / (cfg.num_heads / cfg.kv_heads()); }
};

// Every tensor of the trace under its .npz name, in a stable order: inputs, weights,
// then intermediates in the order they are computed.
std::vector<TensorView> Tensors(const Trace& t);

// The shape-flow table for a configuration (independent of the values).
std::vector<FlowRow> ShapeFlow(const Config& cfg, int seq, int seq_kv, bool cross = false);
// The same, rebuilt in place: reuses the strings of `rows`, so a repeated call with
// the same sizes allocates nothing.
void ShapeFlowInto(const Config& cfg, int seq, int seq_kv, std::vector<FlowRow>& rows, bool cross = false);

// The index of the row with this id in a shape-flow table, or -1 if the configuration
// has no such step (PreNorm without pre-LN, the FFN rows without the encoder block).
int FindStep(const std::vector<FlowRow>& rows, StepId id);

// "(1, 8, 3, 64)"
std::string ShapeString(const std::vector<std::int64_t>& shape);

}  // namespace mha
