// Unicode normalisation of text the learner types, before it is tokenised.
//
// The same sentence can arrive as different bytes: "고양이" typed on a keyboard is
// three precomposed syllables (NFC), but copied from a macOS file name or some PDFs it
// is eight conjoining jamo (NFD). Tokenised as they are, the two show as different
// text (loose letters "ㄱㅗㅇㅑㅇㅇㅣ") and get different embeddings. Every sentence
// therefore goes through ToNfc first: the CLI's trace and export, and the GUI.
//
// Uses libutf8proc (Debian: libutf8proc-dev), a maintained implementation of Unicode's
// tables, not a hand-written one. Plain C++ strings in and out, so a tokenizer of any
// kind (the word tokenizer, a SentencePiece model) can call it the same way.
#pragma once

#include <string>
#include <string_view>

namespace mha::text {

struct Nfc {
  std::string text;      // the input in Unicode Normalization Form C
  bool changed = false;  // true if that differs from the input (say so to the learner)
};

// NFC of UTF-8 text (canonical composition only: compatibility forms such as
// full-width letters or ligatures are left as typed). Text that is not valid UTF-8 is
// returned unchanged (changed = false): the tokenizer replaces its bad bytes and says so.
Nfc ToNfc(std::string_view utf8);

// The offset of the first byte that does not belong to valid UTF-8, or npos if the
// whole text is valid (a tokenizer that cannot replace bad bytes refuses the text).
std::size_t FirstInvalidUtf8(std::string_view utf8);

// The learner-facing note for text that ToNfc changed; `what` names it ("the sentence").
std::string NfcNotice(std::string_view what);

// A text field that holds 16-bit characters (Dear ImGui's, as Debian builds it) turns
// every character beyond U+FFFF (most emoji) into U+FFFD, and writes that back as soon
// as it is active, although the learner typed nothing. Given the text before and after
// the field wrote it, returns `after` with the original characters kept wherever the
// text is unchanged (its common start and end with `before` as the field saw it); only
// the part the learner actually edited comes from the field.
std::string KeepBeyondBmp(std::string_view before, std::string_view after);

// Whether a text field's new text is a real change: their NFC forms differ. The app
// stores the sentence composed; a field still holding the decomposed text it was given
// writes that back while active, which must not count as an edit (or every frame would
// recompute).
bool TypedChange(std::string_view stored, std::string_view typed);

}  // namespace mha::text
