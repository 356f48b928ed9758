// The automation flags at work over a run (tests, docs, benchmarks): which frame is
// the last, --export and --screenshot after it, --probe while running, the frame
// times for --stats, and --stats / --dump-state at exit. The reports themselves are
// built in automation/reports.cpp.
#pragma once

#include <chrono>
#include <string>

#include "gui/main/gui_flags.hpp"
#include "gui/state/app_state.hpp"

namespace mha::gui {

// When one frame's phases ended, for the frame-time report.
struct FrameTimes {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start, ui, draw, swap_start, end;
  double cpu_start_ms = 0;     // the process's CPU time at `start`
  double thread_start_ms = 0;  // the window thread's CPU time at `start`
  // The window thread's CPU time at `ui`, `draw` and `swap_start`, and what it spent in
  // texture uploads during the frame (the GL driver's work on this thread).
  double thread_ui_ms = 0, thread_draw_ms = 0, thread_swap_ms = 0, upload_ms = 0;
};
double ProcessCpuMs();

class Automation {
 public:
  explicit Automation(const GuiOptions& g) : g_(g) {}
  // --frames or --stats: fixed frames, exact window size, no idling, no pointer.
  bool on() const { return g_.automation(); }
  // The last frame: the count is reached, or the window is closing (Ctrl+Q, the
  // close button, SIGTERM).
  // `pending`: a recompute or a view's picture is under way; the count waits for it.
  bool IsLastFrame(int frame, bool closing, bool pending = false) const {
    return (on() && frame >= g_.frames && !pending) || closing;
  }

  // After the last frame is drawn (still in the back buffer): --export, --screenshot.
  // Returns the exit status so far (1 if a file could not be written).
  int AfterLastFrame(AppState& s, int fb_w, int fb_h) const;
  // After each frame: its times (kept for --stats), and --probe.
  void AfterFrame(AppState& s, const FrameTimes& t, int frame, int win_w, int win_h);
  // At exit: --stats and --dump-state. Returns 1 if a file could not be written.
  int Finish(AppState& s, int frame, int fb_w, int fb_h, const char* gl_renderer) const;

 private:
  void WriteProbe(const AppState& s, int frame, int win_w, int win_h);

  GuiOptions g_;
  std::string last_probe_;
  std::chrono::steady_clock::time_point last_probe_write_ = std::chrono::steady_clock::now();
};

}  // namespace mha::gui
