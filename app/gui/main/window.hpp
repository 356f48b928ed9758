// The window: GLFW with an OpenGL 3.3 core context, Dear ImGui on top of it, and
// the UI fonts (rebuilt when the text size or the monitor's scale changes).
#pragma once

#include "gui/main/input_queue.hpp"
#include "gui/state/app_state.hpp"

struct GLFWwindow;

namespace mha::gui {

// Opens a win_w x win_h pixel window (0: 1600 x 1000 times the monitor's content
// scale), never bigger than the screen unless `exact_size` (automation), with vsync
// unless `exact_size`. On failure says why on stderr and returns nullptr.
GLFWwindow* OpenWindow(int win_w, int win_h, bool exact_size);

// Dear ImGui for `window`: keyboard navigation, imgui.ini from `ini_path` (saved by
// SettingsWriter, not by ImGui), the input queue, the GL3 renderer and the fonts.
void InitImGui(GLFWwindow* window, AppState& s, const std::string& ini_path, InputQueue& queue);

// Loads the fonts at the current text size and content scale, and styles the UI.
void RebuildFonts(AppState& s, bool device_ready);

// Follows the window's content scale (moved to another monitor), rebuilds the fonts
// if needed, and starts the ImGui frame. `automation`: ignore the real pointer.
void BeginFrame(GLFWwindow* window, AppState& s, bool automation);

// Clears to the window background and draws ImGui's draw data; returns the
// framebuffer size through fb_w, fb_h.
void RenderFrame(GLFWwindow* window, int* fb_w, int* fb_h);

// Releases the GL textures, ImGui and the window.
void CloseWindow(GLFWwindow* window, AppState& s);

}  // namespace mha::gui
