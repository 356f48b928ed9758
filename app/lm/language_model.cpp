#include "lm/language_model.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "io/checkpoint.hpp"
#include "mha/config.hpp"

namespace mha::lm {
namespace {

bool Exists(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0;
}

std::string DirName(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string FindTokenizer(const std::string& checkpoint, const std::string& name) {
  const std::string beside = DirName(checkpoint) + "/" + name, assets = "assets/models/" + name;
  if (Exists(beside)) return beside;
  if (Exists(assets)) return assets;
  throw Error("'" + checkpoint + "' reads text with the tokenizer '" + name + "', which is neither beside it ('" +
              beside + "') nor in " + assets + ". Put the .model file next to the checkpoint.");
}

}  // namespace

bool IsLanguageModel(const ModelConfig& cfg) { return io::IsTextTask(cfg.task); }

LanguageModel WrapLanguageModel(Model model, const std::string& tokenizer_path, const std::string& checkpoint) {
  const std::string what = checkpoint.empty() ? std::string("the model") : "'" + checkpoint + "'";
  if (!IsLanguageModel(model.cfg))
    throw Error(what +
                " is not a language model (it was not trained with --task text), so it has no tokenizer to "
                "read a sentence with. Give its token ids with --tokens instead.");
  const io::TextTaskInfo info = io::ParseTextTaskJson(model.cfg.task, what);
  LanguageModel lm;
  lm.tokenizer = Tokenizer::Load(tokenizer_path.empty() ? FindTokenizer(checkpoint, info.tokenizer) : tokenizer_path);
  if (lm.tokenizer.vocab_size() != model.cfg.vocab_size())
    throw Error(what + " has a vocabulary of " + std::to_string(model.cfg.vocab_size()) +
                " tokens but its tokenizer '" + lm.tokenizer.path() + "' has " +
                std::to_string(lm.tokenizer.vocab_size()) +
                " pieces: they do not belong together. Use the tokenizer the model was trained with.");
  if (lm.tokenizer.Vocab() != model.cfg.vocab)
    throw Error(what + " and its tokenizer '" + lm.tokenizer.path() +
                "' have as many pieces but not the same ones: "
                "they do not belong together.");
  lm.bos = info.bos;
  lm.model = std::move(model);
  lm.path = checkpoint;
  return lm;
}

LanguageModel LoadLanguageModel(const std::string& checkpoint, const std::string& tokenizer_path) {
  return WrapLanguageModel(io::LoadModel(checkpoint), tokenizer_path, checkpoint);
}

std::vector<NextPiece> TopK(const LanguageModel& lm, const float* logits, int vocab, int k) {
  k = std::min(k, vocab);
  if (k <= 0) return {};
  double mx = logits[0];
  for (int v = 1; v < vocab; ++v) mx = std::max(mx, static_cast<double>(logits[v]));
  double sum = 0;
  for (int v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(logits[v]) - mx);
  std::vector<int> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  const std::vector<std::string> pieces = lm.tokenizer.Pieces(std::vector<int>(order.begin(), order.begin() + k));
  std::vector<NextPiece> out;
  for (int j = 0; j < k; ++j) {
    const int id = order[static_cast<std::size_t>(j)];
    out.push_back({id, pieces[static_cast<std::size_t>(j)], std::exp(static_cast<double>(logits[id]) - mx) / sum});
  }
  return out;
}

SentenceRun RunOnIds(const LanguageModel& lm, std::vector<int> ids, int top_k,
                     const std::vector<HeadAblation>* ablate) {
  SentenceRun r;
  // Callers with a sentence say so themselves (RunOnSentence); these ids came from elsewhere.
  if (ids.empty()) throw Error("there are no pieces to run the model on.");
  r.total_pieces = static_cast<int>(ids.size());
  const int cap = lm.model.cfg.max_seq;
  if (r.total_pieces > cap) {
    ids.resize(static_cast<std::size_t>(cap));
    r.notice = "the sentence is " + std::to_string(r.total_pieces) + " pieces long, but the model reads at most " +
               std::to_string(cap) + " (its context, max_seq): only the first " + std::to_string(cap) + " are shown.";
  }
  r.ids = std::move(ids);
  r.pieces = lm.tokenizer.Pieces(r.ids);
  RunModel(lm.model, r.ids, r.trace, ablate);
  const Mat& logits = r.trace.logits[0];
  for (int i = 0; i < static_cast<int>(logits.rows()) && top_k > 0; ++i)
    r.next.push_back(TopK(lm, logits.row(i).data(), static_cast<int>(logits.cols()), top_k));
  return r;
}

SentenceRun RunOnSentence(const LanguageModel& lm, const std::string& text, int top_k,
                          const std::vector<HeadAblation>* ablate) {
  std::vector<int> ids = lm.tokenizer.Encode(text);
  if (ids.empty()) throw Error("the sentence is empty: type a few words.");
  ids.insert(ids.begin(), lm.bos);
  return RunOnIds(lm, std::move(ids), top_k, ablate);
}

}  // namespace mha::lm
