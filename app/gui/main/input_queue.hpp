// Dear ImGui 1.86 keeps key state, not key events: a key pressed and released
// between two frames never shows as pressed, so fast typing loses Backspace and
// Enter. This queue holds GLFW key and character events and hands them to ImGui a
// few at a time, so every press is seen by at least one frame, in order.
#pragma once

#include <deque>

struct GLFWwindow;

namespace mha::gui {

class InputQueue {
 public:
  // Installs GLFW callbacks on `window` (ImGui's GLFW backend must be initialised
  // with install_callbacks = false). Mouse, scroll and focus events go straight to
  // the backend, which already latches quick clicks; keys and characters are queued.
  void Install(GLFWwindow* window);

  // Feeds queued events to ImGui for this frame, stopping before an event that
  // would undo one already fed (the release of a key pressed this frame), or a
  // character that follows a non-text key, so ImGui sees them in the typed order.
  // Call once per frame, before ImGui::NewFrame.
  void Drain(GLFWwindow* window);

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
  void NoteActivity() { activity_ = true; }

 private:
  struct Event {
    bool is_char = false;
    int key = 0, scancode = 0, action = 0, mods = 0;
    unsigned int codepoint = 0;
  };
  std::deque<Event> events_;
  bool activity_ = false;
};

}  // namespace mha::gui
