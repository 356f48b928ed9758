// The single place where the app turns the learner's choice into a trace.
#pragma once

#include "gui/state/app_state.hpp"

namespace mha::gui {

// Runs the core on s.choice (reusing s.result.trace's buffers and the cached
// weights / embeddings), clears s.dirty, records the time. Never throws: errors
// from the core land in s.result.error for the panels to show.
void Recompute(AppState& s);

// What the last recompute redid ("Q, K, V kept and re-split into 16 heads", ...): the
// status bar's words (Result::reuse), also in --probe and --dump-state.
std::string ReuseText(const LiveReport& r, const Trace& t, bool shown = false);

}  // namespace mha::gui
