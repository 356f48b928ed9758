// What the learner chose: the only input of the one recompute, and everything a lesson
// step sets and restores (a step is a Choice, a caption and a question). Widgets write
// here and set AppState::dirty; views read it and write it, never the Result.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/ablation.hpp"
#include "mha/mha.hpp"
#include "mha/model.hpp"

namespace mha::gui {

enum class ModelSourceKind { Seeded, PositionalHeads, Trained };

// Where the weights every view runs come from (sources/model_source.hpp): the seeded
// random layer on the typed sentence, the four hand-built positional heads, or a
// trained model (a Train view run, a checkpoint, mhaviz-small).
struct SourceChoice {
  ModelSourceKind kind = ModelSourceKind::Seeded;
  std::shared_ptr<const Model> model;  // Trained: the weights the views run
  // A language model (mhaviz-small, a text checkpoint): the typed text is cut into its
  // pieces, and `model` points into it. Null for a task model, which reads token ids.
  std::shared_ptr<const lm::LanguageModel> lm;
  std::string name;  // Trained: "offsets K=2 run 1, step 800" or the checkpoint's path
  int run_id = 0;    // Trained: the Train view run it follows (0: a loaded file)
  // The sentence to give back when leaving a task model (it reads ids, not words).
  std::string seeded_sentence;
};

// Heads knocked out (gui --ablate, the Model view's out / only switches, a lesson
// step). The one recompute applies it (sources/knockout.hpp), so every view shows the
// model without them, and the Importance view measures the model so.
struct Knockout {
  std::vector<HeadRef> heads;  // sorted, no repeats
  AblationMode mode = AblationMode::Zero;
  // Mean ablation of a trained model: each head's mean context over its reference
  // text, measured once (gui --ablate-mode mean). Without them a trained model's heads
  // are zeroed (KnockoutText says which was applied).
  ContextMeans means;
};

// x and the weights from files or presets (the Lesson view, --input / --weights, the
// worked examples, the weight editor). While set they replace the sentence's
// embeddings / the seeded weights.
struct FileSources {
  std::string input_path;
  Inputs input;
  std::string weights_path;
  std::shared_ptr<const Weights> weights;
  // The weight editor changed them: a copy of what was computed with, so the trace
  // keeps its own (immutable) weights until the recompute.
  bool weights_edited = false;
};

// What the Inspect view shows: one tensor of the trace, by its .npz name, either as
// stored, one head of it, or with its heads side by side again (the Q/K/V projection
// rows of the shape flow show q, k, v before the split).
struct InspectSelection {
  enum class Mode { Whole, Head, Merged };
  std::string tensor = "concat";
  Mode mode = Mode::Whole;
  std::string step;  // the shape-flow step it came from ("" if picked from the list)
};

// The Flash view's stepping: Br x Bc tiles, and how many have run.
struct FlashChoice {
  int br = 4, bc = 4;
  int tile = 0;  // tiles done (0: none yet), clamped to the grid's count
};

// The Generate view: how many pieces continue `prompt`, drawn how. The pieces belong
// to the prompt they continue: a newly typed sentence starts from none.
struct GenerateChoice {
  std::string prompt;     // the sentence the pieces continue
  int pieces = 0;         // generated after it (Generate and Step add; Start over: 0)
  float temperature = 0;  // 0: greedy, as mhaviz generate without --temperature
  int top_k = 0;
  int seed = 0;
  int no_repeat = 0;       // n-gram blocking, as generate --no-repeat (0: off)
  bool stop_at_s = false;  // the text ends where the model writes <s>, as generate --stop-at-s
};

// The Patch view's two sentences and its target piece ("": the clean run's likeliest).
// The view patches them on its worker when its Patch button is pressed, on its first
// showing, and whenever `serial` moves: what sets the fields from outside the view (a
// lesson step) moves it, so they are patched without a click.
struct PatchChoice {
  std::string clean = "할머니께서 방에서";
  std::string corrupt = "형이 방에서";
  std::string target = "주무";
  int serial = 0;
};

struct Choice {
  std::string sentence;
  std::string memory;  // second sentence, used when `cross` is on
  bool cross = false;
  Config cfg;
  FileSources files;
  SourceChoice source;
  int layer = 0;  // which layer of a trained model the views show
  Knockout knockout;
  // What the views show: the tab (its --view name), the head and query token the
  // teaching views show, the inspected tensor, the heads the Head view draws.
  std::string view = "heatmaps";
  int head = 0;
  int query = 0;
  // The Heatmaps view's maps: each head's attention weights (false), or what each key
  // adds to the head's output, its value-weighted norms as shares of each row
  // (--heatmap-show norms).
  bool heatmap_norms = false;
  InspectSelection inspect;
  std::array<bool, Limits::kMaxHeads> head_view_off{};
  FlashChoice flash;
  GenerateChoice generate;
  PatchChoice patch;
};

}  // namespace mha::gui
