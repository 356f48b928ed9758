// Shared helpers of the fuzz harnesses. A harness reports a broken invariant with
// FUZZ_CHECK, which prints what failed and aborts: libFuzzer then saves the input as a
// crash, and the replay runner (replay_main.cpp) fails its ctest.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#define FUZZ_CHECK(cond, ...)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, "  " __VA_ARGS__);                                              \
      std::fprintf(stderr, "\n");                                                          \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

namespace fuzz {

// Strict UTF-8 check written independently of the tokenizer's decoder (RFC 3629:
// no overlongs, no surrogates, nothing above U+10FFFF), so a bug there is not
// mirrored here.
inline bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c <= 0x7F) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF)
      n = 1;
    else if (c == 0xE0) {
      n = 2;
      lo = 0xA0;
    } else if (c >= 0xE1 && c <= 0xEC)
      n = 2;
    else if (c == 0xED) {
      n = 2;
      hi = 0x9F;
    } else if (c >= 0xEE && c <= 0xEF)
      n = 2;
    else if (c == 0xF0) {
      n = 3;
      lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3)
      n = 3;
    else if (c == 0xF4) {
      n = 3;
      hi = 0x8F;
    } else
      return false;
    if (i + n >= s.size()) return false;  // continuation bytes run past the end
    for (std::size_t k = 1; k <= n; ++k) {
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (b < l || b > h) return false;
    }
    i += n + 1;
  }
  return true;
}

}  // namespace fuzz
