// "Copy as PyTorch" on the One query, Heatmaps and Inspector views: a small button that
// puts on the clipboard a snippet of the lessons' PyTorch code computing what the view
// shows (notebook::PyTorchSnippet), from the .npz `mhaviz trace --npz trace.npz` writes
// for the same layer; the snippet ends by checking its result against that file.
#pragma once

#include <string>

#include "gui/state/app_state.hpp"
#include "notebook/notebook.hpp"

namespace mha::gui {

// The snippet for the shown trace and the view's selection (the head, the query
// token, the inspected tensor), or "" with `error` set when the view shows nothing a
// snippet computes (no valid trace, a tensor no snippet recomputes).
std::string PyTorchSnippetFor(const AppState& s, notebook::Snippet kind, std::string* error = nullptr);
// The button (with `probe` as its probe name), beside the last item where it fits, else
// under it; greyed out with the reason when there is no snippet; "Copied" beside it
// once it copied the snippet that is current.
void CopyAsPyTorchButton(AppState& s, notebook::Snippet kind, const char* probe);

}  // namespace mha::gui
