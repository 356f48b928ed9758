// The interface's language: English (the source strings) or Korean, through GNU
// gettext (glibc's libintl, text domain "mhaviz").
//
// Every string the GUI draws, and every caption drawn into an export, goes through _()
// (or N_() in a table whose entries are translated where they are shown, or P_() where a
// count decides the form). xgettext collects them into po/mhaviz.pot with the keywords
// -k_ -kN_ -kP_:1,2 (see docs/translating.md).
//
// Only LC_MESSAGES is touched: LC_NUMERIC stays "C", so numbers keep the '.' decimal
// point they have in the exported files. Identifiers that are keys (view names on the
// command line, --dump-state keys, JSON fields) are never passed through _().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mha::i18n {

enum class Lang { kEnglish, kKorean };

// "en" / "ko": the code --lang takes, the settings file stores and --dump-state reports.
const char* Code(Lang lang);
// "en", "english", "ko", "kor", "korean", "ko_KR.UTF-8", ... (case-insensitive); nullopt
// for anything else.
std::optional<Lang> Parse(std::string_view code);
// The language the environment asks for, as desktop apps read it: the first non-empty of
// LANGUAGE (its first entry), LC_ALL, LC_MESSAGES, LANG. Korean for ko*, else English.
Lang FromEnvironment();

// Binds the "mhaviz" domain to the directory holding ko/LC_MESSAGES/mhaviz.mo (found as
// the fonts and the model are, in a build tree or an installed prefix), in UTF-8, and
// selects LC_MESSAGES from the environment (C.UTF-8 when that locale is not generated,
// since glibc ignores LANGUAGE under plain "C"). The catalog is read (at most
// kMaxCatalogBytes) and checked first (text/mo_catalog.hpp): a damaged one is never
// bound. Safe to call more than once. Returns the catalog directory, "" when none was
// found or it is damaged (then every string stays English).
const std::string& Init();
// Why the catalog that was found is not used (it is damaged), as a notice to show the
// user; "" when it is used or when there is none.
const std::string& CatalogProblem();

// Switches the language from the next lookup on; the UI thread calls it between frames.
// Korean needs the catalog: without one it returns false and the language stays English.
bool SetLanguage(Lang lang);
Lang Current();

// Every character beyond ASCII that the translations use (read from the Korean
// catalog), sorted, without repeats: the fonts that load only Latin glyphs (bold, small)
// add these, so a translated heading or tab button never draws a box. Empty without a
// catalog.
const std::vector<char32_t>& CatalogCharacters();

// The lookups behind _() and P_(); with English they return their argument unchanged.
const char* Translate(const char* msgid);
const char* TranslatePlural(const char* singular, const char* plural, unsigned long n);

// printf into a std::string, for a translated format: Format(_("tile %d of %d"), a, b).
// A whole sentence with %d / %s gives the translator the word order; pieces glued with +
// do not.
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace mha::i18n

#ifndef _
#define _(msgid) ::mha::i18n::Translate(msgid)
#endif
#define N_(msgid) msgid
#define P_(singular, plural, n) ::mha::i18n::TranslatePlural(singular, plural, static_cast<unsigned long>(n))
