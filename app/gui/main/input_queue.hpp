// Dear ImGui 1.86 keeps key state, not key events: a key pressed and released
// between two frames never shows as pressed, so fast typing loses Backspace and
// Enter. This queue holds GLFW key and character events and hands them to ImGui a
// few at a time, so every press is seen by at least one frame, in order.
//
// Mouse buttons too. ImGui 1.86 does not take a click on a tab (any item that allows
// overlap) unless the pointer hovered it the frame before; a pointer that moves and
// presses within one frame (a quick click on a slow frame: 270 ms frames lost 10 of
// 12 tab clicks) is ignored. So a button press reaches ImGui the frame after it
// arrived, when ImGui has seen the pointer where it was pressed, and each button
// changes at most once a frame, so a press and its release are never one frame.
// Buttons and keys share one queue, in the order they came, so a Ctrl+click keeps its
// Ctrl and a key typed after a click reaches the field the click focused. A button
// change reaches ImGui with the pointer where it happened (the pointer may have moved
// on by then: the start of a quick drag must land on the splitter it started on).
#pragma once

#include <deque>

struct GLFWwindow;

namespace mha::gui {

class InputQueue {
 public:
  // Installs GLFW callbacks on `window` (ImGui's GLFW backend must be initialised
  // with install_callbacks = false). Scroll, cursor and focus events go straight to
  // the backend; keys, characters and mouse buttons are queued.
  void Install(GLFWwindow* window);

  // Feeds queued events to ImGui for this frame, stopping before an event that
  // would undo one already fed (the release of a key pressed this frame), or a
  // character that follows a non-text key, so ImGui sees them in the typed order.
  // Call once per frame, before ImGui::NewFrame.
  void Drain(GLFWwindow* window);
  // Sets ImGui's mouse buttons to the queue's (after ImGui_ImplGlfw_NewFrame, which
  // reads them from GLFW, and before ImGui::NewFrame).
  void SetMouseButtons() const;

  bool Empty() const { return events_.empty(); }
  // Any input arrived since the last call (used to decide when the app may sleep).
  bool TakeActivity() {
    const bool a = activity_;
    activity_ = false;
    return a;
  }

  // Called by the GLFW callbacks.
  void PushKey(int key, int scancode, int action, int mods);
  void PushChar(unsigned int c);
  void PushButton(int button, int action);
  void NoteCursor(double x, double y) {
    activity_ = true;
    x_ = x;
    y_ = y;
    have_pos_ = true;
  }
  bool HavePointer() const { return have_pos_; }
  void NoteActivity() { activity_ = true; }

 private:
  enum class Kind { Key, Char, Button };
  struct Event {
    Kind kind = Kind::Key;
    int key = 0, scancode = 0, action = 0, mods = 0;  // Button: key is the button
    unsigned int codepoint = 0;
    bool waited = false;  // a frame has passed since it arrived
    double x = 0, y = 0;  // Button: the pointer when it happened
  };
  std::deque<Event> events_;
  static constexpr int kButtons = 5;  // ImGui's mouse buttons
  bool down_[kButtons] = {};
  double x_ = 0, y_ = 0;    // the pointer, as the events so far left it
  bool have_pos_ = false;   // a cursor event has come (before one, GLFW is asked)
  bool at_button_ = false;  // this frame hands over a button change, at (button_x_, button_y_)
  double button_x_ = 0, button_y_ = 0;
  bool activity_ = false;
};

}  // namespace mha::gui
