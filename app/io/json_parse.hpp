// JSON from a file a user can be sent (a checkpoint's config, the settings file),
// parsed with its nesting bounded. nlohmann's parser is iterative, but dump(), copies
// and comparisons recurse once per level: a 200 KB file of 100,000 nested '[' crashed
// every loader with a stack overflow. So nesting deeper than max_depth is refused while
// parsing, before anything recurses, and messages quote a short excerpt, never the input.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "mha/config.hpp"

namespace mha::io {

// A checkpoint's config nests 3 levels (config, task, vocab); settings 2.
inline constexpr int kMaxJsonDepth = 32;

// Parses `text`; throws mha::Error with a short reason ("it nests arrays or objects more
// than 32 levels deep", or the syntax error and where it is), which callers prefix with
// what the text is.
nlohmann::json ParseJson(const std::string& text, int max_depth = kMaxJsonDepth);

// At most max_chars of a string, with "..." and the full length when cut.
std::string Excerpt(const std::string& s, std::size_t max_chars = 60);
// A value for a message: its JSON text if short, else its kind and size ("an array of
// 20000 items") or its first characters.
std::string JsonExcerpt(const nlohmann::json& v, std::size_t max_chars = 60);

}  // namespace mha::io
