// A training run on a worker thread that publishes immutable progress: the loss and
// accuracy curves, and snapshots of the weights with the model's trace on a fixed
// probe example and its head labels. A reader (the app's UI thread, `mhaviz train`'s
// progress bar) takes the latest progress with one atomic load and never waits for a
// step; the run never waits for a reader.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mha/heads.hpp"
#include "mha/model.hpp"
#include "mha/tasks.hpp"
#include "mha/train.hpp"

namespace mha {

// How the caller's controls for the settings a message suggests changing are called:
// `mhaviz train`'s flags by default; the app's Train view names its own controls.
struct SettingNames {
  std::string lr = "--lr";
  std::string clip = "--clip 1";  // "" : no way to turn clipping on (not suggested)
  std::string steps = "--steps";
  std::string batch = "--batch";
  std::string smaller = "a smaller --batch, --seq or d_model";  // what shrinks the activations
};

// The run's own limits, one place for the flags that set them and for Prepare's check,
// so a user meets one limit in one message.
struct TrainLimits {
  static constexpr int kMaxSteps = 1000000;
  static constexpr int kMaxBatch = 4096;
};

struct TrainSetup {
  ModelConfig model;  // architecture; vocab, num_targets, max_seq and mask follow the task
  TaskSpec task;
  OptimConfig optim;  // optim.total_steps is set to `steps`
  int steps = 800;
  int batch = 128;
  std::uint64_t data_seed = 7;  // training batches; held-out batches: HeldOutBatch (tasks.hpp)
  int threads = 0;              // 0: one per core
  int snapshot_every = 0;       // steps between snapshots; 0: every 2% of the run
  int probe_index = 0;          // which held-out example the probe trace shows
  int heldout_batch = 128;      // sequences of each held-out evaluation
  // Each step's batch from the caller instead of the task's generator (e.g. windows of
  // a text corpus): called as batches(data_seed, step, batch, out) on the training
  // thread. With it, `heldout` must be given and the task is not used.
  std::function<void(std::uint64_t seed, int step, int batch, Batch& out)> batches;

  // For `mhaviz train`; the defaults keep the app's behaviour.
  // Train on this batch at every step instead of the task's (the task is then unused;
  // the batch is also the held-out set and holds the probe example).
  std::shared_ptr<const Batch> data;
  // Evaluate and label heads on these sequences instead of generating heldout_batch
  // of them (heldout_batch follows its size).
  std::shared_ptr<const Batch> heldout;
  // The model's configuration is the caller's (flags, or a checkpoint's): Prepare
  // checks that the task's batches fit it instead of setting vocab, targets, max_seq
  // and mask from the task.
  bool model_given = false;
  // Prepare refuses a run whose activations, estimated as EstimateTraceBytes x
  // max(batch, heldout_batch) x num_layers x 1.5, are over this.
  double max_activation_bytes = 1.0e9;
  // Snapshots keep a copy of the weights (Snapshot::model). A long run of a big model
  // that only needs the pictures can leave them out (Snapshot::model is then null).
  bool snapshot_weights = true;
  SettingNames names;  // what the messages call the settings they suggest changing
};

// The defaults that make the task work in one click (measured: offsets K = 2 with 2
// heads reaches 1.00 on both targets in 800 steps, each head on its own offset).
TrainSetup DefaultSetup(const TaskSpec& task);
// Makes the model fit the task (vocab, targets, max_seq, mask) and checks everything;
// throws mha::Error with a teaching message.
void Prepare(TrainSetup& s);

struct CurvePoint {
  int step = 0;  // steps done when measured (1-based)
  float lr = 0, loss = 0;
  std::vector<float> accuracy;  // per target, on the training batch
  double grad_norm = 0;
};

struct Snapshot {
  int step = 0;                        // steps done
  std::shared_ptr<const Model> model;  // the weights at that step
  ModelTrace probe;                    // the model on the probe example
  std::vector<HeadProfile> heads;      // labels measured on held-out sequences
  StepStats heldout;                   // loss and accuracy on held-out sequences
};

struct Progress {
  int step = 0, total = 0;
  bool running = false, paused = false, finished = false, diverged = false;
  std::string message;  // why it stopped early, or ""
  std::vector<CurvePoint> curve;
  std::vector<std::shared_ptr<const Snapshot>> snapshots;  // step 0 first
  double seconds = 0;                                      // training time so far (pauses excluded)
  double steps_per_second = 0;
};

class TrainingRun {
 public:
  // Validates (Prepare) and initialises the model; throws mha::Error.
  explicit TrainingRun(TrainSetup setup);
  // Optionally from given weights (their configuration must match setup.model).
  TrainingRun(TrainSetup setup, const Model& init);
  ~TrainingRun();  // stops the worker and joins it
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  void Start();  // starts (or resumes) the worker; returns at once
  void Pause();  // the worker stops after its current step; returns at once
  void Stop();   // ends the run after the current step and joins the worker
  void Wait();   // blocks until the run has finished, diverged or been stopped
  // Runs the remaining steps on the calling thread (no worker): for the CLI and tests.
  // `should_stop` is polled between steps (e.g. a Ctrl-C flag).
  void RunHere(const std::atomic<bool>* should_stop = nullptr);
  // The same, calling `after_step` with the run's progress after every step and once
  // at the end (a progress bar; the reference is valid only during the call).
  void RunHere(const std::atomic<bool>* should_stop, const std::function<void(const Progress&)>& after_step);

  // The latest published progress; never blocks on a training step.
  std::shared_ptr<const Progress> Latest() const;
  const TrainSetup& setup() const { return setup_; }
  // The current weights. Read them only while no worker runs (after RunHere, Wait or
  // Stop): the worker updates them in place.
  const Model& model() const { return model_; }

 private:
  void Loop(const std::atomic<bool>* external_stop, const std::function<void(const Progress&)>* after_step = nullptr);
  void Step();
  void TakeSnapshot();
  void TakeSnapshotOrThrow();
  void Diverge(int step, const std::string& why);
  void Publish(bool force);

  TrainSetup setup_;
  Model model_, grads_;
  std::unique_ptr<AdamW> opt_;
  Trainer trainer_;
  Batch batch_, heldout_;
  const Batch* train_batch_ = &batch_;  // setup_.data when given
  std::vector<int> probe_tokens_;
  ModelTrace probe_work_;  // the probe's pass, with its scratch; snapshots hold copies
  Progress work_;          // the worker's own copy, published as immutable copies
  std::shared_ptr<const Progress> latest_;
  std::atomic<bool> stop_{false}, pause_{false};
  std::thread worker_;
  double published_at_ = -1;
};

}  // namespace mha
