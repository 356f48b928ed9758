// A trained language model and its tokenizer, run on a sentence: the API the app's
// model view, head view and next-token panel draw from, and `mhaviz trace --model`
// with --sentence and --top-k.
//
//   LanguageModel lm = LoadLanguageModel("assets/models/mhaviz-small.npz");
//   SentenceRun r = RunOnSentence(lm, "고양이가 쥐를 잡았다", 5);
//   r.pieces[i]                  the i-th piece ("<s>" first: the model was trained with
//                                a BOS before every paragraph)
//   r.trace.layers[l].attn       layer l's attention, (num_heads * seq, seq)
//   r.next[i][j]                 the j-th likeliest piece after position i, with its
//                                probability (softmax of r.trace.logits[0] row i)
//
// All throw mha::Error with a teaching message; nothing here touches the UI.
#pragma once

#include <string>
#include <vector>

#include "lm/tokenizer.hpp"
#include "mha/model.hpp"

namespace mha::lm {

struct LanguageModel {
  Model model;
  Tokenizer tokenizer;
  std::string path;  // the checkpoint
  int bos = 1;       // the id put before the sentence
};

// Whether a loaded checkpoint is a language model (trained by `train --task text`).
bool IsLanguageModel(const ModelConfig& cfg);
// Loads the checkpoint and the tokenizer its config names: `tokenizer_path` if given,
// else the file name looked up beside the checkpoint, then in assets/models/ under the
// current directory. Refuses a checkpoint of another task, a missing or corrupt
// tokenizer, and a tokenizer whose pieces are not the model's vocabulary.
LanguageModel LoadLanguageModel(const std::string& checkpoint, const std::string& tokenizer_path = "");
// The same for a model already in memory (e.g. a TrainingRun's snapshot).
LanguageModel WrapLanguageModel(Model model, const std::string& tokenizer_path, const std::string& checkpoint = "");

struct NextPiece {
  int id = 0;
  std::string piece;
  double probability = 0;
};

struct SentenceRun {
  std::vector<int> ids;                      // BOS, then the sentence's pieces (capped)
  std::vector<std::string> pieces;           // their vocabulary spellings
  ModelTrace trace;                          // every layer's Trace and the logits
  std::vector<std::vector<NextPiece>> next;  // per position: the top_k next pieces, likeliest first
  int total_pieces = 0;                      // BOS + pieces before the cap
  std::string notice;                        // why the sentence was cut, or ""
};

// Tokenizes NFC(text), puts BOS first, keeps at most the model's context (max_seq)
// pieces (the rest are dropped with a notice), runs every layer and keeps the top_k
// next pieces per position (0: none). Refuses an empty sentence. `ablate` (one per
// layer, mha/ablation.hpp), if given, knocks heads out.
SentenceRun RunOnSentence(const LanguageModel& lm, const std::string& text, int top_k = 5,
                          const std::vector<HeadAblation>* ablate = nullptr);
// The same on ids the caller chose (e.g. --tokens): no BOS is added.
SentenceRun RunOnIds(const LanguageModel& lm, std::vector<int> ids, int top_k = 5,
                     const std::vector<HeadAblation>* ablate = nullptr);

// The k likeliest next pieces from one row of logits: softmax in double precision,
// ties broken by the smaller id.
std::vector<NextPiece> TopK(const LanguageModel& lm, const float* logits, int vocab, int k);

}  // namespace mha::lm
