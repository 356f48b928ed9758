// The subcommands (namespace mha::cli) use the shared command line's names (namespace
// mha::options: flags, exit statuses, timing, the terminal) unqualified: one
// using-directive, here, for the CLI alone (the app and the language model spell them
// options::).
#pragma once

#include "options/flags.hpp"
#include "options/run_options.hpp"
#include "options/terminal.hpp"
#include "options/timing.hpp"

namespace mha::cli {
using namespace mha::options;
}  // namespace mha::cli
