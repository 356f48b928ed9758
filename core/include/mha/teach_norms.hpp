// Post-LN and pre-LN side by side (lesson 002): one block's input run through both
// arrangements of the residual and LayerNorm with the same weights, and what each step
// does to the size of each token's row.
//
//   post-LN (Transformer 2017, BERT): x -> MHA -> x + attn -> LN1 -> FFN -> + -> LN2
//   pre-LN  (GPT, ViT):               x -> LN1 -> MHA -> + x -> LN2 -> FFN -> +
//
// Post-LN normalises every sublayer's output, so the rows leaving LN1 and LN2 have mean
// beta and standard deviation gamma (0 and 1 at initialisation); pre-LN normalises only
// what each sublayer reads, and the residual stream it adds to is never normalised.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mha/config.hpp"
#include "mha/trace.hpp"
#include "mha/weights.hpp"

namespace mha {

// The steps of the block the side-by-side shows; each arrangement runs them in its own
// order (and an attention-only block stops after the first residual).
enum class BlockStage { Input, Norm1, Attention, Add1, Norm2, Ffn, Add2 };
// "input", "ln1", "attention", "add1", "ln2", "ffn", "add2": the key JSON uses.
const char* ToString(BlockStage s);

// Per row of a (rows, d_model) tensor: its mean, its standard deviation (the biased one
// LayerNorm divides by) and its L2 norm, summed in double.
struct RowSpread {
  std::vector<double> mean, std, l2;
};
RowSpread RowSpreadOf(const Eigen::Ref<const Mat>& m);

struct StageRows {
  BlockStage stage = BlockStage::Input;
  std::string tensor;  // the trace's .npz name of the step's output ("x", "x_ln", "attn_out", "out", ...)
  int adds = -1;       // an Add step: the index (in `stages`) of the stage its residual adds back
  RowSpread rows;
};

struct ArrangementRun {
  Norm norm = Norm::Post;
  std::vector<StageRows> stages;  // in the order this arrangement computes them
  // The pass's configuration, q and k only (everything else freed): a head's weights
  // are recomputed from them with ComputeHeadAttention, as the trace's own would be.
  Trace lean;
};

// Runs the block of `cfg` (attention, or the encoder block with its FFN) arranged as
// `norm` (Norm::Post or Norm::Pre; cfg.norm is ignored) on `in` with `weights`. The
// pass is Flash attention, which keeps nothing seq x seq: it runs beside a trace the
// caller already holds, and at the largest accepted sizes a second standard trace
// would take the memory past its budget. Its context equals the standard path's within
// float rounding. Throws mha::Error as Forward does.
ArrangementRun RunArrangement(const Config& cfg, std::shared_ptr<const Weights> weights, const Inputs& in, Norm norm);

}  // namespace mha
