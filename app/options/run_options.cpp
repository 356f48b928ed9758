#include "options/run_options.hpp"

#include <iostream>

#include "io/files.hpp"
#include "options/terminal.hpp"

namespace mha::options {

void CheckRunOptions(const RunOptions& o) {
  if (o.sentence_given && !o.sentence_file.empty())
    throw UsageError("give either --sentence or --sentence-file, not both.");
  if (!o.input_npz.empty() && (o.sentence_given || !o.sentence_file.empty()))
    throw UsageError("give either --sentence or --input, not both: --input replaces the sentence's embeddings.");
}

std::string ReadSentenceFile(const std::string& path) {
  std::string text = io::ReadFilePrefix(path, Limits::kMaxSentenceBytes + 1, nullptr);
  if (text.find('\0') != std::string::npos)
    throw Error("'" + path +
                "' contains NUL bytes, so it is not a text file. "
                "Give a UTF-8 text file with the sentence, e.g. echo \"the cat sat\" > s.txt.");
  return text;
}

Inputs LoadInputNpz(const RunOptions& o) {
  const auto npz = io::LoadNpz(o.input_npz, io::InputsFilter(o.input_npz));
  Inputs in = io::InputsFromNpz(npz, o.input_npz);
  const int d = static_cast<int>(in.x.cols());
  if (o.d_model_given && o.cfg.d_model != d)
    throw UsageError("--d-model " + std::to_string(o.cfg.d_model) + " does not match '" + o.input_npz +
                     "', whose x has d_model = " + std::to_string(d) +
                     ". Leave out --d-model: it is read from the file.");
  return in;
}

int Guard(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << "mhaviz " << command << ": error: " << TerminalSafe(e.what(), true) << "\n";
    return 2;
  } catch (const io::OutputClash& e) {  // two outputs that are one file: the names typed, however spelled
    std::cerr << "mhaviz " << command << ": error: " << TerminalSafe(e.what(), true) << "\n";
    return 2;
  } catch (const io::Interrupted& e) {  // stopped, as a Ctrl-C between two steps stops: 128 + signal
    std::cerr << "mhaviz " << command << ": " << TerminalSafe(e.what(), true) << "\n";
    return 128 + e.signal;
  } catch (const Error& e) {
    std::cerr << "mhaviz " << command << ": error: " << TerminalSafe(e.what(), true) << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    // Every accepted size is estimated to fit the 1.5 GB budget before it is allocated, so
    // this is a limit below it (ulimit -v, a container) or a machine short of memory.
    const bool trains = command == "train" || command == "grad" || command == "bench";
    std::cerr << "mhaviz " << command << ": error: out of memory: the system refused an allocation. mhaviz keeps "
              << "every size it accepts within about 1.5 GB; check for a lower memory limit (ulimit -v, a "
              << "container's) or free memory, or make the run smaller ("
              << (trains ? "--batch, --seq, the vocabulary or the model" : "fewer tokens, heads or a smaller d_model")
              << ").\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "mhaviz " << command << ": error: " << TerminalSafe(e.what(), true) << "\n";
    return 1;
  }
}

}  // namespace mha::options
