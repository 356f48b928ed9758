// What the app reports for tests, benchmarks and bug reports (automation/reports.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// --probe: widget rectangles, layout and the state the GUI tests wait for.
nlohmann::json ProbeJson(const AppState& s, int frame, int win_w, int win_h);
// --dump-state: the final sentence, configuration, settings, views and trace.
std::string DumpStateJson(AppState& s, int frames);
// --stats: medians of the frame, recompute and upload times (the first frames left out).
nlohmann::json StatsJson(const AppState& s, int frame, int fb_w, int fb_h, const char* gl_renderer);

}  // namespace mha::gui
