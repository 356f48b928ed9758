// `mhaviz train` and `mhaviz grad`. Training runs on TrainingRun, the loop the app's
// Train view runs too, here on the calling thread. Nothing is written until it ends:
// the checkpoint (with --log and the pictures) is written atomically once, after the
// last step or a Ctrl-C, and never after a diverged step.
#include "train_cmd.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/train_exports.hpp"
#include "io/checkpoint.hpp"
#include "mha/heads.hpp"
#include "mha/training_run.hpp"
#include "lm/model_trace.hpp"
#include "options/flags.hpp"
#include "options/shared_flags.hpp"
#include "options/table.hpp"
#include "render/train_render.hpp"
#include "text_train.hpp"
#include "train_options.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

// Set by the signal handler, polled by TrainingRun between steps (and by the corpus's
// tokenizer during set-up).
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a lock-free atomic is safe to set in a signal handler");
// The first signal asks for a stop; a second means "now" (a stop timeout, an impatient
// user): the temporary files of a write in progress are removed and the process ends
// with 128 + signal, as the signal itself would end it.
extern "C" void OnStopSignal(int sig) {
  if (g_stop.exchange(true)) {
    io::RemoveStagedFiles();
    _exit(128 + sig);
  }
}

// SIGINT and SIGTERM ask the run to stop after the current step; the previous
// handlers come back when training ends.
class StopOnSignal {
 public:
  StopOnSignal() {
    g_stop = false;
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignal() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  const std::atomic<bool>* flag() const { return &g_stop; }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

std::string Accuracies(const std::vector<float>& acc) {
  std::string s;
  for (std::size_t k = 0; k < acc.size(); ++k) s += (k ? "/" : "") + Fixed(acc[k], 2);
  return s;
}

// One line redrawn with \r on a terminal; plain lines every ~5% of the run elsewhere
// (a log file or CI output stays readable).
class ProgressBar {
 public:
  explicit ProgressBar(int steps) : steps_(steps), tty_(isatty(fileno(stderr)) != 0), every_(std::max(1, steps / 20)) {}
  void Update(const Progress& p) {
    const int done = p.step;
    if (done == shown_ || p.curve.empty()) return;
    if (!tty_ && !(done % every_ == 0 || done == steps_)) return;
    shown_ = done;
    const CurvePoint& last = p.curve.back();
    const double rate = p.seconds > 0 ? done / p.seconds : 0;
    const double eta = rate > 0 ? (steps_ - done) / rate : 0;
    std::string line = "step " + std::to_string(done) + "/" + std::to_string(steps_) + "  loss " + Fixed(last.loss, 4) +
                       "  acc " + Accuracies(last.accuracy) + "  " + Fixed(rate, 1) + " steps/s  ETA " + Fixed(eta, 0) +
                       " s";
    if (tty_) {
      std::cerr << "\r" << line << "\x1b[K" << std::flush;
      drawn_ = true;
    } else {
      std::cerr << line << "\n";
    }
  }
  void Finish() {
    if (drawn_) std::cerr << "\n";
    drawn_ = false;
  }

 private:
  int steps_;
  bool tty_;
  int every_;
  int shown_ = -1;
  bool drawn_ = false;
};

nlohmann::json HeadsJson(const std::vector<HeadProfile>& heads) {
  nlohmann::json a = nlohmann::json::array();
  for (const HeadProfile& h : heads)
    a.push_back({{"layer", h.layer},
                 {"head", h.head},
                 {"label", h.label},
                 {"score", h.score},
                 {"back", h.back},
                 {"self", h.self},
                 {"first", h.first},
                 {"reverse", h.reverse},
                 {"induction", h.induction}});
  return a;
}

struct TrainArgs {
  TrainOptions opt;
  std::string out, log, init, data;
  TrainExports exports;
  TextTrainArgs text;  // --task text
};

const char* kTrainAbout =
    "mhaviz train: train a small Transformer on a task whose heads visibly specialise, and write its "
    "checkpoint (.npz).";
const char* kTrainFooter =
    "Examples:\n"
    "  mhaviz train --task offsets --out model.npz                 2 heads learn the tokens 1 and 2 back\n"
    "  mhaviz train --task offsets --heads 1 --out one_head.npz    1 head: one offset stays near chance\n"
    "  mhaviz train --task induction --layers 2 --out ind.npz\n"
    "  mhaviz train --task text --corpus assets/corpus --tokenizer assets/models/mhaviz-small.model \\\n"
    "      --layers 2 --heads 4 --d-model 128 --block encoder --seq 64 --out lm.npz   a language model\n"
    "  mhaviz train --task offsets --out m.npz --gif heads.gif --png final.png --curves curves.svg\n"
    "  mhaviz train --init M.npz --data T.npz --steps 20 --log train.csv --out M2.npz\n"
    "Ends with one JSON line on stdout: loss, held-out accuracy per target, steps/s, and what each head does.";

// Runs f, turning an mha::Error into a usage error (exit 2): for checks of what the
// flags describe.
template <typename F>
auto AsUsage(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

// Flags that shape a new model; with --init the checkpoint decides them.
const char* const kModelFlags[] = {"--layers", "--heads", "--d-model",    "--kv-heads", "--norm",
                                   "--block",  "--d-ff",  "--activation", "--mask",     "--pos"};

// Snapshots of the probe trace, for --gif, are kept within this budget (fewer frames
// for a big model, never fewer than the first and the last).
constexpr double kSnapshotBudgetBytes = 256.0 * (1 << 20);

// Held out: 256 sequences where memory allows, so the accuracy is not the noise of a
// handful. The run keeps the training batch's and the held-out set's activations at
// once (two Trainers), so together they stay within half the step's cap (measured: a
// 4-layer d_model 256 model at seq 128, batch 32, peaks at 1.1 GB instead of 1.5).
std::shared_ptr<const Batch> HeldOutSet(const ModelConfig& m, const TaskSpec& t, std::uint64_t seed, int batch) {
  const MemoryEstimate one = EstimateEvaluation(m, 1, t.seq);  // traces and logits of one sequence
  const double per = one.activations + one.logits;
  int n = 256;
  while (n > 1 && per * (batch + n) > static_cast<double>(Limits::kMaxTraceBytes) / 2) n /= 2;
  auto h = std::make_shared<Batch>();
  HeldOutBatch(t, seed, 0, n, *h);
  return h;
}

// The run the flags describe: the model (new, or --init's), its data (a task, or
// --data's batch), the held-out set, the optimiser; validated before anything trains.
TrainSetup MakeSetup(const CLI::App& app, const TrainArgs& a, Model& init, std::shared_ptr<TextTraining>& text) {
  const TrainOptions& o = a.opt;
  if (o.task.empty() == a.data.empty())
    throw UsageError(o.task.empty()
                         ? "give --task (offsets, reverse, sort, induction, text) to train on generated data, "
                           "or --data T.npz to train on a batch file."
                         : "--task and --data both name the training data; give one of them.");
  TrainSetup s;
  s.model_given = true;
  if (o.task == kTextTaskFlag) {
    try {
      TextTrainArgs args = a.text;
      args.stop = &g_stop;
      text = TextTraining::Load(args, o);
    } catch (const TextTraining::UsageError& e) {
      throw UsageError(e.what());
    } catch (const lm::Stopped&) {
      throw io::Interrupted(
          "stopped while the corpus was being tokenized, before the first step: nothing was trained "
          "or written.",
          SIGINT);  // exit 130, as a run stopped between steps
    }
  } else if (!o.task.empty()) {
    s.task = AsUsage([&] { return TaskFromOptions(o); });
  }
  if (!a.data.empty()) s.data = std::make_shared<const Batch>(io::LoadBatch(a.data));
  if (!a.init.empty()) {
    for (const char* f : kModelFlags)
      if (app.count(f) > 0)
        throw UsageError(std::string(f) +
                         " shapes a new model, but --init loads one whose configuration is fixed. "
                         "Leave out " +
                         f + ", or leave out --init to build a new model.");
    init = io::LoadModel(a.init);
    s.model = init.cfg;
    if (text) text->CheckModel(init.cfg, a.init);
  } else if (text) {
    s.model = AsUsage([&] { return text->NewModel(o); });
  } else {
    s.model = AsUsage([&] {
      return ModelFromOptions(o, s.data ? nullptr : &s.task, s.data ? s.data->num_targets : 1,
                              s.data ? s.data->seq : 1);
    });
  }
  const int seq = s.data ? s.data->seq : text ? text->seq() : s.task.seq;
  const int batch = s.data ? s.data->batch : o.batch;
  // --steps 0 writes the initial model: no step's activations or logits are ever made.
  const int step_batch = o.steps > 0 ? batch : 0;
  AsUsage([&] { CheckStepMemory(s.model, step_batch, seq); });
  s.model.layer.threads = o.threads;
  init.cfg.layer.threads = o.threads;
  if (!s.data && !text) {
    Batch probe;
    MakeBatch(s.task, o.seed, 0, 1, probe);
    try {
      CheckBatch(s.model, probe);
    } catch (const Error& e) {
      throw Error(std::string("the task does not fit the model from --init: ") + e.what());
    }
  } else if (s.data) {
    try {
      CheckBatch(s.model, *s.data);
    } catch (const Error& e) {
      throw Error("'" + a.data + "' does not fit the model: " + e.what());
    }
  }
  s.optim = OptimFromOptions(o);
  s.steps = o.steps;
  s.batch = o.batch;
  s.data_seed = o.seed;
  s.threads = o.threads;
  s.snapshot_weights = false;  // the checkpoint is the run's own weights; pictures need only the traces
  // Prepare's rule is then CheckStepMemory's over max(batch, held-out), the cap this
  // command has always used; the held-out set itself is sized just below.
  s.max_activation_bytes = 1.5 * static_cast<double>(Limits::kMaxTraceBytes);
  if (text) {  // a text model: windows of the corpus each step, and the first held-out windows
    s.batches = [text](std::uint64_t seed, int step, int batch, Batch& out) {
      text->MakeBatch(seed, step, batch, out);
    };
    s.heldout = std::make_shared<Batch>(text->HeldOutWindows(o.batch));
  } else if (!s.data) {
    s.heldout = HeldOutSet(s.model, s.task, o.seed, o.batch);
  }
  // Beside the step's buffers: the snapshots' evaluation of the held-out set (--data's
  // batch itself), and for a text model the validation passes' own trainer too.
  AsUsage([&] {
    if (text)
      CheckStepMemory(s.model, step_batch, seq, o.batch, 2, text->corpus_bytes());
    else
      CheckStepMemory(s.model, step_batch, seq, s.data ? batch : s.heldout->batch, 1);
  });
  AsUsage([&] {
    TrainSetup trial = s;
    Prepare(trial);
  });
  // Snapshots: only the first and the last, unless a GIF wants the run's story.
  if (a.exports.gif.empty()) {
    s.snapshot_every = std::max(1, s.steps);
  } else {
    const double per = static_cast<double>(EstimateTraceBytes(s.model.LayerConfig(), seq, seq)) * s.model.num_layers;
    const int fit = std::max(1, static_cast<int>(kSnapshotBudgetBytes / std::max(1.0, per)) - 2);
    s.snapshot_every = std::max({1, s.steps / 50, (s.steps + fit - 1) / fit});
  }
  return s;
}

int RunTrain(const CLI::App& app, const TrainArgs& a) {
  const StopOnSignal signals;  // from the start: a Ctrl-C during set-up stops before step 0
  CheckExportPaths(a.exports, {{"--out", a.out}, {"--log", a.log}});
  Model init;
  std::shared_ptr<TextTraining> text;
  const TrainSetup setup = MakeSetup(app, a, init, text);
  auto run = AsUsage([&] { return std::make_unique<TrainingRun>(setup, init); });  // AdamW checks --lr etc.
  init = Model{};
  const ModelConfig& cfg = run->model().cfg;
  render::GridOptions grid;
  grid.title = render::ModelTitle(cfg);
  grid.total_steps = setup.steps;
  TryExports(a.exports, *run->Latest()->snapshots.front(), grid);
  if (text)
    std::cerr << "Task text: predict each next piece of the text (" << text->description() << ").\n";
  else if (!setup.data)
    std::cerr << "Task " << ToString(setup.task.kind) << ": " << Explain(setup.task) << "\n";
  std::cerr << "Model: " << cfg.num_layers << " layer(s), " << cfg.layer.num_heads << " head(s), d_model "
            << cfg.layer.d_model << ", " << ParameterCount(cfg) << " parameters.\n";

  ProgressBar bar(setup.steps);
  // A text model's validation loss on the held-out text, on its own line now and then.
  Trainer validator(setup.threads);
  nlohmann::json valid = nlohmann::json::array();
  auto validate = [&] { return text->Validate(validator, run->model(), setup.batch); };
  run->RunHere(signals.flag(), [&](const Progress& p) {
    bar.Update(p);
    // Not once a stop was asked for: it has to come within a step (and the write).
    if (text && !p.diverged && !g_stop.load() && text->ValidateAfter(p.step, setup.steps)) {
      const StepStats v = validate();
      valid.push_back(
          {{"step", p.step}, {"loss", v.loss}, {"perplexity", std::exp(v.loss)}, {"accuracy", v.accuracy[0]}});
      bar.Finish();
      std::cerr << "step " << p.step << "  validation loss " << Fixed(v.loss, 4) << "  perplexity "
                << Fixed(std::exp(v.loss), 2) << "  accuracy " << Fixed(v.accuracy[0], 3) << "\n";
    }
  });
  bar.Finish();
  const std::shared_ptr<const Progress> p = run->Latest();
  if (p->diverged) throw Error(p->message + " No checkpoint was written.");
  // Accuracy on examples training never saw (or, for --data, on the data itself),
  // measured by the run's last snapshot.
  const Snapshot& last = *p->snapshots.back();
  if (!std::isfinite(last.heldout.loss))
    throw Error(
        "training diverged in its last step: the held-out loss is not finite. Try a lower --lr or --clip 1. "
        "No checkpoint was written.");
  const bool interrupted = !p->finished;

  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back(a.out, io::EncodeModel(run->model()));  // not from an initializer list: that copies it
  if (!a.log.empty()) files.emplace_back(a.log, render::CurvesCsv(*p, cfg.num_targets));
  std::vector<std::string> notes;
  RenderExports(a.exports, *p, grid, cfg.num_targets, files, notes);
  io::WriteFilesAtomic(files);
  for (const std::string& n : notes) std::cerr << "mhaviz train: note: " << n << "\n";
  if (interrupted)
    std::cerr << "Stopped after step " << p->step << " (interrupted); the checkpoint holds the weights so far.\n";
  nlohmann::json j;
  j["status"] = interrupted ? "interrupted" : "done";
  j["steps"] = p->step;
  j["loss"] = p->curve.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->curve.back().loss);
  j["eval_on"] = setup.data ? "data" : text ? "valid" : "heldout";
  j["eval_loss"] = last.heldout.loss;
  j["accuracy"] = last.heldout.accuracy;
  if (text && !interrupted) {  // the whole held-out text, not only the snapshot's windows (not when stopping)
    const StepStats held = validate();
    std::cerr << "Validation loss " << Fixed(held.loss, 4) << ", perplexity " << Fixed(std::exp(held.loss), 2) << " ("
              << text->description() << ").\n";
    j["eval_loss"] = held.loss;
    j["accuracy"] = held.accuracy;
    j["eval_perplexity"] = std::exp(held.loss);
    j["valid_curve"] = valid;
  }
  j["seconds"] = p->seconds;
  j["steps_per_s"] = p->seconds > 0 ? p->step / p->seconds : 0.0;
  j["params"] = ParameterCount(cfg);
  j["out"] = a.out;
  j["heads"] = HeadsJson(last.heads);
  std::cout << j.dump(-1, ' ', true) << std::endl;
  return interrupted ? 130 : 0;
}

void DeclareTrainFlags(CLI::App& app, TrainArgs& a) {
  AddTrainOptions(app, a.opt);
  AddTextTrainFlags(app, a.text);
  TextFlag(app, "--out", a.out, "the checkpoint to write (.npz; numpy opens it)",
           "--out needs a file name, e.g. --out model.npz.")
      ->type_name("FILE")
      ->required()
      ->group("Files");
  TextFlag(app, "--log", a.log, "a CSV of every step: step, lr, loss, accuracy per target, grad_norm",
           "--log needs a file name, e.g. --log train.csv.")
      ->type_name("FILE")
      ->group("Files");
  app.add_option("--init", a.init, "start from this checkpoint's weights and configuration")->group("Files");
  app.add_option("--data", a.data, "train on this batch file (tokens, targets; the whole file is every step's batch)")
      ->group("Files");
  AddTrainExportFlags(app, a.exports);
}

}  // namespace

int TrainCommand(const std::vector<std::string>& args) {
  return Guard("train", [&] {
    TrainArgs a;
    CLI::App app{kTrainAbout, "mhaviz train"};
    app.footer(kTrainFooter);
    DeclareTrainFlags(app, a);
    if (ParseFlags(app, "train", args)) {
      std::cout << app.help();
      return 0;
    }
    return RunTrain(app, a);
  });
}

int GradCommand(const std::vector<std::string>& args) {
  return Guard("grad", [&] {
    std::string model, data, out;
    int threads = 0;
    CLI::App app{
        "mhaviz grad: one forward and backward pass of a checkpoint over a batch file; writes the loss and "
        "the gradient of every parameter (grad.<name>) to an .npz, to check against another framework.",
        "mhaviz grad"};
    app.add_option("--model", model, "the checkpoint (mhaviz train --out)")->required();
    app.add_option("--data", data, "the batch: tokens (batch, seq), targets (batch, seq[, K]), -1 = no target")
        ->required();
    TextFlag(app, "--out", out, "the .npz to write: loss, grad.<name> for every parameter",
             "--out needs a file name, e.g. --out grads.npz.")
        ->type_name("FILE")
        ->required();
    ThreadsFlag(
        app, [&threads](int v) { threads = v; }, "CPU threads (0: one per core); the result is the same for any count",
        /*every_core_at_zero=*/true);
    if (ParseFlags(app, "grad", args)) {
      std::cout << app.help();
      return 0;
    }
    try {
      io::CheckOutputs({{"--out", out}});
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " Nothing was computed.");
    }
    Model m = io::LoadModel(model);
    const Batch b = io::LoadBatch(data);
    try {
      CheckBatch(m.cfg, b);
    } catch (const Error& e) {
      throw Error("'" + data + "' does not fit the model: " + e.what());
    }
    CheckStepMemory(m.cfg, b.batch, b.seq);  // traces, logits and gradients, before any is allocated
    Trainer trainer(threads);
    Model grads = ZerosLike(m);
    const StepStats st = trainer.Gradients(m, b, grads);
    // Inf or NaN would be written as if they were gradients: refused instead.
    if (!std::isfinite(st.loss))
      throw Error("the loss on '" + data + "' is not a finite number (" + std::to_string(st.loss) +
                  "): the checkpoint's values overflow float32 on this batch, so there are no gradients to write.");
    for (const ParamView& p : Parameters(grads))
      if (!Eigen::Map<const Eigen::ArrayXf>(p.data, p.size()).allFinite())
        throw Error("the gradient of " + p.name +
                    " is not finite (Inf or NaN): the backward pass overflowed "
                    "float32 on '" +
                    data + "'. Nothing was written.");
    io::WriteFileAtomic(out, io::EncodeGradients(st.loss, grads));
    nlohmann::json j{{"loss", st.loss}, {"accuracy", st.accuracy}, {"out", out}};
    std::cout << j.dump(-1, ' ', true) << std::endl;
    return 0;
  });
}

}  // namespace mha::cli
