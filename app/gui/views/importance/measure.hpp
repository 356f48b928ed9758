// The Importance view's measurements: every head knocked out alone (then every layer's
// heads at once) and the in-context learning curve, the numbers of `mhaviz ablate
// --json` and `mhaviz ablate --icl --json` (the same lm::AblationSubject, core
// MeasureImportance and MeasureRepeatLoss), measured on the model as chosen: the model
// in memory (never read from disk again) with the chosen heads already knocked out
// (sources/knockout.hpp), each head measured on top of them. A measurement is a task
// (seconds: 64 validation windows by default), cancelled at its next batch of windows
// when the model, the knock-out or the amount of text changes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gui/state/choice.hpp"
#include "gui/state/task.hpp"
#include "lm/ablate_model.hpp"

namespace mha::gui {

// Validation windows a language model's table is measured on unless the learner asks
// for more: about 3 s on 2 busy cores for mhaviz-small (`mhaviz ablate --windows 64`
// takes the same), where the CLI's default 256 takes about 6 s.
constexpr int kImportanceWindows = 64;

// What one measurement is of: the model (kept alive, so its address names it), the
// heads already out and how, and the validation windows (a language model; 0: all).
struct ImportanceKey {
  std::shared_ptr<const Model> model;
  AblationMode mode = AblationMode::Zero;
  std::vector<HeadRef> knocked;
  int windows = kImportanceWindows;
  bool operator==(const ImportanceKey& o) const {
    return model == o.model && mode == o.mode && knocked == o.knocked && windows == o.windows;
  }
};

struct ImportanceResult {
  std::string model, reference;                     // reference: in English, as --dump-state and the CLI say it
  int reference_windows = 0, reference_pieces = 0;  // a language model's (0: a task model's examples)
  int layers = 0, num_heads = 0;
  std::vector<std::string> targets;  // a task model's targets ("1-back", ...); empty: one
  std::vector<HeadRef> knocked;      // out in every measurement (the model as chosen)
  ImportanceTable table;
  std::vector<HeadProfile> labels;
  ContextMeans means;  // mean ablation: each head's mean context over the reference text
  // The in-context learning curve.
  std::vector<HeadRef> icl_heads;
  double icl_induction = 0;  // the knocked-out head's induction score
  int icl_span = 0, icl_sequences = 0;
  RepeatLoss plain, knocked_curve;
  // A snapshot the task publishes on the way (Task::Latest), so the view shows the chart
  // filling in rather than a progress line: what is known so far, the heads' rows in
  // (layer, head) order, unsorted; table.base once base_measured, the first
  // heads_measured of layers x num_heads heads, then the layers' rows.
  bool partial = false, base_measured = false;
  int heads_measured = 0;
};

// What the task needs, copied off the window's thread's state.
struct ImportanceInput {
  ImportanceKey key;
  std::shared_ptr<const lm::LanguageModel> lm;  // a language model (its validation text is read)
  std::string name;                             // else a task model (key.model), called so
  Knockout knockout;                            // the chosen heads, and means measured for them
};

// The measurement; its progress and stage go to `ctx` (the probe and the view), and
// what it knows so far, as partial results.
ImportanceResult MeasureImportance(const ImportanceInput& in, TaskContext<ImportanceResult>& ctx);

}  // namespace mha::gui
