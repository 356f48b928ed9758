// libFuzzer target: mha::Tokenize on arbitrary bytes, plus MakeInputs/Forward on the
// result at a tiny size. The first byte picks the token cap; the rest is the text.
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_common.hpp"
#include "mha/mha.hpp"

namespace {

void CheckTokens(std::string_view text, int cap, const mha::Tokenized& t) {
  const std::size_t limit = std::min(text.size(), mha::Limits::kMaxSentenceBytes);
  FUZZ_CHECK(t.input_truncated == (text.size() > mha::Limits::kMaxSentenceBytes), "truncation flag");
  FUZZ_CHECK(static_cast<long long>(t.tokens.size()) <= std::max(cap, 0), "%zu tokens > cap %d", t.tokens.size(), cap);
  std::size_t prev_end = 0;
  for (std::size_t i = 0; i < t.tokens.size(); ++i) {
    const mha::Token& tok = t.tokens[i];
    FUZZ_CHECK(!tok.text.empty(), "token %zu is empty", i);
    FUZZ_CHECK(fuzz::IsValidUtf8(tok.text), "token %zu is not valid UTF-8", i);
    FUZZ_CHECK(tok.byte_begin < tok.byte_end && tok.byte_end <= limit,
               "token %zu has byte range [%zu, %zu) in %zu bytes", i, tok.byte_begin, tok.byte_end, limit);
    FUZZ_CHECK(tok.byte_begin >= prev_end, "token %zu starts at %zu before the previous end %zu", i, tok.byte_begin,
               prev_end);
    prev_end = tok.byte_end;
    // A slice that is valid UTF-8 must come through byte for byte.
    const std::string_view slice = text.substr(tok.byte_begin, tok.byte_end - tok.byte_begin);
    if (fuzz::IsValidUtf8(slice)) FUZZ_CHECK(tok.text == slice, "token %zu differs from its valid source", i);
    // A token is one word or one punctuation mark: tokenizing it again gives itself.
    const mha::Tokenized again = mha::Tokenize(tok.text, 4);
    FUZZ_CHECK(again.tokens.size() == 1 && again.tokens[0].text == tok.text && again.invalid_bytes == 0,
               "token %zu does not re-tokenize to itself (%zu tokens)", i, again.tokens.size());
  }
  FUZZ_CHECK((t.invalid_bytes == 0) == fuzz::IsValidUtf8(text.substr(0, limit)),
             "invalid_bytes = %zu disagrees with the UTF-8 check", t.invalid_bytes);
  const bool noticed = !mha::TokenizeNotice(t, cap).empty();
  FUZZ_CHECK(noticed == (t.invalid_bytes > 0 || t.dropped_tokens > 0 || t.input_truncated), "notice presence");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int sel = data[0];
  // Mostly small caps so dropping is exercised; sometimes the real cap, 0 or negative.
  const int cap = sel % 16 == 0 ? mha::Limits::kMaxTokens : sel % 16 == 1 ? -(sel >> 4) : sel % 64;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);

  const mha::Tokenized t = mha::Tokenize(text, cap);
  CheckTokens(text, cap, t);
  // Deterministic, and the cap only drops tokens off the end.
  const mha::Tokenized all = mha::Tokenize(text, INT_MAX);
  CheckTokens(text, INT_MAX, all);
  FUZZ_CHECK(all.dropped_tokens == 0, "dropped with an unlimited cap");
  FUZZ_CHECK(all.tokens.size() == t.tokens.size() + t.dropped_tokens, "%zu tokens != %zu kept + %zu dropped",
             all.tokens.size(), t.tokens.size(), t.dropped_tokens);
  for (std::size_t i = 0; i < t.tokens.size(); ++i)
    FUZZ_CHECK(all.tokens[i].text == t.tokens[i].text && all.tokens[i].byte_begin == t.tokens[i].byte_begin,
               "token %zu changes with the cap", i);

  // The sentence path of the app, at a size that keeps each run fast.
  mha::Config cfg;
  cfg.d_model = 8;
  cfg.num_heads = 2;
  cfg.mask = sel & 1 ? mha::Mask::Causal : mha::Mask::None;
  cfg.norm = static_cast<mha::Norm>((sel >> 1) % 3);
  mha::Inputs in;
  try {
    in = mha::MakeInputs(text, "", cfg);
  } catch (const mha::Error&) {
    const mha::Tokenized capped = mha::Tokenize(text, mha::Limits::kMaxTokens);
    FUZZ_CHECK(capped.tokens.empty(), "MakeInputs refused a sentence with %zu tokens", capped.tokens.size());
    return 0;
  }
  const std::size_t expect = std::min<std::size_t>(all.tokens.size(), mha::Limits::kMaxTokens);
  FUZZ_CHECK(in.tokens.size() == expect && static_cast<std::size_t>(in.x.rows()) == expect,
             "MakeInputs gave %zu tokens, expected %zu", in.tokens.size(), expect);
  FUZZ_CHECK(in.x.allFinite(), "embedding is not finite");
  if (expect > 48) return 0;
  const mha::Trace tr = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
  FUZZ_CHECK(tr.attn.allFinite() && tr.out.allFinite(), "attn/out not finite");
  for (Eigen::Index r = 0; r < tr.attn.rows(); ++r)
    FUZZ_CHECK(std::abs(tr.attn.row(r).sum() - 1.0f) < 1e-5f, "attn row %ld sums to %g", static_cast<long>(r),
               static_cast<double>(tr.attn.row(r).sum()));
  return 0;
}
