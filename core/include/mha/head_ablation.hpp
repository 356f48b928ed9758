// One layer's knocked-out heads, as the forward pass applies them (mha/ablation.hpp
// builds them for a whole model, and measures what each head is worth).
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
struct HeadAblation {
  std::vector<int> heads;  // ascending, distinct, each in [0, num_heads)
  Mat values;              // (heads.size(), head_dim)

  bool empty() const { return heads.empty(); }
};

}  // namespace mha
