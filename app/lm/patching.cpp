#include "lm/patching.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "io/json_parse.hpp"
#include "lm/minimal_pairs.hpp"

namespace mha::lm {
namespace {

// log softmax(row)[id] in double precision.
double LogProb(const float* row, int vocab, int id) {
  double mx = row[0];
  for (int v = 1; v < vocab; ++v) mx = std::max(mx, static_cast<double>(row[v]));
  double sum = 0;
  for (int v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
  return static_cast<double>(row[id]) - mx - std::log(sum);
}

// "[<s>] [▁할머니] [께서] ..."
std::string Spelled(const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& p : pieces) out += (out.empty() ? "[" : " [") + p + "]";
  return out;
}

double TargetLogProb(const ModelTrace& t, int target) {
  const Mat& logits = t.logits[0];
  return LogProb(logits.row(logits.rows() - 1).data(), static_cast<int>(logits.cols()), target);
}

double Recovered(double patched, double clean, double corrupt) { return (patched - corrupt) / (clean - corrupt); }

}  // namespace

std::vector<int> PatchIds(const LanguageModel& lm, const std::string& sentence, const std::string& flag) {
  const int cap = lm.model.cfg.max_seq;
  // Refused before tokenising when no tokenisation could fit (as a pair's sentence).
  const std::size_t longest = LongestPieceBytes(lm);
  if (sentence.size() + 1 > static_cast<std::size_t>(cap) * longest)
    throw Error(flag + " is " + std::to_string(sentence.size()) + " bytes, more pieces than the model's context of " +
                std::to_string(cap) + ". Use a shorter sentence.");
  std::vector<int> ids;
  try {
    ids = lm.tokenizer.Encode(sentence);
  } catch (const Error& e) {
    throw Error(flag + ": " + e.what());
  }
  if (ids.empty()) throw Error(flag + " is empty: type a sentence, e.g. " + flag + " \"할머니께서 방에서\".");
  ids.insert(ids.begin(), lm.bos);
  if (static_cast<int>(ids.size()) > cap)
    throw Error(flag + " is " + std::to_string(ids.size()) + " pieces with <s>, more than the model's context of " +
                std::to_string(cap) + ". Patching compares whole runs, so nothing is cut: use a shorter sentence.");
  return ids;
}

int TargetPiece(const LanguageModel& lm, const std::string& piece, const float* clean_logits) {
  const std::vector<std::string>& vocab = lm.model.cfg.vocab;
  for (const std::string& spelling : {piece, std::string("\xe2\x96\x81") + piece}) {
    const auto it = std::find(vocab.begin(), vocab.end(), spelling);
    if (it != vocab.end()) return static_cast<int>(it - vocab.begin());
  }
  std::string likely;
  for (const NextPiece& p : TopK(lm, clean_logits, lm.model.cfg.vocab_size(), 5)) {
    char prob[32];
    std::snprintf(prob, sizeof prob, " %.2f", p.probability);
    likely += (likely.empty() ? "[" : ", [") + p.piece + "]" + prob;
  }
  throw Error("--target '" + io::Excerpt(piece) + "' is not a piece of the model's vocabulary of " +
              std::to_string(vocab.size()) +
              " pieces (a piece is spelled as the tokenizer writes it; ▁ starts a word, and is added if "
              "missing). After the clean sentence the model's likeliest next pieces are " +
              likely + ".");
}

PatchReport PatchEveryHead(const LanguageModel& lm, const std::string& clean, const std::string& corrupt,
                           const std::string& target, bool per_position) {
  PatchReport r;
  r.clean.sentence = clean;
  r.corrupt.sentence = corrupt;
  r.clean.ids = PatchIds(lm, clean, "--clean");
  r.corrupt.ids = PatchIds(lm, corrupt, "--corrupt");
  r.clean.pieces = lm.tokenizer.Pieces(r.clean.ids);
  r.corrupt.pieces = lm.tokenizer.Pieces(r.corrupt.ids);
  if (r.clean.ids.size() != r.corrupt.ids.size())
    throw Error("--clean is " + std::to_string(r.clean.ids.size()) + " pieces, " + Spelled(r.clean.pieces) +
                ", and --corrupt " + std::to_string(r.corrupt.ids.size()) + ", " + Spelled(r.corrupt.pieces) +
                ". Patching puts a head's context at position i of the clean run into position i of the corrupt "
                "one, so both need the same number of pieces: change a word for one of as many pieces (mhaviz "
                "trace --model M --sentence S lists them; ▁할머니께서 and ▁형이 are one piece each).");
  ModelTrace clean_run, corrupt_run, patched;
  RunModel(lm.model, r.clean.ids, clean_run);
  RunModel(lm.model, r.corrupt.ids, corrupt_run);
  const Mat& cl = clean_run.logits[0];
  if (target.empty()) {
    r.target = TopK(lm, cl.row(cl.rows() - 1).data(), static_cast<int>(cl.cols()), 1).front().id;
    r.target_default = true;
  } else {
    r.target = TargetPiece(lm, target, cl.row(cl.rows() - 1).data());
  }
  r.target_piece = lm.model.cfg.vocab[static_cast<std::size_t>(r.target)];
  r.clean.logp = TargetLogProb(clean_run, r.target);
  r.corrupt.logp = TargetLogProb(corrupt_run, r.target);
  // The difference is a sum over the vocabulary's softmax: below float32's resolution of
  // it, the runs agree and there is nothing to divide by.
  const double scale = std::max({1.0, std::abs(r.clean.logp), std::abs(r.corrupt.logp)});
  if (std::abs(r.clean.logp - r.corrupt.logp) <= 1e-4 * scale) {
    char buf[160];
    std::snprintf(buf, sizeof buf, " (%.4f and %.4f nats)", r.clean.logp, r.corrupt.logp);
    throw Error("the clean and corrupt runs give [" + r.target_piece + "] the same log-probability" + buf +
                ", so there is nothing for a head to restore. Choose a --target the two sentences disagree on, "
                "or a corrupt sentence that changes the word the target depends on.");
  }
  const int L = lm.model.cfg.num_layers, H = lm.model.cfg.layer.num_heads;
  const int seq = static_cast<int>(r.clean.ids.size());
  auto measure = [&](const std::vector<HeadRef>& heads, const std::vector<int>& positions) {
    const std::vector<HeadAblation> p = PatchHeads(clean_run, heads, positions);
    RunModel(lm.model, r.corrupt.ids, patched, &p);
    return TargetLogProb(patched, r.target);
  };
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      HeadPatch hp;
      hp.head = {l, h};
      hp.logp = measure({hp.head}, {});
      hp.recovered = Recovered(hp.logp, r.clean.logp, r.corrupt.logp);
      for (int i = 0; per_position && i < seq; ++i) {
        hp.logp_at.push_back(measure({hp.head}, {i}));
        hp.recovered_at.push_back(Recovered(hp.logp_at.back(), r.clean.logp, r.corrupt.logp));
      }
      r.heads.push_back(std::move(hp));
    }
  for (int l = 0; l < L; ++l) {
    std::vector<HeadRef> all;
    for (int h = 0; h < H; ++h) all.push_back({l, h});
    LayerPatch lp;
    lp.layer = l;
    lp.logp = measure(all, {});
    lp.recovered = Recovered(lp.logp, r.clean.logp, r.corrupt.logp);
    r.layers.push_back(lp);
  }
  return r;
}

}  // namespace mha::lm
