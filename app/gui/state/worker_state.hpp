// A recompute too big for one frame, on its worker thread: what it was asked, what it
// gave back, and the picture of the results shown meanwhile. The steps are in
// sources/recompute.cpp; this is only the state they share with the window.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gui/state/textures.hpp"
#include "mha/ablation.hpp"
#include "mha/mha.hpp"
#include "render/colormap.hpp"

namespace mha::gui {

// Everything one recompute of the seeded (or --weights) layer reads: a copy of the
// learner's choice, so that a worker can run it while the window goes on editing.
struct RecomputeJob {
  Config cfg;
  std::string sentence, memory;               // memory: "" for self-attention
  const Inputs* inputs = nullptr;             // an --input file's arrays instead of the sentences
  std::shared_ptr<const Inputs> inputs_copy;  // ... owned by the job when a worker runs it
  std::shared_ptr<const Weights> weights;     // --weights (null: seeded)
  std::vector<HeadRef> knocked;               // heads knocked out (layer 0)
  AblationMode knock_mode = AblationMode::Zero;
};

// What the core said of the job.
struct RecomputeOutcome {
  bool ok = false;
  std::string error;   // the core's teaching message when !ok
  std::string notice;  // the tokenizer's notice
  double ms = 0;       // the recompute (and, on the worker, the colouring of the maps)
};

struct RecomputeWorker {
  // Idle: nothing in flight. Capture: this frame draws the last result once more and
  // keeps a picture of it, then the job starts. Run: the worker has the job (and the
  // trace: the window shows the picture under a veil). Upload: the maps go to the
  // textures a few per frame; the picture stays until the last one is in.
  enum class Phase { Idle, Capture, Run, Upload };
  Phase phase = Phase::Idle;
  bool colour_only = false;  // re-colour the maps of the current trace (a new colour scale)
  RecomputeJob job;
  RecomputeOutcome out;
  std::string nfc_note;  // the composed sentence's notice, added to the result's
  Trace trace;           // the app's trace while the worker recomputes it (moved, not copied)
  Mat mean_attn;
  std::uint64_t generation = 0;  // the generation the result will have
  render::ColourScale scale = render::ColourScale::Fixed;
  HeatmapPixels pixels;
  std::thread thread;
  std::atomic<bool> done{false};
  std::chrono::steady_clock::time_point started;
  std::string what;  // "32 heads x 1024 tokens", for the veil and the status bar
  int jobs = 0;      // jobs the worker has run (--probe)
  // The results area as the last frame drew it, while the worker runs.
  unsigned int picture = 0;     // GL texture (0: none)
  bool has_picture = false;     // a last result to show (not before the first)
  std::array<float, 4> rect{};  // where it was, window pixels: x, y, w, h
  bool capture_requested = false;

  RecomputeWorker() = default;
  RecomputeWorker(const RecomputeWorker&) = delete;
  RecomputeWorker& operator=(const RecomputeWorker&) = delete;
  ~RecomputeWorker() {
    if (thread.joinable()) thread.join();
  }
  bool busy() const { return phase == Phase::Run || phase == Phase::Upload; }
  // The worker has the app's trace: nothing else may read it (HasResults is false).
  bool holds_trace() const { return phase == Phase::Run && !colour_only; }
};

}  // namespace mha::gui
