#include "options/terminal.hpp"

namespace mha::options {
namespace {

const char kHex[] = "0123456789ABCDEF";

void Hex2(std::string& out, unsigned v) {
  out += "\\x";
  out += kHex[(v >> 4) & 15];
  out += kHex[v & 15];
}

// The length of the valid UTF-8 sequence at s[i] and its code point, or 0 if the
// bytes there are not one (overlong, surrogate, beyond U+10FFFF, truncated).
std::size_t Decode(const std::string& s, std::size_t i, char32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned c = b(0);
  std::size_t n;
  char32_t min;
  if (c < 0x80) {
    cp = c;
    return 1;
  } else if (c >= 0xC2 && c < 0xE0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c < 0xF0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c < 0xF5) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool IsBidiControl(char32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// Appends the escaped form of the character at s[i]; returns the bytes it took.
std::size_t AppendSafe(const std::string& s, std::size_t i, bool keep_newlines, std::string& out) {
  char32_t cp = 0;
  const std::size_t n = Decode(s, i, cp);
  if (n == 0) {
    Hex2(out, static_cast<unsigned char>(s[i]));
    return 1;
  }
  if (keep_newlines && (cp == '\n' || cp == '\t')) {
    out += static_cast<char>(cp);
  } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
    Hex2(out, static_cast<unsigned>(cp));
  } else if (IsBidiControl(cp)) {
    out += "\\u{";
    for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
    out += "}";
  } else {
    out.append(s, i, n);
  }
  return n;
}

}  // namespace

std::string TerminalSafe(const std::string& s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) i += AppendSafe(s, i, keep_newlines, out);
  return out;
}

std::string TerminalToken(const std::string& tok, std::size_t max_chars) {
  std::string out;
  std::size_t i = 0;
  for (std::size_t chars = 0; i < tok.size() && chars < max_chars; ++chars) i += AppendSafe(tok, i, false, out);
  if (i < tok.size()) out += "... (+" + std::to_string(tok.size() - i) + " bytes)";
  return out;
}

}  // namespace mha::options
