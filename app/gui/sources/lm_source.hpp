// The shipped language model (mhaviz-small) as a model source: the typed sentence,
// English or Korean, is cut into the model's SentencePiece pieces and run through
// every layer; the views show the selected layer, the Next view the model's likeliest
// next pieces. It rides on the trained-model source (model_source.hpp):
// SourceChoice::lm is set, and MakeModelJob hands over to MakeLanguageModelJob below.
#pragma once

#include <memory>
#include <string>

#include "io/assets.hpp"
#include "lm/language_model.hpp"

namespace mha::options {
struct ModelFlags;
}  // namespace mha::options

namespace mha::gui {

struct AppState;
class WorkerJob;

// The file name the selector offers, looked up in assets/models/.
using io::kSmallModelFile;
inline constexpr const char* kSmallModelName = "mhaviz-small (trained)";
// How many next pieces each position lists.
inline constexpr int kNextTopK = 5;

bool UsingLanguageModel(const AppState& s);

// A piece as the UI writes it: "_" and a thin space (U+2009) for SentencePiece's
// word-start mark U+2581.
std::string DisplayPiece(const std::string& piece);

// Where mhaviz-small is: ./assets/models, beside the executable, the source tree, the
// install prefix. "" when none has it.
std::string FindSmallModel();

// Makes `lm` the source: the sentence field keeps the typed text (any language).
void UseLanguageModel(AppState& s, std::shared_ptr<const lm::LanguageModel> lm, const std::string& name);
// Loads mhaviz-small once (kept for the session) and selects it; a load failure is
// shown under the selector (Result::source_error).
void UseSmallModel(AppState& s);

// gui --model LM.npz [--layer i]: a language model checkpoint becomes the source, on
// the sentence (--sentence or the saved one). Returns false (nothing done) when --model
// is absent or not a language model; throws mha::Error / options::UsageError otherwise.
bool ApplyLanguageModelFlag(const options::ModelFlags& m, AppState& s);

// The recompute's job for a language model: RunOnSentence on the typed text (with the
// knock-out, and without it for the before of each next piece), the pieces as the
// tokens, the selected layer's Trace, the next pieces. Never throws.
std::unique_ptr<WorkerJob> MakeLanguageModelJob(AppState& s);

}  // namespace mha::gui
