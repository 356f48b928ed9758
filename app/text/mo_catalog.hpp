// A GNU .mo catalogue checked before gettext is allowed to read it.
//
// glibc trusts the file it maps: a string offset past the end, a hash table without an
// empty slot, a plural rule that divides by zero or a translation whose printf
// directives differ from its msgid's crash or hang the lookup (_nl_find_msg) or the
// printf that formats it. A catalogue cut short in a failed install did exactly that.
// CheckMoCatalog reads the layout the GNU gettext manual gives ("The Format of GNU MO
// Files") and accepts a file only when every lookup glibc can make stays inside it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mha::i18n {

// The largest catalogue read: the Korean one is about 200 KB.
inline constexpr std::size_t kMaxCatalogBytes = std::size_t(16) << 20;

struct MoEntry {
  std::string_view msgid;        // a plural entry: "singular\0plural"
  std::string_view translation;  // a plural entry: its forms, each ended by '\0'
};

// "" if `bytes` is a catalogue every lookup can use; else what is wrong, in a few words
// ("string 12's translation runs past the end of the file"). `entries`, if given,
// receives every (msgid, translation) pair, pointing into `bytes`.
std::string CheckMoCatalog(std::string_view bytes, std::vector<MoEntry>* entries = nullptr);

// "" if `translation` may be passed to printf with the arguments `msgid` takes: each
// directive it uses names an argument msgid has, of the same kind (integer, unsigned,
// floating point, string, character, pointer), and none is %n. Else the reason.
std::string CheckFormatDirectives(std::string_view msgid, std::string_view translation);

}  // namespace mha::i18n
