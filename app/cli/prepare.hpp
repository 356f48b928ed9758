// From parsed flags to what the core runs: the inputs (a sentence, a file, --input)
// and the weights (seeded, or --weights), validated with teaching messages.
#pragma once

#include <memory>
#include <string>

#include "mha/mha.hpp"
#include "options/run_options.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

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

}  // namespace mha::cli
