#include "text/mo_catalog.hpp"

#include <cctype>
#include <cstdint>
#include <map>

namespace mha::i18n {
namespace {

constexpr std::uint32_t kMagic = 0x950412deu;

// What one printf argument is, as far as the calling convention cares: a string where
// an integer was passed reads an address from a number.
struct Directives {
  std::map<int, std::string> kinds;  // argument position (1-based) -> kind
  bool positional = false, sequential = false;
  bool unknown = false;   // a '%' followed by no conversion printf knows
  bool writes = false;    // %n
  bool conflict = false;  // one position used as two kinds
};

std::string IntegerKind(std::string_view length) {
  return length.empty() || length == "h" || length == "hh" ? "int" : "long";
}

// The kind of conversion `c` with length modifier `length`; "" for one that takes no
// argument (%m), "?" for one printf does not know.
std::string KindOf(char c, std::string_view length) {
  const auto in = [c](std::string_view set) { return set.find(c) != std::string_view::npos; };
  if (in("diouxX")) return IntegerKind(length);
  if (in("eEfFgGaA")) return length == "L" ? "long double" : "double";
  if (c == 'c' || c == 'C') return c == 'C' || length == "l" ? "wint" : "int";
  if (c == 's' || c == 'S') return c == 'S' || length == "l" ? "wide string" : "string";
  if (c == 'p') return "pointer";
  if (c == 'm') return "";
  if (c == 'n') return "n";
  return "?";
}

// Reads "N$" at `i` (N >= 1); 0 if there is none (then `i` is unchanged).
int Position(std::string_view s, std::size_t& i) {
  std::size_t j = i;
  int n = 0;
  while (j < s.size() && s[j] >= '0' && s[j] <= '9' && n < 100000) n = n * 10 + (s[j++] - '0');
  if (j == i || j >= s.size() || s[j] != '$' || n == 0) return 0;
  i = j + 1;
  return n;
}

Directives Parse(std::string_view s) {
  Directives d;
  int next = 1;
  auto use = [&](int pos, const std::string& kind) {
    if (pos > 0)
      d.positional = true;
    else
      d.sequential = true;
    const int at = pos > 0 ? pos : next++;
    const auto [it, fresh] = d.kinds.emplace(at, kind);
    if (!fresh && it->second != kind) d.conflict = true;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') continue;
    if (++i < s.size() && s[i] == '%') continue;
    const int pos = Position(s, i);
    while (i < s.size() && std::string_view("-+ #0'I").find(s[i]) != std::string_view::npos) ++i;
    for (int part = 0; part < 2; ++part) {  // the width, then the precision after '.'
      if (part == 1) {
        if (i >= s.size() || s[i] != '.') break;
        ++i;
      }
      if (i < s.size() && s[i] == '*') {
        ++i;
        use(Position(s, i), "int");
      } else {
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      }
    }
    const std::size_t from = i;
    while (i < s.size() && std::string_view("hlLqjzZt").find(s[i]) != std::string_view::npos && i - from < 2) ++i;
    const std::string_view length = s.substr(from, i - from);
    const std::string kind = i < s.size() ? KindOf(s[i], length) : "?";
    if (kind == "?") {
      d.unknown = true;
      if (i < s.size()) --i;  // the character after '%' is text again
    } else if (kind == "n") {
      d.writes = true;
    } else if (!kind.empty()) {
      use(pos, kind);
    }
  }
  return d;
}

std::uint32_t Word(std::string_view b, std::size_t at, bool swap) {
  const auto* p = reinterpret_cast<const unsigned char*>(b.data() + at);
  const std::uint32_t le = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
  return swap ? (le >> 24) | ((le >> 8) & 0xff00u) | ((le << 8) & 0xff0000u) | (le << 24) : le;
}

bool IsPrime(std::uint32_t n) {
  if (n < 2) return false;
  for (std::uint32_t k = 2; static_cast<std::uint64_t>(k) * k <= n; ++k)
    if (n % k == 0) return false;
  return true;
}

// The header's Plural-Forms rule, evaluated by glibc for every P_(): a division or
// remainder by anything but a non-zero number raises SIGFPE when it is zero.
std::string CheckPluralRule(std::string_view header) {
  const std::size_t at = header.find("Plural-Forms:");
  if (at == std::string_view::npos) return "";
  const std::size_t end = header.find('\n', at);
  const std::string_view rule = header.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
  if (rule.size() > 300) return "its Plural-Forms rule is over 300 characters long";
  for (std::size_t i = 0; i < rule.size(); ++i) {
    if (rule[i] != '/' && rule[i] != '%') continue;
    std::size_t j = i + 1;
    while (j < rule.size() && rule[j] == ' ') ++j;
    const std::size_t digits = j;
    while (j < rule.size() && rule[j] >= '0' && rule[j] <= '9') ++j;
    const std::string_view n = rule.substr(digits, j - digits);
    if (n.empty() || n.find_first_not_of('0') == std::string_view::npos)
      return "its Plural-Forms rule divides by something other than a non-zero number";
  }
  return "";
}

}  // namespace

std::string CheckFormatDirectives(std::string_view msgid, std::string_view translation) {
  const Directives want = Parse(msgid), got = Parse(translation);
  if (got.writes) return "it uses %n";
  if (got.conflict) return "it uses one argument as two kinds";
  if (got.positional && got.sequential) return "it mixes numbered (%1$d) and plain directives";
  if (got.unknown && !want.unknown) return "it has a '%' that starts no printf directive";
  for (const auto& [pos, kind] : got.kinds) {
    const auto it = want.kinds.find(pos);
    if (it == want.kinds.end())
      return "it uses argument " + std::to_string(pos) + ", which the English text does not pass";
    if (it->second != kind)
      return "it reads argument " + std::to_string(pos) + " as '" + kind + "' where the English passes '" + it->second +
             "'";
  }
  return "";
}

std::string CheckMoCatalog(std::string_view b, std::vector<MoEntry>* entries) {
  if (b.size() > kMaxCatalogBytes) return "it is over " + std::to_string(kMaxCatalogBytes >> 20) + " MiB";
  if (b.size() < 28) return "it is " + std::to_string(b.size()) + " bytes long, shorter than a catalogue's header";
  const bool swap = Word(b, 0, false) != kMagic;
  if (swap && Word(b, 0, true) != kMagic) return "it does not start with the .mo magic number";
  const std::uint32_t revision = Word(b, 4, swap);
  const std::uint64_t size = b.size(), n = Word(b, 8, swap), orig = Word(b, 12, swap), trans = Word(b, 16, swap),
                      hash_size = Word(b, 20, swap), hash = Word(b, 24, swap);
  if (revision >> 16 > 1) return "its format revision " + std::to_string(revision >> 16) + " is unknown";
  // Minor revision 1 adds system-dependent strings (<PRIu64> ...), which msgfmt writes
  // only for catalogues that use them; this one must not.
  if ((revision & 0xffff) != 0) {
    if (size < 48) return "its header is cut short";
    if (Word(b, 28, swap) != 0 || Word(b, 36, swap) != 0) return "it has system-dependent strings";
  }
  if (orig % 4 || trans % 4 || (hash_size > 2 && hash % 4)) return "a table in it is not aligned";
  if (orig + 8 * n > size || trans + 8 * n > size) return "its string tables run past the end of the file";
  if (hash_size > 2 && hash + 4 * hash_size > size) return "its hash table runs past the end of the file";
  if (entries) entries->clear();
  std::string_view header;
  for (std::uint64_t k = 0; k < n; ++k) {
    std::string_view pair[2];
    for (int t = 0; t < 2; ++t) {
      const std::uint64_t at = (t == 0 ? orig : trans) + 8 * k;
      const std::uint64_t len = Word(b, at, swap), off = Word(b, at + 4, swap);
      // glibc reads each string up to its '\0' (strcmp, and the printf of a translation).
      if (off + len >= size || b[off + len] != '\0')
        return "string " + std::to_string(k) + "'s " + (t == 0 ? "msgid" : "translation") +
               " runs past the end of the file";
      pair[t] = b.substr(off, len);
    }
    if (pair[0].empty()) {
      header = pair[1];
      continue;
    }
    if (pair[1].empty() || pair[1][0] == '\0') return "string " + std::to_string(k) + " has an empty translation";
    // A plural entry's English forms are "singular\0plural"; the code passes the
    // arguments of both. Each translated form must take no argument they do not.
    const std::size_t nul = pair[0].find('\0');
    const std::string_view english = nul == std::string_view::npos ? pair[0] : pair[0].substr(nul + 1);
    for (std::size_t from = 0; from <= pair[1].size();) {
      const std::size_t to = std::min(pair[1].find('\0', from), pair[1].size());
      const std::string bad = CheckFormatDirectives(english, pair[1].substr(from, to - from));
      if (!bad.empty()) return "string " + std::to_string(k) + "'s translation does not fit its printf format: " + bad;
      from = to + 1;
    }
    if (entries) entries->push_back({pair[0], pair[1]});
  }
  if (hash_size > 2) {
    // glibc probes the table with steps of 1 + hash % (size - 2) until an empty slot: with
    // a prime size every slot is visited, and an empty one ends every search.
    if (!IsPrime(static_cast<std::uint32_t>(hash_size))) return "its hash table's size is not a prime";
    bool empty = false;
    for (std::uint64_t k = 0; k < hash_size; ++k) {
      const std::uint32_t v = Word(b, hash + 4 * k, swap);
      if (v > n) return "its hash table names a string it does not have";
      empty = empty || v == 0;
    }
    if (!empty) return "its hash table has no empty slot";
  }
  // glibc converts each translation from the header's charset to UTF-8 after this
  // check: from UTF-7, "+ACU-s" would become "%s". Only UTF-8 is read as it is.
  const std::size_t cs = header.find("charset=");
  if (cs != std::string_view::npos) {
    std::string name;
    for (std::size_t i = cs + 8;
         i < header.size() && name.size() < 16 && header[i] != '\n' && header[i] != ';' && header[i] != ' '; ++i)
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(header[i])));
    if (name != "utf-8" && name != "utf8") return "its charset is not UTF-8";
  }
  return CheckPluralRule(header);
}

}  // namespace mha::i18n
