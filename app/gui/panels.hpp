// One panel per file, each a free function that draws into the current ImGui
// window and edits the AppState. Panels that edit the choice do `s.dirty |= ...`;
// none of them runs the core.
#pragma once

#include "gui/app_state.hpp"

namespace mha::gui {

void DrawSentencePanel(AppState& s);   // panel_sentence.cpp
void DrawControlsPanel(AppState& s);   // panel_controls.cpp
void DrawExportPanel(AppState& s);     // panel_export.cpp
void DrawFlowPanel(AppState& s);       // panel_flow.cpp: table + block diagram
float FlowPanelHeight(const AppState& s);  // panel_flow.cpp: the height that shows the whole table
void DrawHeatmapsPanel(AppState& s);   // panel_heatmaps.cpp
void DrawStatusBar(AppState& s);       // panel_status.cpp

// The results area: one tab per view, the heatmaps first (panel_views.cpp), and the
// teaching views, one idea of the lesson each, one per file.
void DrawResultsArea(AppState& s);     // panel_views.cpp: the tab bar
void DrawViewMenuItems(AppState& s);   // panel_views.cpp: the View menu's entries
void DrawQueryView(AppState& s);       // panel_query.cpp: one query, step by step
void DrawScalingView(AppState& s);     // panel_scaling.cpp: scores, softmax, sqrt(d_k), temperature
void DrawHeadsView(AppState& s);       // panel_heads.cpp: head metrics and similarity
void DrawHeadCountView(AppState& s);   // panel_head_count.cpp: head count vs parameters
void DrawGqaView(AppState& s);         // panel_gqa.cpp: grouped-query / multi-query attention
void DrawCrossView(AppState& s);       // panel_cross.cpp: cross- vs self-attention
void DrawLessonView(AppState& s);      // panel_lesson.cpp: lesson preset, weight editor, .npz files
void DrawInspectorView(AppState& s);   // panel_inspector.cpp: any tensor of the trace
void DrawBlockControls(AppState& s);   // panel_block.cpp: attention only / full encoder block

// The example sentences offered in the Sentence panel.
const char* const* ExampleSentences(int* count);

}  // namespace mha::gui
