// UTF-8 to code points and back, for whatever draws or measures text one character at
// a time (the CPU renderer, the app's fonts and glyphs). Malformed bytes become U+FFFD
// (tokens are already valid, but titles and labels may hold anything the caller passes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mha::text {

std::vector<char32_t> DecodeUtf8(std::string_view s);
std::string EncodeUtf8(const std::vector<char32_t>& cps);

}  // namespace mha::text
