// What a language model's heads do, measured once per model off the window's thread
// for the Model view, and kept in the Result: every head's label on the validation
// text (assets/corpus/valid.txt.gz beside the checkpoint's assets/models, measured as
// `mhaviz ablate` labels them), and its linguistic jobs on the minimal pairs
// (pairs.jsonl, scored as `mhaviz pairs` scores them: about 3 s of CPU for
// mhaviz-small's 1,574 pairs).
#pragma once

namespace mha::gui {

struct AppState;

// Once per frame, from the recompute: a new language model starts both measures (a
// task each, state/task.hpp); a finished one lands in s.result.validation_labels /
// s.result.head_jobs. Without a language model both are empty.
void StepModelMeasures(AppState& s);

}  // namespace mha::gui
