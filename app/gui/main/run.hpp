// The desktop app. `mhaviz` with no arguments and `mhaviz gui [flags]` land here.
#pragma once

#include <string>
#include <vector>

namespace mha::gui {

// Opens the window and runs until it is closed (or, with --frames, for that many
// frames). Returns the process exit status: 0 ok, 1 runtime error (no display, no
// OpenGL 3.3, unwritable output), 2 usage error.
int Run(const std::vector<std::string>& args);

}  // namespace mha::gui
