// Attention is not influence: what a head adds from each key, not only how much weight
// it gives it (Kobayashi et al. 2020, "Attention is Not Only a Weight: Analyzing
// Transformers with Vector Norms"). Head h's share of attn_out at query i is a sum over
// the keys j of
//
//     alpha_ij^h * f^h(x_j),      f^h(x_j) = (x_j W_V^h + b_V^h) W_O^h
//
// where x_j is the key's input (LN(x) for pre-LN; the memory for cross-attention),
// W_V^h, b_V^h the head's K/V head's columns of W_V and b_V, and W_O^h the head's
// head_dim rows of W_O. The value-weighted norm is the length of that term:
//
//     norms[h*seq + i, j] = alpha_ij^h * || f^h(x_j) ||       (alpha >= 0)
//
// b_V is included: it is part of the value each key hands over, and is what a head
// that stares at <s> mostly adds there. b_O is not: it is added once to attn_out
// whatever the weights, so it belongs to no key. The norms use the head's own attention
// and values, as its map does, so a knocked-out head still shows what it would add.
#pragma once

#include "mha/trace.hpp"

namespace mha {

// || f^h(x_j) ||: (num_heads, seq_kv). Needs the trace's weights (Forward keeps them).
Mat ValueOutputNorms(const Trace& t);
// alpha_ij^h * || f^h(x_j) ||, laid out as Trace::attn: (num_heads * seq, seq_kv).
// Needs the attention weights (standard attention: Flash keeps none) and a trace of one
// sequence. Throws mha::Error otherwise.
Mat ValueWeightedNorms(const Trace& t);

}  // namespace mha
