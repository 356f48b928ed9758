// One layer's knocked-out or patched heads, as the forward pass applies them
// (mha/ablation.hpp builds them for a whole model, and measures what each head is worth).
#pragma once

#include <vector>

#include "mha/config.hpp"

namespace mha {

// W_O reads values.row(n) in place of head heads[n]'s context, at every position:
//
//     concat[i, h*head_dim : (h+1)*head_dim] = values.row(n)      for h = heads[n]
//
// Zeros are zero ablation (the head's contribution to attn_out is gone, b_O stays);
// the head's mean context over a reference text is mean ablation (the head still
// adds what it adds on average, but nothing that depends on this input). Everything
// before concat (q, k, v, scores, attn, context) is the head's own work, kept so the
// views can still show what the knocked-out head looked at; concat and everything
// after it are the ablated model's. Heads are query heads: with GQA a knocked-out
// head's K/V head still serves the other query heads of its group.
//
// Activation patching is the same replacement with a value per position: with `patch`
// set, W_O reads, at each row i listed in `positions` (every row if it is empty),
//
//     concat[i, h*head_dim : (h+1)*head_dim] = patch[i, n*head_dim : (n+1)*head_dim]
//
// for h = heads[n]: the head's context from another run (the clean sentence's), and
// its own context at the other rows. `values` is then unused.
struct HeadAblation {
  std::vector<int> heads;      // ascending, distinct, each in [0, num_heads)
  Mat values;                  // (heads.size(), head_dim): ablation, the same at every row
  Mat patch;                   // (rows, heads.size() * head_dim): patching; 0 x 0 for ablation
  std::vector<int> positions;  // patching: the rows patched, ascending; empty: every row

  bool empty() const { return heads.empty(); }
  bool patching() const { return patch.size() > 0; }
};

}  // namespace mha
