// Where x and the weights come from besides the sentence: the lesson's worked
// example, the positional heads, the weight editor's copy, and .npz files (the
// Lesson view's and --input / --weights).
#pragma once

#include <memory>
#include <string>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// The lesson's worked example (MakeLessonExample): its x, weights and configuration.
void LoadLessonExample(AppState& s);
// Four hand-built positional heads (MakePositionalHeadsExample) on the current
// sentence's tokens: heads that attend to the previous, the same, the first and the
// next word.
void LoadPositionalHeadsExample(AppState& s);
// Whether x and the weights are the positional-heads example's.
bool UsesPositionalHeadsExample(const AppState& s);
// Weights the editor changes: a copy of the weights in use (the trace keeps its own).
std::shared_ptr<Weights> EditableWeights(AppState& s);
// Back to the sentence's embeddings / the seeded weights.
void UseSentenceInputs(AppState& s);
void UseSeededWeights(AppState& s);
// .npz files from the Lesson view; the outcome lands in s.teach.file_message.
void LoadInputFile(AppState& s, const std::string& path);
void LoadWeightsFile(AppState& s, const std::string& path);
void SaveInputFile(AppState& s, const std::string& path);
void SaveWeightsFile(AppState& s, const std::string& path);

}  // namespace mha::gui
