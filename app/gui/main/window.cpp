#include "gui/main/window.hpp"

#include <algorithm>
#include <cmath>
#include <cfloat>
#include <cstdint>
#include <iostream>
#include <string>

#include <glad/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include "gui/main/gui_flags.hpp"
#include "gui/sources/recompute.hpp"
#include "gui/state/settings.hpp"
#include "gui/style/fonts.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

std::string g_glfw_error;

// The font atlas texture the nearest-sampling parameters were set on.
ImTextureID g_font_texture = nullptr;

// Glyphs are pixel-snapped and not oversampled, so nearest sampling draws them the
// same as linear, at half the cost on a software rasteriser.
void UseNearestSamplingForFonts() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.Fonts->TexID == g_font_texture) return;
  g_font_texture = io.Fonts->TexID;
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<std::intptr_t>(g_font_texture)));
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glBindTexture(GL_TEXTURE_2D, 0);
}

}  // namespace

GLFWwindow* OpenWindow(int win_w, int win_h, bool exact_size) {
  glfwSetErrorCallback([](int, const char* d) { g_glfw_error = d ? d : ""; });
  if (!glfwInit()) {
    std::cerr << "mhaviz: error: cannot open a window (" << g_glfw_error
              << "). The GUI needs a display: is DISPLAY set? 'mhaviz trace' and 'mhaviz export' work without one.\n";
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  // Window sizes are pixels (flags and saved settings alike); only the default
  // grows with the monitor's content scale, so HiDPI screens get the same layout.
  GLFWmonitor* mon = glfwGetPrimaryMonitor();
  if (win_w <= 0 || win_h <= 0) {
    float xs = 1.0f, ys = 1.0f;
    if (mon) glfwGetMonitorContentScale(mon, &xs, &ys);
    xs = std::clamp(xs, 1.0f, 4.0f);
    win_w = static_cast<int>(1600 * xs);
    win_h = static_cast<int>(1000 * xs);
  }
  if (!exact_size && mon) {
    // Never open bigger than the screen.
    int mx = 0, my = 0, mw = 0, mh = 0;
    glfwGetMonitorWorkarea(mon, &mx, &my, &mw, &mh);
    if (mw > 0 && mh > 0) {
      win_w = std::min(win_w, mw);
      win_h = std::min(win_h, mh);
    }
  }
  GLFWwindow* window = glfwCreateWindow(win_w, win_h, "mhaviz - multi-head attention", nullptr, nullptr);
  if (!window) {
    std::cerr << "mhaviz: error: could not create an OpenGL 3.3 core window (" << g_glfw_error
              << "). mhaviz needs OpenGL 3.3; update the graphics driver, or use 'mhaviz trace' / 'mhaviz export'.\n";
    glfwTerminate();
    return nullptr;
  }
  // Resizing by hand is held to the cap --width and --height have (main/gui_flags.hpp).
  glfwSetWindowSizeLimits(window, GLFW_DONT_CARE, GLFW_DONT_CARE, kMaxWindowWidth, kMaxWindowHeight);
  glfwMakeContextCurrent(window);
  const int gl_version = gladLoadGL(glfwGetProcAddress);
  if (!gl_version || GLAD_VERSION_MAJOR(gl_version) * 10 + GLAD_VERSION_MINOR(gl_version) < 33) {
    std::cerr << "mhaviz: error: OpenGL 3.3 is not available (got "
              << (gl_version ? std::to_string(GLAD_VERSION_MAJOR(gl_version)) + "." +
                                   std::to_string(GLAD_VERSION_MINOR(gl_version))
                             : std::string("none"))
              << "). Update the graphics driver, or use 'mhaviz trace' / 'mhaviz export'.\n";
    glfwDestroyWindow(window);
    glfwTerminate();
    return nullptr;
  }
  glfwSwapInterval(exact_size ? 0 : 1);
  return window;
}

void InitImGui(GLFWwindow* window, AppState& s, const std::string& ini_path, InputQueue& queue) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // saved by us, atomically
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  RegisterIniHandler(s);
  if (!ini_path.empty()) LoadIni(ini_path);
  ImGui_ImplGlfw_InitForOpenGL(window, false);
  queue.Install(window);
  // A window that opens under the pointer gets no enter event, and ImGui's GLFW
  // backend ignores the mouse of an unfocused window it was not told about (no
  // window manager to focus it, e.g. under Xvfb).
  ImGui_ImplGlfw_CursorEnterCallback(window, glfwGetWindowAttrib(window, GLFW_HOVERED));
  ImGui_ImplOpenGL3_Init("#version 330");
  HeatmapTextures::WarmUp();
  float xs = 1.0f, ys = 1.0f;
  glfwGetWindowContentScale(window, &xs, &ys);
  s.ui.content_scale = std::clamp(xs, 0.5f, 4.0f);
  RebuildFonts(s, false);
}

void RebuildFonts(AppState& s, bool device_ready) {
  const float scale = s.ui.content_scale * s.ui.text_size / 100.0f;
  const float px = std::round(17.0f * scale);
  const Fonts f = LoadFonts(px, &s.ui.font_notice, s.ui.want_label_font);
  s.ui.font_bold = f.bold;
  s.ui.font_small = f.small;
  s.ui.font_label = f.label;
  s.ui.font_numbers = f.numbers;
  s.ui.font_path = f.path;
  ApplyTheme(s.ui.dark, scale);
  if (device_ready) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  s.ui.fonts_dirty = false;
}

void BeginFrame(GLFWwindow* window, AppState& s, bool automation) {
  float xs = 1.0f, ys = 1.0f;
  glfwGetWindowContentScale(window, &xs, &ys);
  xs = std::clamp(xs, 0.5f, 4.0f);
  if (xs != s.ui.content_scale) {
    s.ui.content_scale = xs;
    s.ui.fonts_dirty = true;
  }
  // View > Language: switched between frames, so one frame never mixes two languages.
  if (!s.ui.lang_request.empty()) {
    const std::string& problem = i18n::CatalogProblem();
    if (const auto lang = i18n::Parse(s.ui.lang_request);
        lang && !i18n::SetLanguage(*lang) && !problem.empty() &&
        std::none_of(s.ui.notices.begin(), s.ui.notices.end(), [&](const Notice& n) { return n.English() == problem; }))
      s.ui.notices.push_back(Notice("%s", {problem}));  // English: the catalogue is what is broken
    s.ui.lang_request.clear();
  }
  if (WideGlyphsPending()) s.ui.fonts_dirty = true;  // a label uses a new emoji: its glyph
  if (s.ui.fonts_dirty) {
    RebuildFonts(s, true);
    g_font_texture = nullptr;  // a new atlas texture (GL may reuse the old name)
  }
  ImGui_ImplOpenGL3_NewFrame();
  UseNearestSamplingForFonts();
  ImGui_ImplGlfw_NewFrame();
  // The buttons as the input queue hands them out (input_queue.hpp), not as GLFW has them.
  if (const auto* queue = static_cast<const InputQueue*>(glfwGetWindowUserPointer(window))) queue->SetMouseButtons();
  // Automation renders what the flags say, not what the pointer of the test
  // display happens to hover.
  if (automation) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  ImGui::NewFrame();
}

void RenderFrame(GLFWwindow* window, int* fb_w, int* fb_h) {
  glfwGetFramebufferSize(window, fb_w, fb_h);
  glViewport(0, 0, *fb_w, *fb_h);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void CloseWindow(GLFWwindow* window, AppState& s) {
  s.ui.textures.Release();
  ReleaseWorker(s);
  s.ui.matrices.Release();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

}  // namespace mha::gui
