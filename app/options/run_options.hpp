// What the command line asks to compute, shared by every subcommand (trace, export,
// bench, gui, ...): the values, the usage error and the exit-status guard. The flags
// that fill RunOptions are declared once, in flags.cpp.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mha/mha.hpp"

namespace mha::options {

// A mistake in the command line: exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kDefaultSentence = "The cat sat on the mat.";

// The flags that say what to compute.
struct RunOptions {
  // The flags applied on top of the defaults (trace, export, bench). The GUI starts
  // from the saved settings instead, so every configuration flag is also kept as an
  // edit it can replay there: ConfigOver(saved).
  Config cfg;
  std::vector<std::function<void(Config&)>> cfg_edits;
  Config ConfigOver(Config base) const {
    for (const auto& edit : cfg_edits) edit(base);
    return base;
  }

  std::string sentence;         // kDefaultSentence unless --sentence/--input is given
  bool sentence_given = false;  // --sentence "" is an error, not the default sentence
  std::string sentence_file;    // --sentence-file: read the sentence from a file ("-": stdin)
  std::string memory;           // cross-attention memory sentence
  std::string input_npz;        // --input
  std::string weights_npz;      // --weights
  bool d_model_given = false;

  // --ablate: heads knocked out before W_O (options/ablate_flags.hpp); checked against
  // the model once it is known.
  std::vector<HeadRef> ablate;
  bool ablate_given = false;
  AblationMode ablate_mode = AblationMode::Zero;
};

// Refuses flags that contradict each other (--sentence with --input, ...): the same
// rule for every subcommand, checked right after parsing.
void CheckRunOptions(const RunOptions& o);

// --sentence-file's text: at most one byte over the sentence cap, so the tokenizer
// sees, and says, that it was cut. mha::Error if it is not a text file.
std::string ReadSentenceFile(const std::string& path);

// --input's arrays, checked against --d-model (UsageError if they disagree: d_model
// is read from the file). mha::Error for a bad file.
Inputs LoadInputNpz(const RunOptions& o);

// Runs `body`, mapping UsageError to exit status 2 and mha::Error (and any other
// exception) to 1, with "mhaviz <command>: error: ..." on stderr.
int Guard(const std::string& command, const std::function<int()>& body);

}  // namespace mha::options
