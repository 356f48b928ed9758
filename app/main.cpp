// mhaviz: one binary. With no subcommand it opens the GUI; `trace`, `export` and
// `bench` run headless and never touch GLFW.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/train_cmd.hpp"


#ifdef MHAVIZ_HAVE_GUI
#include "gui/gui.hpp"
#endif

namespace {

const char* kHelp =
    "mhaviz " MHAVIZ_VERSION " - multi-head self-attention, every step, live\n"
    "\n"
    "usage:\n"
    "  mhaviz [gui] [flags]      open the desktop app (the default)\n"
    "  mhaviz trace [flags]      print the shape-flow table; export every tensor (--npz, --json)\n"
    "  mhaviz export [flags]     render attention heatmaps to PNG / SVG without a display\n"
    "  mhaviz bench [flags]      time the attention layer (compare with scripts/compare_torch.py)\n"
    "  mhaviz train [flags]      train a small model on a task (offsets, reverse, sort, induction); write a checkpoint\n"
    "  mhaviz grad [flags]       one forward and backward pass of a checkpoint: the loss and every gradient (.npz)\n"
    "  mhaviz --help | --version\n"
    "\n"
    "'mhaviz COMMAND --help' lists each command's flags.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string cmd = args.empty() ? "gui" : args[0];
  auto rest = [&] { return std::vector<std::string>(args.begin() + 1, args.end()); };
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kHelp;
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "mhaviz " << MHAVIZ_VERSION << "\n";
    return 0;
  }
  if (cmd == "trace") return mha::cli::TraceCommand(rest());
  if (cmd == "export") return mha::cli::ExportCommand(rest());
  if (cmd == "bench") return mha::cli::BenchCommand(rest());
  if (cmd == "train") return mha::cli::TrainCommand(rest());
  if (cmd == "grad") return mha::cli::GradCommand(rest());
#ifdef MHAVIZ_HAVE_GUI
  if (cmd == "gui") return mha::gui::Run(rest());
  if (!cmd.empty() && cmd[0] == '-') return mha::gui::Run(args);
#else
  if (cmd == "gui" || (!cmd.empty() && cmd[0] == '-')) {
    std::cerr << "mhaviz: this build has no GUI (configured with -DMHAVIZ_GUI=OFF). Try 'mhaviz trace'.\n";
    return 2;
  }
#endif
  std::cerr << "mhaviz: unknown command '" << cmd << "'.\n\n" << kHelp;
  return 2;
}
