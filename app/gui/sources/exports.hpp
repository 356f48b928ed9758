// Exports the GUI triggers: heatmaps (PNG or SVG, through the CPU renderer that
// `mhaviz export` uses) and a PNG screenshot of the whole window.
#pragma once

#include <string>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// Carries out s.ui.pending.export_* on the current trace, now. Reports success or the
// error in s.ui.exports.message; never throws.
void RunPendingExports(AppState& s);
// An export's outcome into the Export panel's message (s.ui.exports.message, message_ok).
void ShowExportOutcome(AppState& s, const ExportOutcome& o);
// The same, prepared (the options, the path, the checks) but not run: `work->run` then
// renders and writes on any thread while nothing changes the trace, and never throws.
// False when no export is pending.
bool PrepareExport(AppState& s, ExportWork* work);

// Reads the current GL back buffer (call after rendering, before swapping) and
// writes it as a PNG atomically. Throws mha::Error on failure.
void WriteScreenshot(const std::string& path, int fb_width, int fb_height);

// Absolute form of `path` for messages ("" stays "").
std::string AbsolutePath(const std::string& path);

}  // namespace mha::gui
