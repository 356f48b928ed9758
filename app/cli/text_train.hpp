// `mhaviz train --task text`: a causal language model on a tokenized corpus. The text
// and tokenizer are read here (app/lm); the windows and the validation loss are core's
// (text_task.hpp); the training loop is train_cmd.cpp's, which asks this class for each
// step's batch and for the validation loss.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "lm/corpus.hpp"
#include "lm/tokenizer.hpp"
#include "mha/model.hpp"
#include "mha/train.hpp"
#include "train_options.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

struct TextTrainArgs {
  std::string corpus, tokenizer;
  int valid_every = 0;                      // steps between validation losses (0: ten in the run)
  int valid_windows = 0;                    // held-out windows per validation (0: all)
  double repeat = 0;                        // share of training windows that repeat a span (induction)
  const std::atomic<bool>* stop = nullptr;  // polled while the corpus is tokenized (lm::Stopped)
};
// Declares --corpus, --tokenizer, --valid-every, --valid-windows.
void AddTextTrainFlags(CLI::App& app, TextTrainArgs& a);

inline constexpr const char* kTextTaskFlag = "text";

class TextTraining {
 public:
  // Throws mha::Error: missing --corpus or --tokenizer is a usage error (the caller
  // maps UsageError to exit 2); unreadable or corrupt files, or a corpus too short for
  // one window, are runtime errors.
  struct UsageError : Error {
    using Error::Error;
  };
  static std::shared_ptr<TextTraining> Load(const TextTrainArgs& a, const TrainOptions& o);

  // A new model from the flags, with the tokenizer's pieces as its vocabulary,
  // contexts of --seq pieces and a causal mask.
  ModelConfig NewModel(const TrainOptions& o) const;
  // A model from --init must read the same pieces: its vocabulary size and pieces must
  // be the tokenizer's, and --seq must fit its context.
  void CheckModel(const ModelConfig& cfg, const std::string& init_path) const;

  void MakeBatch(std::uint64_t seed, int step, int batch, Batch& out) const;
  int seq() const { return seq_; }
  // Whether to measure the validation loss after `done` steps of `total`.
  bool ValidateAfter(int done, int total) const;
  StepStats Validate(Trainer& trainer, const Model& m, int batch) const;
  // The first held-out windows, for head labels.
  Batch HeldOutWindows(int count) const;
  const std::string& description() const { return corpus_.description; }
  // What the tokenized corpus holds in memory for the whole run (its ids).
  double corpus_bytes() const { return 4.0 * static_cast<double>(corpus_.train.size() + corpus_.valid.size()); }

 private:
  TextTrainArgs args_;
  lm::Tokenizer tok_;
  lm::EncodedCorpus corpus_;
  int seq_ = 0;
};

}  // namespace mha::cli
