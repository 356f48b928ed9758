#include "gui/sources/train_session.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "gui/draw/view_widgets.hpp"
#include "lm/ablate_model.hpp"
#include "lm/model_trace.hpp"
#include "options/model_flags.hpp"
#include "gui/sources/exports.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "io/checkpoint.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The trainer leaves one core to the window: on a 2-core machine the UI thread and
// the GL rasteriser would otherwise wait for the pool's threads.
int TrainThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::max(1, static_cast<int>(hw) - 1);
}

std::string Short(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string TaskName(const TaskSpec& t) {
  std::string n = ToString(t.kind);
  if (t.kind == TaskKind::Offsets) n += " K=" + std::to_string(t.offsets);
  return n;
}

// The run's configuration in a few words: what tells its curves apart from another's.
std::string RunLabel(int id, const TrainSetup& u) {
  const Config& c = u.model.layer;
  std::string l = "run " + std::to_string(id) + ": " + TaskName(u.task) + ", " + std::to_string(c.num_heads) +
                  (c.num_heads == 1 ? " head" : " heads");
  if (c.kv_heads() != c.num_heads) l += " (" + std::to_string(c.kv_heads()) + " K/V)";
  l += ", d_model " + std::to_string(c.d_model) + ", " + std::to_string(u.model.num_layers) +
       (u.model.num_layers == 1 ? " layer" : " layers");
  if (c.block == Block::Encoder) l += " + FFN";
  l += ", lr " + Short(u.optim.lr) + ", seed " + std::to_string(c.seed);
  return l;
}

TrainSetup SetupFromChoice(const AppState& s) {
  const TrainSession& t = Training(s);
  TrainSetup u = DefaultSetup(t.task);
  const TrainSetup d = u;
  u.model.layer = s.choice.cfg;  // the Configuration panel's layer
  u.model.layer.seed = t.seed;
  u.model.layer.threads = 1;  // the app's own passes over the probe (a few tokens)
  u.model.layer.positional_encoding = false;
  u.model.num_layers = t.layers;
  u.model.positional = s.choice.cfg.positional_encoding ? t.positional : Positional::None;
  u.steps = t.steps;
  u.batch = t.batch;
  u.optim.lr = t.lr;
  u.optim.warmup = t.steps / 20;
  // One seed repeats a run: the batches' seed moves with the weights' seed (seed 1
  // gives DefaultSetup's own data seed, the measured defaults).
  u.data_seed = d.data_seed + (t.seed - d.model.layer.seed);
  u.threads = TrainThreads();
  // The engine's messages name this window's controls, not mhaviz train's flags.
  u.names.lr = "learning rate (Train settings)";
  u.names.clip = "";
  u.names.steps = "steps (Train settings)";
  u.names.batch = "The batch";
  u.names.smaller = "a smaller d_model (Configuration) or fewer layers (Train settings)";
  return u;
}

// The window keeps every run's snapshots (weights and probe trace) for the timeline
// and the curves: a run's snapshots stay under kSnapshotBudget, the session keeps
// kMaxRuns runs, and the tab trains models up to kMaxTrainParams, so the app stays
// well under 1.5 GB with the optimiser's state and the engine's activation cap.
constexpr double kSnapshotBudget = 160.0 * (1 << 20);
constexpr std::size_t kMaxRuns = 8;
constexpr std::int64_t kMaxTrainParams = std::int64_t(4) << 20;

// Checks the setup as the engine will (a teaching mha::Error), refuses models too big
// for the window, and spaces the snapshots to fit the budget (every 2% when they fit).
void FitToWindow(TrainSetup& u) {
  TrainSetup checked = u;
  Prepare(checked);
  const std::int64_t params = ParameterCount(checked.model);
  if (params > kMaxTrainParams)
    throw Error("This model has " + std::to_string(params) + " parameters; the Train tab trains models up to " +
                std::to_string(kMaxTrainParams) +
                " so that its snapshots fit in memory. Use a smaller d_model, fewer "
                "layers, or attention only (no FFN); mhaviz train takes bigger ones.");
  const double per =
      params * 4.0 + static_cast<double>(EstimateTraceBytes(checked.model.LayerConfig(), u.task.seq, u.task.seq)) *
                         checked.model.num_layers;
  const int fit = static_cast<int>(std::clamp(kSnapshotBudget / per, 2.0, 51.0));
  if (fit < 51) u.snapshot_every = std::max(1, (u.steps + fit - 2) / (fit - 1));
}

void CollectStartingRun(AppState& s);  // below StartTraining

TrainRunRecord* CurrentRecord(AppState& s) {
  for (auto& r : Training(s).runs)
    if (r.id == Training(s).current_id) return &r;
  return nullptr;
}

std::string SnapshotName(const TrainRunRecord& r, const Snapshot& sn) {
  return "run " + std::to_string(r.id) + " (" + TaskName(r.task) + ", " + std::to_string(r.num_heads) +
         (r.num_heads == 1 ? " head" : " heads") + ") at step " + std::to_string(sn.step);
}

nlohmann::json HeadsJson(const std::vector<HeadProfile>& heads) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& h : heads)
    a.push_back({{"layer", h.layer}, {"head", h.head}, {"label", h.label}, {"score", h.score}});
  return a;
}

}  // namespace

TrainSession& Training(AppState& s) { return s.views.Get<TrainSession>(); }

const TrainSession& Training(const AppState& s) {
  static const TrainSession none;
  const TrainSession* t = s.views.Find<TrainSession>();
  return t ? *t : none;
}

void TrainWorker::Replace(std::unique_ptr<TrainingRun> r) {
  if (run_) {
    run_->Pause();  // returns at once; the stop and join happen off the UI thread
    retiring_.Start([old = std::shared_ptr<TrainingRun>(std::move(run_))](TaskContext<bool>&) mutable {
      old.reset();  // TrainingRun's destructor stops its thread and joins it
      return true;
    });
  }
  run_ = std::move(r);
}

TrainStatus CurrentStatus(const AppState& s) {
  if (Training(s).starting.Running()) return TrainStatus::Starting;
  const auto& p = Training(s).progress;
  if (!Training(s).worker.get() || !p) return TrainStatus::Idle;
  if (p->diverged) return TrainStatus::Diverged;
  if (p->finished) return TrainStatus::Finished;
  if (p->paused) return TrainStatus::Paused;
  if (p->running || p->step < p->total) return TrainStatus::Running;
  return TrainStatus::Stopped;
}

const char* ToString(TrainStatus st) {
  switch (st) {
    case TrainStatus::Idle: return N_("idle");
    case TrainStatus::Starting: return N_("starting");
    case TrainStatus::Running: return N_("running");
    case TrainStatus::Paused: return N_("paused");
    case TrainStatus::Finished: return N_("finished");
    case TrainStatus::Diverged: return N_("diverged");
    case TrainStatus::Stopped: return N_("stopped");
  }
  return "";
}

void UpdateTraining(AppState& s) {
  TrainSession& t = Training(s);
  CollectStartingRun(s);
  t.worker.Poll();
  TrainingRun* run = t.worker.get();
  if (!run) return;
  std::shared_ptr<const Progress> p = run->Latest();
  if (p == t.progress) return;
  TrainRunRecord* rec = CurrentRecord(s);
  const std::size_t before = t.progress ? t.progress->snapshots.size() : 0;
  t.progress = p;
  if (!rec) return;
  rec->progress = p;
  if (p->diverged && t.message != p->message) {
    t.message = p->message;
    t.message_ok = false;
  }
  const int index = static_cast<int>(rec - t.runs.data());
  const bool following = t.shown_run == index && t.timeline < 0;
  if (following && p->snapshots.size() != before && UsingTrainedModel(s) && s.choice.source.run_id == rec->id)
    ShowSnapshot(s, index, -1);
}

void ApplyTaskDefaults(AppState& s) {
  TrainSession& t = Training(s);
  const TrainSetup d = DefaultSetup(t.task);
  Config c = s.choice.cfg;
  const Config& dc = d.model.layer;
  c.d_model = dc.d_model;
  c.num_heads = dc.num_heads;
  c.num_kv_heads = 0;
  c.norm = dc.norm;
  c.block = dc.block;
  c.scale = dc.scale;
  c.mask = TaskMask(t.task);
  c.positional_encoding = d.model.positional != Positional::None;
  for (const auto& edit : t.flag_edits) edit(c);
  s.choice.cfg = c;
  t.layers = d.model.num_layers;
  if (d.model.positional != Positional::None) t.positional = d.model.positional;
  t.steps = d.steps;
  t.lr = d.optim.lr;
  t.seed = dc.seed;
  t.batch = d.batch;
  s.dirty = true;
}

void PrepareTrainView(AppState& s) {
  if (Training(s).defaults_applied) return;
  Training(s).defaults_applied = true;
  // The heads and the curves need the height more than the shape flow's table does
  // (its Show button brings it back; the other tabs keep showing the trained model).
  s.ui.splitters.flow_collapsed = true;
  if (Training(s).path[0] == '\0') std::snprintf(Training(s).path.data(), Training(s).path.size(), "mhaviz-model.npz");
  ApplyTaskDefaults(s);
  Training(s).defaults_note = {"", TaskName(Training(s).task), s.choice.cfg.num_heads, s.choice.cfg.d_model};
  Training(s).message = Training(s).defaults_note.shown = TaskDefaultsMessage(s);
  Training(s).message_ok = true;
  if (Training(s).autostart) StartTraining(s);
}

std::string TaskDefaultsMessage(const AppState& s) {
  const TrainSession::DefaultsNote& n = Training(s).defaults_note;
  if (UsingLanguageModel(s))
    return i18n::Format(P_("Train trains a new model with the %s task's defaults (%d head, d_model %d). The "
                           "Configuration panel shows the loaded language model until then; to change the new "
                           "model's sizes first, pick Seeded random weights under Model and set them there.",
                           "Train trains a new model with the %s task's defaults (%d heads, d_model %d). The "
                           "Configuration panel shows the loaded language model until then; to change the new "
                           "model's sizes first, pick Seeded random weights under Model and set them there.",
                           n.num_heads),
                        n.task.c_str(), n.num_heads, n.d_model);
  return i18n::Format(P_("The Configuration panel now holds the %s task's defaults (%d head, d_model %d); "
                         "change them there, then press Train.",
                         "The Configuration panel now holds the %s task's defaults (%d heads, d_model %d); "
                         "change them there, then press Train.",
                         n.num_heads),
                      n.task.c_str(), n.num_heads, n.d_model);
}

void StartTraining(AppState& s) {
  TrainSession& t = Training(s);
  const TrainStatus st = CurrentStatus(s);
  if (st == TrainStatus::Paused) {
    t.worker.get()->Start();
    return;
  }
  if (st == TrainStatus::Running || st == TrainStatus::Starting) return;
  try {
    TrainSetup setup = SetupFromChoice(s);
    FitToWindow(setup);  // the engine's checks, on the UI thread: their message at once
    t.starting.Start([setup](TaskContext<std::unique_ptr<TrainingRun>>&) {
      auto run = std::make_unique<TrainingRun>(setup);
      run->Start();
      return run;
    });
    t.message.clear();
  } catch (const std::exception& e) {
    t.message = std::string(_("Cannot train this model: ")) + e.what();
    t.message_ok = false;
  }
}

namespace {

// The run set up off the UI thread becomes the current one and drives the views.
void AdoptRun(AppState& s, std::unique_ptr<TrainingRun> run) {
  TrainSession& t = Training(s);
  TrainRunRecord rec;
  rec.id = t.next_id++;
  rec.label = RunLabel(rec.id, run->setup());
  rec.task = run->setup().task;
  rec.num_heads = run->setup().model.layer.num_heads;
  rec.num_layers = run->setup().model.num_layers;
  rec.progress = run->Latest();
  t.worker.Replace(std::move(run));
  t.progress = rec.progress;
  t.current_id = rec.id;
  if (t.runs.size() >= kMaxRuns) t.runs.erase(t.runs.begin());  // the oldest run's curves go
  t.runs.push_back(std::move(rec));
  t.shown_run = static_cast<int>(t.runs.size()) - 1;
  t.timeline = -1;
  t.big_head = -1;
  t.show_loaded = false;
  ShowSnapshot(s, t.shown_run, -1);  // the trained model drives the other views from step 0
}

// Once the set-up is done: the run, or the engine's refusal.
void CollectStartingRun(AppState& s) {
  TrainSession& t = Training(s);
  if (!t.starting.Poll()) return;
  if (std::shared_ptr<std::unique_ptr<TrainingRun>> run = t.starting.Take()) {
    AdoptRun(s, std::move(*run));
  } else {
    t.message = std::string(_("Cannot train this model: ")) + t.starting.error();
    t.message_ok = false;
  }
}

}  // namespace

void PauseTraining(AppState& s) {
  if (TrainingRun* r = Training(s).worker.get()) r->Pause();
}

void ResetTraining(AppState& s) {
  TrainSession& t = Training(s);
  if (!t.worker.get()) return;
  t.worker.Replace(nullptr);
  t.progress.reset();
  t.current_id = 0;
  t.message = _("Stopped. The curves stay; Train starts again from fresh weights.");
  t.message_ok = true;
}

void ClearOldRuns(AppState& s) {
  TrainSession& t = Training(s);
  std::vector<TrainRunRecord> keep;
  for (auto& r : t.runs)
    if (r.id == t.current_id) keep.push_back(std::move(r));
  t.runs = std::move(keep);
  t.shown_run = t.runs.empty() ? -1 : 0;
  t.timeline = -1;
}

void ShowSnapshot(AppState& s, int run, int snapshot) {
  TrainSession& t = Training(s);
  if (run < 0 || run >= static_cast<int>(t.runs.size())) return;
  const TrainRunRecord& r = t.runs[static_cast<std::size_t>(run)];
  if (!r.progress || r.progress->snapshots.empty()) return;
  const auto& snaps = r.progress->snapshots;
  const int k =
      snapshot < 0 ? static_cast<int>(snaps.size()) - 1 : std::min(snapshot, static_cast<int>(snaps.size()) - 1);
  t.shown_run = run;
  t.timeline = snapshot < 0 ? -1 : k;
  t.show_loaded = false;
  const Snapshot& sn = *snaps[static_cast<std::size_t>(k)];
  UseTrainedModel(s, sn.model, SnapshotName(r, sn), r.id, sn.probe.tokens);
}

const Snapshot* ShownSnapshot(const AppState& s) {
  const TrainSession& t = Training(s);
  if (t.shown_run < 0 || t.shown_run >= static_cast<int>(t.runs.size())) return nullptr;
  const auto& p = t.runs[static_cast<std::size_t>(t.shown_run)].progress;
  if (!p || p->snapshots.empty()) return nullptr;
  const int n = static_cast<int>(p->snapshots.size());
  const int k = t.timeline < 0 ? n - 1 : std::min(t.timeline, n - 1);
  return p->snapshots[static_cast<std::size_t>(k)].get();
}

HeadsPicture CurrentHeads(const AppState& s) {
  HeadsPicture h;
  if (Training(s).show_loaded && Training(s).loaded && UsingTrainedModel(s) &&
      s.choice.source.model == Training(s).loaded) {
    h.probe = &s.result.pass;
    h.heads = &Training(s).loaded_heads;
    h.cfg = &Training(s).loaded->cfg;
    return h;
  }
  if (const Snapshot* sn = ShownSnapshot(s)) {
    h.probe = &sn->probe;
    h.heads = &sn->heads;
    h.cfg = &sn->model->cfg;
    h.step = sn->step;
  }
  return h;
}

std::string RunStory(const TrainRunRecord& r) {
  if (!r.progress || r.progress->snapshots.empty()) return "";
  const auto& snaps = r.progress->snapshots;
  const auto& last = snaps.back()->heads;
  std::multimap<int, std::string> events;  // step -> "head 1 locks onto 2-back"
  for (std::size_t h = 0; h < last.size(); ++h) {
    const std::string& label = last[h].label;
    if (label == "spread") continue;
    std::size_t from = snaps.size() - 1;
    while (from > 0 && snaps[from - 1]->heads.size() == last.size() && snaps[from - 1]->heads[h].label == label) --from;
    char who[128];
    if (r.num_layers > 1)
      std::snprintf(who, sizeof who, _("layer %d head %d locks onto %s"), last[h].layer, last[h].head,
                    HeadPatternText(label).c_str());
    else
      std::snprintf(who, sizeof who, _("head %d locks onto %s"), last[h].head, HeadPatternText(label).c_str());
    events.emplace(snaps[from]->step, who);
  }
  bool noise = true;
  for (const auto& h : snaps.front()->heads) noise &= h.label == "spread";
  std::string story = noise ? _("step 0: noise (every head spread)") : "";
  int step = -1;
  for (const auto& [st, what] : events) {
    if (!story.empty()) story += st == step ? ", " : " ... ";
    char at[64];
    std::snprintf(at, sizeof at, _("step %d: "), st);
    if (st != step) story += at;
    story += what;
    step = st;
  }
  if (events.empty()) story += std::string(" ... ") + _("no head settled on a pattern");
  return story;
}

void SaveCheckpoint(AppState& s, const std::string& path) {
  TrainSession& t = Training(s);
  auto fail = [&](const std::string& m) {
    t.message = m;
    t.message_ok = false;
  };
  if (path.empty()) return fail(_("Type a file name to save the model to, e.g. model.npz."));
  if (!UsingTrainedModel(s))
    return fail(_("No trained model to save: press Train (or load a checkpoint) and keep it selected as the model."));
  try {
    Model m = Clone(*s.choice.source.model);
    io::WriteFilesAtomic({{path, io::EncodeModel(m)}});
    t.message = i18n::Format(_("Saved %s to %s. Open it with mhaviz trace --model %s, or Load it here."),
                             s.choice.source.name.c_str(), AbsolutePath(path).c_str(), path.c_str());
    t.message_ok = true;
  } catch (const std::exception& e) {
    fail(std::string(_("Could not save the model: ")) + e.what());
  }
}

void LoadCheckpoint(AppState& s, const std::string& path) {
  TrainSession& t = Training(s);
  if (path.empty()) {
    t.message = _("Type the path of a checkpoint from mhaviz train --out (or Save), e.g. model.npz.");
    t.message_ok = false;
    return;
  }
  try {
    Model m = io::LoadModel(path);
    std::vector<int> probe;
    std::vector<HeadProfile> heads;
    if (!m.cfg.task.empty()) {
      // The example `mhaviz trace --model` shows by default, and labels measured on
      // held-out sequences of the same stream.
      const TaskSpec task = io::ParseTaskJson(m.cfg.task, "'" + path + "'");
      Batch first;
      HeldOutBatch(task, m.cfg.layer.seed, 0, 1, first);
      probe.assign(first.tokens.begin(), first.tokens.end());
      Trainer trainer(1);
      heads = lm::HeldOutLabels(trainer, m, task, path);  // in parts the memory estimate sizes
    } else {
      for (int i = 0; i < std::min(m.cfg.max_seq, 8); ++i) probe.push_back(i % m.cfg.vocab_size());
    }
    t.loaded = std::make_shared<const Model>(std::move(m));
    t.loaded_path = path;
    t.loaded_probe = probe;
    t.loaded_heads = std::move(heads);
    ShowTrainedModel(s);
    t.message = i18n::Format(_("Loaded %s: %d layer(s) of %d heads. The views show it now."),
                             AbsolutePath(path).c_str(), t.loaded->cfg.num_layers, t.loaded->cfg.layer.num_heads);
    t.message_ok = true;
  } catch (const std::exception& e) {
    t.message = std::string(_("Could not load the checkpoint: ")) + e.what();
    t.message_ok = false;
  }
}

void ApplyModelFlags(const options::ModelFlags& m, AppState& s) {
  if (m.model.empty()) return;
  // Checks everything (file, ids, example, layer) with the messages `trace --model` gives.
  const lm::LoadedModelTrace first = lm::LoadForTrace(m.model, m.tokens, m.example, m.layer);
  LoadCheckpoint(s, m.model);
  if (!Training(s).message_ok) throw Error(Training(s).message);
  s.choice.layer = first.layer;
  SetSentence(s, JoinIds(first.trace.tokens));
}

bool TrainedModelAvailable(const AppState& s, std::string* name) {
  const TrainSession& t = Training(s);
  if (t.show_loaded && t.loaded) {
    if (name) *name = t.loaded_path;
    return true;
  }
  if (const Snapshot* sn = ShownSnapshot(s)) {
    if (name) *name = SnapshotName(t.runs[static_cast<std::size_t>(t.shown_run)], *sn);
    return true;
  }
  if (t.loaded) {
    if (name) *name = t.loaded_path;
    return true;
  }
  return false;
}

void ShowTrainedModel(AppState& s) {
  TrainSession& t = Training(s);
  if (!t.show_loaded && ShownSnapshot(s)) return ShowSnapshot(s, t.shown_run, t.timeline);
  if (!t.loaded) return;
  t.show_loaded = true;
  UseTrainedModel(s, t.loaded, t.loaded_path, 0, t.loaded_probe);
}

bool TrainViewAnimating(const AppState& s) {
  const TrainStatus st = CurrentStatus(s);
  const TrainSession& t = Training(s);
  return st == TrainStatus::Running || st == TrainStatus::Starting || t.playing || t.export_job.Running();
}

nlohmann::json TrainProbeJson(const AppState& s) {
  const auto& p = Training(s).progress;
  nlohmann::json j{{"status", ToString(CurrentStatus(s))},
                   {"step", p ? p->step : 0},
                   {"total", p ? p->total : 0},
                   {"runs", Training(s).runs.size()},
                   {"timeline", Training(s).timeline},
                   {"message", Training(s).message},
                   {"path", std::string(Training(s).path.data())},
                   {"source", UsingTrainedModel(s) ? s.choice.source.name : std::string()}};
  if (const Snapshot* sn = ShownSnapshot(s)) {
    j["shown_step"] = sn->step;
    j["heads"] = HeadsJson(sn->heads);
  }
  return j;
}

}  // namespace mha::gui
