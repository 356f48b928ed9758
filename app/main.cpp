// mhaviz: one binary. With no subcommand it opens the GUI; every subcommand (the rows
// of kCommands below) runs headless and never touches GLFW.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/pairs_cmd.hpp"
#include "cli/train_cmd.hpp"
#include "options/terminal.hpp"

#ifdef MHAVIZ_HAVE_GUI
#include "gui/main/run.hpp"
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
    {"export", "export [flags]     render attention heatmaps to PNG / SVG without a display", mha::cli::ExportCommand},
    {"bench", "bench [flags]      time the attention layer (compare with scripts/compare_torch.py)",
     mha::cli::BenchCommand},
    {"train", "train [flags]      train a small model on a task (offsets, reverse, sort, induction, text)",
     mha::cli::TrainCommand},
    {"generate", "generate [flags]   a language model continues a prompt, piece by piece, with a KV cache",
     mha::cli::GenerateCommand},
    {"grad", "grad [flags]       one forward and backward pass of a checkpoint: the loss and every gradient",
     mha::cli::GradCommand},
    {"ablate", "ablate [flags]     knock heads out of a trained model: what each head is worth",
     mha::cli::AblateCommand},
    {"pairs", "pairs [flags]      score a language model on minimal pairs; which head each one needs",
     mha::cli::PairsCommand},
    {"patch", "patch [flags]      activation patching: which head carries the clean sentence's next piece",
     mha::cli::PatchCommand},
};

std::string Help() {
  std::string h = "mhaviz " MHAVIZ_VERSION " - multi-head self-attention, every step, live\n\nusage:\n";
  for (const Command& c : kCommands) h += std::string("  mhaviz ") + c.usage + "\n";
  return h + "  mhaviz --help | --version\n\n'mhaviz COMMAND --help' lists each command's flags.\n";
}

// What a command printed must have reached standard output: `mhaviz trace > /dev/full`
// or with stdout closed (`>&-`) would otherwise exit 0 with the table lost. One check
// for every command, after it returns; a command that failed keeps its own status.
int FlushStdout(int status) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return status;
  std::string why = err ? std::strerror(err) : "";
  if (why.empty() && ::fcntl(1, F_GETFD) < 0) why = std::strerror(EBADF);
  // stdio kept no errno from the earlier failed write: one byte more (the output is
  // already incomplete) asks the file again why.
  if (why.empty()) why = ::write(1, "\n", 1) < 0 ? std::strerror(errno) : "a write failed";
  std::cerr << "mhaviz: error: cannot write to standard output (" << why
            << "); what was printed is incomplete. Check where the output goes (a full disk, a closed pipe).\n";
  return status != 0 ? status : 1;
}

int Run(const std::vector<std::string>& args) {
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
  std::cerr << "mhaviz: unknown command '" << mha::options::TerminalSafe(cmd) << "'.\n\n" << Help();
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return FlushStdout(Run(std::vector<std::string>(argv + 1, argv + argc))); }
