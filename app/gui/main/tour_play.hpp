// Playing a lesson tour: a step sets the Choice (view, sentence, model or preset,
// sliders, layer, head, knocked-out heads, the Flash tile, the Generate pieces) and
// presents its view full window; the caption and the question sit in a band under it.
// → / ← step, Esc leaves, "Back to the lesson" puts a step back after exploring.
#pragma once

#include <string>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// Loads a lesson (a built-in's id or a file) checked against the views there are;
// throws tour::LessonError.
tour::Lesson LoadTourLesson(const std::string& id_or_path);
// Starts playing `lesson` at `step` (clamped).
void StartTour(AppState& s, tour::Lesson lesson, int step);
// Shows step `step` of the lesson playing (clamped), as the file sets it.
void ApplyTourStep(AppState& s, int step);
void LeaveTour(AppState& s);
// The lesson's keys (while it plays, before presentation's own): → / ← step, Esc leaves.
// Returns true when it handled the keys (presentation's arrow keys then do nothing).
bool TourKeys(AppState& s);
// The caption band at the bottom of the presented view, `height` pixels; and its height.
float TourBandHeight(const AppState& s);
void DrawTourBand(AppState& s);
// Above the usual layout while a lesson plays but its step was left (F11): the way back.
void DrawTourReturn(AppState& s);
// The Lesson menu: the built-in lessons, a file, and leaving the one that plays.
void DrawTourMenu(AppState& s);

}  // namespace mha::gui
