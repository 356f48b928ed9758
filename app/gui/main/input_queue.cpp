#include "gui/main/input_queue.hpp"

#include <vector>

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>

namespace mha::gui {
namespace {

InputQueue* QueueOf(GLFWwindow* w) { return static_cast<InputQueue*>(glfwGetWindowUserPointer(w)); }

bool IsModifier(int key) {
  return key == GLFW_KEY_LEFT_SHIFT || key == GLFW_KEY_RIGHT_SHIFT || key == GLFW_KEY_LEFT_CONTROL ||
         key == GLFW_KEY_RIGHT_CONTROL || key == GLFW_KEY_LEFT_ALT || key == GLFW_KEY_RIGHT_ALT ||
         key == GLFW_KEY_LEFT_SUPER || key == GLFW_KEY_RIGHT_SUPER;
}

}  // namespace

void InputQueue::Install(GLFWwindow* window) {
  glfwSetWindowUserPointer(window, this);
  glfwSetKeyCallback(
      window, [](GLFWwindow* w, int key, int sc, int action, int mods) { QueueOf(w)->PushKey(key, sc, action, mods); });
  glfwSetCharCallback(window, [](GLFWwindow* w, unsigned int c) { QueueOf(w)->PushChar(c); });
  glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int b, int a, int) {
    if (!QueueOf(w)->HavePointer()) {
      double x = 0, y = 0;
      glfwGetCursorPos(w, &x, &y);
      QueueOf(w)->NoteCursor(x, y);
    }
    QueueOf(w)->PushButton(b, a);
  });
  glfwSetScrollCallback(window, [](GLFWwindow* w, double x, double y) {
    QueueOf(w)->NoteActivity();
    ImGui_ImplGlfw_ScrollCallback(w, x, y);
  });
  glfwSetCursorPosCallback(window, [](GLFWwindow* w, double x, double y) { QueueOf(w)->NoteCursor(x, y); });
  glfwSetCursorEnterCallback(window, [](GLFWwindow* w, int entered) {
    QueueOf(w)->NoteActivity();
    ImGui_ImplGlfw_CursorEnterCallback(w, entered);
  });
  glfwSetWindowFocusCallback(window, [](GLFWwindow* w, int focused) {
    QueueOf(w)->NoteActivity();
    ImGui_ImplGlfw_WindowFocusCallback(w, focused);
  });
  glfwSetMonitorCallback(ImGui_ImplGlfw_MonitorCallback);
}

void InputQueue::PushKey(int key, int scancode, int action, int mods) {
  activity_ = true;
  events_.push_back(Event{Kind::Key, key, scancode, action, mods, 0});
}

void InputQueue::PushButton(int button, int action) {
  activity_ = true;
  if (button < 0 || button >= kButtons) return;
  Event e{Kind::Button, button, 0, action, 0, 0};
  e.x = x_;
  e.y = y_;
  events_.push_back(e);
}

void InputQueue::SetMouseButtons() const {
  ImGuiIO& io = ImGui::GetIO();
  for (int b = 0; b < kButtons; ++b) io.MouseDown[b] = down_[b];
  if (at_button_) io.MousePos = ImVec2(static_cast<float>(button_x_), static_cast<float>(button_y_));
}

void InputQueue::PushChar(unsigned int c) {
  activity_ = true;
  events_.push_back(Event{Kind::Char, 0, 0, 0, 0, c});
}

void InputQueue::Drain(GLFWwindow* window) {
  at_button_ = false;
  // Keys whose state changed this frame; a second change must wait a frame.
  std::vector<int> touched;
  bool non_text_key_down = false;
  while (!events_.empty()) {
    const Event e = events_.front();
    if (e.kind == Kind::Button) {
      // A press waits until a frame has passed since it arrived (the pointer seen where
      // it pressed). A button change ends the frame's events, so the keys held at a
      // click (Ctrl) are the ones ImGui sees with it, and a press and its release are
      // never one frame.
      if ((e.action == GLFW_PRESS && !e.waited) || !touched.empty()) break;
      down_[e.key] = e.action == GLFW_PRESS;
      at_button_ = true;
      button_x_ = e.x;
      button_y_ = e.y;
      events_.pop_front();
      break;
    }
    if (e.kind == Kind::Char) {
      // ImGui's InputText applies this frame's characters before this frame's key
      // presses; a character typed after Backspace must therefore wait a frame.
      if (non_text_key_down) break;
      ImGui_ImplGlfw_CharCallback(window, e.codepoint);
    } else {
      bool seen = false;
      for (int k : touched) seen |= (k == e.key);
      if (seen) break;
      touched.push_back(e.key);
      if (e.action != GLFW_RELEASE && e.key >= GLFW_KEY_ESCAPE && !IsModifier(e.key)) non_text_key_down = true;
      // GLFW_REPEAT counts as a press: ImGui's own key repeat is driven by time.
      ImGui_ImplGlfw_KeyCallback(window, e.key, e.scancode, e.action, e.mods);
    }
    events_.pop_front();
  }
  for (Event& e : events_) e.waited = true;
}

}  // namespace mha::gui
