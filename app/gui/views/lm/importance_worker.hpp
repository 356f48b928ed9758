// The Importance view's measurements: every head knocked out alone (then every layer's
// heads at once) and the in-context learning curve, the numbers of `mhaviz ablate
// --json` and `mhaviz ablate --icl --json` (the same lm::AblationSubject, core
// MeasureImportance and MeasureRepeatLoss). Each is measured on a worker thread of its
// own (seconds: 64 validation windows by default), cancelled when the model, mode or
// amount of text changes, and kept per model, mode and amount of text. The UI thread
// reads the worker's progress and never waits for it; a cancelled worker stops at its
// next batch of windows (a fraction of a second) and is joined once it has.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lm/ablate_model.hpp"

namespace mha::gui {

// Validation windows a language model's table is measured on unless the learner asks
// for more: about 3 s on 2 busy cores for mhaviz-small (`mhaviz ablate --windows 64`
// takes the same), where the CLI's default 256 takes about 6 s.
constexpr int kImportanceWindows = 64;

// What one measurement is of: the model (kept alive, so its address names it), the
// mode, and the validation windows (a language model; 0: all of them).
struct ImportanceKey {
  std::shared_ptr<const Model> model;
  AblationMode mode = AblationMode::Zero;
  int windows = kImportanceWindows;
  bool operator==(const ImportanceKey& o) const { return model == o.model && mode == o.mode && windows == o.windows; }
};

struct ImportanceResult {
  std::string model, reference;
  int layers = 0, num_heads = 0;
  std::vector<std::string> targets;  // a task model's targets ("1-back", ...); empty: one
  ImportanceTable table;
  std::vector<HeadProfile> labels;
  // The in-context learning curve.
  std::vector<HeadRef> icl_heads;
  double icl_induction = 0;  // the knocked-out head's induction score
  int icl_span = 0, icl_sequences = 0;
  RepeatLoss plain, knocked;
};

// What the worker needs, copied off the UI thread's state.
struct ImportanceInput {
  std::string lm_path;  // a language model: its checkpoint (LoadSubject reads it as the CLI does)
  Model task_model;     // else the task model itself
  std::string name;
};

struct ImportanceJob;

// The measurement under way, the finished ones (a few models at most), and the
// cancelled threads still ending.
class ImportanceWorker {
 public:
  struct Entry {
    ImportanceKey key;
    std::shared_ptr<const ImportanceResult> result;
    std::string error;
  };

  ImportanceWorker() = default;
  ImportanceWorker(const ImportanceWorker&) = delete;
  ImportanceWorker& operator=(const ImportanceWorker&) = delete;
  // Cancelled measurements stop at their next batch of windows (a fraction of a second).
  ~ImportanceWorker();

  // Every frame: a finished job goes into the cache; a job for another key than
  // `current` (the model, mode or amount of text the view shows now) is cancelled;
  // finished threads are joined.
  void Update(const ImportanceKey& current);
  // Starts measuring `k` on a thread of its own.
  void Start(const ImportanceKey& k, ImportanceInput in);
  const Entry* Cached(const ImportanceKey& k) const;

  bool Running() const { return job_ != nullptr; }
  // A job runs, or a cancelled one has not ended yet.
  bool Busy() const { return job_ || !threads_.empty(); }
  // The running job's progress: steps done of total, and what it measures now (translated).
  int step() const;
  int total() const;
  std::string StageText() const;
  int finished() const { return finished_; }  // measurements finished (the probe's counter)
  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  std::vector<Entry> cache_;            // newest last
  std::shared_ptr<ImportanceJob> job_;  // the measurement under way, or null
  std::vector<std::pair<std::thread, std::shared_ptr<ImportanceJob>>> threads_;
  int finished_ = 0;
};

}  // namespace mha::gui
