// What the Train view does, apart from drawing: start, pause and reset the run on its
// worker thread, read its progress once per frame, move the views to a snapshot,
// and save or load the model as a checkpoint (io/checkpoint.hpp).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "gui/state/app_state.hpp"

namespace mha::options {
struct ModelFlags;
}

namespace mha::gui {

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
// Where the task's defaults went (s.train.defaults_note): the Configuration panel, or,
// while a language model fills it with its own fixed shape, the next run only. While it
// is the view's message, the view keeps it true to the model source.
std::string TaskDefaultsMessage(const AppState& s);

enum class TrainStatus { Idle, Starting, Running, Paused, Finished, Diverged, Stopped };
TrainStatus CurrentStatus(const AppState& s);
const char* ToString(TrainStatus st);

// Train: a new run from fresh weights (or resumes a paused one). A setting the engine
// refuses lands in s.train.message.
void StartTraining(AppState& s);
void PauseTraining(AppState& s);
// Stops the run (off the UI thread); its curves stay. The next Train starts afresh.
void ResetTraining(AppState& s);
// Forgets every run but the current one.
void ClearOldRuns(AppState& s);

// The views show run `run` (index into s.train.runs) at snapshot `snapshot` (-1: its newest).
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
