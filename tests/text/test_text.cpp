// mha::text: NFC normalisation, and keeping characters beyond U+FFFF through a 16-bit
// text field. Expected strings are spelled out as bytes, independent of utf8proc.
#include <catch2/catch.hpp>

#include <string>

#include "text/normalize.hpp"

using mha::text::KeepBeyondBmp;
using mha::text::ToNfc;

TEST_CASE("ToNfc composes decomposed Hangul and says so", "[text]") {
  // 고 = U+1100 U+1169 decomposed, U+ACE0 composed.
  const mha::text::Nfc n = ToNfc("\xE1\x84\x80\xE1\x85\xA9 cat");
  CHECK(n.text == "\xEA\xB3\xA0 cat");
  CHECK(n.changed);
  // e + combining acute = é.
  CHECK(ToNfc("caf\x65\xCC\x81").text == "caf\xC3\xA9");
}

TEST_CASE("ToNfc leaves NFC, ASCII, compatibility forms and invalid UTF-8 as they are", "[text]") {
  for (const std::string& s : {std::string("The cat sat."), std::string("\xEA\xB3\xA0\xEC\x96\x91\xEC\x9D\xB4"),
                               std::string("\xEF\xBC\x8C\xEF\xBC\x81"),  // full-width ，！ (NFKC would change them)
                               std::string("\xF0\x9F\x98\x80"), std::string("bad \xFF bytes"), std::string()}) {
    const mha::text::Nfc n = ToNfc(s);
    CHECK(n.text == s);
    CHECK_FALSE(n.changed);
  }
}

TEST_CASE("KeepBeyondBmp keeps emoji the text field replaced but the learner did not edit", "[text]") {
  const std::string emoji = "\xF0\x9F\x98\x80", fffd = "\xEF\xBF\xBD";
  // The field only activated: everything comes back.
  CHECK(KeepBeyondBmp("cat " + emoji + " dog", "cat " + fffd + " dog") == "cat " + emoji + " dog");
  // An edit elsewhere: the emoji stays.
  CHECK(KeepBeyondBmp("cat " + emoji + " dog", "cats " + fffd + " dog") == "cats " + emoji + " dog");
  CHECK(KeepBeyondBmp(emoji + emoji, fffd + fffd + "!") == emoji + emoji + "!");
  // The emoji itself deleted, or replaced by typing: the field's text wins there.
  CHECK(KeepBeyondBmp("a " + emoji + " b", "a  b") == "a  b");
  CHECK(KeepBeyondBmp("a " + emoji + " b", "a x b") == "a x b");
  // A real U+FFFD in the text stays one; nothing changes without emoji.
  CHECK(KeepBeyondBmp("a " + fffd, "a " + fffd + "b") == "a " + fffd + "b");
  CHECK(KeepBeyondBmp("plain", "plainer") == "plainer");
}

TEST_CASE("TypedChange ignores a field writing back the decomposed form of the stored text", "[text]") {
  const std::string nfc = "\xEA\xB3\xA0", nfd = "\xE1\x84\x80\xE1\x85\xA9";  // 고
  CHECK_FALSE(mha::text::TypedChange(nfc, nfd));
  CHECK_FALSE(mha::text::TypedChange(nfc, nfc));
  CHECK(mha::text::TypedChange(nfc, nfd + "!"));
  CHECK(mha::text::TypedChange("cat", "cats"));
}
