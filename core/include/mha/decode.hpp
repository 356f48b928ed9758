// Generating text with a causal model, one piece at a time, with a KV cache.
//
// A causal model's row i depends only on pieces 0..i, so when a piece is appended the
// rows before it do not change: neither their K and V in any layer, nor their logits.
// Generation therefore runs the one forward pass (RunModel) once over the prompt (the
// prefill) and keeps every layer's K and V rows (the KV cache); each later piece is
// one decode step that computes only the new row: its q, k, v, its attention over the
// cached keys and values, W_O, the FFN, the norms, the residuals and the unembedding.
//
//     prefill   prompt (n0 pieces) ──► RunModel on the first n0 - 1 ──► cache: per layer,
//               per K/V head, K and V (n0 - 1, head_dim); the last piece is a step
//     step      piece at position n ──► one row through every layer:
//                   q, k, v = x W + b          (1, d_model), (1, kv*hd), (1, kv*hd)
//                   K, V    += k, v            the cache grows by one row per layer and head
//                   attn    = softmax(q K^T / sqrt(d_k))   (num_heads, n + 1)
//                   context = attn V, concat, W_O, residual, LN, FFN ... as Forward does
//               ──► logits (vocab) of the next piece
//
// A decode step runs the forward pass's own kernels (the GEMM panels, the softmax row,
// the LayerNorm row) on that one row, in the order Forward and RunModel run them, so
// its numbers are a full recomputation's, bit for bit (tests/core/test_decode.cpp
// checks the logits, the cache and the weights at every step).
// One step of mhaviz-small is about 2 MFLOP, less than waking a thread costs: the step
// runs on the calling thread; the prefill uses the model's threads.
//
// The cache holds 2 x layers x kv_heads x head_dim x n float32 values: fewer K/V heads
// (GQA, MQA) make it smaller in proportion.
#pragma once

#include <cstdint>
#include <vector>

#include "mha/config.hpp"
#include "mha/model.hpp"

namespace mha {

// Every layer's K and V rows of the pieces read so far, per K/V head.
struct KvCache {
  int num_layers = 0, kv_heads = 0, head_dim = 0;
  int capacity = 0;  // the model's context (max_seq): rows reserved per head
  int n = 0;         // rows held: the pieces read so far
  // Per layer, (kv_heads * capacity, head_dim): K/V head g's rows start at g * capacity;
  // rows n.. of each head are not yet written.
  std::vector<Mat> k, v;

  // Layer `layer`'s K (or V) head g, its n rows, the oldest piece first: (n, head_dim).
  Eigen::Map<const Mat> K(int layer, int g) const;
  Eigen::Map<const Mat> V(int layer, int g) const;
  // Bytes of K and V in float32: 2 x num_layers x kv_heads x head_dim x n x 4.
  std::int64_t Bytes() const { return Bytes(num_layers, kv_heads, head_dim, n); }
  static std::int64_t Bytes(int num_layers, int kv_heads, int head_dim, int n) {
    return std::int64_t(2) * num_layers * kv_heads * head_dim * n * 4;
  }
};

// What the prefill's last row, or one decode step, computed for its row.
struct DecodeStep {
  int position = 0;  // the row's position (0-based); the cache holds position + 1 rows after it
  int token = 0;     // the piece read at that position
  // Per layer, (num_heads, position + 1): the new query's weights over the cached keys
  // (each row sums to 1; query head h reads K/V head h / (num_heads / kv_heads)).
  std::vector<Mat> attn;
  RowVec logits;  // (vocab): the scores of the next piece (the model's first target)
};

// The FLOPs (a multiply-add is 2) of the matrix products that give the logits of the
// newest of n pieces:
//   cached: one row through every layer (q, k, v, W_O and the FFN on one row, its
//           scores and context over n keys), and one row of the unembedding;
//   full:   the whole sequence recomputed, what RunModel does: every product on n rows,
//           the causal triangle of scores and context (row i over i + 1 keys), and the
//           unembedding of every row.
// LayerNorm, softmax, activations and additions (O(n d) either way) are left out.
struct StepFlops {
  double cached = 0, full = 0;
};
StepFlops DecodeFlops(const ModelConfig& cfg, int n);

class Decoder {
 public:
  // The model must be causal (mask causal: otherwise a new piece changes the rows
  // before it, and there is nothing to cache) and must outlive the decoder. Throws
  // mha::Error with a teaching message.
  explicit Decoder(const Model& model);

  // Starts over with `prompt` (1 to max_seq piece ids): runs the one forward pass over
  // all of it but the last piece and fills the cache with every layer's K and V rows,
  // then reads the last piece as a Step; returns that row. The pass's trace is let go
  // at once: a step needs only the cache, and a long prompt's trace is the largest
  // thing generation holds. A refused prompt leaves the decoder as it was.
  const DecodeStep& Prefill(const std::vector<int>& prompt);
  // Reads `token` at position cache().n (on an empty cache, the first piece: the same
  // as Prefill({token})): computes only its row and appends its K and V rows to the
  // cache. Throws mha::Error, changing nothing, for an id outside the vocabulary or
  // when the cache already holds the model's context (max_seq).
  const DecodeStep& Step(int token);

  const KvCache& cache() const { return cache_; }
  const DecodeStep& last() const { return step_; }
  const Model& model() const { return *model_; }

 private:
  void Append(int layer, const float* k_row, const float* v_row);
  void Layer(int layer, float* x);

  const Model* model_;
  KvCache cache_;
  DecodeStep step_;
  // K^T of each K/V head as the forward pass packs it for the scores (GEMM panels of
  // kNR keys), and V as panels where its heads are not read in place; kept up to date
  // row by row, per layer.
  std::vector<std::vector<float>> kt_, vp_;
  bool v_in_place_ = true;
  int key_panels_ = 0, ld_ = 0;
  std::vector<float> x_, x_ln_, q_, k_, v_, s_, a_, context_, attn_out_, res_, out_, ffn_ln_, hidden_, ffn_out_, pack_;
  Mat head_, logits_, pe_;  // pe_: the sinusoidal table, (max_seq, d_model)
};

// How the next piece is chosen from the logits.
struct Sampling {
  double temperature = 0;   // 0: greedy (the likeliest piece); else softmax(logits / T)
  int top_k = 0;            // with a temperature: only the k likeliest pieces (0: all)
  std::uint64_t seed = 0;   // the draws' only source of randomness
  int no_repeat_ngram = 0;  // n > 0: never write a run of n pieces the text already has
};
constexpr int kMaxNoRepeatNgram = 32;
// Throws mha::Error with a teaching message for a temperature below 0 or not finite,
// a top_k outside 0..vocab, or a no_repeat_ngram outside 0..kMaxNoRepeatNgram.
void CheckSampling(const Sampling& s, int vocab);

// n-gram blocking (Hugging Face's no_repeat_ngram_size): before the next piece is
// chosen, every piece v that would end a run of n pieces already in `ids` (its last
// n - 1 pieces, then v, occurred before) gets the logit -inf, so softmax gives it
// probability 0 and neither greedy choice nor sampling can take it. A small model stuck
// in a loop ("고양이가 잤다. 고양이가 잤다. ...") must then write something else.
// Returns how many pieces were blocked; n <= 0, or fewer than n - 1 pieces, blocks none.
// With n = 1 every piece already in the text is blocked.
int BlockRepeatedNgrams(const std::vector<int>& ids, int n, float* logits, int vocab);

// Draws next pieces. The same Sampling and the same logits give the same pieces, on
// every platform: the draws come from SplitMix64 seeded with `seed`, the probabilities
// are computed in double precision, and ties go to the smaller id.
class Sampler {
 public:
  explicit Sampler(const Sampling& s);
  int Next(const float* logits, int vocab);

 private:
  Sampling s_;
  std::uint64_t state_;
  std::vector<int> order_;
  std::vector<double> p_;
};

}  // namespace mha
