// Prints a "Copy as PyTorch" snippet for the layer that `mhaviz trace`'s flags describe,
// as the GUI will put it on the clipboard, so that test_notebook.py can run it against
// that trace's .npz.
//
//   notebook_snippet tensors FLAGS...                        the tensors it recomputes
//   notebook_snippet query|heatmaps|tensor NPZ HEAD QUERY TENSOR FLAGS...
#include <iostream>
#include <string>
#include <vector>

#include "cli/ablate_apply.hpp"
#include "cli/commands.hpp"
#include "notebook/notebook.hpp"

int main(int argc, char** argv) {
  using namespace mha;
  const std::vector<std::string> args(argv + 1, argv + argc);
  const bool list = !args.empty() && args[0] == "tensors";
  if (args.empty() || (!list && args.size() < 5)) {
    std::cerr << "usage: notebook_snippet tensors FLAGS... | query|heatmaps|tensor NPZ HEAD QUERY TENSOR FLAGS...\n";
    return 2;
  }
  try {
    const std::vector<std::string> flags(args.begin() + (list ? 1 : 5), args.end());
    const cli::TraceArgs ta = cli::ParseTraceArgs(flags);
    cli::Prepared p = cli::Prepare(ta.run);
    cli::AblateOwnLayer(ta.run, p.cfg, p.weights, p.in);
    const Trace t = Forward(p.cfg, p.weights, p.in);
    if (list) {
      for (const std::string& name : notebook::SnippetTensors(t)) std::cout << name << "\n";
      return 0;
    }
    notebook::SnippetSpec s;
    s.kind = args[0] == "query"      ? notebook::Snippet::OneQuery
             : args[0] == "heatmaps" ? notebook::Snippet::Heatmaps
                                     : notebook::Snippet::Tensor;
    s.trace = &t;
    s.npz_name = args[1];
    s.head = std::stoi(args[2]);
    s.query = std::stoi(args[3]);
    s.tensor = args[4];
    std::cout << notebook::PyTorchSnippet(s);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "notebook_snippet: " << e.what() << "\n";
    return 1;
  }
}
