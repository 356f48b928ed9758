// The one state of the desktop app, in four parts, and one path through them:
//
//   widget ──► Choice ──► the one recompute ──► Result ──► every view reads Choice +
//   Result, draws, and writes only Choice and its own entry of the ViewStore
//
//   - `choice`: what the learner chose (choice.hpp), the only input of the computation;
//     a lesson step sets it whole. A widget that edits it sets `dirty`.
//   - `result`: what the core computed from it (result.hpp); only the recompute writes it.
//   - `ui`: what only the window cares about (ui_state.hpp).
//   - `views`: each view's own state, its type declared in the view's own file
//     (view_store.hpp).
// `recompute` is the recompute's own machinery (recompute_state.hpp), no view's business.
#pragma once

#include <string>

#include "gui/state/choice.hpp"
#include "gui/state/recompute_state.hpp"
#include "gui/state/result.hpp"
#include "gui/state/ui_state.hpp"
#include "gui/state/view_store.hpp"

namespace mha::gui {

struct AppState {
  Choice choice;
  Result result;
  Ui ui;
  ViewStore views;
  bool dirty = true;  // a widget edited `choice`: the one recompute runs before the next frame
  RecomputeState recompute;
};

// Whether a trained model drives the views (the model source's kind).
inline bool UsingTrainedModel(const AppState& s) {
  return s.choice.source.kind == ModelSourceKind::Trained && s.choice.source.model;
}

// Switches the results area to the view called `name` (its --view name) next frame.
inline void ShowView(AppState& s, const std::string& name) {
  s.choice.view = name;
  s.ui.select_view = true;
}

// Copies choice.sentence / choice.memory into the text buffers (after loading
// settings or flags), truncating at a UTF-8 boundary to kSentenceCap.
void SyncBuffersFromChoice(AppState& s);

}  // namespace mha::gui
