// What `mhaviz export` draws: the layer of one of the model sources the GUI offers,
// seeded random weights on the sentence (the default), the four positional heads on
// its tokens (--preset heads) or the lesson's worked example (--preset lesson), or a
// trained checkpoint's layer (--model, with --sentence for a language model).
#pragma once

#include <functional>
#include <string>

#include "commands.hpp"
#include "lm/language_model.hpp"
#include "mha/model.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

struct ExportSource {
  lm::LoadedModelTrace checkpoint;  // --model (not a language model)
  lm::SentenceRun lm_run;           // --model of a language model
  Trace own;                        // seeded weights or a preset
  enum class Kind { Own, LanguageModel, Checkpoint } kind = Kind::Own;
  int layer = 0;
  // The layer to draw, from whichever of the three above holds it.
  const Trace& Layer() const {
    if (kind == Kind::LanguageModel) return lm_run.trace.layers[static_cast<std::size_t>(layer)];
    return kind == Kind::Checkpoint ? checkpoint.Layer() : own;
  }
  std::string sentence;    // the header's sentence line ("" : the tokens)
  std::string memory;      // cross-attention's keys/values sentence
  std::string positional;  // the header's positional-encoding note ("" : the layer's)
  std::string weights;     // the header's word on where the weights come from
  std::string notice;      // printed as a note (a sentence cut short, a preset's job)
};

// Builds the source the flags name. `check(cfg, seq, seq_kv)` runs once the sizes are
// known and before the forward pass of a seeded or preset layer, so a picture that
// would be too big is refused before any work (it throws to refuse). Throws mha::Error
// or UsageError with a teaching message.
using SizeCheck = std::function<void(const Config& cfg, long long seq, long long seq_kv)>;
ExportSource LoadExportSource(const ExportArgs& e, const SizeCheck& check);

}  // namespace mha::cli
