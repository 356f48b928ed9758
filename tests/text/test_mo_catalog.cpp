// The .mo check (text/mo_catalog.hpp): what gettext may be given and what it may not.
// tests/cli/test_hostile_surfaces.py feeds the binary whole damaged catalogues.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "text/mo_catalog.hpp"

namespace {

using mha::i18n::CheckFormatDirectives;
using mha::i18n::CheckMoCatalog;

void Put(std::string& b, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) b.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
}

// A catalogue without a hash table (glibc then searches the sorted msgids).
std::string Mo(const std::vector<std::pair<std::string, std::string>>& entries) {
  const auto n = static_cast<std::uint32_t>(entries.size());
  std::string head, data;
  const std::uint32_t orig = 28, trans = orig + 8 * n, start = trans + 8 * n;
  Put(head, 0x950412deu);
  for (std::uint32_t v : {0u, n, orig, trans, 0u, start}) Put(head, v);
  std::string o, t;
  for (const auto& [id, _] : entries) {
    Put(o, static_cast<std::uint32_t>(id.size()));
    Put(o, start + static_cast<std::uint32_t>(data.size()));
    data += id;
    data.push_back('\0');
  }
  for (const auto& [_, str] : entries) {
    Put(t, static_cast<std::uint32_t>(str.size()));
    Put(t, start + static_cast<std::uint32_t>(data.size()));
    data += str;
    data.push_back('\0');
  }
  return head + o + t + data;
}

const std::string kHeader = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=1; plural=0;\n";

}  // namespace

TEST_CASE("printf directives: a translation takes only the arguments its msgid passes", "[i18n]") {
  CHECK(CheckFormatDirectives("tile %d of %d", "%d / %d 타일").empty());
  CHECK(CheckFormatDirectives("%s knocked out: loss %.4f", "%2$.4f (%1$s)").empty());
  CHECK(CheckFormatDirectives("Text size %d%%", "글자 크기 %d%%").empty());
  CHECK(CheckFormatDirectives("%d head", "헤드 %d개").empty());
  CHECK(CheckFormatDirectives("one head", "헤드 한 개").empty());  // an argument left unused is harmless
  CHECK(CheckFormatDirectives("%+.4f nats", "%+.4f 냇").empty());
  CHECK(CheckFormatDirectives("%*d", "%d").empty());  // the width's int, read as the int it is
  CHECK_FALSE(CheckFormatDirectives("head %d", "헤드 %s").empty());
  CHECK_FALSE(CheckFormatDirectives("head %d", "헤드 %d%n").empty());
  CHECK_FALSE(CheckFormatDirectives("Heatmaps", "%s").empty());
  CHECK_FALSE(CheckFormatDirectives("head %d", "%2$d").empty());
  CHECK_FALSE(CheckFormatDirectives("%d %d", "%1$d %d").empty());
  CHECK_FALSE(CheckFormatDirectives("%d", "%ld").empty());
  CHECK_FALSE(CheckFormatDirectives("%.2f", "%d").empty());
  CHECK_FALSE(CheckFormatDirectives("%s", "%1$s %1$d").empty());
  CHECK_FALSE(CheckFormatDirectives("no directive", "50%\xEC\x9D\x98").empty());
}

TEST_CASE("a catalogue is used only when every lookup stays inside it", "[i18n]") {
  const std::string good = Mo({{"", kHeader}, {"head %d", "헤드 %d"}, {std::string("one\0many", 8), "하나"}});
  std::vector<mha::i18n::MoEntry> entries;
  CHECK(CheckMoCatalog(good, &entries).empty());
  CHECK(entries.size() == 2);
  CHECK(CheckMoCatalog(Mo({{"", kHeader}})).empty());
  // Cut anywhere: refused, and never read past the end.
  for (std::size_t n = 0; n < good.size(); ++n) CHECK_FALSE(CheckMoCatalog(good.substr(0, n)).empty());
  // A string whose NUL is gone: strcmp and printf would read on past it.
  std::string unended = good;
  unended.back() = 'x';
  CHECK_FALSE(CheckMoCatalog(unended).empty());
  CHECK_FALSE(CheckMoCatalog(Mo({{"", kHeader}, {"head %d", "헤드 %s"}})).empty());
  CHECK_FALSE(CheckMoCatalog(Mo({{"", kHeader}, {"Heatmaps", ""}})).empty());
  std::string plural = kHeader;
  plural.replace(plural.find("plural=0"), 8, "plural=n%(n-1)");
  CHECK(CheckMoCatalog(Mo({{"", plural}})).find("Plural-Forms") != std::string::npos);
  std::string utf7 = kHeader;
  utf7.replace(utf7.find("UTF-8"), 5, "UTF-7");
  CHECK(CheckMoCatalog(Mo({{"", utf7}})).find("charset") != std::string::npos);
  std::string bad_magic = good;
  bad_magic[0] = 0;
  CHECK(CheckMoCatalog(bad_magic).find("magic") != std::string::npos);
}
