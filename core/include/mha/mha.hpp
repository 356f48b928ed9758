// mhaviz core: multi-head attention, one pure function from inputs to a full trace.
//
// Overview (read this first)
// ==========================
// The lesson's row-vector convention is used everywhere: a token is a ROW vector,
// a sentence of seq tokens is a (seq, d_model) matrix x, and a projection is
//
//     Q = x W_Q + b_Q        W_Q: (d_model, d_model), b_Q: (d_model)
//     K = m W_K + b_K        W_K: (d_model, num_kv_heads * head_dim)
//     V = m W_V + b_V        (m = x for self-attention, m = memory for cross-attention)
//
// with head_dim = d_k = d_model / num_heads. Shapes carry the batch axis (always 1
// here), exactly as a PyTorch or numpy reader would see them:
//
//     x        (1, seq, d_model)                 input: token embedding + positional encoding
//     q        (1, num_heads,    seq,    head_dim)   Q split into heads
//     k, v     (1, num_kv_heads, seq_kv, head_dim)   K, V split into heads (GQA: fewer heads)
//     scores   (1, num_heads, seq, seq_kv)          q k^T / sqrt(d_k), masked, before softmax
//     attn     (1, num_heads, seq, seq_kv)          softmax(scores) along the key axis
//     context  (1, num_heads, seq, head_dim)        attn v
//     concat   (1, seq, d_model)                    heads side by side again
//     attn_out (1, seq, d_model)                    concat W_O + b_O
//     out      (1, seq, d_model)                    after residual + LayerNorm (post, pre or none)
//
// Eq. (1) and (2) of Vaswani et al. 2017, "Attention Is All You Need":
//     Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
//     MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O
//
// Memory layout: every tensor is a row-major Eigen matrix whose rows are the flattened
// leading axes, so the bytes are exactly numpy's C order. A (1, H, S, D) tensor is an
// (H*S, D) matrix: head h is the contiguous block of rows [h*S, (h+1)*S).
//
// Query head h reads key/value head h / (num_heads / num_kv_heads): with
// num_kv_heads == num_heads this is ordinary multi-head attention, with fewer it is
// grouped-query attention (GQA), and with num_kv_heads == 1 multi-query attention (MQA).
//
// With Config::block == Encoder the layer becomes a full Transformer encoder block:
// a position-wise feed-forward network with its own residual + LayerNorm follows
// (mha/ffn.hpp; tensors ffn_hidden ... block_out). mha/teach.hpp derives what the
// teaching views show (one query step by step, head metrics, sizes) from a Trace.
//
// Head ablation (mha/ablation.hpp): Inputs::ablate replaces knocked-out heads' blocks
// of concat (zeros, or each head's mean context) before W_O; empty, the pass is the
// plain one bit for bit. Activation patching is the same replacement with a value per
// position, another run's context (mha::PatchHeads). mha/influence.hpp weighs each
// key's value by its attention: what a head adds, not only where it looks.
//
// The core never draws, never opens a window, never reads global state; the only
// source of randomness is Config::seed.
#pragma once

#include "mha/config.hpp"
#include "mha/tokenizer.hpp"
#include "mha/embed.hpp"
#include "mha/weights.hpp"
#include "mha/trace.hpp"
#include "mha/forward.hpp"
#include "mha/ffn.hpp"
#include "mha/teach.hpp"
#include "mha/live.hpp"
#include "mha/model.hpp"
#include "mha/decode.hpp"
#include "mha/train.hpp"
#include "mha/tasks.hpp"
#include "mha/heads.hpp"
#include "mha/training_run.hpp"
#include "mha/ablation.hpp"
#include "mha/isa.hpp"
