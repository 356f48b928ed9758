// What mhaviz prints to a terminal from user input (tokens, flag values, paths, error
// messages that quote them): control characters could move the cursor, recolour the
// terminal or retitle the window, and bidi overrides could make a line read other than
// it is. Both are shown as escapes instead. Files (.npz, .json, .png, .svg) keep every
// string exactly; only terminal output goes through these.
#pragma once

#include <cstddef>
#include <string>

namespace mha::options {

// `s` with C0 controls, DEL, C1 controls and invalid UTF-8 bytes as \xNN, and the
// bidi embeddings, overrides, isolates and marks (U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069) as \u{NNNN}. With keep_newlines, '\n' and '\t' pass
// (a multi-line message); otherwise they are escaped too (one table cell). Everything
// else, Korean included, passes unchanged.
std::string TerminalSafe(const std::string& s, bool keep_newlines = false);

// A token as a table cell: TerminalSafe, and at most `max_chars` code points of it
// ("... (+N bytes)" for the rest), so a pasted 1 MiB "word" stays one line.
std::string TerminalToken(const std::string& tok, std::size_t max_chars = 60);

}  // namespace mha::options
