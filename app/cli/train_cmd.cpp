// `mhaviz train` and `mhaviz grad`. Training writes nothing until it ends: the
// checkpoint (and --log) are written atomically once, after the last step, after a
// Ctrl-C, and never after a diverged step.
#include "train_cmd.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/checkpoint.hpp"
#include "mha/heads.hpp"
#include "model_trace.hpp"
#include "text_train.hpp"
#include "train_options.hpp"

namespace mha::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void OnStopSignal(int) { g_stop = 1; }

// SIGINT and SIGTERM ask the loop to stop after the current step; the previous
// handlers come back when training ends.
class StopOnSignal {
 public:
  StopOnSignal() {
    g_stop = 0;
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
  bool stopped() const { return g_stop != 0; }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// The usage error path of every command here: exit 2, the message, where help is.
// Returns -1 when parsing succeeded.
int Parse(CLI::App& app, const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> rev(args.rbegin(), args.rend());  // CLI11 takes a vector in reverse order
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "mhaviz " << name << ": " << e.what() << "\nRun 'mhaviz " << name << " --help' for the flags.\n";
    return 2;
  }
  return -1;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Short(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Accuracies(const std::vector<double>& acc) {
  std::string s;
  for (std::size_t k = 0; k < acc.size(); ++k) s += (k ? "/" : "") + Fixed(acc[k], 2);
  return s;
}

// One line redrawn with \r on a terminal; plain lines every ~5% of the run elsewhere
// (a log file or CI output stays readable).
class Progress {
 public:
  explicit Progress(int steps) : steps_(steps), tty_(isatty(fileno(stderr)) != 0), every_(std::max(1, steps / 20)) {}
  void Update(int done, const StepStats& st, double seconds) {
    const bool last = done == steps_;
    if (!tty_ && !(done % every_ == 0 || last)) return;
    const double rate = seconds > 0 ? done / seconds : 0;
    const double eta = rate > 0 ? (steps_ - done) / rate : 0;
    std::string line = "step " + std::to_string(done) + "/" + std::to_string(steps_) + "  loss " + Fixed(st.loss, 4) +
                       "  acc " + Accuracies(st.accuracy) + "  " + Fixed(rate, 1) + " steps/s  ETA " +
                       Fixed(eta, 0) + " s";
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
  bool drawn_ = false;
};

std::string CsvRow(int step, float lr, const StepStats& st, double grad_norm) {
  char buf[64];
  std::string row = std::to_string(step);
  std::snprintf(buf, sizeof buf, ",%.9g,%.9g", lr, st.loss);
  row += buf;
  for (double a : st.accuracy) {
    std::snprintf(buf, sizeof buf, ",%.6f", a);
    row += buf;
  }
  std::snprintf(buf, sizeof buf, ",%.9g\n", grad_norm);
  return row + buf;
}

std::string CsvHeader(int targets) {
  std::string h = "step,lr,loss";
  for (int k = 0; k < targets; ++k) h += ",accuracy_" + std::to_string(k);
  return h + ",grad_norm\n";
}

nlohmann::json HeadsJson(const std::vector<HeadProfile>& heads) {
  nlohmann::json a = nlohmann::json::array();
  for (const HeadProfile& h : heads)
    a.push_back({{"layer", h.layer}, {"head", h.head}, {"label", h.label}, {"score", h.score}, {"back", h.back},
                 {"self", h.self}, {"first", h.first}, {"reverse", h.reverse}, {"induction", h.induction}});
  return a;
}

struct TrainArgs {
  TrainOptions opt;
  std::string out, log, init, data;
  TextTrainArgs text;
};

const char* kTrainFooter =
    "\nExamples:\n"
    "  mhaviz train --task offsets --out model.npz                 2 heads learn the tokens 1 and 2 back\n"
    "  mhaviz train --task offsets --heads 1 --out one_head.npz    1 head: the 2-back target stays at chance\n"
    "  mhaviz train --task induction --layers 2 --out ind.npz\n"
    "  mhaviz train --task text --corpus assets/corpus --tokenizer assets/models/mhaviz-small.model \\\n"
    "      --layers 2 --heads 4 --d-model 128 --block encoder --seq 64 --out lm.npz   a language model\n"
    "  mhaviz train --init M.npz --data T.npz --steps 20 --log train.csv --out M2.npz\n"
    "Ends with one JSON line on stdout: loss, held-out accuracy per target, steps/s, and what each head does.\n";

// The model to train and its batches: from the flags and a task, or from files.
struct Setup {
  Model model;
  bool have_task = false;
  TaskSpec task;
  bool have_data = false;
  Batch data;
  std::shared_ptr<TextTraining> text;  // --task text
  OptimConfig optim;
};

// An error and its exit status: 2 for flags that cannot work, 1 for files.
struct Failure {
  int code;
  std::string message;
};

template <typename F>
auto Guard(int code, const std::string& prefix, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw Failure{code, prefix + e.what()};
  }
}

// Flags that shape a new model; with --init the checkpoint decides them.
const char* const kModelFlags[] = {"--layers", "--heads", "--d-model", "--kv-heads", "--norm", "--block",
                                   "--d-ff", "--activation", "--mask", "--pos"};

Setup Prepare(const CLI::App& app, const TrainArgs& a) {
  Setup s;
  const TrainOptions& o = a.opt;
  if (o.task.empty() == a.data.empty())
    throw Failure{2, o.task.empty() ? "give --task (offsets, reverse, sort, induction, text) to train on generated data, "
                                      "or --data T.npz to train on a batch file."
                                    : "--task and --data both name the training data; give one of them."};
  if (o.task == kTextTaskFlag) {
    try {
      s.text = TextTraining::Load(a.text, o);
    } catch (const TextTraining::UsageError& e) {
      throw Failure{2, e.what()};
    }
  } else if (!o.task.empty()) {
    s.task = Guard(2, "", [&] { return TaskFromOptions(o); });
    s.have_task = true;
  }
  if (!a.data.empty()) {
    s.data = Guard(1, "", [&] { return io::LoadBatch(a.data); });
    s.have_data = true;
  }
  if (!a.init.empty()) {
    for (const char* f : kModelFlags)
      if (app.count(f) > 0)
        throw Failure{2, std::string(f) + " shapes a new model, but --init loads one whose configuration is fixed. "
                                          "Leave out " + f + ", or leave out --init to build a new model."};
    s.model = Guard(1, "", [&] { return io::LoadModel(a.init); });
    if (s.text) Guard(1, "", [&] { s.text->CheckModel(s.model.cfg, a.init); });
  } else if (s.text) {
    s.model.cfg = Guard(2, "", [&] { return s.text->NewModel(o); });
    s.model = Guard(2, "", [&] { return InitModel(s.model.cfg); });
  } else {
    s.model.cfg = Guard(2, "", [&] {
      return ModelFromOptions(o, s.have_task ? &s.task : nullptr, s.have_data ? s.data.num_targets : 1,
                              s.have_data ? s.data.seq : 1);
    });
    s.model = Guard(2, "", [&] { return InitModel(s.model.cfg); });
  }
  Guard(2, "", [&] { CheckStepMemory(s.model.cfg, s.have_data ? s.data.batch : o.batch,
                                     s.have_data ? s.data.seq : s.text ? s.text->seq() : s.task.seq); });
  s.model.cfg.layer.threads = o.threads;
  if (s.have_task) {
    Batch probe;
    MakeBatch(s.task, o.seed, 0, 1, probe);
    Guard(1, "the task does not fit the model from --init: ", [&] { CheckBatch(s.model.cfg, probe); });
  }
  if (s.have_data)
    Guard(1, "'" + a.data + "' does not fit the model: ", [&] { CheckBatch(s.model.cfg, s.data); });
  s.optim = OptimFromOptions(o);
  Guard(2, "", [&] { AdamW check(s.model, s.optim); });
  return s;
}

struct RunResult {
  int steps_done = 0;
  bool interrupted = false;
  StepStats last;
  double seconds = 0;
  std::string csv;
  nlohmann::json valid = nlohmann::json::array();  // text: validation losses during the run
};

// The validation loss of a text model mid-run, on its own line and in the final JSON.
void ReportValidation(const Setup& s, const TrainArgs& a, Trainer& trainer, RunResult& r, Progress& progress) {
  const StepStats v = s.text->Validate(trainer, s.model, a.opt.batch);
  progress.Finish();
  std::cerr << "step " << r.steps_done << "  validation loss " << Fixed(v.loss, 4) << "  perplexity "
            << Fixed(std::exp(v.loss), 2) << "  accuracy " << Fixed(v.accuracy[0], 3) << "\n";
  r.valid.push_back({{"step", r.steps_done}, {"loss", v.loss}, {"perplexity", std::exp(v.loss)},
                     {"accuracy", v.accuracy[0]}});
}

// The training loop. Throws Failure (exit 1) if the loss or gradient stops being finite.
RunResult Train(Setup& s, const TrainArgs& a, Trainer& trainer, const StopOnSignal& signals) {
  RunResult r;
  r.csv = CsvHeader(s.model.cfg.num_targets);
  AdamW opt(s.model, s.optim);
  Model grads = ZerosLike(s.model);
  Batch generated;
  Progress progress(a.opt.steps);
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < a.opt.steps; ++step) {
    if (signals.stopped()) {
      r.interrupted = true;
      break;
    }
    if (s.have_task) MakeBatch(s.task, a.opt.seed, static_cast<std::uint64_t>(step), a.opt.batch, generated);
    if (s.text) s.text->MakeBatch(a.opt.seed, step, a.opt.batch, generated);
    const Batch& b = s.have_data ? s.data : generated;
    const float lr = LearningRate(s.optim, step);
    auto diverged = [&](const std::string& what) {
      progress.Finish();
      return Failure{1, "training diverged at step " + std::to_string(step) + ": " + what + " (lr " + Short(lr) +
                            "). Try a lower --lr (e.g. " + Short(a.opt.lr / 3) +
                            "), keep --clip at 1 (or lower it), or add --warmup " +
                            std::to_string(std::max(10, a.opt.steps / 10)) + ". No checkpoint was written."};
    };
    try {
      r.last = trainer.Gradients(s.model, b, grads);
    } catch (const Error& e) {
      // The model and batches passed their checks before step 0, so a refusal later
      // means the updates blew the weights up (the forward pass caps |values|).
      if (step == 0) throw;
      throw diverged(std::string("the weights grew too large for the forward pass: ") + e.what());
    }
    const double norm = std::isfinite(r.last.loss) ? opt.Step(s.model, grads) : NAN;
    r.csv += CsvRow(step, lr, r.last, norm);
    if (!std::isfinite(r.last.loss)) throw diverged("the loss is no longer a finite number");
    if (!std::isfinite(norm)) throw diverged("the gradient norm is no longer a finite number");
    r.steps_done = step + 1;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.Update(r.steps_done, r.last, r.seconds);
    if (s.text && s.text->ValidateAfter(r.steps_done, a.opt.steps)) ReportValidation(s, a, trainer, r, progress);
  }
  progress.Finish();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// At least 256 held-out sequences where memory allows, so the accuracy is not the
// noise of a handful; never fewer than a training batch.
int EvalBatch(const ModelConfig& m, int batch, int seq) {
  int n = 256;
  while (n > batch) {
    try {
      CheckStepMemory(m, n, seq);
      break;
    } catch (const Error&) {
      n /= 2;
    }
  }
  return std::max(n, batch);
}

int RunTrain(const CLI::App& app, const TrainArgs& a) {
  const StopOnSignal signals;  // from the start: a Ctrl-C during set-up stops before step 0
  Setup s = Prepare(app, a);
  if (s.have_task) std::cerr << "Task " << ToString(s.task.kind) << ": " << Explain(s.task) << "\n";
  if (s.text) std::cerr << "Task text: predict each next piece of the text (" << s.text->description() << ").\n";
  std::cerr << "Model: " << s.model.cfg.num_layers << " layer(s), " << s.model.cfg.layer.num_heads << " head(s), d_model "
            << s.model.cfg.layer.d_model << ", " << ParameterCount(s.model.cfg) << " parameters.\n";
  Trainer trainer(a.opt.threads);
  RunResult r = Train(s, a, trainer, signals);
  // Accuracy on examples training never saw (or, for --data, on the data itself).
  Batch eval;
  if (s.have_task) HeldOutBatch(s.task, a.opt.seed, 0, EvalBatch(s.model.cfg, a.opt.batch, s.task.seq), eval);
  if (s.text) eval = s.text->HeldOutWindows(a.opt.batch);
  const Batch& e = s.have_task || s.text ? eval : s.data;
  const StepStats held = s.text ? s.text->Validate(trainer, s.model, a.opt.batch) : trainer.Evaluate(s.model, e);
  if (!std::isfinite(held.loss))
    throw Failure{1, "training diverged in its last step: the held-out loss is not finite. Try a lower --lr or "
                     "--clip 1. No checkpoint was written."};
  const std::vector<HeadProfile> heads = ProfileHeads(trainer, s.model, e);
  std::vector<std::pair<std::string, std::string>> files{{a.out, io::EncodeModel(s.model)}};
  if (!a.log.empty()) files.emplace_back(a.log, r.csv);
  Guard(1, "", [&] { io::WriteFilesAtomic(files); });
  if (r.interrupted)
    std::cerr << "Stopped after step " << r.steps_done << " (interrupted); the checkpoint holds the weights so far.\n";
  nlohmann::json j;
  j["status"] = r.interrupted ? "interrupted" : "done";
  j["steps"] = r.steps_done;
  j["loss"] = r.steps_done > 0 ? nlohmann::json(r.last.loss) : nlohmann::json(nullptr);
  j["eval_on"] = s.text ? "valid" : s.have_task ? "heldout" : "data";
  if (s.text) {
    std::cerr << "Validation loss " << Fixed(held.loss, 4) << ", perplexity " << Fixed(std::exp(held.loss), 2)
              << " (" << s.text->description() << ").\n";
    j["eval_perplexity"] = std::exp(held.loss);
    j["valid_curve"] = r.valid;
  }
  j["eval_loss"] = held.loss;
  j["accuracy"] = held.accuracy;
  j["seconds"] = r.seconds;
  j["steps_per_s"] = r.seconds > 0 ? r.steps_done / r.seconds : 0.0;
  j["params"] = ParameterCount(s.model.cfg);
  j["out"] = a.out;
  j["heads"] = HeadsJson(heads);
  std::cout << j.dump() << std::endl;
  return r.interrupted ? 130 : 0;
}

}  // namespace

int TrainCommand(const std::vector<std::string>& args) {
  TrainArgs a;
  CLI::App app{"mhaviz train: train a small Transformer on a task whose heads visibly specialise, and write its "
               "checkpoint (.npz).",
               "mhaviz train"};
  AddTrainOptions(app, a.opt);
  AddTextTrainFlags(app, a.text);
  app.add_option("--out", a.out, "the checkpoint to write (.npz; numpy opens it)")->required()->group("Files");
  app.add_option("--log", a.log, "a CSV of every step: step, lr, loss, accuracy per target, grad_norm")->group("Files");
  app.add_option("--init", a.init, "start from this checkpoint's weights and configuration")->group("Files");
  app.add_option("--data", a.data, "train on this batch file (tokens, targets; the whole file is every step's batch)")
      ->group("Files");
  app.footer(kTrainFooter);
  if (const int rc = Parse(app, args, "train"); rc >= 0) return rc;
  try {
    return RunTrain(app, a);
  } catch (const Failure& f) {
    std::cerr << "mhaviz train: " << f.message << "\n";
    return f.code;
  } catch (const Error& e) {
    std::cerr << "mhaviz train: " << e.what() << "\n";
    return 1;
  }
}

int GradCommand(const std::vector<std::string>& args) {
  std::string model, data, out;
  int threads = 0;
  CLI::App app{"mhaviz grad: one forward and backward pass of a checkpoint over a batch file; writes the loss and "
               "the gradient of every parameter (grad.<name>) to an .npz, to check against another framework.",
               "mhaviz grad"};
  app.add_option("--model", model, "the checkpoint (mhaviz train --out)")->required();
  app.add_option("--data", data, "the batch: tokens (batch, seq), targets (batch, seq[, K]), -1 = no target")->required();
  app.add_option("--out", out, "the .npz to write: loss, grad.<name> for every parameter")->required();
  app.add_option("--threads", threads, "CPU threads (0: one per core); the result is the same for any count")
      ->check(CLI::Range(0, Limits::kMaxThreads));
  if (const int rc = Parse(app, args, "grad"); rc >= 0) return rc;
  try {
    Model m = io::LoadModel(model);
    const Batch b = io::LoadBatch(data);
    try {
      CheckBatch(m.cfg, b);
    } catch (const Error& e) {
      throw Error("'" + data + "' does not fit the model: " + e.what());
    }
    Trainer trainer(threads);
    Model grads = ZerosLike(m);
    const StepStats st = trainer.Gradients(m, b, grads);
    io::WriteFileAtomic(out, io::EncodeGradients(st.loss, grads));
    nlohmann::json j{{"loss", st.loss}, {"accuracy", st.accuracy}, {"out", out}};
    std::cout << j.dump() << std::endl;
    return 0;
  } catch (const Error& e) {
    std::cerr << "mhaviz grad: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mha::cli
