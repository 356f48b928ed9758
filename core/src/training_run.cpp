#include "mha/training_run.hpp"

#include <chrono>
#include <cmath>
#include <sstream>

namespace mha {

namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

TrainSetup DefaultSetup(const TaskSpec& task) {
  TrainSetup s;
  s.task = task;
  Config& c = s.model.layer;
  c.d_model = 16;
  c.num_heads = 1;
  c.norm = Norm::Pre;
  c.block = Block::Attention;  // attention only: an FFN would let one head cheat on offsets
  c.seed = 1;
  s.model.positional = Positional::Learned;
  s.model.num_layers = 1;
  s.optim.lr = 1e-2f;
  switch (task.kind) {
    case TaskKind::Offsets:
      c.num_heads = task.offsets;
      // d_model a multiple of the head count, at least 16
      c.d_model = std::max(16, (16 + task.offsets - 1) / task.offsets * task.offsets);
      break;
    case TaskKind::Reverse: s.steps = 600; break;
    case TaskKind::Sort:  // measured: 1 head, 1500 steps: accuracy 1.00, 0.81 of its weight on the next sorted token
      c.d_model = 32;
      s.steps = 1500;
      s.optim.lr = 3e-3f;
      break;
    case TaskKind::Induction:
      c.d_model = 32;
      c.num_heads = 2;
      s.model.num_layers = 2;
      s.steps = 600;
      s.optim.lr = 3e-3f;
      break;
  }
  s.optim.warmup = s.steps / 20;
  return s;
}

void Prepare(TrainSetup& s) {
  const bool own_task = !s.data && !s.batches;  // batches from the task's generator
  if (own_task) Validate(s.task);
  if (s.batches && !s.data && !s.heldout) throw Error("A run with its own batches needs held-out sequences.");
  auto fail = [](const std::string& m) { throw Error(m); };
  if (s.steps < 0 || s.steps > TrainLimits::kMaxSteps)
    fail(s.names.steps + " must be 0 to " + std::to_string(TrainLimits::kMaxSteps) + "; got " +
         std::to_string(s.steps) + ".");
  if (s.data) s.batch = s.data->batch;  // a batch file's size was checked when it was read
  if (s.heldout || s.data) s.heldout_batch = (s.heldout ? s.heldout : s.data)->batch;
  if (!s.data && (s.batch < 1 || s.batch > TrainLimits::kMaxBatch))
    fail(s.names.batch + " must be 1 to " + std::to_string(TrainLimits::kMaxBatch) + " sequences; got " +
         std::to_string(s.batch) + ".");
  if (!s.heldout && !s.data && (s.heldout_batch < 1 || s.heldout_batch > TrainLimits::kMaxBatch))
    fail("The held-out batch must be 1 to " + std::to_string(TrainLimits::kMaxBatch) + " sequences.");
  if (!s.model_given) {
    s.model.vocab = TaskVocab(s.task);
    s.model.num_targets = NumTargets(s.task);
    s.model.max_seq = s.task.seq;
    s.model.layer.mask = TaskMask(s.task);
    s.model.task = TaskJson(s.task);
  }
  Validate(s.model);
  if (s.model_given && own_task) {
    Batch probe;
    MakeBatch(s.task, s.data_seed, 0, 1, probe);
    CheckBatch(s.model, probe);
  }
  if (s.data) CheckBatch(s.model, *s.data);
  if (s.heldout) CheckBatch(s.model, *s.heldout);
  const int seq = s.data ? s.data->seq : s.batches ? s.heldout->seq : s.task.seq;
  // Every sequence of a batch keeps its Trace per layer for the backward pass, and its
  // logits (seq x num_targets x vocab: with a large vocabulary, the larger part).
  const MemoryEstimate one = EstimateEvaluation(s.model, 1, seq);
  const double bytes = (one.activations + one.logits) * std::max(s.batch, s.heldout_batch) * 1.5;
  if (bytes > s.max_activation_bytes) {
    std::ostringstream e;
    e << "Training would keep about " << static_cast<long>(bytes / 1e6) << " MB of activations and logits (batch "
      << s.batch << " x " << s.model.num_layers << " layers x one trace each, "
      << static_cast<long>(1.5 * one.logits * std::max(s.batch, s.heldout_batch) / 1e6)
      << " MB of them logits), over the " << static_cast<long>(s.max_activation_bytes / 1e6) << " MB budget. Use "
      << s.names.smaller << ".";
    fail(e.str());
  }
  s.optim.total_steps = s.steps;
  if (s.snapshot_every <= 0) s.snapshot_every = std::max(1, s.steps / 50);
  if (s.probe_index < 0 || s.probe_index >= s.heldout_batch)
    fail("The probe example must be 0 to " + std::to_string(s.heldout_batch - 1) + ".");
}

TrainingRun::TrainingRun(TrainSetup setup) : TrainingRun(setup, Model{}) {}

TrainingRun::TrainingRun(TrainSetup setup, const Model& init)
    : setup_((Prepare(setup), setup)), trainer_(setup.threads) {
  model_ = init.layers.empty() ? InitModel(setup_.model) : Clone(init);
  if (!init.layers.empty()) CheckModel(model_);
  grads_ = ZerosLike(model_);
  opt_ = std::make_unique<AdamW>(model_, setup_.optim);
  if (setup_.heldout || setup_.data)
    heldout_ = setup_.heldout ? *setup_.heldout : *setup_.data;
  else
    HeldOutBatch(setup_.task, setup_.data_seed, 0, setup_.heldout_batch, heldout_);
  if (setup_.data) train_batch_ = setup_.data.get();
  for (int i = 0; i < heldout_.seq; ++i) probe_tokens_.push_back(heldout_.token(setup_.probe_index, i));
  work_.total = setup_.steps;
  TakeSnapshot();  // step 0: the untrained heads
  Publish(true);
}

TrainingRun::~TrainingRun() { Stop(); }

void TrainingRun::Start() {
  pause_ = false;
  if (worker_.joinable()) return;  // resumes
  if (work_.finished || work_.diverged) return;
  stop_ = false;
  worker_ = std::thread([this] { Loop(nullptr); });
}

void TrainingRun::Pause() { pause_ = true; }

void TrainingRun::Stop() {
  stop_ = true;
  pause_ = false;
  if (worker_.joinable()) worker_.join();
}

void TrainingRun::Wait() {
  if (worker_.joinable()) worker_.join();
}

void TrainingRun::RunHere(const std::atomic<bool>* should_stop) { Loop(should_stop); }

void TrainingRun::RunHere(const std::atomic<bool>* should_stop,
                          const std::function<void(const Progress&)>& after_step) {
  Loop(should_stop, &after_step);
}

std::shared_ptr<const Progress> TrainingRun::Latest() const { return std::atomic_load(&latest_); }

void TrainingRun::Loop(const std::atomic<bool>* external_stop, const std::function<void(const Progress&)>* after_step) {
  work_.running = true;
  work_.paused = false;
  Publish(true);
  while (work_.step < setup_.steps && !work_.diverged) {
    if (stop_ || (external_stop && external_stop->load())) {
      work_.message = "stopped at step " + std::to_string(work_.step) + " of " + std::to_string(setup_.steps);
      break;
    }
    if (pause_) {
      if (!work_.paused) {
        work_.paused = true;
        Publish(true);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    work_.paused = false;
    Step();
    if (after_step && *after_step) (*after_step)(work_);
  }
  if (!work_.diverged && (work_.snapshots.empty() || work_.snapshots.back()->step != work_.step)) TakeSnapshot();
  work_.running = false;
  work_.paused = false;
  work_.finished = work_.step >= setup_.steps && !work_.diverged;
  Publish(true);
  if (after_step && *after_step) (*after_step)(work_);
}

void TrainingRun::Step() {
  const double t0 = Now();
  if (setup_.batches && !setup_.data)
    setup_.batches(setup_.data_seed, work_.step, setup_.batch, batch_);
  else if (!setup_.data)
    MakeBatch(setup_.task, setup_.data_seed, static_cast<std::uint64_t>(work_.step), setup_.batch, batch_);
  // Weights that blew up show as a non-finite loss, or as activations past the
  // forward pass's value cap (it refuses them before they overflow float32).
  const StepStats* st = nullptr;
  std::string why;
  try {
    st = &trainer_.Gradients(model_, *train_batch_, grads_);
    if (!std::isfinite(st->loss)) why = "the loss became " + std::to_string(st->loss);
  } catch (const Error& e) {
    why = std::string("the activations grew out of range (") + e.what() + ")";
  }
  if (!why.empty()) return Diverge(work_.step + 1, why);
  CurvePoint p;
  p.step = work_.step + 1;
  p.lr = LearningRate(setup_.optim, work_.step);
  p.loss = static_cast<float>(st->loss);
  for (double a : st->accuracy) p.accuracy.push_back(static_cast<float>(a));
  p.grad_norm = trainer_.Update(*opt_, model_, grads_);
  // A finite loss with an overflowing gradient: the update just written is not finite.
  if (!std::isfinite(p.grad_norm))
    return Diverge(work_.step + 1, "the gradient norm became " + std::to_string(p.grad_norm));
  // The forward pass checks only what it reads on the way (layer inputs, layer weights);
  // an update can still push the unembedding or the final LayerNorm past the range a
  // checkpoint may hold, and a run must not end with weights its own load refuses.
  const std::string bad = OutOfRangeParameter(model_);
  if (!bad.empty())
    return Diverge(work_.step + 1, "the update left " + bad + " with NaN, Inf or values beyond |" +
                                       std::to_string(static_cast<int>(Limits::kMaxAbsValue)) +
                                       "|, which no checkpoint may hold");
  ++work_.step;
  work_.curve.push_back(std::move(p));
  work_.seconds += Now() - t0;
  work_.steps_per_second = work_.seconds > 0 ? work_.step / work_.seconds : 0;
  if (work_.step % setup_.snapshot_every == 0 || work_.step == setup_.steps) TakeSnapshot();
  Publish(false);
}

void TrainingRun::Diverge(int step, const std::string& why) {
  std::ostringstream e;
  e << "Training diverged at step " << step << ": " << why << ". The learning rate was "
    << LearningRate(setup_.optim, std::max(0, step - 1)) << ". Try a lower " << setup_.names.lr << " (e.g. "
    << setup_.optim.lr / 3 << ")";
  // Clipping is offered only where it is off and the caller has a way to turn it on.
  if (setup_.optim.clip <= 0 && !setup_.names.clip.empty()) e << " or gradient clipping (" << setup_.names.clip << ")";
  e << ".";
  work_.diverged = true;
  work_.message = e.str();
}

void TrainingRun::TakeSnapshot() {
  try {
    TakeSnapshotOrThrow();
  } catch (const Error& e) {  // the update just made blew the weights up
    Diverge(work_.step, std::string("the activations grew out of range (") + e.what() + ")");
  }
}

void TrainingRun::TakeSnapshotOrThrow() {
  auto snap = std::make_shared<Snapshot>();
  snap->step = work_.step;
  // Snapshots are taken between steps on the thread that trains, so model_ is still.
  const Model* model = &model_;
  if (setup_.snapshot_weights) {
    auto copy = std::make_shared<const Model>(Clone(model_));
    model = copy.get();
    snap->model = std::move(copy);
  }
  {
    // A trainer of the snapshot's own, freed before the probe trace is made: its traces
    // of the held-out set and the probe trace need not be alive at once (a 3-layer
    // d_model 1024 model on 1024 tokens peaked at 1.9 GB with one trainer kept for the
    // whole run). Snapshots are rare, so its allocation is not in any step.
    Trainer probe_trainer(1);
    snap->heads = ProfileHeads(probe_trainer, *model, heldout_, setup_.data || setup_.batches ? nullptr : &setup_.task);
    snap->heldout = probe_trainer.Evaluate(*model, heldout_);
  }
  // Computed in a scratch trace, then copied: a copy leaves the forward pass's scratch
  // (weights packed per layer: 150 MB for 4 layers of d_model 1024 with an FFN) behind,
  // so a snapshot holds only tensors; the scratch is freed until the next snapshot.
  RunModel(*model, probe_tokens_, probe_work_);
  snap->probe = probe_work_;
  probe_work_ = ModelTrace();
  work_.snapshots.push_back(std::move(snap));
}

// Readers get a fresh immutable copy; at most ~30 per second while running, so a long
// curve is not copied every millisecond.
void TrainingRun::Publish(bool force) {
  const double now = Now();
  if (!force && now - published_at_ < 1.0 / 30) return;
  published_at_ = now;
  std::atomic_store(&latest_, std::shared_ptr<const Progress>(std::make_shared<Progress>(work_)));
}

}  // namespace mha
