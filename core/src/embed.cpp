#include "mha/embed.hpp"

#include <cmath>

#include "mha/tokenizer.hpp"
#include "inputs.hpp"
#include "rng.hpp"

namespace mha {

RowVec EmbedToken(const std::string& text, int d_model, std::uint64_t seed) {
  detail::SplitMix64 rng(detail::StreamSeed(seed, "embed:" + text));
  RowVec e(d_model);
  for (int i = 0; i < d_model; ++i) e[i] = rng.Normal();
  return e;
}

namespace detail {

void PositionalEncodingRows(int first, int d_model, Mat& pe) {
  for (int i = 0; i < d_model; i += 2) {
    // Computed in double so the table is the same whatever the vector unit does.
    const double denom = std::pow(10000.0, static_cast<double>(i) / d_model);
    for (int pos = first; pos < pe.rows(); ++pos) {
      const double angle = pos / denom;
      pe(pos, i) = static_cast<float>(std::sin(angle));
      if (i + 1 < d_model) pe(pos, i + 1) = static_cast<float>(std::cos(angle));
    }
  }
}

}  // namespace detail

Mat PositionalEncoding(int seq, int d_model) {
  Mat pe(seq, d_model);
  detail::PositionalEncodingRows(0, d_model, pe);
  return pe;
}

Mat Embed(const std::vector<std::string>& tokens, const Config& cfg) {
  const int seq = static_cast<int>(tokens.size());
  Mat x(seq, cfg.d_model);
  for (int t = 0; t < seq; ++t) x.row(t) = EmbedToken(tokens[t], cfg.d_model, cfg.seed);
  if (cfg.positional_encoding) x += PositionalEncoding(seq, cfg.d_model);
  return x;
}

namespace detail {

void TokenizeInputs(std::string_view sentence, std::string_view memory_sentence, const Config& cfg, Inputs& in,
                    std::string* notice) {
  in.tokens.clear();
  in.memory_tokens.clear();
  const Tokenized tq = Tokenize(sentence, Limits::kMaxTokens);
  std::string note = TokenizeNotice(tq, Limits::kMaxTokens);
  if (tq.tokens.empty()) throw Error("The sentence is empty: type at least one word, e.g. \"the cat sat on the mat\".");
  for (const auto& tok : tq.tokens) in.tokens.push_back(tok.text);
  if (!memory_sentence.empty()) {
    const Tokenized tm = Tokenize(memory_sentence, Limits::kMaxTokens);
    const std::string mnote = TokenizeNotice(tm, Limits::kMaxTokens);
    if (!mnote.empty()) note += (note.empty() ? "Memory: " : " Memory: ") + mnote;
    if (tm.tokens.empty())
      throw Error(
          "The memory sentence has no tokens: cross-attention needs at least one key. "
          "Leave it empty for self-attention.");
    for (const auto& tok : tm.tokens) in.memory_tokens.push_back(tok.text);
  }
  Validate(cfg, static_cast<int>(in.tokens.size()),
           in.memory_tokens.empty() ? static_cast<int>(in.tokens.size()) : static_cast<int>(in.memory_tokens.size()));
  if (notice) *notice = std::move(note);
}

}  // namespace detail

Inputs MakeInputs(const std::string& sentence, const std::string& memory_sentence, const Config& cfg,
                  std::string* notice) {
  Inputs in;
  std::string note;
  detail::TokenizeInputs(sentence, memory_sentence, cfg, in, &note);
  in.x = Embed(in.tokens, cfg);
  if (!in.memory_tokens.empty()) in.memory = Embed(in.memory_tokens, cfg);
  if (notice) *notice = note;
  return in;
}

}  // namespace mha
