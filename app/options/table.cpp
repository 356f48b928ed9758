#include "options/table.hpp"

#include <algorithm>
#include <cstdio>

namespace mha::options {

std::string Fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::size_t Columns(const std::string& s) {
  std::size_t cols = 0;
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = n == 1 ? c : c & (0x3F >> (n - 1));
    for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6);
    cols += wide ? 2 : 1;
    i += static_cast<std::size_t>(n);
  }
  return cols;
}

std::string Pad(const std::string& s, std::size_t width, std::size_t min_gap) {
  const std::size_t cols = Columns(s);
  return s + std::string(cols + min_gap >= width ? min_gap : width - cols, ' ');
}

std::string PadLeft(const std::string& s, std::size_t width) {
  const std::size_t cols = Columns(s);
  return cols >= width ? s : std::string(width - cols, ' ') + s;
}

std::string TextTable::Str() const {
  std::vector<std::size_t> w;
  for (const auto& row : rows) {
    if (row.size() > w.size()) w.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], Columns(row[c]));
  }
  std::string out;
  const auto rule = [&] {
    for (std::size_t c = 0; c < w.size(); ++c) out += (c ? "-+-" : "") + std::string(w[c], '-');
    out += "\n";
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i == 1 || (rule_above_last && i + 1 == rows.size() && i > 1)) rule();
    for (std::size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < rows[i].size() ? rows[i][c] : "";
      const bool r = c < right.size() && right[c];
      out += (c ? " | " : "") + (r ? PadLeft(cell, w[c]) : Pad(cell, w[c], 0));  // " | " is the gap
    }
    out += "\n";
  }
  return out;
}

}  // namespace mha::options
