#include "lm/minimal_pairs.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "io/json_parse.hpp"
#include "mha/config.hpp"

namespace mha::lm {
namespace {

constexpr std::size_t kMaxPairsFile = std::size_t(64) << 20;
constexpr const char* kFields[] = {"phenomenon", "good", "bad", "cue", "prefix"};
// A pair's line is one object of strings: one level, so anything deeper is not a pair.
constexpr int kMaxPairDepth = 1;
// A pair's sentence is checked against the model's context before it is tokenised
// (ScoreMinimalPair); this bound comes first, before it is even normalised: no context
// of ModelLimits::kMaxSeq pieces reads a megabyte.
constexpr std::size_t kMaxPairSentence = std::size_t(1) << 20;
// A line holds five fields (each at most kMaxPairSentence) and the JSON around them.
constexpr std::size_t kMaxPairLine = 5 * kMaxPairSentence + 4096;

// log softmax(row)[id] in double precision.
double LogProb(const float* row, int vocab, int id) {
  double mx = row[0];
  for (int v = 1; v < vocab; ++v) mx = std::max(mx, static_cast<double>(row[v]));
  double sum = 0;
  for (int v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
  return static_cast<double>(row[id]) - mx - std::log(sum);
}

// The byte length each piece covers in " " + text (SentencePiece's dummy prefix): "▁"
// stands for one space, a byte piece for one byte.
std::size_t PieceBytes(const std::string& piece) {
  if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>') return 1;
  static const std::string kSpace = "\xe2\x96\x81";
  std::size_t n = 0;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.compare(i, kSpace.size(), kSpace) == 0) {
      n += 1;
      i += kSpace.size();
    } else {
      n += 1;
      i += 1;
    }
  }
  return n;
}

}  // namespace

std::vector<MinimalPair> ParseMinimalPairs(const std::string& text, const std::string& name) {
  std::vector<MinimalPair> out;
  std::size_t start = 0;
  int line = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::size_t row_bytes = end - start;
    // A line longer than five fields at their bound is refused before it is copied or
    // parsed (a 40 MB sentence took 463 MiB to refuse after the parse).
    if (row_bytes > kMaxPairLine) {
      std::size_t cut = 48;  // an excerpt that ends between UTF-8 characters
      while (cut > 0 && (static_cast<unsigned char>(text[start + cut]) & 0xC0) == 0x80) --cut;
      throw Error(name + " line " + std::to_string(line + 1) + " is " + std::to_string(row_bytes) + " bytes (\"" +
                  text.substr(start, cut) + "...\"): a pair is two sentences, and no model's context reads more than " +
                  std::to_string(kMaxPairSentence >> 20) + " MiB of one.");
    }
    const std::string row = text.substr(start, row_bytes);
    start = end + 1;
    ++line;
    if (row.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = name + " line " + std::to_string(line) + ": ";
    // A pair is one flat object: nesting is refused as it opens, before a deep line can
    // cost memory (a 60 MB line of '[' took 2.2 GiB with an unbounded parse).
    nlohmann::json j;
    std::string why;
    try {
      j = io::ParseJson(row, kMaxPairDepth);
    } catch (const Error& e) {
      why = std::string(" (") + e.what() + ")";
    }
    if (!why.empty() || !j.is_object())
      throw Error(where + "not a JSON object" + why +
                  ". Each line is one pair: {\"phenomenon\": ..., \"good\": ..., \"bad\": "
                  "..., \"cue\": ..., \"prefix\": ...} (scripts/make_teaching_corpus.py writes such a file).");
    MinimalPair p;
    p.line = line;
    std::string* slots[] = {&p.phenomenon, &p.good, &p.bad, &p.cue, &p.prefix};
    for (int f = 0; f < 5; ++f) {
      const auto it = j.find(kFields[f]);
      if (it == j.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
        throw Error(where + "\"" + kFields[f] +
                    "\" is missing, empty or not a string: every pair needs "
                    "phenomenon, good, bad, cue and prefix.");
      const std::string& text = it->get_ref<const std::string&>();
      if (text.size() > kMaxPairSentence)
        throw Error(where + "\"" + kFields[f] + "\" is " + std::to_string(text.size()) + " bytes (\"" +
                    io::Excerpt(text) + "\"): a pair is two sentences, and no model's context reads more than " +
                    std::to_string(kMaxPairSentence >> 20) + " MiB of one.");
      *slots[f] = Nfc(text);
    }
    if (p.good == p.bad)
      throw Error(where + "\"good\" and \"bad\" are the same sentence: a minimal pair differs in one form.");
    if (p.good.find(p.cue) == std::string::npos)
      throw Error(where + "the cue \"" + io::Excerpt(p.cue) +
                  "\" is not in the good sentence: the cue is the word the form "
                  "depends on, as it is written there.");
    out.push_back(std::move(p));
  }
  if (out.empty()) throw Error(name + " has no pairs: it is empty or only blank lines.");
  return out;
}

std::vector<MinimalPair> LoadMinimalPairs(const std::string& path) {
  std::string text;
  try {
    text = io::ReadFile(path, kMaxPairsFile);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " Give a pairs file (JSON Lines), e.g. assets/corpus/pairs.jsonl.");
  }
  return ParseMinimalPairs(text, "'" + path + "'");
}

std::size_t LongestPieceBytes(const LanguageModel& lm) {
  std::size_t most = 1;
  for (const std::string& piece : lm.model.cfg.vocab) most = std::max(most, PieceBytes(piece));
  return most;
}

PairScore ScoreMinimalPair(const LanguageModel& lm, const MinimalPair& p, const std::vector<HeadAblation>* ablate,
                           std::size_t longest_piece) {
  const std::string where = "pair on line " + std::to_string(p.line) + " (" + io::Excerpt(p.good) + "): ";
  const int cap = lm.model.cfg.max_seq;
  // Every piece covers at most the vocabulary's longest piece of " " + sentence, so a
  // sentence longer than the context's pieces can cover is refused before it is
  // tokenised (a 30 MB sentence took 1.9 GiB to tokenise, only to be refused then).
  if (longest_piece == 0) longest_piece = LongestPieceBytes(lm);
  const std::size_t most = static_cast<std::size_t>(cap) * longest_piece;
  for (const std::string* s : {&p.good, &p.bad})
    if (s->size() + 1 > most)
      throw Error(where + "a sentence of " + std::to_string(s->size()) +
                  " bytes is more pieces than the model's context of " + std::to_string(cap) +
                  " (its longest piece is " + std::to_string(longest_piece) + " bytes). Use shorter sentences.");
  std::vector<int> good = lm.tokenizer.Encode(p.good), bad = lm.tokenizer.Encode(p.bad);
  good.insert(good.begin(), lm.bos);
  bad.insert(bad.begin(), lm.bos);
  if (static_cast<int>(std::max(good.size(), bad.size())) > cap)
    throw Error(where + "with <s> it is " + std::to_string(std::max(good.size(), bad.size())) +
                " pieces, more than the model's context of " + std::to_string(cap) + ". Use shorter sentences.");
  std::size_t k = 0;
  while (k < good.size() && k < bad.size() && good[k] == bad[k]) ++k;
  if (k == good.size() || k == bad.size())
    throw Error(where +
                "one sentence's pieces are the start of the other's, so there is no form to choose "
                "between. Make the sentences differ before either ends.");
  PairScore s;
  s.decide = static_cast<int>(k) - 1;

  // The traces are this thread's own, reused from pair to pair.
  thread_local ModelTrace rg, rb;
  RunModel(lm.model, good, rg, ablate);
  RunModel(lm.model, bad, rb, ablate);
  const std::vector<std::string> pieces = lm.tokenizer.Pieces(good);
  const int vocab = static_cast<int>(rg.logits[0].cols());
  for (std::size_t t = k; t < good.size(); ++t)
    s.logp_good += LogProb(rg.logits[0].row(static_cast<int>(t) - 1).data(), vocab, good[t]);
  for (std::size_t t = k; t < bad.size(); ++t)
    s.logp_bad += LogProb(rb.logits[0].row(static_cast<int>(t) - 1).data(), vocab, bad[t]);

  // The cue's pieces: those covering its bytes in " " + good (the tokenizer's dummy
  // prefix), at its first occurrence.
  const std::size_t cue_begin = p.good.find(p.cue) + 1, cue_end = cue_begin + p.cue.size();
  std::size_t offset = 0;
  for (std::size_t i = 1; i < good.size(); ++i) {
    const std::size_t len = PieceBytes(pieces[i]);
    std::size_t lo = offset, hi = offset + len;
    // A piece's leading "▁" is the space before the word, not part of the cue.
    if (pieces[i].compare(0, 3, "\xe2\x96\x81") == 0) ++lo;
    if (lo < hi && lo < cue_end && hi > cue_begin) s.cue.push_back(static_cast<int>(i));
    offset += len;
  }
  if (s.cue.empty()) throw Error(where + "no piece covers the cue \"" + io::Excerpt(p.cue) + "\".");
  if (s.cue.front() > s.decide)
    throw Error(where + "the cue \"" + io::Excerpt(p.cue) +
                "\" comes after the sentences differ; the cue is an earlier word "
                "the form depends on.");
  // A piece may join the cue's end and the form ("딸" "기를" against "딸" "기" "을"): the
  // choice is then made inside the cue, and attention to it says nothing.
  if (s.cue.back() > s.decide) {
    s.cue.clear();
    return s;
  }

  const int H = lm.model.cfg.layer.num_heads, seq = static_cast<int>(good.size());
  for (const Trace& layer : rg.layers)
    for (int h = 0; h < H; ++h) {
      double w = 0;
      for (int j : s.cue) w += layer.attn(h * seq + s.decide, j);
      s.cue_weight.push_back(w);
    }
  return s;
}

PairsReport ScoreMinimalPairs(const LanguageModel& lm, const std::vector<MinimalPair>& pairs,
                              const std::vector<HeadAblation>* ablate) {
  PairsReport r;
  r.num_layers = lm.model.cfg.num_layers;
  r.num_heads = lm.model.cfg.layer.num_heads;
  const std::size_t n_heads = static_cast<std::size_t>(r.num_layers * r.num_heads);
  const std::size_t longest = LongestPieceBytes(lm);
  // One thread per pass: a pair is a few dozen pieces, too short for the pool to win
  // back what waking it costs (its workers were a third of the CPU time). The numbers do
  // not depend on the thread count. (The copy shares the weights.)
  LanguageModel one = lm;
  one.model.cfg.layer.threads = 1;
  for (const MinimalPair& p : pairs) {
    auto it = std::find_if(r.phenomena.begin(), r.phenomena.end(),
                           [&](const PhenomenonScore& s) { return s.phenomenon == p.phenomenon; });
    if (it == r.phenomena.end()) {
      r.phenomena.push_back({});
      it = r.phenomena.end() - 1;
      it->phenomenon = p.phenomenon;
      it->mean_weight.assign(n_heads, 0.0);
    }
    const PairScore s = ScoreMinimalPair(one, p, ablate, longest);
    r.margins.push_back(s.logp_good - s.logp_bad);
    r.phenomenon_of.push_back(static_cast<int>(it - r.phenomena.begin()));
    ++it->pairs;
    it->correct += s.correct();
    if (s.cue.empty()) continue;
    ++it->attention_pairs;
    for (std::size_t i = 0; i < n_heads; ++i) it->mean_weight[i] += s.cue_weight[i];
    it->uniform += static_cast<double>(s.cue.size()) / (s.decide + 1);
  }
  for (PhenomenonScore& ph : r.phenomena) {
    ph.accuracy = static_cast<double>(ph.correct) / ph.pairs;
    const double n = std::max(1, ph.attention_pairs);
    for (double& w : ph.mean_weight) w /= n;
    ph.uniform /= n;
    const auto best = std::max_element(ph.mean_weight.begin(), ph.mean_weight.end());
    const int i = static_cast<int>(best - ph.mean_weight.begin());
    ph.best_layer = i / r.num_heads;
    ph.best_head = i % r.num_heads;
    ph.best_weight = *best;
  }
  return r;
}

HeadRef ControlHead(const PairsReport& plain, const PhenomenonScore& p) {
  const int H = plain.num_heads, n = plain.num_layers * H;
  const int found = p.best_layer * H + p.best_head;
  // The same layer's heads first; the other layers' only where the layer has no other.
  int best = -1;
  for (int pass = 0; pass < 2 && best < 0; ++pass)
    for (int i = 0; i < n; ++i) {
      if (i == found || ((i / H == p.best_layer) != (pass == 0))) continue;
      if (best < 0 || p.mean_weight[static_cast<std::size_t>(i)] < p.mean_weight[static_cast<std::size_t>(best)])
        best = i;
    }
  return best < 0 ? HeadRef{-1, -1} : HeadRef{best / H, best % H};
}

PairsKnockouts KnockOutFoundHeads(const LanguageModel& lm, const std::vector<MinimalPair>& pairs,
                                  const PairsReport& plain) {
  PairsKnockouts k;
  std::vector<HeadRef> heads;
  std::vector<HeadRef> found, control;
  for (const PhenomenonScore& p : plain.phenomena) {
    found.push_back({p.best_layer, p.best_head});
    control.push_back(ControlHead(plain, p));
    heads.push_back(found.back());
    if (control.back().layer >= 0) heads.push_back(control.back());
  }
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  const Config layer = lm.model.cfg.LayerConfig();
  for (const HeadRef& h : heads) {
    const std::vector<HeadAblation> a =
        LayerAblations(lm.model.cfg.num_layers, layer, AblationMode::Zero, {h}, nullptr);
    const PairsReport r = ScoreMinimalPairs(lm, pairs, &a);
    KnockoutRun run;
    run.head = h;
    for (const PhenomenonScore& p : r.phenomena) run.accuracy.push_back(p.accuracy);
    k.runs.push_back(std::move(run));
  }
  auto index = [&](const HeadRef& h) {
    if (h.layer < 0) return -1;
    return static_cast<int>(std::lower_bound(heads.begin(), heads.end(), h) - heads.begin());
  };
  for (std::size_t i = 0; i < found.size(); ++i) {
    k.found.push_back(index(found[i]));
    k.control.push_back(index(control[i]));
  }
  return k;
}

}  // namespace mha::lm
