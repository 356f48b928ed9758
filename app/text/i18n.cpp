#include "text/i18n.hpp"

#include <libintl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdint>
#include <clocale>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "io/assets.hpp"
#include "io/files.hpp"
#include "text/mo_catalog.hpp"

// glibc's documented way to make gettext forget the translations it looked up for the
// previous LANGUAGE (the GNU gettext manual, "Being a gettext grok").
extern "C" int _nl_msg_cat_cntr;

namespace mha::i18n {
namespace {

constexpr const char* kDomain = "mhaviz";
std::atomic<Lang> g_lang{Lang::kEnglish};
std::atomic<bool> g_have_catalog{false};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Candidate directories that hold <lang>/LC_MESSAGES/mhaviz.mo: assets/locale beside
// the binary (the build tree compiles the catalogs there), then an installed prefix's
// share/locale, then the configured install prefix.
std::string FindCatalogDir() {
  std::vector<std::string> dirs = io::AssetDirs("locale");
  const std::string exe = io::ExeDir();
  if (!exe.empty()) dirs.insert(dirs.begin() + (std::getenv("MHAVIZ_ASSETS") ? 1 : 0), exe + "/../share/locale");
#ifdef MHAVIZ_INSTALL_LOCALE
  dirs.push_back(MHAVIZ_INSTALL_LOCALE);
#endif
  for (const std::string& d : dirs) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(std::filesystem::path(d) / "ko/LC_MESSAGES/mhaviz.mo", ec)) {
      const auto norm = std::filesystem::weakly_canonical(d, ec);
      return ec ? d : norm.string();
    }
  }
  return "";
}

}  // namespace

const char* Code(Lang lang) { return lang == Lang::kKorean ? "ko" : "en"; }

std::optional<Lang> Parse(std::string_view code) {
  const std::string c = Lower(code);
  if (c == "ko" || c == "kor" || c == "korean" || c == "한국어" || c.rfind("ko_", 0) == 0 || c.rfind("ko.", 0) == 0 ||
      c.rfind("ko-", 0) == 0)
    return Lang::kKorean;
  if (c == "en" || c == "eng" || c == "english" || c == "c" || c == "posix" || c.rfind("en_", 0) == 0 ||
      c.rfind("en.", 0) == 0 || c.rfind("en-", 0) == 0 || c.rfind("c.", 0) == 0)
    return Lang::kEnglish;
  return std::nullopt;
}

Lang FromEnvironment() {
  for (const char* var : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(var);
    if (!v || !*v) continue;
    std::string_view s(v);
    if (std::strcmp(var, "LANGUAGE") == 0) s = s.substr(0, s.find(':'));
    const auto lang = Parse(s);
    return lang.value_or(Lang::kEnglish);
  }
  return Lang::kEnglish;
}

namespace {

// The Korean catalogue, read once (bounded) and checked before gettext may map it.
struct Catalog {
  std::string dir;      // where it was found ("" if nowhere)
  std::string bytes;    // the whole file, when it passed the check
  std::string problem;  // why it was not used ("" if it was, or if there is none)
};

const Catalog& TheCatalog() {
  static const Catalog c = [] {
    Catalog out;
    const std::string dir = FindCatalogDir();
    if (dir.empty()) return out;
    const std::string path = dir + "/ko/LC_MESSAGES/mhaviz.mo";
    std::string why;
    try {
      std::string bytes = io::ReadFile(path, kMaxCatalogBytes);
      why = CheckMoCatalog(bytes);
      if (why.empty()) out.bytes = std::move(bytes);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (why.empty()) {
      out.dir = dir;
    } else {
      out.problem = "The Korean translation " + path + " is damaged (" + why +
                    "), so the interface stays in English. Reinstall mhaviz, or rebuild it (the "
                    "mhaviz-translations target).";
    }
    return out;
  }();
  return c;
}

}  // namespace

const std::string& Init() {
  static const std::string dir = [] {
    // Only LC_MESSAGES: LC_NUMERIC (and the rest) keep the "C" locale of a C++ program.
    const char* got = std::setlocale(LC_MESSAGES, "");
    if (!got || std::strcmp(got, "C") == 0 || std::strcmp(got, "POSIX") == 0) std::setlocale(LC_MESSAGES, "C.UTF-8");
    const Catalog& c = TheCatalog();
    if (!c.dir.empty()) {
      bindtextdomain(kDomain, c.dir.c_str());
      bind_textdomain_codeset(kDomain, "UTF-8");
      g_have_catalog = true;
    }
    return c.dir;
  }();
  return dir;
}

const std::string& CatalogProblem() { return TheCatalog().problem; }

bool SetLanguage(Lang want) {
  Init();
  const Lang lang = want == Lang::kKorean && !g_have_catalog ? Lang::kEnglish : want;
  // LANGUAGE also switches what other catalogs say (libc's strerror, for one), so the
  // messages the window shows speak one language. glibc's setenv keeps the old string
  // alive, so a getenv on another thread never reads freed memory.
  ::setenv("LANGUAGE", Code(lang), 1);
  ++_nl_msg_cat_cntr;
  g_lang = lang;
  return lang == want;
}

Lang Current() { return g_lang; }

const std::vector<char32_t>& CatalogCharacters() {
  static const std::vector<char32_t> chars = [] {
    std::vector<char32_t> out;
    Init();
    std::vector<MoEntry> entries;
    const std::string& mo = TheCatalog().bytes;
    if (mo.empty() || !CheckMoCatalog(mo, &entries).empty()) return out;
    std::string bytes;
    for (const MoEntry& e : entries) bytes.append(e.translation).push_back('\n');
    for (std::size_t i = 0; i < bytes.size();) {
      const auto b = static_cast<unsigned char>(bytes[i]);
      const int n = b >= 0xF0 && b < 0xF8 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 1;
      if (n == 1 || i + n > bytes.size()) {
        ++i;
        continue;
      }
      char32_t cp = b & (0x7F >> n);
      bool ok = true;
      for (int k = 1; k < n; ++k) {
        const auto c = static_cast<unsigned char>(bytes[i + k]);
        ok = ok && (c & 0xC0) == 0x80;
        cp = (cp << 6) | (c & 0x3F);
      }
      if (ok && cp >= 0x80 && cp <= 0xFFFF) out.push_back(cp);
      i += ok ? n : 1;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }();
  return chars;
}

const char* Translate(const char* msgid) {
  if (g_lang.load(std::memory_order_relaxed) == Lang::kEnglish || !msgid || !*msgid) return msgid;
  return dgettext(kDomain, msgid);
}

const char* TranslatePlural(const char* singular, const char* plural, unsigned long n) {
  if (g_lang.load(std::memory_order_relaxed) == Lang::kEnglish) return n == 1 ? singular : plural;
  return dngettext(kDomain, singular, plural, n);
}

std::string Format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out;
  if (n > 0) {
    out.resize(static_cast<std::size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, args);
    out.resize(static_cast<std::size_t>(n));
  }
  va_end(args);
  return out;
}

}  // namespace mha::i18n
