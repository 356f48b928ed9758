#include <catch2/catch.hpp>

#include "mha/mha.hpp"

namespace {
std::vector<std::string> Words(const std::string& s, int cap = 1024) {
  std::vector<std::string> out;
  for (const auto& t : mha::Tokenize(s, cap).tokens) out.push_back(t.text);
  return out;
}
}  // namespace

TEST_CASE("Hangul words (eojeol) stay whole", "[tokenizer]") {
  CHECK(Words("고양이가 쥐를 잡았다") == std::vector<std::string>{"고양이가", "쥐를", "잡았다"});
  CHECK(Words("고양이가 쥐를 잡았다.") == std::vector<std::string>{"고양이가", "쥐를", "잡았다", "."});
}

TEST_CASE("whitespace splits and each punctuation mark is its own token", "[tokenizer]") {
  CHECK(Words("The cat sat on the mat.") == std::vector<std::string>{"The", "cat", "sat", "on", "the", "mat", "."});
  CHECK(Words("  Hello,\tworld!!\n") == std::vector<std::string>{"Hello", ",", "world", "!", "!"});
  CHECK(Words("don't") == std::vector<std::string>{"don", "'", "t"});
  CHECK(Words("“quoted”…") == std::vector<std::string>{"“", "quoted", "”", "…"});
  CHECK(Words("안녕하세요。 세계！") == std::vector<std::string>{"안녕하세요", "。", "세계", "！"});
  CHECK(Words("a\u3000b") == std::vector<std::string>{"a", "b"});  // ideographic space
  CHECK(Words("").empty());
  CHECK(Words(" \t\n ").empty());
}

TEST_CASE("byte offsets point back into the input", "[tokenizer]") {
  const std::string s = "쥐를 잡았다!";
  const auto t = mha::Tokenize(s, 10);
  REQUIRE(t.tokens.size() == 3);
  for (const auto& tok : t.tokens) CHECK(s.substr(tok.byte_begin, tok.byte_end - tok.byte_begin) == tok.text);
}

TEST_CASE("invalid UTF-8 is replaced by U+FFFD and counted, never crashes", "[tokenizer]") {
  const std::string bad = std::string("ab\xff") + "c \xe3\x80" + " \xc0\xaf ok \xed\xa0\x80";
  const auto t = mha::Tokenize(bad, 100);
  // "ab?c", "??" (truncated 3-byte sequence), "??" (overlong), "ok", "???" (surrogate)
  REQUIRE(t.tokens.size() == 5);
  CHECK(t.tokens[0].text ==
        "ab\xEF\xBF\xBD"
        "c");
  CHECK(t.tokens[1].text == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(t.tokens[3].text == "ok");
  CHECK(t.invalid_bytes == 1 + 2 + 2 + 3);
  CHECK(mha::TokenizeNotice(t, 100).find("U+FFFD") != std::string::npos);
}

TEST_CASE("the token cap keeps the first tokens and says how many were dropped", "[tokenizer]") {
  std::string s;
  for (int i = 0; i < 50; ++i) s += "w" + std::to_string(i) + " ";
  const auto t = mha::Tokenize(s, 10);
  CHECK(t.tokens.size() == 10);
  CHECK(t.tokens.back().text == "w9");
  CHECK(t.dropped_tokens == 40);
  CHECK(mha::TokenizeNotice(t, 10).find("first 10 tokens") != std::string::npos);
}
