// The Train view's parts (views/train/train.cpp lays them out): the curves of every kept
// run, the timeline over the shown run's snapshots, and the layers x heads grid.
#pragma once

#include <string>

#include <imgui.h>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// What target k of a task predicts, in a few words ("2 back").
std::string TargetName(const TaskSpec& t, int k);
// The colour of run number `id` in the curves and the legend.
ImU32 RunColour(int id);

void DrawTrainCurves(AppState& s);    // train_plots.cpp
void DrawTrainTimeline(AppState& s);  // train_heads.cpp
void DrawHeadsGrid(AppState& s);      // train_heads.cpp: the grid, or the head opened large

}  // namespace mha::gui
