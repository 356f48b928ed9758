#include "gui/main/automation_session.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <sys/resource.h>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/automation/reports.hpp"
#include "gui/main/tour_editor.hpp"
#include "gui/sources/exports.hpp"
#include "io/files.hpp"
#include "options/terminal.hpp"
#include "options/timing.hpp"

namespace mha::gui {

double ProcessCpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

int Automation::AfterLastFrame(AppState& s, int fb_w, int fb_h) const {
  int status = 0;
  if (!g_.export_path.empty()) {
    std::snprintf(s.ui.exports.path.data(), s.ui.exports.path.size(), "%s", g_.export_path.c_str());
    s.ui.pending.export_png = true;
    const std::string& p = g_.export_path;
    s.ui.exports.notebook = p.size() > 6 && std::equal(p.end() - 6, p.end(), ".ipynb", [](char x, char y) {
                              return std::tolower(static_cast<unsigned char>(x)) == y;
                            });
    // Exports run inside the frame; run this one now on the final trace.
    RunPendingExports(s);
    if (!s.ui.exports.message_ok) {
      std::cerr << "mhaviz gui: error: " << options::TerminalSafe(s.ui.exports.message, true) << "\n";
      status = 1;
    }
  }
  if (!g_.screenshot.empty()) {
    try {
      WriteScreenshot(g_.screenshot, fb_w, fb_h);
    } catch (const std::exception& e) {
      std::cerr << "mhaviz gui: error: " << options::TerminalSafe(e.what(), true) << "\n";
      status = 1;
    }
  }
  return status;
}

void Automation::AfterFrame(AppState& s, const FrameTimes& t, int frame, int win_w, int win_h) {
  auto span = [](FrameTimes::Clock::time_point a, FrameTimes::Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  if (on()) {
    s.ui.timing.triangles.push_back(ImGui::GetDrawData()->TotalIdxCount / 3.0);
    s.ui.timing.cpu_ms.push_back(ProcessCpuMs() - t.cpu_start_ms);
    s.ui.timing.ui_ms.push_back(span(t.start, t.ui));
    s.ui.timing.draw_ms.push_back(span(t.ui, t.draw));
    s.ui.timing.swap_ms.push_back(span(t.swap_start, t.end));
  }
  const double ms = span(t.start, t.end);
  // The frame budget, on the window thread's own CPU time.
  const double work = options::ThreadCpuMs() - t.thread_start_ms;
  if (std::getenv("MHAVIZ_FRAME_LOG"))
    std::fprintf(stderr,
                 "frame %d work %.1f ms (cpu: ui %.1f of which uploads %.1f, draw %.1f, swap %.1f) wall %.1f ui %.1f "
                 "draw %.1f swap %.1f phase %d\n",
                 frame, work, t.thread_ui_ms - t.thread_start_ms, t.upload_ms, t.thread_draw_ms - t.thread_ui_ms,
                 options::ThreadCpuMs() - t.thread_swap_ms, span(t.start, t.end), span(t.start, t.ui),
                 span(t.ui, t.draw), span(t.swap_start, t.end), static_cast<int>(s.recompute.worker.phase));
  const auto bin = static_cast<std::size_t>(std::max(0.0, work) / Timing::kWorkBinMs);
  ++s.ui.timing.work_hist[std::min(bin, s.ui.timing.work_hist.size() - 1)];
  if (work > kFrameBudgetMs) {
    ++s.ui.timing.frames_over_budget;
    s.ui.timing.over_budget.push_back({static_cast<double>(frame), work});
    if (s.ui.timing.over_budget.size() > 64) s.ui.timing.over_budget.erase(s.ui.timing.over_budget.begin());
  }
  if (work > s.ui.timing.slowest_frame_ms) {
    s.ui.timing.slowest_frame_ms = work;
    s.ui.timing.slowest_frame = frame;
  }
  s.ui.timing.last_frame_ms = ms;
  s.ui.timing.frame_ms.push_back(ms);
  if (s.ui.timing.frame_ms.size() > 200000) s.ui.timing.frame_ms.clear();
  if (s.ui.timing.recompute_ms.size() > 200000) s.ui.timing.recompute_ms.clear();
  if (s.ui.timing.upload_ms.size() > 200000) s.ui.timing.upload_ms.clear();
  if (!g_.probe.empty() && frame >= 2) WriteProbe(s, frame, win_w, win_h);
}

void Automation::WriteProbe(const AppState& s, int frame, int win_w, int win_h) {
  nlohmann::json pj = ProbeJson(s, 0, win_w, win_h);
  pj["lesson_draft"] = TourDraftProbeJson();  // the editor's state lives beside AppState (main/)
  const std::string body = pj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Rewritten when something changed, and every 100 ms anyway so that tests can
  // see frames pass (and know the layout has settled).
  if (body == last_probe_ && std::chrono::steady_clock::now() - last_probe_write_ <= std::chrono::milliseconds(100))
    return;
  last_probe_ = body;
  last_probe_write_ = std::chrono::steady_clock::now();
  pj["frame"] = frame;
  try {
    io::WriteFileAtomic(g_.probe, pj.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "mhaviz gui: warning: " << options::TerminalSafe(e.what(), true) << "\n";
  }
}

int Automation::Finish(AppState& s, int frame, int fb_w, int fb_h, const char* gl_renderer) const {
  int status = 0;
  if (!g_.stats.empty()) {
    const nlohmann::json j = StatsJson(s, frame, fb_w, fb_h, gl_renderer);
    try {
      io::WriteFileAtomic(g_.stats, j.dump(2) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "mhaviz gui: error: " << options::TerminalSafe(e.what(), true) << "\n";
      status = 1;
    }
  }
  if (!g_.dump_state.empty()) {
    try {
      io::WriteFileAtomic(g_.dump_state, DumpStateJson(s, frame));
    } catch (const std::exception& e) {
      std::cerr << "mhaviz gui: error: " << options::TerminalSafe(e.what(), true) << "\n";
      status = 1;
    }
  }
  return status;
}

}  // namespace mha::gui
