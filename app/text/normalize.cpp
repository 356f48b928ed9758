#include "text/normalize.hpp"

#include <cstdlib>

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

std::string NfcNotice(std::string_view what) {
  return std::string(what) +
         " was normalised to Unicode NFC: decomposed letters (such as Hangul typed as separate jamo, "
         "common in text copied from macOS file names or PDFs) were composed, so it shows and embeds "
         "exactly like the same text typed on a keyboard.";
}

}  // namespace mha::text
