#include "text/normalize.hpp"

#include <cstdlib>
#include <vector>

#include <utf8proc.h>

namespace mha::text {

Nfc ToNfc(std::string_view utf8) {
  Nfc out;
  // Pure ASCII is already NFC: skip the library (the common case, and every keystroke).
  bool ascii = true;
  for (char c : utf8) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    out.text = std::string(utf8);
    return out;
  }
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()), static_cast<utf8proc_ssize_t>(utf8.size()),
                   &mapped, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) {  // invalid UTF-8 (or out of memory): leave it to the tokenizer
    out.text = std::string(utf8);
    return out;
  }
  out.text.assign(reinterpret_cast<const char*>(mapped), static_cast<std::size_t>(n));
  std::free(mapped);
  out.changed = out.text != utf8;
  return out;
}

std::size_t FirstInvalidUtf8(std::string_view utf8) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(utf8.data());
  std::size_t at = 0;
  while (at < utf8.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p + at, static_cast<utf8proc_ssize_t>(utf8.size() - at), &cp);
    if (n <= 0) return at;
    at += static_cast<std::size_t>(n);
  }
  return std::string_view::npos;
}

bool TypedChange(std::string_view stored, std::string_view typed) {
  return stored != typed && ToNfc(stored).text != ToNfc(typed).text;
}

std::string NfcNotice(std::string_view what) {
  return std::string(what) +
         " was normalised to Unicode NFC: decomposed letters (such as Hangul typed as separate jamo, "
         "common in text copied from macOS file names or PDFs) were composed, so it shows and embeds "
         "exactly like the same text typed on a keyboard.";
}

namespace {

// Code points of valid UTF-8 (utf8proc's decoder); false if the bytes are not valid.
bool Decode(std::string_view s, std::vector<utf8proc_int32_t>* out) {
  out->clear();
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) return false;
    out->push_back(cp);
    p += n;
    left -= n;
  }
  return true;
}

std::string Encode(const std::vector<utf8proc_int32_t>& cps, std::size_t from, std::size_t to) {
  std::string out;
  utf8proc_uint8_t buf[4];
  for (std::size_t i = from; i < to; ++i)
    out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(utf8proc_encode_char(cps[i], buf)));
  return out;
}

}  // namespace

std::string KeepBeyondBmp(std::string_view before, std::string_view after) {
  std::vector<utf8proc_int32_t> b, a;
  if (!Decode(before, &b) || !Decode(after, &a)) return std::string(after);
  // `before` as the field holds it: one 16-bit character per code point.
  std::vector<utf8proc_int32_t> seen = b;
  for (auto& cp : seen)
    if (cp > 0xFFFF) cp = 0xFFFD;
  std::size_t head = 0;
  while (head < a.size() && head < seen.size() && a[head] == seen[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < seen.size() - head && a[a.size() - 1 - tail] == seen[seen.size() - 1 - tail])
    ++tail;
  return Encode(b, 0, head) + Encode(a, head, a.size() - tail) + Encode(b, b.size() - tail, b.size());
}

}  // namespace mha::text
