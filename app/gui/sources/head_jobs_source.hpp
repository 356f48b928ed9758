// The language model's head jobs (lm/head_jobs.hpp) for the Model view: the minimal
// pairs (assets/corpus/pairs.jsonl beside the checkpoint's assets/models, else the
// app's) scored once per model on a worker thread, as `mhaviz pairs` scores them; about
// 3 s of CPU for mhaviz-small's 1,574 pairs, so the window never waits on it.
#pragma once

#include <string>
#include <vector>

#include "lm/head_jobs.hpp"

namespace mha::gui {

struct AppState;

// The jobs, or null while they are measured or when there are no pairs (`why` says
// which: "measuring", or the reason).
const std::vector<lm::HeadJob>* HeadJobLabels(const AppState& s, std::string* why);

// The pairs file the jobs were measured on ("" before the measuring starts).
const std::string& HeadJobPairsFile();

}  // namespace mha::gui
