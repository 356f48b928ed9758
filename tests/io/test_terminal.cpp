// TerminalSafe: what mhaviz prints from user input cannot drive the terminal.
#include <catch2/catch.hpp>

#include "options/terminal.hpp"

using mha::options::TerminalSafe;
using mha::options::TerminalToken;

TEST_CASE("control characters, C1 controls and invalid UTF-8 are shown as \\xNN") {
  CHECK(TerminalSafe("a\x1b[31mb") == "a\\x1B[31mb");
  CHECK(TerminalSafe("bell\x07 del\x7f") == "bell\\x07 del\\x7F");
  CHECK(TerminalSafe("c1:\xc2\x9b") == "c1:\\x9B");                             // U+009B, the 8-bit CSI
  CHECK(TerminalSafe("bad \xff\xfe \xc0\xaf") == "bad \\xFF\\xFE \\xC0\\xAF");  // invalid and overlong
  CHECK(TerminalSafe("cut \xe3\x81") == "cut \\xE3\\x81");                      // a truncated sequence
  CHECK(TerminalSafe("surrogate \xed\xa0\x80") == "surrogate \\xED\\xA0\\x80");
}

TEST_CASE("bidi controls are shown as \\u{NNNN}, and other text passes unchanged") {
  CHECK(TerminalSafe("abc\u202e\u2066x\u200f") == "abc\\u{202E}\\u{2066}x\\u{200F}");
  CHECK(TerminalSafe("고양이가 쥐를 잡았다 café 😀") == "고양이가 쥐를 잡았다 café 😀");
}

TEST_CASE("newlines and tabs pass only in messages") {
  CHECK(TerminalSafe("a\nb\tc", true) == "a\nb\tc");
  CHECK(TerminalSafe("a\nb\tc") == "a\\x0Ab\\x09c");
  CHECK(TerminalSafe("a\rb", true) == "a\\x0Db");
}

TEST_CASE("a token is cut after 60 characters, escapes counted as one") {
  const std::string long_word(100, 'x');
  CHECK(TerminalToken(long_word) == std::string(60, 'x') + "... (+40 bytes)");
  CHECK(TerminalToken("\x1b" + std::string(70, 'y')).substr(0, 5) == "\\x1By");
}
