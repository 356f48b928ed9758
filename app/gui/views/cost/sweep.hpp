// The Cost view's measured times: mha::Forward timed at n = 16, 32, ... 2048 tokens, at
// the current configuration's shapes, on the standard path and on Flash attention, by
// a task. The UI thread only starts it, reads the points measured so far (the task
// publishes a snapshot after each) and draws them; a new configuration cancels the
// sweep (between passes: one pass cannot be cut short) and starts another. A cancelled
// task is joined once it has finished, never waited for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gui/state/task.hpp"
#include "mha/config.hpp"

struct ImDrawList;
struct ImVec2;

namespace mha::gui {

struct AppState;

// One n of the sweep. A path's time is < 0 while not measured; `refused` holds the
// core's message when Validate refuses that path at this n (the standard path past
// Limits::kMaxTokens).
struct SweepPoint {
  int n = 0;
  double standard_ms = -1.0, flash_ms = -1.0;  // median CPU time of one pass, one thread
  int standard_runs = 0, flash_runs = 0;
  std::string standard_refused, flash_refused;
};

struct SweepSnapshot {
  Config cfg;                      // the shapes measured (threads = 1)
  std::vector<SweepPoint> points;  // every n of the sweep; filled in as they are measured
  int measured = 0;                // passes measured or refused so far, of 2 x points
  bool finished = false;
  std::string error;     // a pass that threw something else (shown, the sweep stops)
  std::uint64_t id = 0;  // counts the sweeps started: a new configuration, a new id
};

// The n values the sweep measures, in order.
std::vector<int> SweepSizes();

class CostSweep {
 public:
  // UI thread: a sweep for `cfg`'s shapes, started unless the current one has them.
  void Ensure(const Config& cfg);
  // UI thread, every frame: joins cancelled tasks that have finished; counts the
  // frames drawn while the current sweep runs (the GUI test's proof that the window
  // kept drawing).
  void Tick();
  SweepSnapshot Snapshot() const;
  bool Running() const;
  bool Started() const { return started_; }
  int FramesWhileRunning() const { return frames_running_; }

 private:
  Task<SweepSnapshot> task_;  // cancelled and joined when the view's state goes (at exit: one pass at most)
  SweepSnapshot first_;       // the sweep as started: its shapes and sizes, nothing measured
  bool started_ = false;
  int frames_running_ = 0;
};

// The sweep the Cost view owns (kept in AppState::views).
CostSweep& Sweep(AppState& s);
const CostSweep* FindSweep(const AppState& s);

// The measured times on the FLOPs plot's rectangle a..b, whose x axis is log10(n) from
// x0 to x1: their own log scale of milliseconds, labelled on the right edge.
void DrawMeasuredTimes(ImDrawList* dl, const ImVec2& a, const ImVec2& b, double x0, double x1,
                       const SweepSnapshot& snap);
// The legend's two entries for the measured times, from `at` down (under the FLOPs'
// entries: the measured points stay below them).
void MeasuredLegend(ImDrawList* dl, const ImVec2& at);
// The width and height MeasuredLegend takes.
ImVec2 MeasuredLegendSize();
// A line or two under the plot: what was measured, how far the sweep is, the slopes
// (`brief`: folded into a presented view's "?", short of height).
void DrawSweepStatus(const SweepSnapshot& snap, bool brief = false);

// The fitted slope of log(ms) against log(n) over the last `last` measured points of a
// path (standard: true): about 2 where n^2 dominates, about 1 where the projections do.
// NaN with fewer than two points.
double SweepSlope(const SweepSnapshot& snap, bool standard, int last);
// The same over the first `first` points of the sweep (where the projections weigh most).
double SweepFirstSlope(const SweepSnapshot& snap, bool standard, int first);

// --dump-state's cost_view.sweep and --probe's "cost": what the sweep measured.
nlohmann::json SweepJson(const AppState& s);
nlohmann::json SweepProbeJson(const AppState& s);

}  // namespace mha::gui
