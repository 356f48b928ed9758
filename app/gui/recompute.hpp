// The single place where the app turns the learner's choice into a trace.
#pragma once

#include "gui/app_state.hpp"

namespace mha::gui {

// Runs the core on s.choice (reusing s.result.trace's buffers and the cached
// weights / embeddings), clears s.dirty, records the time. Never throws: errors
// from the core land in s.result.error for the panels to show.
void Recompute(AppState& s);

}  // namespace mha::gui
