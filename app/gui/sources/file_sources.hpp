// Where x and the weights come from besides the sentence: the lesson's worked
// example, the positional heads, the weight editor's copy, and .npz files (the
// Lesson view's and --input / --weights).
#pragma once

#include <memory>
#include <string>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// What loading or saving a file (or a preset) did, for the Lesson view to show.
struct FileOutcome {
  bool ok = true;
  std::string message;
};

// The lesson's worked example (MakeLessonExample): its x, weights and configuration.
FileOutcome LoadLessonExample(AppState& s);
// Lesson preset `index` of LessonPresets() (0: the worked example, 1: the hand
// calculation); and which one x and the weights are now (-1: none).
FileOutcome LoadLessonPreset(AppState& s, int index);
int LessonPresetInUse(const AppState& s);
// Four hand-built positional heads (MakePositionalHeadsExample) on the current
// sentence's tokens: heads that attend to the previous, the same, the first and the
// next word.
FileOutcome LoadPositionalHeadsExample(AppState& s);
// Whether x and the weights are the positional-heads example's.
bool UsesPositionalHeadsExample(const AppState& s);
// Weights the editor changes: a copy of the weights in use (the trace keeps its own).
std::shared_ptr<Weights> EditableWeights(AppState& s);
// Back to the sentence's embeddings / the seeded weights.
void UseSentenceInputs(AppState& s);
void UseSeededWeights(AppState& s);
// Where the weights the views show come from, for the marker on the heatmaps, the
// presentation header and the exports: `kind` "random" (seeded, untrained),
// "trained", "hand-set" (a worked example's weights) or "file" (a .npz, the weight
// editor); `text` in words ("random weights (untrained)", "trained: mhaviz-small ·
// layer 1").
struct WeightsProvenance {
  std::string kind, text;  // text: English, for --dump-state and scripts
  std::string shown;       // the same in the interface's language, for the window and its exports
};
// A source name held in s.choice.files (weights_path, input_path) as the window shows it: the
// fixed names translated, a file's path as it is.
std::string SourceShown(const std::string& source);
WeightsProvenance DescribeWeights(const AppState& s);
// .npz files from the Lesson view.
FileOutcome LoadInputFile(AppState& s, const std::string& path);
FileOutcome LoadWeightsFile(AppState& s, const std::string& path);
FileOutcome SaveInputFile(AppState& s, const std::string& path);
FileOutcome SaveWeightsFile(AppState& s, const std::string& path);

}  // namespace mha::gui
