// mhaviz gui: the window and the main loop (in the style of Dear
// ImGui's example_glfw_opengl3/main.cpp), plus the automation mode used by tests,
// docs and benchmarks (--frames, --screenshot, --stats).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cfloat>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <glad/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <nlohmann/json.hpp>

#include "gui/app_state.hpp"
#include "gui/automation.hpp"
#include "gui/export_actions.hpp"
#include "gui/fonts.hpp"
#include "gui/frame.hpp"
#include "gui/gui.hpp"
#include "gui/gui_flags.hpp"
#include "gui/input_queue.hpp"
#include "gui/settings.hpp"
#include "gui/theme.hpp"
#include "io/files.hpp"

namespace mha::gui {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_stop{false};
std::string g_glfw_error;

void OnSignal(int) { g_stop = true; }

double CpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

void RebuildFonts(AppState& s, bool device_ready) {
  const float scale = s.ui.content_scale * s.ui.text_size / 100.0f;
  const float px = std::round(17.0f * scale);
  const Fonts f = LoadFonts(px, &s.ui.font_notice, s.ui.want_label_font);
  s.ui.font_bold = f.bold;
  s.ui.font_small = f.small;
  s.ui.font_label = f.label;
  s.ui.font_path = f.path;
  ApplyTheme(s.ui.dark, scale);
  if (device_ready) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  s.ui.fonts_dirty = false;
}

int RunWindow(const GuiArgs& a) {
  const GuiOptions& g = a.gui;
  AppState s;
  s.churn = g.churn;
  s.choice.sentence = cli::kDefaultSentence;
  std::snprintf(s.exp.path.data(), s.exp.path.size(), "mhaviz-heatmaps.png");
  std::snprintf(s.exp.screenshot_path.data(), s.exp.screenshot_path.size(), "mhaviz-window.png");
  SyncBuffersFromChoice(s);

  const bool use_settings = g.settings == 1 || (g.settings == -1 && !g.automation());
  const std::string config_dir = use_settings ? ConfigDir() : std::string();
  const std::string settings_path = config_dir.empty() ? "" : config_dir + "/settings.json";
  const std::string ini_path = config_dir.empty() ? "" : config_dir + "/imgui.ini";
  int win_w = 0, win_h = 0;  // pixels; 0 = the default for the monitor
  if (!settings_path.empty()) {
    const std::string notice = LoadAppSettings(settings_path, s, &win_w, &win_h);
    if (!notice.empty()) s.ui.notices.push_back(notice);
  }
  ApplyRunOptions(a.run, s);  // flags override the saved settings
  ApplyTeachFlags(a.teach, s);
  if (g.width) win_w = g.width;
  if (g.height) win_h = g.height;

  // Window and OpenGL 3.3 core context.
  glfwSetErrorCallback([](int, const char* d) { g_glfw_error = d ? d : ""; });
  if (!glfwInit()) {
    std::cerr << "mhaviz: error: cannot open a window (" << g_glfw_error
              << "). The GUI needs a display: is DISPLAY set? 'mhaviz trace' and 'mhaviz export' work without one.\n";
    return 1;
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
  if (!g.automation() && mon) {
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
    return 1;
  }
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
    return 1;
  }
  glfwSwapInterval(g.automation() ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // saved by us, atomically
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  RegisterIniHandler(s);
  if (!ini_path.empty()) LoadIni(ini_path);
  ImGui_ImplGlfw_InitForOpenGL(window, false);
  InputQueue queue;
  queue.Install(window);
  // A window that opens under the pointer gets no enter event, and ImGui's GLFW
  // backend ignores the mouse of an unfocused window it was not told about (no
  // window manager to focus it, e.g. under Xvfb).
  ImGui_ImplGlfw_CursorEnterCallback(window, glfwGetWindowAttrib(window, GLFW_HOVERED));
  ImGui_ImplOpenGL3_Init("#version 330");
  {
    float xs = 1.0f, ys = 1.0f;
    glfwGetWindowContentScale(window, &xs, &ys);
    s.ui.content_scale = std::clamp(xs, 0.5f, 4.0f);
  }
  RebuildFonts(s, false);
  s.ui.focus_sentence = !g.automation();  // screenshots show no selection
  if (g.enlarge >= 0) s.ui.enlarged = std::min(g.enlarge, s.choice.cfg.num_heads);

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  int status = 0;
  int frame = 0;
  std::string last_settings;  // what the file holds as far as we know: written at least once
  auto settings_changed_at = Clock::now();
  std::string pending_settings;
  auto last_activity = Clock::now();
  std::string last_probe;
  auto last_probe_write = Clock::now();
  ImTextureID font_texture = nullptr;
  const auto write_settings = [&](bool force) {
    if (settings_path.empty()) return;
    int w = 0, h = 0;
    glfwGetWindowSize(window, &w, &h);
    const std::string now = AppSettingsJson(s, w, h);
    if (now != pending_settings) {
      pending_settings = now;
      settings_changed_at = Clock::now();
    }
    // A second of quiet before writing, so dragging a slider does not write 60 files.
    if (now == last_settings || (!force && Clock::now() - settings_changed_at < std::chrono::seconds(1))) return;
    try {
      std::filesystem::create_directories(config_dir);
      io::WriteFileAtomic(settings_path, now);
      last_settings = now;
    } catch (const std::exception& e) {
      if (force) std::cerr << "mhaviz: warning: could not save settings: " << e.what() << "\n";
    }
  };
  const auto write_ini = [&]() {
    if (ini_path.empty()) return;
    try {
      std::filesystem::create_directories(config_dir);
      io::WriteFileAtomic(ini_path, IniText());
    } catch (const std::exception&) {
      // Losing the layout is harmless; the settings file reports write errors.
    }
    io.WantSaveIniSettings = false;
  };

  while (!glfwWindowShouldClose(window) && !s.quit && !g_stop) {
    // A minimised window has nothing to draw: sleep until something happens.
    if (glfwGetWindowAttrib(window, GLFW_ICONIFIED)) {
      glfwWaitEventsTimeout(0.5);
      continue;
    }
    const bool idle = !g.automation() && !s.churn && !s.dirty && queue.Empty() &&
                      Clock::now() - last_activity > std::chrono::seconds(3);
    if (idle)
      glfwWaitEventsTimeout(0.25);  // wakes at once on input; slow ticks keep the caret blinking
    else
      glfwPollEvents();
    const auto t0 = Clock::now();
    const double cpu0 = CpuMs();
    if (queue.TakeActivity()) last_activity = t0;
    queue.Drain(window);

    float xs = 1.0f, ys = 1.0f;
    glfwGetWindowContentScale(window, &xs, &ys);
    xs = std::clamp(xs, 0.5f, 4.0f);
    if (xs != s.ui.content_scale) {
      s.ui.content_scale = xs;
      s.ui.fonts_dirty = true;
    }
    if (s.ui.fonts_dirty) {
      RebuildFonts(s, true);
      font_texture = nullptr;  // a new atlas texture (GL may reuse the old name)
    }

    ImGui_ImplOpenGL3_NewFrame();
    if (io.Fonts->TexID != font_texture) {
      // Glyphs are pixel-snapped and not oversampled, so nearest sampling draws
      // them the same as linear, at half the cost on a software rasteriser.
      font_texture = io.Fonts->TexID;
      glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<std::intptr_t>(font_texture)));
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      glBindTexture(GL_TEXTURE_2D, 0);
    }
    ImGui_ImplGlfw_NewFrame();
    // Automation renders what the flags say, not what the pointer of the test
    // display happens to hover.
    if (g.automation()) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
    DrawFrame(s);
    ImGui::Render();
    const auto t_ui = Clock::now();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    const auto t_draw = Clock::now();
    ++frame;

    // The last frame: the count is reached, or the window is closing (Ctrl+Q, the
    // close button, SIGTERM); it is still in the back buffer for --screenshot.
    const bool last = (g.automation() && frame >= g.frames) || s.quit || g_stop || glfwWindowShouldClose(window);
    if (last && !g.export_path.empty()) {
      std::snprintf(s.exp.path.data(), s.exp.path.size(), "%s", g.export_path.c_str());
      s.pending.export_png = true;
      // Exports run inside the frame; run this one now on the final trace.
      RunPendingExports(s);
      if (!s.exp.message_ok) {
        std::cerr << "mhaviz gui: error: " << s.exp.message << "\n";
        status = 1;
      }
    }
    if (last && !g.screenshot.empty()) {
      try {
        WriteScreenshot(g.screenshot, fb_w, fb_h);
      } catch (const std::exception& e) {
        std::cerr << "mhaviz gui: error: " << e.what() << "\n";
        status = 1;
      }
    }
    if (!s.pending.screenshot.empty()) {
      try {
        WriteScreenshot(s.pending.screenshot, fb_w, fb_h);
        s.exp.message = "Saved a " + std::to_string(fb_w) + " x " + std::to_string(fb_h) + " screenshot to " +
                        AbsolutePath(s.pending.screenshot);
        s.exp.message_ok = true;
      } catch (const std::exception& e) {
        s.exp.message = std::string("Screenshot failed: ") + e.what();
        s.exp.message_ok = false;
      }
      s.pending.screenshot.clear();
    }
    const auto t_swap0 = Clock::now();
    glfwSwapBuffers(window);
    const auto t_end = Clock::now();
    auto span = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    if (g.automation()) {
      s.timing.triangles.push_back(ImGui::GetDrawData()->TotalIdxCount / 3.0);
      s.timing.cpu_ms.push_back(CpuMs() - cpu0);
      s.timing.ui_ms.push_back(span(t0, t_ui));
      s.timing.draw_ms.push_back(span(t_ui, t_draw));
      s.timing.swap_ms.push_back(span(t_swap0, t_end));
    }

    const double ms = span(t0, t_end);
    s.timing.last_frame_ms = ms;
    s.timing.frame_ms.push_back(ms);
    if (s.timing.frame_ms.size() > 200000) s.timing.frame_ms.clear();
    if (s.timing.recompute_ms.size() > 200000) s.timing.recompute_ms.clear();
    if (s.timing.upload_ms.size() > 200000) s.timing.upload_ms.clear();

    if (!g.probe.empty() && frame >= 2) {
      int w = 0, h = 0;
      glfwGetWindowSize(window, &w, &h);
      nlohmann::json pj = ProbeJson(s, 0, w, h);
      const std::string body = pj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      // Rewritten when something changed, and every 100 ms anyway so that tests can
      // see frames pass (and know the layout has settled).
      if (body != last_probe || Clock::now() - last_probe_write > std::chrono::milliseconds(100)) {
        last_probe = body;
        last_probe_write = Clock::now();
        pj["frame"] = frame;
        try {
          io::WriteFileAtomic(g.probe, pj.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        } catch (const std::exception& e) {
          std::cerr << "mhaviz gui: warning: " << e.what() << "\n";
        }
      }
    }
    write_settings(false);
    if (io.WantSaveIniSettings) write_ini();
    if (last) break;
  }

  write_settings(true);
  if (!ini_path.empty()) write_ini();

  if (!g.stats.empty()) {
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    const nlohmann::json j =
        StatsJson(s, frame, fb_w, fb_h, reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
    try {
      io::WriteFileAtomic(g.stats, j.dump(2) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "mhaviz gui: error: " << e.what() << "\n";
      status = 1;
    }
  }
  if (!g.dump_state.empty()) {
    try {
      io::WriteFileAtomic(g.dump_state, DumpStateJson(s, frame));
    } catch (const std::exception& e) {
      std::cerr << "mhaviz gui: error: " << e.what() << "\n";
      status = 1;
    }
  }

  s.ui.textures.Release();
  s.teach.textures.Release();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return status;
}

}  // namespace

int Run(const std::vector<std::string>& args) {
  return cli::Guard("gui", [&] {
    const GuiArgs a = ParseGuiArgs(args);
    if (a.help) {
      std::cout << a.help_text;
      return 0;
    }
    return RunWindow(a);
  });
}

}  // namespace mha::gui
