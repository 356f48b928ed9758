// Command-line parsing shared by `trace`, `export`, `bench` and `gui`: one place that
// knows every flag, its meaning and its teaching error message.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mha/mha.hpp"

namespace mha::cli {

// A mistake in the command line: exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kDefaultSentence = "The cat sat on the mat.";

// The flags that say what to compute (shared by trace, export and gui).
struct RunOptions {
  Config cfg;
  std::string sentence;      // kDefaultSentence unless --sentence/--input is given
  bool sentence_given = false;  // --sentence "" is an error, not the default sentence
  std::string sentence_file;    // --sentence-file: read the sentence from a file ("-": stdin)
  std::string memory;        // cross-attention memory sentence
  std::string input_npz;     // --input
  std::string weights_npz;   // --weights
  bool d_model_given = false;
};

// Walks argv, offering each flag to the handlers in turn. Unknown flags and missing
// values become UsageError with a hint.
class Args {
 public:
  Args(std::string command, std::vector<std::string> args)
      : command_(std::move(command)), args_(std::move(args)) {}
  bool Done() const { return i_ >= args_.size(); }
  const std::string& Peek() const { return args_[i_]; }
  std::string Next() { return args_[i_++]; }
  // The value after flag `flag` (already consumed).
  std::string Value(const std::string& flag);
  int Int(const std::string& flag, long long lo, long long hi);
  std::uint64_t U64(const std::string& flag);
  double Double(const std::string& flag);
  [[noreturn]] void Unknown(const std::string& flag) const;
  const std::string& command() const { return command_; }

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::size_t i_ = 0;
};

// If `flag` is one of the RunOptions flags, consumes its value and returns true.
bool ParseRunFlag(Args& a, const std::string& flag, RunOptions& o);

// The help text of the RunOptions flags.
const char* RunFlagsHelp();

// Builds the inputs and weights the options describe: the sentence(s) or --input,
// then --weights or the seeded initialisation. Validates (UsageError for a bad
// configuration, mha::Error for bad files). `notice` receives tokenizer notices.
struct Prepared {
  Config cfg;
  Inputs in;
  std::shared_ptr<const Weights> weights;
  std::string notice;
  std::string sentence;  // the text that was tokenized (--sentence, --sentence-file or the default); "" with --input
};
Prepared Prepare(const RunOptions& o);

// Runs `body`, mapping UsageError to exit status 2 and mha::Error (and any other
// exception) to 1, with "mhaviz <command>: error: ..." on stderr.
int Guard(const std::string& command, const std::function<int()>& body);

}  // namespace mha::cli
