// The shipped language model (mhaviz-small) as a model source: the typed sentence,
// English or Korean, is cut into the model's SentencePiece pieces and run through
// every layer; the views show the selected layer, the next-token panel the model's
// likeliest next pieces. It rides on the trained-model source (model_source.hpp):
// ModelSource::lm is set, and MakeModelJob hands over to MakeLanguageModelJob below.
#pragma once

#include <memory>
#include <string>

#include "io/assets.hpp"
#include "lm/language_model.hpp"
#include "mha/ablation.hpp"

namespace mha::options {
struct ModelFlags;
struct RunOptions;
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
// shown under the selector.
void UseSmallModel(AppState& s);

// gui --model LM.npz [--layer i]: a language model checkpoint becomes the source, on
// the sentence (--sentence or the saved one). Returns false (nothing done) when --model
// is absent or not a language model; throws mha::Error / options::UsageError otherwise.
bool ApplyLanguageModelFlag(const options::ModelFlags& m, AppState& s);

// The recompute's job for a language model: RunOnSentence on the typed text, the
// pieces as the tokens, the selected layer's Trace, the next pieces. Never throws.
std::unique_ptr<WorkerJob> MakeLanguageModelJob(AppState& s);

// The Configuration panel with a language model: num_heads and d_model are the
// model's, shown read-only with the reason. Returns false when not on a language model.
bool DrawFixedShape(AppState& s);

// Knocking heads out (ModelSource::knocked; the core's mha/ablation.hpp). The heads a
// model of `num_layers` x `num_heads` has are kept, the others dropped (a new source
// or num_heads), so what is listed is what is applied.
void FitKnockedOut(AppState& s, int num_layers, int num_heads);
// One HeadAblation per layer for the current knocked-out heads, or empty when none.
// Mean ablation uses ModelSource::knock_means when they were measured for `m`, else
// the heads are zeroed (KnockoutText says which).
std::vector<HeadAblation> KnockoutAblations(const AppState& s, const Model& m);
// Sets the knocked-out heads (the Model view's switches) and asks for a recompute.
void SetKnockedOut(AppState& s, std::vector<HeadRef> heads);
// "L1H3, L0H2 (zero)": the heads and the ablation actually applied; "" when none.
// shown: in the interface's language (the banner); else English (--dump-state).
std::string KnockoutText(const AppState& s, bool shown = false);
// The banner over the results naming the knocked-out heads, with a way back.
void DrawKnockoutBanner(AppState& s);
// gui --ablate / --ablate-mode, once the source is chosen: exit 2 (cli::UsageError)
// for a head the model does not have; mean ablation of a trained model measures each
// head's mean context on its reference text once, before the window opens.
void ApplyAblateFlags(const options::RunOptions& o, const std::string& model_path, AppState& s);

}  // namespace mha::gui

#include <vector>

#include "mha/heads.hpp"

namespace mha::gui {

// Every head's label (mha/heads.hpp) measured on windows of the validation text
// (assets/corpus/valid.txt.gz), computed once on a worker thread. Null while it runs,
// or when the text is not there (`why` says which); the model view then labels the
// heads on the sentence.
const std::vector<HeadProfile>* ValidationLabels(const AppState& s, std::string* why);

}  // namespace mha::gui
