// The Model view's linguistic head jobs (lm/head_jobs.hpp, measured on the minimal
// pairs by sources/model_measures.hpp): each head's job names, the job read off the
// learner's own sentence, and "Try these", sentences that show one head's job each.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mha::gui {

struct AppState;

// The jobs of head (layer, head), translated, one per job ("particle → noun"); empty
// when it has none or they are still measured.
std::vector<std::string> HeadJobTexts(const AppState& s, int layer, int head);
// The tooltip lines for those jobs: the pairs' weight against uniform, and the weight
// on the current sentence read off the map.
std::string HeadJobDetails(const AppState& s, int layer, int head);
// What the jobs are measured on: "minimal pairs", "minimal pairs (measuring)" or why none.
std::string HeadJobsStatus(const AppState& s);
// The same, translated, for the window.
std::string HeadJobsStatusShown(const AppState& s);
// The example sentences, each a button that puts it in the Sentence field; only the
// jobs this model's heads have.
void DrawTryThese(AppState& s);
// Each job-holding head's weight on the current sentence, row -> columns.
void DrawJobsOnSentence(AppState& s);
// --dump-state: the jobs, the sites on the sentence with their weights, the list shown.
nlohmann::json DumpHeadJobs(AppState& s);

}  // namespace mha::gui
