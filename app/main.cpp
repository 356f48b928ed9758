// mhaviz: one binary. With no subcommand it opens the GUI; `trace`, `export` and
// `bench` run headless and never touch GLFW.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/train_cmd.hpp"
#include "options/terminal.hpp"

#ifdef MHAVIZ_HAVE_GUI
#include "gui/gui.hpp"
#endif

namespace {

// The subcommands: a new one is one row here (its flags and its command live in its
// own file; see options/flags.hpp).
struct Command {
  const char* name;
  const char* usage;  // for mhaviz --help
  int (*run)(const std::vector<std::string>& args);
};
const Command kCommands[] = {
#ifdef MHAVIZ_HAVE_GUI
    {"gui", "[gui] [flags]      open the desktop app (the default)", mha::gui::Run},
#endif
    {"trace", "trace [flags]      print the shape-flow table; export every tensor (--npz, --json)",
     mha::cli::TraceCommand},
    {"export", "export [flags]     render attention heatmaps to PNG / SVG without a display",
     mha::cli::ExportCommand},
    {"bench", "bench [flags]      time the attention layer (compare with scripts/compare_torch.py)",
     mha::cli::BenchCommand},
    {"train", "train [flags]      train a small model on a task (offsets, reverse, sort, induction)",
     mha::cli::TrainCommand},
    {"grad", "grad [flags]       one forward and backward pass of a checkpoint: the loss and every gradient",
     mha::cli::GradCommand},
};

std::string Help() {
  std::string h = "mhaviz " MHAVIZ_VERSION " - multi-head self-attention, every step, live\n\nusage:\n";
  for (const Command& c : kCommands) h += std::string("  mhaviz ") + c.usage + "\n";
  return h + "  mhaviz --help | --version\n\n'mhaviz COMMAND --help' lists each command's flags.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string cmd = args.empty() ? "gui" : args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << Help();
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "mhaviz " << MHAVIZ_VERSION << "\n";
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + std::min<std::size_t>(1, args.size()), args.end());
  for (const Command& c : kCommands)
    if (cmd == c.name) return c.run(rest);
#ifdef MHAVIZ_HAVE_GUI
  if (!cmd.empty() && cmd[0] == '-') return mha::gui::Run(args);  // flags alone: the GUI
#else
  if (cmd == "gui" || (!cmd.empty() && cmd[0] == '-')) {
    std::cerr << "mhaviz: this build has no GUI (configured with -DMHAVIZ_GUI=OFF). Try 'mhaviz trace'.\n";
    return 2;
  }
#endif
  std::cerr << "mhaviz: unknown command '" << mha::cli::TerminalSafe(cmd) << "'.\n\n" << Help();
  return 2;
}
