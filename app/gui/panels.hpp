// One panel per file, each a free function that draws into the current ImGui
// window and edits the AppState. Panels that edit the choice do `s.dirty |= ...`;
// none of them runs the core.
#pragma once

#include "gui/app_state.hpp"

namespace mha::gui {

void DrawSentencePanel(AppState& s);   // panel_sentence.cpp
void DrawControlsPanel(AppState& s);   // panel_controls.cpp
// panel_controls.cpp: why the configuration cannot run, with one-click fixes (over
// the results, which keep the last valid maps dimmed).
void DrawConfigError(AppState& s);
// panel_controls.cpp: the next valid num_heads for d_model in direction `dir` (+1 or
// -1), as the slider steps; num_heads itself at either end.
int StepHeads(int d_model, int num_heads, int dir);
void DrawExportPanel(AppState& s);     // panel_export.cpp
void DrawFlowPanel(AppState& s);       // panel_flow.cpp: table + block diagram
float FlowPanelHeight(const AppState& s);  // panel_flow.cpp: the height that shows the whole table
void DrawHeatmapsPanel(AppState& s);   // panel_heatmaps.cpp
void DrawStatusBar(AppState& s);       // panel_status.cpp

// The results area (a tab per view) and the View menu's entries come from the
// registry of views: gui/views/registry.hpp.
void DrawBlockControls(AppState& s);   // panel_block.cpp: attention only / full encoder block

// The example sentences offered in the Sentence panel.
const char* const* ExampleSentences(int* count);

}  // namespace mha::gui
