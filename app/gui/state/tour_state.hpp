// A lesson tour being played (main/tour_play.hpp plays it): the lesson, the step shown,
// the class's answers, kept for the session in the running app. Each question's answer
// is computed from the live Result whenever it is asked for, never stored from the file.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tour/tour.hpp"

namespace mha::gui {

struct AppState;

// What the class answered to one step's question.
struct TourGiven {
  bool given = false;
  int option = -1;
  double number = 0;
  int row = -1, col = -1;
};

// What a revealed question shows on the view (the player sets it once a frame from the
// live answer, TourRevealOutline; the views draw it): the answer's cell on the step's
// head's map and the class's own pick when it was another cell, or for a piece the Next
// view's row, or for a carrier the Proof view's row of the phenomenon. `pending`: a
// question about a cell, a piece or a carrier waits for its answer, so a view does not
// point that cell out (nor show that row's pieces: piece_row; nor the row's knock-outs:
// phenomenon) before the class has answered.
struct TourOutline {
  bool on = false;
  bool pending = false;
  std::string view;                  // the step's view
  int head = -1;                     // the map: the step's head
  int row = -1, col = -1;            // the answer: query row, key column
  int pick_row = -1, pick_col = -1;  // the class's pick when it was wrong (-1: none)
  int piece_row = -1;                // top_next: the position `at`, the Next view's row
  std::string piece;                 // ... and the piece that is the answer
  std::string phenomenon;            // carrier: the Proof view's row (pending: its knock-outs hidden)
  bool Cell(int h, int r, int c) const { return on && h == head && r == row && c == col; }
  bool Pick(int h, int r, int c) const { return on && h == head && r == pick_row && c == pick_col; }
};

struct TourPlay {
  bool active = false;
  tour::Lesson lesson;
  int step = 0;
  std::vector<TourGiven> given;  // one per step
  std::array<char, 32> number_buf{};
  std::string lang;  // the interface's language when the caption was drawn ("ko", "en")
  // The step as last applied (to tell whether the learner has wandered off it).
  std::string applied_view, applied_sentence;
  int applied_head = 0, applied_num_heads = 0;
  std::array<char, 1024> open_path{};  // Lesson > Open's file field
  std::string open_error;              // the last lesson that could not be opened
  float band_h = 0;                    // the caption band's height last frame (pixels)
  TourOutline outline;                 // this frame's reveal on the view
};

// The question's answer on the live result (the step's head; the trace shown).
tour::Answer TourAnswer(const AppState& s);
// What the view outlines for the step's revealed question (off: no question, not yet
// answered, a question about no cell or piece, or the learner explored away).
TourOutline TourRevealOutline(const AppState& s);
// Whether the shown state is still the step's (false once the learner explored away).
bool TourOnStep(const AppState& s);
int TourAnswered(const TourPlay& t);
// --probe's "lesson": id, step, steps, questions, answered, and the step's question and
// its computed answer; null when no lesson plays.
nlohmann::json TourProbeJson(const AppState& s);

}  // namespace mha::gui
