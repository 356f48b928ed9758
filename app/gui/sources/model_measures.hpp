// What a language model's heads do, measured once per model off the window's thread
// for the Model view, and kept in the Result: every head's label on the validation
// text (assets/corpus/valid.txt.gz beside the checkpoint's assets/models, measured as
// `mhaviz ablate` labels them), and its linguistic jobs on the minimal pairs
// (pairs.jsonl, scored as `mhaviz pairs` scores them: about 3 s of CPU for
// mhaviz-small's 1,574 pairs).
#pragma once

#include <memory>

namespace mha::lm {
struct HeadEvidence;
struct LanguageModel;
}  // namespace mha::lm

namespace mha::gui {

struct AppState;

// Once per frame, from the recompute: a new language model starts both measures (a
// task each, state/task.hpp); a finished one lands in s.result.validation_labels /
// s.result.head_jobs. Without a language model both are empty.
void StepModelMeasures(AppState& s);

// A view that measured a model's evidence itself (the Proof view, on its task) hands it
// over, so every view names that model's heads by it from the next frame, as for the
// shipped model. Ignored when the window has moved to another model since.
void AdoptHeadEvidence(AppState& s, const lm::LanguageModel& lm, std::shared_ptr<const lm::HeadEvidence> e);

}  // namespace mha::gui
