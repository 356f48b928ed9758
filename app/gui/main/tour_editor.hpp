// Writing a lesson in the app: Lesson > New lesson... opens an editor window; "Add this
// as a step" records what the window shows (the view, the sentence, the model or preset,
// the sliders, the layer, head and query, the knocked-out heads, the Flash tile, the
// Generate pieces) as a step; the editor types its captions and question, reorders and
// deletes steps, plays the lesson through the player and saves it atomically.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// The lesson being written: steps recorded from the window's state, captions and
// questions typed in the editor, saved atomically where `path` says. One per app, as
// the window is: it lives beside AppState (which every GUI file includes) rather than
// in it, so the editor's own state changes rebuild the editor alone.
struct TourDraft {
  bool editing = false;  // the editor window is open
  tour::Lesson lesson;   // its title and the steps recorded so far
  int selected = -1;     // the step the editor shows (-1: none)
  std::string path;      // where Save writes
  std::string message;   // the last save's outcome, or why a step could not be recorded
  bool message_ok = false;
  std::string saved;   // the path last saved to ("" until a save succeeds)
  int saves = 0;       // successful saves so far
  float footer_h = 0;  // the file row's height last frame: it stays in view under the fields
  // Frames left to scroll the body to a step just recorded (its caption) or to a question
  // just asked for (its fields): a few, since the body's height is known a frame late.
  int show_step = 0, show_question = 0;
};
TourDraft& Draft();

// A new, empty lesson in the editor, saving to `path` ("" until one is typed).
void StartDraft(std::string path);
// Records the window's state as the lesson's next step (after the selected one) and
// selects it; a state the lesson format cannot hold is refused with the editor's message.
void AddDraftStep(AppState& s);
// The editor window (while a lesson is being written and none plays presented).
void DrawTourEditor(AppState& s);
// The Lesson menu's items for writing one.
void DrawTourEditorMenu(AppState& s);
// --probe's "lesson_draft": editing, steps (each's view, sentence, model, num_heads,
// layer, head, knocked-out heads, caption, whether it asks), selected, path, saved,
// saves, message, message_ok.
nlohmann::json TourDraftProbeJson();

}  // namespace mha::gui
