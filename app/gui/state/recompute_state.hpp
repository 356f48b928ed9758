// The one recompute's machinery (its steps are in sources/recompute.cpp): the cached
// stages of the computation, the task that runs a recompute too big for one frame and
// the picture of the results shown meanwhile, the views' prime hooks, and the tasks
// that measure a language model's heads. No view reads it: views see its outcome in
// AppState::result.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gui/state/choice.hpp"
#include "gui/state/task.hpp"
#include "gui/state/textures.hpp"
#include "lm/head_evidence.hpp"
#include "lm/head_jobs.hpp"
#include "lm/language_model.hpp"
#include "mha/live.hpp"
#include "mha/mha.hpp"

namespace mha::gui {

struct AppState;

// What a view computes from a new trace in its first frame, computed instead beside a
// big trace on the recompute's task (a registry entry's `prime` hook): it reads only
// the trace and the choice, and returns what to store in the view's own state once
// the trace is the app's (run on the window's thread), or null.
using Primed = std::function<void(AppState&)>;
using PrimeHook = Primed (*)(const Trace& t, const Choice& c);

// One recompute, split where a thread may change hands: made on the window's thread
// from the learner's choice (it owns copies of what it reads, and takes the app's trace
// so its buffers are reused, never copied), computed on any thread, applied back on
// the window's thread. A quick one runs all three in the frame.
class WorkerJob {
 public:
  virtual ~WorkerJob() = default;
  // The core's work: touches only what the job owns (and the cache it was given).
  virtual void Compute() = 0;
  // The outcome into the app's state (s.result), trace included.
  virtual void Apply(AppState& s) = 0;
  // After Compute: whether it succeeded, and the layer whose maps the heatmaps show.
  bool Ok() const { return ok_; }
  virtual const Trace& Shown() const { return trace_; }
  virtual const Mat& ShownMean() const { return mean_; }

 protected:
  // Apply's first step: the trace and its mean back into the app's result `r`; false,
  // with r saying why, when Compute failed (the trace is then the last valid one).
  template <class R>
  bool GiveBack(R& r) {
    r.trace = std::move(trace_);
    r.mean_attn = std::move(mean_);
    if (!ok_) {
      r.ok = false;
      r.error = error_;
    }
    return ok_;
  }
  Trace trace_;  // the layer shown: the app's last one (its buffers reused), then the new one
  Mat mean_;
  bool ok_ = false;
  std::string error_;
};

// An export of the current trace, prepared on the window's thread (sources/exports.cpp):
// `run` renders and writes the file, reading only the trace and what it holds.
struct ExportOutcome {
  std::string message;  // for s.ui.exports.message
  bool ok = false;
};
struct ExportWork {
  std::function<ExportOutcome()> run;
  double cells = 0;  // attention cells drawn: a big figure goes to the worker
};

// A view's own long work on the app's current trace (sources/recompute.hpp's
// StartViewWork): run on the worker, reading only that trace (which stays the app's:
// recomputes wait meanwhile); returns what to store in the view's state, applied on
// the window's thread.
using ViewWork = std::function<Primed()>;

// How big a recompute is: attention cells over every map the heatmaps colour (heads
// and the mean, each layer computed) and multiply-adds (projections, scores and
// weighted sums, the FFN, the logits). The recompute hands big ones to its task.
struct WorkSize {
  double cells = 0, madds = 0;
  int heads = 0, seq = 0;  // the layer shown, for "32 heads x 1024 tokens"
};
inline WorkSize LayerWork(const Config& c, int seq, int seq_kv, int layers = 1, double logits = 0) {
  const double d = c.d_model, kv = static_cast<double>(c.kv_heads()) * c.head_dim();
  double madds = seq * d * d * 2 + static_cast<double>(seq_kv) * d * 2 * kv + 2.0 * seq * seq_kv * d;
  if (c.block == Block::Encoder) madds += 2.0 * seq * d * c.ffn_dim();
  WorkSize w;
  w.cells = static_cast<double>(c.num_heads + 1) * seq * seq_kv * layers;
  w.madds = madds * layers + seq * d * logits;
  w.heads = c.num_heads;
  w.seq = seq;
  return w;
}

// What the recompute's task hands back: the job (with the new trace), the maps
// coloured for upload, and the views' primed work.
struct RecomputeOutput {
  std::shared_ptr<WorkerJob> job;
  HeatmapPixels pixels;
  std::vector<Primed> primed;
  double ms = 0;
};

struct RecomputeWorker {
  // Idle: nothing in flight. Capture: this frame draws the last result once more and
  // keeps a picture of it, then the task starts. Run: the task has the job (and the
  // trace: the window shows the picture under a veil). Upload: the maps go to the
  // textures a few per frame; the picture stays until the last one is in.
  enum class Phase { Idle, Capture, Run, Upload };
  Phase phase = Phase::Idle;
  // A recompute; re-colouring the maps of the current trace (a new colour scale); an
  // export of it; or a view's work on it (the trace stays the app's for the last three:
  // recomputes wait meanwhile).
  enum class Kind { Recompute, Colour, Export, View };
  Kind kind = Kind::Recompute;
  Task<RecomputeOutput> task;
  std::uint64_t generation = 0;  // the generation the maps are coloured for
  HeatmapPixels pixels;          // Upload: the maps still to send
  ExportWork export_work;        // Kind::Export: the export, until the task takes it
  ViewWork view_work;            // Kind::View: the view's work, until the task takes it
  std::chrono::steady_clock::time_point started;
  std::string what;  // "32 heads x 1024 tokens", for the veil and the status bar
  int jobs = 0;      // jobs the task has run (--probe)
  // The results area as the last frame drew it, while the task runs.
  unsigned int picture = 0;     // GL texture (0: none)
  bool has_picture = false;     // a last result to show (not before the first)
  std::array<float, 4> rect{};  // where it was, window pixels: x, y, w, h

  bool busy() const { return phase == Phase::Run || phase == Phase::Upload; }
  // The task has the app's trace: nothing else may read it (HasResults is false).
  bool holds_trace() const { return phase == Phase::Run && kind == Kind::Recompute; }
};

struct RecomputeState {
  Live live;  // the cached stages of the seeded layer (embeddings, weights, projections)
  RecomputeWorker worker;
  std::vector<PrimeHook> primers;  // every view's prime hook (set once, from the registry)
  // A language model's measures (sources/model_measures.hpp), for the model they are of
  // (held, so that no later model can take its address).
  std::shared_ptr<const lm::LanguageModel> measured_for;
  Task<std::vector<HeadProfile>> labels_task;
  Task<std::vector<lm::HeadJob>> jobs_task;
  Task<lm::HeadEvidence> evidence_task;
};

}  // namespace mha::gui
