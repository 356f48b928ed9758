// The terminal's tables, written once for every command: numbers with a fixed number
// of decimals, and cells padded to display columns (a Hangul syllable takes two), so
// `ablate`, `pairs`, `generate`, `train` and `trace` line their columns up the same way.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mha::options {

// "%.*f": `v` with `decimals` decimals (a loss: 4).
std::string Fixed(double v, int decimals = 4);
// Columns a terminal gives `s`: one a character, two for Hangul and the other wide East
// Asian characters (several bytes each in UTF-8).
std::size_t Columns(const std::string& s);
// `s` and spaces up to `width` columns; at least `min_gap` spaces after it when it is
// already that wide (0: none), so that a cell never runs into the next.
std::string Pad(const std::string& s, std::size_t width, std::size_t min_gap = 1);
// Spaces, then `s`, up to `width` columns (a right-aligned number).
std::string PadLeft(const std::string& s, std::size_t width);

// A table of text: the first row its header, columns joined by " | " and as wide as
// their widest cell, a rule of '-' (crossed by "-+-") under the header and, when asked,
// above the last row (a total). `right`: the columns aligned right (numbers).
struct TextTable {
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;
  bool rule_above_last = false;
  std::string Str() const;
};

}  // namespace mha::options
