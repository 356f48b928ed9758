#include "mha/tokenizer.hpp"

#include <sstream>

#include "mha/config.hpp"

namespace mha {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes one code point at s[i]. Returns the number of bytes consumed (>= 1); sets
// `cp` to U+FFFD for malformed input (overlong forms, surrogates, > U+10FFFF, truncated
// sequences), consuming exactly one byte so that decoding resynchronises.
std::size_t Decode(std::string_view s, std::size_t i, char32_t& cp, bool& valid) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  valid = true;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  int len = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
    min = 0x10000;
  }
  if (len == 0 || i + len > s.size()) {
    cp = kReplacement;
    valid = false;
    return 1;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      cp = kReplacement;
      valid = false;
      return 1;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    cp = kReplacement;
    valid = false;
    return 1;
  }
  return static_cast<std::size_t>(len);
}

void Append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool IsSpace(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200B) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 ||
         c == 0xFEFF;
}

bool IsPunct(char32_t c) {
  if (c < 0x80)
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return (c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB2 && c != 0xB3 && c != 0xB5 && c != 0xB9 && c != 0xBA &&
          c != 0xBC && c != 0xBD && c != 0xBE) ||  // ¡ « » ¿ ...
         c == 0xD7 ||
         c == 0xF7 ||                                                     // × ÷
         (c >= 0x2010 && c <= 0x2027) || (c >= 0x2030 && c <= 0x205E) ||  // – — ‘ ’ “ ” …
         (c >= 0x3001 && c <= 0x3003) || (c >= 0x3008 && c <= 0x3011) ||  // 、 。 「 」
         (c >= 0x3014 && c <= 0x301F) || (c >= 0xFF01 && c <= 0xFF0F) ||
         (c >= 0xFF1A && c <= 0xFF20) ||  // fullwidth ！ ？
         (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65);
}

}  // namespace

Tokenized Tokenize(std::string_view text, int max_tokens) {
  Tokenized r;
  if (text.size() > Limits::kMaxSentenceBytes) {
    text = text.substr(0, Limits::kMaxSentenceBytes);
    r.input_truncated = true;
  }
  std::string cur;
  std::size_t cur_begin = 0, i = 0;
  auto flush = [&](std::size_t end) {
    if (cur.empty()) return;
    if (static_cast<int>(r.tokens.size()) < max_tokens)
      r.tokens.push_back(Token{std::move(cur), cur_begin, end});
    else
      ++r.dropped_tokens;
    cur.clear();
  };
  while (i < text.size()) {
    char32_t cp;
    bool valid;
    const std::size_t n = Decode(text, i, cp, valid);
    if (!valid) ++r.invalid_bytes;
    if (IsSpace(cp)) {
      flush(i);
    } else if (IsPunct(cp)) {
      flush(i);
      cur_begin = i;
      Append(cur, cp);
      flush(i + n);
    } else {
      if (cur.empty()) cur_begin = i;
      Append(cur, cp);
    }
    i += n;
  }
  flush(i);
  return r;
}

std::string TokenizeNotice(const Tokenized& t, int max_tokens) {
  std::ostringstream os;
  if (t.input_truncated) os << "Input longer than " << (Limits::kMaxSentenceBytes >> 10) << " KiB was cut off there. ";
  if (t.dropped_tokens > 0)
    os << "Only the first " << max_tokens << " tokens are used (cap); " << t.dropped_tokens << " more were left out. ";
  if (t.invalid_bytes > 0) os << t.invalid_bytes << " byte(s) of invalid UTF-8 were replaced by U+FFFD. ";
  std::string s = os.str();
  if (!s.empty()) s.pop_back();
  return s;
}

}  // namespace mha
