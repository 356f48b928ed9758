// The single place where the app turns the learner's Choice into its Result: in the
// frame when it is quick, on a task (state/task.hpp) when it is not (a frame stays
// within kFrameBudgetMs at every accepted size).
#pragma once

#include <imgui.h>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// Runs the core on s.choice now, on this thread (reusing s.result.trace's buffers and
// the cached weights / embeddings), clears s.dirty, records the time. Never throws:
// errors from the core land in s.result.error for the panels to show. A big job goes
// to its task instead when StepRecompute sees it: over 2 million attention cells
// (all maps together) or 200 million multiply-adds (MHAVIZ_WORKER_CELLS=N, for tests:
// over N cells, whatever the multiply-adds).
void Recompute(AppState& s);
// Attention cells (all maps together) above which a recompute goes to the worker
// (MHAVIZ_WORKER_CELLS for tests); views compute in the frame below it.
double WorkerCells();
// Whether work of `cells` attention cells and `madds` multiply-adds is too long for a
// frame: the recompute's own rule, for a view's work on the trace too.
bool OnWorker(double cells, double madds);
// A view's long work on the current trace, run on the recompute's task (the results
// area under the veil meanwhile, "Computing `what` ..."). False, and nothing started,
// while the task is busy or a recompute is pending: ask again in a later frame.
bool StartViewWork(AppState& s, ViewWork work, const std::string& what);

// Once per frame, where the results are computed: a quick recompute runs at once
// (Recompute); a big one, or re-colouring big maps for a new colour scale, is handed to
// the task (after this frame is drawn once more, see AfterRender); a finished one is
// taken back, its maps uploaded a few per frame, and the views' primed work handed to
// their state. A language model's head measures are started and taken back here too
// (sources/model_measures.hpp).
void StepRecompute(AppState& s);
// The export the learner asked for (Ctrl+S, the Export button): at once when the figure
// is small, else on the task like a big recompute (the picture under the veil says
// "Exporting ..."); its message lands in s.ui.exports.message.
void StepExports(AppState& s);
// After the frame is rendered, before it is shown: keeps a picture of the results area
// (to show under a veil while the task runs) and starts the task's job.
void AfterRender(AppState& s, int fb_w, int fb_h);
// The worker's job is in flight or its maps are uploading: the results area shows the
// picture (DrawWorkerPicture) instead of the views.
inline bool WorkerBusy(const AppState& s) { return s.recompute.worker.busy(); }
// Whether a recompute is asked for or under way (automation waits for it).
inline bool RecomputePending(const AppState& s) { return s.recompute.worker.phase != RecomputeWorker::Phase::Idle; }
// Where the results are drawn this frame (window pixels): the picture is taken from here.
void SetResultsRect(AppState& s, ImVec2 a, ImVec2 b);
// The last result's picture over a..b, dimmed, with what is being computed and for how long.
void DrawWorkerPicture(AppState& s, ImVec2 a, ImVec2 b);
// "Computing 32 heads x 1024 tokens: 1.2 s", or "" when idle (the status bar).
std::string WorkerText(const AppState& s);
// Waits for the task and takes its result (at exit: --dump-state reads it).
void FinishRecompute(AppState& s);
// Frees the picture's texture (needs the GL context).
void ReleaseWorker(AppState& s);

// What the last recompute redid ("Q, K, V kept and re-split into 16 heads", ...): the
// status bar's words (Result::reuse), also in --probe and --dump-state.
std::string ReuseText(const LiveReport& r, const Trace& t, bool shown = false);

}  // namespace mha::gui
