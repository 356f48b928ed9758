// mhaviz gui: the main loop, in the shape of Dear ImGui's example_glfw_opengl3/main.cpp:
// set up, loop { poll, new frame, draw, render, swap }, tear down. The flags are in
// main/gui_flags.cpp, the window in window.cpp, saving settings in settings_writer.cpp and
// the automation flags (--frames, --screenshot, --stats, ...) in automation_session.cpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <glad/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>

#include "gui/main/automation_session.hpp"
#include "gui/main/gui_flags.hpp"
#include "gui/main/frame.hpp"
#include "gui/main/input_queue.hpp"
#include "gui/main/tour_editor.hpp"
#include "gui/main/tour_play.hpp"
#include "gui/main/run.hpp"
#include "gui/main/window.hpp"
#include "gui/sources/exports.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/state/textures.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/recompute.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/state/app_state.hpp"
#include "gui/state/settings.hpp"
#include "gui/state/settings_writer.hpp"
#include "gui/views/heatmaps/heatmaps.hpp"
#include "io/files.hpp"
#include "gui/views/registry.hpp"
#include "options/timing.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

using Clock = std::chrono::steady_clock;

// The first stop signal, or 0.
std::atomic<int> g_signal{0};

// The first signal closes the window as Ctrl+Q does (after a running recompute: the
// settings and the automation outputs are written), and the app then exits 128 +
// signal, as every command does when stopped; a second stops at once, removing the
// temporary files of a write in progress.
void OnSignal(int sig) {
  int none = 0;
  if (g_signal.compare_exchange_strong(none, sig)) return;
  io::RemoveStagedFiles();
  std::_Exit(128 + sig);
}

// The state the window opens with: the defaults, then the saved settings (unless
// --no-settings or automation), then the flags. Returns the saved window size.
void LoadStartState(const GuiArgs& a, const SettingsWriter& settings, AppState& s, int* win_w, int* win_h) {
  s.ui.churn = a.gui.churn;
  s.recompute.primers = ViewPrimers();  // what the views compute beside a big trace
  s.choice.sentence = options::kDefaultSentence;
  std::snprintf(s.ui.exports.path.data(), s.ui.exports.path.size(), "mhaviz-heatmaps.png");
  std::snprintf(s.ui.exports.screenshot_path.data(), s.ui.exports.screenshot_path.size(), "mhaviz-window.png");
  SyncBuffersFromChoice(s);
  if (!settings.settings_path().empty()) {
    for (Notice& n : LoadAppSettings(settings.settings_path(), s, win_w, win_h)) s.ui.notices.push_back(std::move(n));
  }
  ApplyRunOptions(a.run, s);  // flags override the saved settings
  ApplyTeachFlags(a.teach, s);
  if (!ApplyLanguageModelFlag(a.model, s)) ApplyModelFlags(a.model, s);
  ApplyAblateFlags(a.run, a.model.model, s);
  if (a.gui.text_size) s.ui.text_size = a.gui.text_size;
  if (a.gui.width) *win_w = a.gui.width;
  if (a.gui.height) *win_h = a.gui.height;
  // The language: --lang, else the one chosen in View > Language, else the environment's.
  i18n::Init();
  const std::string lang = !a.gui.lang.empty() ? a.gui.lang : s.ui.lang_chosen;
  if (!i18n::SetLanguage(lang.empty() ? i18n::FromEnvironment() : i18n::Parse(lang).value_or(i18n::Lang::kEnglish)) &&
      !i18n::CatalogProblem().empty())
    s.ui.notices.push_back(Notice("%s", {i18n::CatalogProblem()}));  // English: the catalogue is what is broken
  // A saved size is held to the same cap as --width and --height.
  *win_w = std::min(*win_w, kMaxWindowWidth);
  *win_h = std::min(*win_h, kMaxWindowHeight);
}

// Waits for input while nothing moves (a minimised window, or three quiet seconds),
// else polls. Returns false if the window is minimised: no frame to draw.
// A window driven through --probe (a test, a script) never spins: under Xvfb there is no
// vsync, so polling drew as fast as the CPU allowed, and two driven windows took both
// cores from the commands their tests run beside them. It draws at most 60 frames a
// second, and 20 when idle (not 4), so a driver's wait for a few frames is short.
constexpr double kDrivenBusyWait = 1.0 / 60, kDrivenIdleWait = 1.0 / 20;

bool PollEvents(GLFWwindow* window, const AppState& s, InputQueue& queue, bool automation, bool driven,
                Clock::time_point* last_activity) {
  if (glfwGetWindowAttrib(window, GLFW_ICONIFIED)) {
    glfwWaitEventsTimeout(0.5);
    return false;
  }
  const bool idle = !automation && !s.ui.churn && !s.dirty && queue.Empty() && !ViewsAnimating(s) &&
                    !RecomputePending(s) && Clock::now() - *last_activity > std::chrono::seconds(3);
  if (idle)
    glfwWaitEventsTimeout(driven ? kDrivenIdleWait
                                 : 0.25);  // wakes at once on input; slow ticks keep the caret blinking
  else if (driven && !automation)
    glfwWaitEventsTimeout(kDrivenBusyWait);
  else
    glfwPollEvents();
  if (queue.TakeActivity()) *last_activity = Clock::now();
  queue.Drain(window);
  return true;
}

// The screenshot the File menu asked for, from the frame just rendered.
void TakeRequestedScreenshot(AppState& s, int fb_w, int fb_h) {
  if (s.ui.pending.screenshot.empty()) return;
  try {
    WriteScreenshot(s.ui.pending.screenshot, fb_w, fb_h);
    s.ui.exports.message = "Saved a " + std::to_string(fb_w) + " x " + std::to_string(fb_h) + " screenshot to " +
                           AbsolutePath(s.ui.pending.screenshot);
    s.ui.exports.message_ok = true;
  } catch (const std::exception& e) {
    s.ui.exports.message = std::string("Screenshot failed: ") + e.what();
    s.ui.exports.message_ok = false;
  }
  s.ui.pending.screenshot.clear();
}

// --lesson-export: each step is saved once its picture is finished (no recompute
// pending, no view still drawing, a few frames for the layout to settle), then the next
// step is shown; after the last the window closes.
struct LessonExport {
  std::string dir;
  int settled = 0;
  bool failed = false;
};

void StepLessonExport(AppState& s, LessonExport& e) {
  if (e.dir.empty() || !s.ui.tour.active) return;
  const bool ready = !s.dirty && !RecomputePending(s) && s.ui.report.views_busy == 0;
  e.settled = ready ? e.settled + 1 : 0;
  if (e.settled == 3) {
    char name[32];
    std::snprintf(name, sizeof name, "step-%02d.png", s.ui.tour.step + 1);
    s.ui.pending.screenshot = (std::filesystem::path(e.dir) / name).string();
    return;
  }
  if (e.settled < 4) return;
  if (!s.ui.exports.message_ok) {
    std::cerr << "mhaviz gui: error: " << s.ui.exports.message << "\n";
    e.failed = true;
    s.ui.quit = true;
    return;
  }
  std::cout << s.ui.exports.message << "\n";
  e.settled = 0;
  if (s.ui.tour.step + 1 < static_cast<int>(s.ui.tour.lesson.steps.size()))
    ApplyTourStep(s, s.ui.tour.step + 1);
  else
    s.ui.quit = true;
}

int RunWindow(const GuiArgs& a) {
  // Set up.
  const bool use_settings = a.gui.settings == 1 || (a.gui.settings == -1 && !a.gui.automation());
  SettingsWriter settings(use_settings ? ConfigDir() : std::string());
  Automation automation(a.gui);
  AppState s;
  int win_w = 0, win_h = 0;  // pixels; 0 = the default for the monitor
  LoadStartState(a, settings, s, &win_w, &win_h);
  // A lesson that cannot be played is refused before the window opens (exit 2).
  std::optional<tour::Lesson> lesson;
  if (!a.gui.lesson.empty()) {
    try {
      lesson = LoadTourLesson(a.gui.lesson);
    } catch (const tour::LessonError& e) {
      throw options::UsageError(e.what());
    }
  }
  GLFWwindow* window = OpenWindow(win_w, win_h, automation.on());
  if (!window) return 1;
  InputQueue queue;
  InitImGui(window, s, settings.ini_path(), queue);
  // Not focused on start: with its text selected, a stray key would replace the sentence.
  s.ui.focus_sentence = false;
  if (a.gui.enlarge >= 0) s.ui.enlarged = std::min(a.gui.enlarge, s.choice.cfg.num_heads);
  SetPresentation(s, a.gui.present);
  if (lesson) StartTour(s, std::move(*lesson), a.gui.lesson_step - 1);
  if (!a.gui.lesson_record.empty()) StartDraft(a.gui.lesson_record);
  LessonExport lesson_export{a.gui.lesson_out};
  if (!a.gui.colour_scale.empty()) render::ParseColourScale(a.gui.colour_scale, &s.ui.colour_scale);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  // Main loop.
  int status = 0, frame = 0, fb_w = 0, fb_h = 0;
  auto last_activity = Clock::now();
  while (!glfwWindowShouldClose(window) && !s.ui.quit && !g_signal) {
    if (!PollEvents(window, s, queue, automation.on(), !a.gui.probe.empty(), &last_activity)) continue;
    FrameTimes t;
    t.start = Clock::now();
    t.cpu_start_ms = ProcessCpuMs();
    t.thread_start_ms = options::ThreadCpuMs();

    BeginFrame(window, s, automation.on());
    // ImGui's log records every text item drawn (labels, text, tabs); depth 0 so that
    // logging opens no tree node the learner did not open. The log ends with the main
    // window and hands its text to the clipboard function, which is ours for the frame.
    const bool capture_text = !a.gui.dump_state.empty();
    ImGuiIO& io = ImGui::GetIO();
    const auto clip_fn = io.SetClipboardTextFn;
    void* const clip_data = io.ClipboardUserData;
    if (capture_text) {
      s.ui.shown_text.clear();
      io.SetClipboardTextFn = [](void* user, const char* text) { static_cast<std::string*>(user)->append(text); };
      io.ClipboardUserData = &s.ui.shown_text;
      ImGui::LogToClipboard(0);
    }
    DrawFrame(s);
    if (capture_text) {
      if (GImGui->LogEnabled) ImGui::LogFinish();
      io.SetClipboardTextFn = clip_fn;
      io.ClipboardUserData = clip_data;
    }
    ImGui::Render();
    t.ui = Clock::now();
    t.thread_ui_ms = options::ThreadCpuMs();
    RenderFrame(window, &fb_w, &fb_h);
    AfterRender(s, fb_w, fb_h);  // a big recompute starts here, with a picture of this frame
    t.draw = Clock::now();
    t.thread_draw_ms = options::ThreadCpuMs();
    ++frame;

    // Automation's last frame shows a finished recompute and finished pictures (more
    // frames while a recompute runs or a view is still drawing its picture).
    const bool last = automation.IsLastFrame(frame, s.ui.quit || g_signal || glfwWindowShouldClose(window),
                                             (RecomputePending(s) || s.ui.report.views_busy > 0) && !s.ui.churn);
    if (last) status |= automation.AfterLastFrame(s, fb_w, fb_h);
    StepLessonExport(s, lesson_export);
    TakeRequestedScreenshot(s, fb_w, fb_h);
    t.swap_start = Clock::now();
    t.thread_swap_ms = options::ThreadCpuMs();
    glfwSwapBuffers(window);
    t.end = Clock::now();
    t.upload_ms = TakeUploadCpuMs();

    int w = 0, h = 0;
    glfwGetWindowSize(window, &w, &h);
    automation.AfterFrame(s, t, frame, w, h);
    settings.AfterFrame(s, window);
    if (last) break;
  }

  // Tear down.
  FinishRecompute(s);  // --dump-state reads the result
  settings.Flush(s, window);
  glfwGetFramebufferSize(window, &fb_w, &fb_h);
  status |= automation.Finish(s, frame, fb_w, fb_h, reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  CloseWindow(window, s);
  // Stopped by a signal: its status, whatever else happened (a write it abandoned, a
  // FIFO nobody read, reports its error above but is not a failure of its own).
  if (lesson_export.failed) status |= 1;
  return g_signal ? 128 + g_signal.load() : status;
}

}  // namespace

int Run(const std::vector<std::string>& args) {
  return options::Guard("gui", [&] {
    const GuiArgs a = ParseGuiArgs(args);
    if (a.help) {
      std::cout << a.help_text;
      return 0;
    }
    return RunWindow(a);
  });
}

}  // namespace mha::gui
