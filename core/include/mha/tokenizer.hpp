// UTF-8 text to tokens: words split on whitespace, each punctuation mark its own
// token, Hangul words (eojeol, e.g. "고양이가") kept whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mha {

struct Token {
  std::string text;        // valid UTF-8 (invalid bytes were replaced by U+FFFD)
  std::size_t byte_begin;  // offset of the token in the original input
  std::size_t byte_end;
};

struct Tokenized {
  std::vector<Token> tokens;
  std::size_t invalid_bytes = 0;   // bytes of malformed UTF-8 replaced by U+FFFD
  std::size_t dropped_tokens = 0;  // tokens past max_tokens that were left out
  bool input_truncated = false;    // true if the input was longer than the byte cap
};

// Never throws and never crashes, whatever the bytes. At most max_tokens tokens are
// kept; the rest are counted in dropped_tokens.
Tokenized Tokenize(std::string_view text, int max_tokens);

// One-line notice for the learner if anything was replaced or dropped, else "".
std::string TokenizeNotice(const Tokenized& t, int max_tokens);

}  // namespace mha
