// Where the layer every view shows comes from: the model source. Today's seeded
// random weights on the typed sentence, the four hand-built positional heads, or a
// trained model (a Train view run, or a checkpoint from `mhaviz train --out`). With
// a trained model the sentence field holds token ids of its vocabulary ("3 1 4 1 5"),
// the model runs on them layer by layer, and the layer selector picks which layer's
// Trace the shape flow, the heatmaps and the teaching views read. Recompute() stays
// the one place this runs (MakeModelJob below is its trained-model job).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gui/state/app_state.hpp"
#include "lm/language_model.hpp"
#include "mha/model.hpp"

namespace mha::gui {

struct AppState;

// The recompute's job for a trained model (a language model's: MakeLanguageModelJob):
// the sentence's ids through every layer, the selected layer's Trace into s.result.
// Never throws (errors land in s.result.error when it is applied).
std::unique_ptr<WorkerJob> MakeModelJob(AppState& s);
// How much work that is (the recompute hands big ones to its task).
WorkSize ModelWork(const AppState& s);

// Makes `model` the source. Entering from another source, the sentence becomes
// `tokens` (the probe example) and the old sentence is kept to give back; while
// already on a trained model the typed ids stay if the new model takes them.
void UseTrainedModel(AppState& s, std::shared_ptr<const Model> model, const std::string& name, int run_id,
                     const std::vector<int>& tokens);
// Back to the seeded random weights on the sentence (the sentence given back).
void UseSeededSource(AppState& s);
// Leaves a trained model for the sentence (given back); the files in use stay. Loading
// an example or a file for the seeded views calls it first.
void LeaveTrainedModel(AppState& s);
// The four positional heads on the sentence (given back first).
void UsePositionalHeadsSource(AppState& s);

// The sentence field gets `text` (a field being edited lets go of its own copy first).
void SetSentence(AppState& s, const std::string& text);
// "3 1 4 1 5": ids joined with spaces, the sentence field's form of a token sequence.
std::string JoinIds(const std::vector<int>& ids);

// "3 1 4 ... 9": a task model's vocabulary, shortened.
std::string VocabRange(const ModelConfig& c);

}  // namespace mha::gui
