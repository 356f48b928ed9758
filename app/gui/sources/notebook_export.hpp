// The Export panel's "Jupyter notebook" and File -> Export notebook: the current state
// as the notebook `mhaviz export --notebook` writes for the same flags (app/notebook),
// with the .npz it reads beside it. Prepared here on the window's thread (the path
// checked, what it reads copied or pinned); written on the recompute's worker.
#pragma once

#include <string>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// The Export panel's path as a notebook's: .png or .svg becomes .ipynb, a name without
// an extension gets one; "" stays "".
std::string NotebookPath(const std::string& field);
// Fills `work` with the notebook's export of the current result: a layer (seeded,
// files, a preset) or a language model. Its `run` writes the .ipynb and its .npz
// together or not at all, and never throws; a refusal (no valid result, an unwritable
// path, a notebook too big to run) is its outcome. Always sized for the worker.
void PrepareNotebookExport(AppState& s, const std::string& path, ExportWork* work);

}  // namespace mha::gui
