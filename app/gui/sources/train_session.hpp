// What the Train view does, apart from drawing: start, pause and reset the run on its
// worker thread, read its progress once per frame, move the views to a snapshot,
// and save or load the model as a checkpoint (io/checkpoint.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gui/state/app_state.hpp"
#include "gui/state/task.hpp"
#include "mha/training_run.hpp"

namespace mha::options {
struct ModelFlags;
}

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

// Owns the run. The run's steps are the core's own thread (TrainingRun publishes
// immutable snapshots); the app's side of it are tasks: a run is set up off the UI
// thread, and stopped off it (its last step and snapshot may take a while).
class TrainWorker {
 public:
  TrainingRun* get() const { return run_.get(); }
  // The current run (if any) is stopped by a task; `r` becomes current.
  void Replace(std::unique_ptr<TrainingRun> r);
  // Once per frame: joins the tasks that stopped runs.
  void Poll() { retiring_.Poll(); }

 private:
  std::unique_ptr<TrainingRun> run_;
  Task<bool> retiring_;  // the last run stopped (the ones before it end on their own)
};

// The training session (the Train view drives it; the Model selector offers what it
// made): the next run's settings, the run, the runs kept for their curves, the loaded
// checkpoint, and what the learner picked in the view. Kept in the ViewStore.
struct TrainSession {
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

  // A run being set up off the UI thread (initial weights, the step-0 snapshot: tens
  // of ms for the tasks' defaults, more for bigger models).
  Task<std::unique_ptr<TrainingRun>> starting;
  TrainWorker worker;
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

  // Exports for slides (views/train/train_export.hpp): the files' stem, and the one running.
  std::array<char, 1024> export_stem{};
  Task<std::pair<bool, std::string>> export_job;  // (ok, message)
};

// The session, made on first use (AppState::views).
TrainSession& Training(AppState& s);
// The same for reading: an empty session until the Train view first opened.
const TrainSession& Training(const AppState& s);

// --model: the checkpoint becomes the model source; mha::Error for a
// bad file, ids outside its vocabulary or a layer it does not have.
void ApplyModelFlags(const options::ModelFlags& m, AppState& s);

// Once per frame, before the recompute: the run's newest progress (one atomic load,
// never a wait). While the views show the run at its newest snapshot, they move on
// to each new snapshot.
void UpdateTraining(AppState& s);

// The task's defaults (DefaultSetup) into the Configuration panel and the run's
// settings, under the command line's configuration flags.
void ApplyTaskDefaults(AppState& s);
// The first time the view opens: the task's defaults, and --train-autostart.
void PrepareTrainView(AppState& s);
// Where the task's defaults went (the session's defaults_note): the Configuration panel, or,
// while a language model fills it with its own fixed shape, the next run only. While it
// is the view's message, the view keeps it true to the model source.
std::string TaskDefaultsMessage(const AppState& s);

enum class TrainStatus { Idle, Starting, Running, Paused, Finished, Diverged, Stopped };
TrainStatus CurrentStatus(const AppState& s);
const char* ToString(TrainStatus st);

// Train: a new run from fresh weights (or resumes a paused one). A setting the engine
// refuses lands in the session's message.
void StartTraining(AppState& s);
void PauseTraining(AppState& s);
// Stops the run (off the UI thread); its curves stay. The next Train starts afresh.
void ResetTraining(AppState& s);
// Forgets every run but the current one.
void ClearOldRuns(AppState& s);

// The views show run `run` (index into the session's runs) at snapshot `snapshot` (-1: its newest).
void ShowSnapshot(AppState& s, int run, int snapshot);
// The snapshot the timeline is at, or null.
const Snapshot* ShownSnapshot(const AppState& s);
// The heads grid's content: the shown snapshot, or the loaded checkpoint.
struct HeadsPicture {
  const ModelTrace* probe = nullptr;
  const std::vector<HeadProfile>* heads = nullptr;
  const ModelConfig* cfg = nullptr;
  int step = -1;  // -1: a loaded checkpoint
};
HeadsPicture CurrentHeads(const AppState& s);

// "step 0: noise ... step 96: head 1 locks onto 2-back": when each head took the job
// it has at the end of the run, read from the snapshots' labels.
std::string RunStory(const TrainRunRecord& r);

// The model the views show (the timeline's snapshot, or the loaded file) as a
// checkpoint; and a checkpoint from `mhaviz train --out` or from Save.
void SaveCheckpoint(AppState& s, const std::string& path);
void LoadCheckpoint(AppState& s, const std::string& path);

// The model source selector's "trained" entry: the shown run's snapshot or the
// loaded checkpoint, if there is one.
bool TrainedModelAvailable(const AppState& s, std::string* name);
void ShowTrainedModel(AppState& s);

// Whether the window must keep drawing without input: a run in progress (its curves
// grow), the timeline replaying, an export being written.
bool TrainViewAnimating(const AppState& s);

// --probe's "train": the status the GUI tests wait for.
nlohmann::json TrainProbeJson(const AppState& s);

}  // namespace mha::gui
