// A language model continuing a prompt one piece at a time, with the KV cache
// (mha/decode.hpp), each step timed beside the full recomputation of the sequence:
// what `mhaviz generate` prints and what a view can draw, one Next() at a time (on a
// worker thread: a step never touches the UI).
//
//   Generation g(lm, PromptIds(lm, "고양이가", &notice), sampling, /*use_cache=*/true);
//   while (!g.AtContext() && g.steps().size() < 40) g.Next();
//   g.ids()                      <s>, the prompt's pieces, then the new ones
//   g.decoder().cache().K(l, g)  layer l's cached K of K/V head g, (n, head_dim)
//   g.decoder().last().attn[l]   the newest query's weights over the cache, (num_heads, n)
//   g.steps()[i]                 piece i's times and FLOPs with the cache and without
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/decode.hpp"

namespace mha::lm {

// Throws mha::Error if the model's context (max_seq) has no room for a piece after <s>.
void CheckCanGenerate(const LanguageModel& lm);
// <s> then NFC(text)'s pieces (text may be empty: <s> alone), cut to the first
// max_seq - 1 so that one new piece still fits; `notice` (if given) says why it was cut,
// or is "". Throws mha::Error for text that is not UTF-8, or (CheckCanGenerate) for a
// model with no room to generate.
std::vector<int> PromptIds(const LanguageModel& lm, const std::string& text, std::string* notice = nullptr);

// The pass that chose one new piece: the prefill or a decode step, and the full
// recomputation of the same sequence beside it.
struct GeneratedPiece {
  int position = 0;  // the piece's position in the text (1-based): the pass read position - 1 pieces
  int id = 0;
  std::string piece;                     // its vocabulary spelling
  double ms_cached = -1, ms_full = 0;    // wall clock (-1: no cached pass, use_cache off)
  double cpu_cached = -1, cpu_full = 0;  // the calling thread's CPU time
  StepFlops flops;                       // of the pass, with the cache and without
  double logit_diff = -1;                // max |cached - full| over the vocabulary (-1: not compared)
  int blocked = 0;                       // pieces n-gram blocking took out of the choice (Sampling::no_repeat_ngram)
};

class Generation {
 public:
  // `lm` must outlive the generation. With use_cache off the pieces come from the full
  // recomputation alone (the same pieces, slower). Throws mha::Error for bad sampling
  // or a model that is not causal.
  Generation(const LanguageModel& lm, std::vector<int> prompt_ids, const Sampling& sampling, bool use_cache = true);

  // Whether the text fills the model's context (max_seq): no further piece fits.
  bool AtContext() const;
  // Whether the newest generated piece is <s>: the model ended this text and would start
  // a new one (after a paragraph it often changes language). Where `mhaviz generate
  // --stop-at-s` and the Generate view's "stop at <s>" stop.
  bool EndedText() const;
  // Chooses, appends and returns one new piece (with sampling.no_repeat_ngram, never one
  // that repeats a run of that many pieces: BlockRepeatedNgrams). Throws mha::Error at
  // the context.
  const GeneratedPiece& Next();

  const std::vector<int>& ids() const { return ids_; }
  int prompt_size() const { return prompt_size_; }
  const std::vector<GeneratedPiece>& steps() const { return steps_; }
  const Decoder& decoder() const { return decoder_; }
  bool use_cache() const { return use_cache_; }
  // Pieces whose K and V the cache holds: every piece a pass has read (all but the
  // newest), also without the cache (what it would hold).
  int CacheRows() const;
  std::int64_t CacheBytes() const;

 private:
  const LanguageModel* lm_;
  std::vector<int> ids_;
  int prompt_size_;
  bool use_cache_;
  Decoder decoder_;
  Sampler sampler_;
  int no_repeat_ngram_;
  std::vector<float> blocked_logits_;  // the logits with the repeats blocked
  ModelTrace full_;
  std::vector<GeneratedPiece> steps_;
};

}  // namespace mha::lm
