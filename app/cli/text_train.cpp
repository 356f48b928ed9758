#include "text_train.hpp"

#include <algorithm>

#include "io/checkpoint.hpp"
#include "mha/text_task.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void AddTextTrainFlags(CLI::App& app, TextTrainArgs& a) {
  const std::string g = "Text (--task text)";
  app.add_option("--corpus", a.corpus,
                 "the text: a directory with train.txt and valid.txt (plain or .gz, one "
                 "paragraph a line), or one file whose every 20th line is held out")
      ->group(g);
  app.add_option("--tokenizer", a.tokenizer,
                 "the SentencePiece .model that cuts the text into pieces; its pieces "
                 "are the model's vocabulary")
      ->group(g);
  app.add_option("--repeat", a.repeat,
                 "share of training windows (0 to 1) that repeat a span of the text, so "
                 "that copying what followed a piece last time pays: the incentive for an induction head")
      ->check(CLI::Range(0.0, 1.0))
      ->group(g);
  app.add_option("--valid-every", a.valid_every, "steps between validation losses (0: ten in the run)")
      ->check(CLI::NonNegativeNumber)
      ->group(g);
  app.add_option("--valid-windows", a.valid_windows, "held-out windows per validation (0: every one)")
      ->check(CLI::NonNegativeNumber)
      ->group(g);
}

std::shared_ptr<TextTraining> TextTraining::Load(const TextTrainArgs& a, const TrainOptions& o) {
  if (a.corpus.empty() || a.tokenizer.empty())
    throw UsageError(
        "--task text trains a language model on running text: give --corpus DIR_OR_FILE and "
        "--tokenizer M.model (e.g. --corpus assets/corpus --tokenizer assets/models/mhaviz-small.model).");
  auto t = std::make_shared<TextTraining>();
  t->args_ = a;
  t->seq_ = o.seq;
  t->tok_ = lm::Tokenizer::Load(a.tokenizer);
  // The tokenizer sets the vocabulary, not --vocab: say so, with its size, before the
  // corpus is read.
  if (t->tok_.vocab_size() > ModelLimits::kMaxVocab)
    throw Error("the tokenizer '" + t->tok_.path() + "' has " + std::to_string(t->tok_.vocab_size()) +
                " pieces, over the model's vocabulary limit of " + std::to_string(ModelLimits::kMaxVocab) +
                " (each piece is a row of the embedding and a column of the unembedding). Train a tokenizer with "
                "a smaller --vocab_size.");
  t->corpus_ = lm::LoadCorpus(a.corpus, t->tok_, a.stop);
  CheckTokenStream(t->corpus_.train, t->tok_.vocab_size(), o.seq, "the training text");
  CheckTokenStream(t->corpus_.valid, t->tok_.vocab_size(), o.seq, "the held-out text");
  return t;
}

ModelConfig TextTraining::NewModel(const TrainOptions& o) const {
  TrainOptions flags = o;
  flags.vocab = tok_.vocab_size();  // names "0", "1", ... replaced by the pieces below
  if (flags.mask.empty()) flags.mask = "causal";
  ModelConfig m = ModelFromOptions(flags, nullptr, 1, o.seq);
  m.vocab = tok_.Vocab();
  m.task = io::TextTaskJson({BaseName(tok_.path()), tok_.bos()});
  mha::Validate(m);
  return m;
}

void TextTraining::CheckModel(const ModelConfig& cfg, const std::string& init_path) const {
  if (cfg.vocab_size() != tok_.vocab_size())
    throw Error("'" + init_path + "' has a vocabulary of " + std::to_string(cfg.vocab_size()) +
                " tokens but the "
                "tokenizer '" +
                tok_.path() + "' has " + std::to_string(tok_.vocab_size()) +
                " pieces: the model "
                "was trained with another tokenizer. Give the tokenizer it was trained with.");
  if (cfg.vocab != tok_.Vocab())
    throw Error("'" + init_path + "' has as many tokens as '" + tok_.path() +
                "' has pieces, but not the same "
                "ones: the model was trained with another tokenizer.");
  if (seq_ > cfg.max_seq)
    throw Error("--seq " + std::to_string(seq_) + " is longer than the context of '" + init_path + "' (" +
                std::to_string(cfg.max_seq) + " pieces).");
}

void TextTraining::MakeBatch(std::uint64_t seed, int step, int batch, Batch& out) const {
  MakeWindowBatch(corpus_.train, seq_, seed, static_cast<std::uint64_t>(step), batch, out, args_.repeat);
}

bool TextTraining::ValidateAfter(int done, int total) const {
  const int every = args_.valid_every > 0 ? args_.valid_every : std::max(1, total / 10);
  return done > 0 && done % every == 0 && done != total;  // the last step's is the final evaluation's
}

StepStats TextTraining::Validate(Trainer& trainer, const Model& m, int batch) const {
  return EvaluateStream(trainer, m, corpus_.valid, seq_, batch, args_.valid_windows);
}

Batch TextTraining::HeldOutWindows(int count) const {
  Batch b;
  MakeConsecutiveBatch(corpus_.valid, seq_, 0, std::min(count, CountWindows(corpus_.valid, seq_)), b);
  return b;
}

}  // namespace mha::cli
