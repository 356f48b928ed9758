// State of the Train view: the next run's settings, the run on its worker thread,
// the runs kept for their curves, and what the learner picked in the view (the
// timeline position, the head opened large). The model's architecture is the
// Configuration panel's (s.choice.cfg); the settings here are the ones only
// training has (task, layers, steps, learning rate, seed).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mha/training_run.hpp"

namespace mha::gui {

// A run kept for the curves and the timeline (the current one is the last).
struct TrainRunRecord {
  int id = 0;
  std::string label;  // its configuration: "offsets K=2 · 2 heads · d_model 16 · 1 layer"
  TaskSpec task;
  int num_heads = 0, num_layers = 0;
  std::shared_ptr<const Progress> progress;  // the newest progress seen
  bool shown = true;                         // its curves are drawn
};

// Owns the run on its worker thread. A run is stopped off the UI thread (its last
// step and snapshot may take a while), and joined when the app closes.
class TrainWorker {
 public:
  TrainWorker() = default;
  TrainWorker(const TrainWorker&) = delete;
  TrainWorker& operator=(const TrainWorker&) = delete;
  ~TrainWorker();
  TrainingRun* get() const { return run_.get(); }
  // The current run (if any) is stopped in the background; `r` becomes current.
  void Replace(std::unique_ptr<TrainingRun> r);

 private:
  std::unique_ptr<TrainingRun> run_;
  std::vector<std::thread> retiring_;
};

struct TrainUi {
  // The next run: the task and what training adds to the Configuration panel's layer.
  TaskSpec task;
  int layers = 1;
  Positional positional = Positional::Learned;  // when the Configuration's PE is on
  int steps = 800;
  float lr = 1e-2f;
  std::uint64_t seed = 1;  // the initial weights; the batches follow from it too
  int batch = 128;
  // The task's defaults (DefaultSetup) go into the Configuration panel the first time
  // the view opens, under the configuration flags of the command line.
  bool defaults_applied = false;
  std::vector<std::function<void(Config&)>> flag_edits;
  bool autostart = false;  // --train-autostart: press Train on the first frame of the view

  TrainWorker worker;
  // A run being set up off the UI thread (initial weights, the step-0 snapshot: tens
  // of ms for the tasks' defaults, more for bigger models).
  std::future<std::unique_ptr<TrainingRun>> starting;
  std::shared_ptr<const Progress> progress;  // the current run's, read once per frame
  std::vector<TrainRunRecord> runs;
  int next_id = 1;
  int current_id = 0;      // the id of the run the worker holds (0: none)
  int shown_run = -1;      // index into runs: the run whose timeline and heads show
  int timeline = -1;       // snapshot index of the shown run; -1: follow the newest
  int big_head = -1;       // layer * num_heads + head opened large; -1: the grid
  bool playing = false;    // the timeline replays the run, a snapshot at a time
  double played_at = 0.0;  // ImGui time of the last snapshot shown while playing

  // A checkpoint loaded from a file (not a run: no curves, no timeline).
  std::shared_ptr<const Model> loaded;
  std::string loaded_path;
  std::vector<int> loaded_probe;  // held-out example 0 of its task, as `trace --model`
  std::vector<HeadProfile> loaded_heads;
  bool show_loaded = false;  // the heads grid shows the loaded model

  std::array<char, 1024> path{};  // checkpoint to save or load
  std::string message;            // the last action's outcome
  bool message_ok = true;
  // The message that says where the task's defaults went (TaskDefaultsMessage), as
  // shown: while it is still the message, it follows the model source.
  struct DefaultsNote {
    std::string shown;
    std::string task;
    int num_heads = 0, d_model = 0;
  } defaults_note;

  // Exports for slides (views/train/export.hpp): the files' stem, and the one running.
  std::array<char, 1024> export_stem{};
  std::future<std::pair<bool, std::string>> export_job;  // (ok, message)
};

}  // namespace mha::gui
