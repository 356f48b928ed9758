// One panel per file, each a free function that draws into the current ImGui
// window and edits the AppState. Panels that edit the choice do `s.dirty |= ...`;
// none of them runs the core.
#pragma once

#include "gui/state/app_state.hpp"

namespace mha::gui {

void DrawSentencePanel(AppState& s);  // panels/sentence.cpp
// panels/model_panel.cpp: where the weights come from, the layer shown; and the banner
// over the results naming the knocked-out heads, with a way back.
void DrawModelSourcePanel(AppState& s);
void DrawKnockoutBanner(AppState& s);
// A view's own "layer" slider over a trained model's layers (the choice's, which every
// view follows), when it has more than one; else nothing.
void LayerSelector(AppState& s, const char* id);
// For a view that needs a trained model and has none: the "Use mhaviz-small" button (its
// probe named `probe`), which makes the shipped model the source, and why that model did
// not load when it did not.
void UseSmallModelButton(AppState& s, const char* probe);
void DrawControlsPanel(AppState& s);  // panels/controls.cpp
// panels/controls.cpp: why the configuration cannot run, with one-click fixes (over
// the results, which keep the last valid maps dimmed).
void DrawConfigError(AppState& s);
// The configuration error as DrawConfigError shows it: the core's, in the interface's
// language (--dump-state's "error_shown").
std::string ShownConfigError(const AppState& s);
// panels/controls.cpp: the next valid num_heads for d_model in direction `dir` (+1 or
// -1), as the slider steps; num_heads itself at either end.
int StepHeads(int d_model, int num_heads, int dir);
void DrawExportPanel(AppState& s);         // panels/export_panel.cpp
void DrawFlowPanel(AppState& s);           // panels/flow.cpp: table + block diagram
float FlowPanelHeight(const AppState& s);  // panels/flow.cpp: the height that shows the whole table
// panels/flow.cpp: the table and the diagram in `avail` (the panel's and the Shape flow
// view's body).
void DrawFlowBody(AppState& s, ImVec2 avail);
// panels/flow.cpp: the trace's shape-flow rows as the window shows them (translated
// parameters, the trained model's input row, the batch of s.ui.flow_batch).
std::vector<FlowRow> ShownFlow(const AppState& s, const Trace& t);
// panels/flow_diagram.cpp: the shape flow's block diagram of trace `t` with the rows
// `flow` (ShownFlow's: the batch the window shows), filling `size` (taller where its
// labels need it: the panel then scrolls with the wheel).
void DrawFlowDiagram(AppState& s, const Trace& t, const std::vector<FlowRow>& flow, ImVec2 size);
void DrawStatusBar(AppState& s);  // panels/status.cpp
// panels/status.cpp: where the weights come from, as a coloured tag on the current line
// ("random weights (untrained)" in amber, "trained: mhaviz-small · layer 1" in green),
// so that no heatmap of untrained heads passes for a finding.
void DrawWeightsBadge(AppState& s);

// The results area (a tab per view) and the View menu's entries come from the
// registry of views: gui/views/registry.hpp.
void DrawBlockControls(AppState& s);  // panels/block.cpp: attention only / full encoder block

// The example sentences offered in the Sentence panel.
const char* const* ExampleSentences(int* count);

}  // namespace mha::gui
