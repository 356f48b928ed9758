// The Train tab: pick a task, press Train, and watch the heads find their jobs.
// The model is the Configuration panel's layer (num_heads, d_model, num_kv_heads,
// norm, sqrt(d_k), PE, block); this view adds the task, the number of layers and
// the run's settings, then shows the curves, the timeline and the heads grid. The
// run lives on a worker thread (sources/train_session.cpp); this view only reads its
// published progress.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "gui/views/train/train_export.hpp"
#include "gui/views/train/parts.hpp"
#include "text/i18n.hpp"
#include "options/flags.hpp"

namespace mha::gui {
namespace {

// The task's explanation (the core's Explain) in the interface's language.
std::string ExplainShown(const TaskSpec& t) {
  if (i18n::Current() == i18n::Lang::kEnglish) return Explain(t);
  char b[768];
  switch (t.kind) {
    case TaskKind::Offsets:
      std::snprintf(b, sizeof b,
                    _("At every position, predict the token 1, 2, ... %d places back. A head attends to one place at "
                      "a time, so each offset needs a head of its own: with %d heads each head learns one offset; "
                      "with 1 head only one offset is solved."),
                    t.offsets, t.offsets);
      return b;
    case TaskKind::Reverse:
      return _(
          "At position i, predict the token at position seq-1-i: each query must attend to its mirror "
          "position, an anti-diagonal pattern.");
    case TaskKind::Sort:
      return _(
          "The first half is distinct random tokens, the second half the same tokens sorted; predict each "
          "next sorted token: a head must find the smallest token larger than the current one.");
    case TaskKind::Induction:
      return _(
          "A random sequence is repeated once; in the repeat, predict the next token. Layer 0 learns a "
          "previous-token head, layer 1 an induction head that finds where the current token was before and "
          "copies what followed it (Olsson et al. 2022). One layer cannot do it.");
  }
  return Explain(t);
}

const char* NormName(Norm n) { return n == Norm::Pre ? "pre-LN" : n == Norm::Post ? "post-LN" : "no LN"; }

void DrawRunButtonsInline(AppState& s) {
  TrainSession& t = Training(s);
  const TrainStatus st = CurrentStatus(s);
  const bool running = st == TrainStatus::Running;
  ImGui::BeginDisabled(running || st == TrainStatus::Starting);
  if (ImGui::Button((std::string(st == TrainStatus::Paused ? _("Resume") : _("Train")) + "###train_button").c_str()))
    StartTraining(s);
  ImGui::EndDisabled();
  Probe(s, "train_start");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(_("Train the Configuration panel's model on the task, from fresh weights."));
  SameLineIfFits(ButtonWidth(_("Pause")));
  ImGui::BeginDisabled(!running);
  if (ImGui::Button(_("Pause"))) PauseTraining(s);
  ImGui::EndDisabled();
  Probe(s, "train_pause");
  SameLineIfFits(ButtonWidth(_("Reset")));
  ImGui::BeginDisabled(!t.worker.get());
  if (ImGui::Button(_("Reset"))) ResetTraining(s);
  ImGui::EndDisabled();
  Probe(s, "train_reset");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(_("Stop the run; its curves stay for comparison."));
}

void DrawTask(AppState& s, float lw) {
  TrainSession& t = Training(s);
  FormLabel(_("task"), lw);
  const TaskKind kinds[] = {TaskKind::Offsets, TaskKind::Reverse, TaskKind::Sort, TaskKind::Induction};
  bool task_changed = false;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9.0f);
  if (ImGui::BeginCombo("##task", ToString(t.task.kind))) {
    for (const TaskKind k : kinds)
      if (ImGui::Selectable(ToString(k), t.task.kind == k) && t.task.kind != k) {
        t.task.kind = k;
        task_changed = true;
      }
    ImGui::EndCombo();
  }
  Probe(s, "train_task");
  if (t.task.kind == TaskKind::Offsets) {
    SameLineIfFits(ImGui::CalcTextSize("K").x + ImGui::GetStyle().ItemSpacing.x + ImGui::GetFontSize() * 7.0f);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("K");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.0f);
    int k = t.task.offsets;
    if (ImGui::SliderInt("##offsets", &k, 1, 4, "%d", ImGuiSliderFlags_AlwaysClamp) && k != t.task.offsets) {
      t.task.offsets = k;
      task_changed = true;
    }
    Probe(s, "train_offsets");
  }
  // The row wraps at the view's edge at large text, so Train stays in sight.
  SameLineIfFits(ButtonWidth(_("Task defaults")));
  if (ImGui::Button(_("Task defaults"))) ApplyTaskDefaults(s);
  Probe(s, "train_defaults");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("Heads, d_model, norm, layers, steps and learning rate that solve this task in one run."));
  SameLineIfFits(ButtonWidth(_("Resume")));
  DrawRunButtonsInline(s);
  if (task_changed) ApplyTaskDefaults(s);  // a task needs its own head count, layers, steps
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextWrapped("%s", ExplainShown(t.task).c_str());
  ImGui::PopStyleColor();
}

void DrawModelLine(AppState& s, float lw) {
  const TrainSession& t = Training(s);
  const Config& c = s.choice.cfg;
  char buf[320], heads[64];
  std::snprintf(heads, sizeof heads, P_("%d head", "%d heads", c.num_heads), c.num_heads);
  std::snprintf(buf, sizeof buf, _("%s, d_model %d, %s, %s, %s mask (the task's); set in Configuration"), heads,
                c.d_model, NormName(c.norm), c.block == Block::Encoder ? _("encoder block") : _("attention only"),
                TaskMask(t.task) == Mask::Causal ? _("causal") : _("no"));
  FormLabel(_("model"), lw);
  ImGui::TextWrapped("%s", buf);
}

// Layers, positions, steps, learning rate and seed: folded, with their values in
// the heading, since the task's defaults already work.
void DrawRunSettings(AppState& s, float lw) {
  TrainSession& t = Training(s);
  const Config& c = s.choice.cfg;
  char head[320], layers[64];
  std::snprintf(layers, sizeof layers, P_("%d layer", "%d layers", t.layers), t.layers);
  std::snprintf(head, sizeof head, _("Run: %s, %s positions, %d steps, learning rate %g, seed %llu"), layers,
                c.positional_encoding ? _(ToString(t.positional)) : _("no"), t.steps, static_cast<double>(t.lr),
                static_cast<unsigned long long>(t.seed));
  std::strncat(head, "###run_settings", sizeof head - std::strlen(head) - 1);
  const bool open = ImGui::TreeNode(head);
  Probe(s, "train_settings");
  if (!open) return;
  FormLabel(_("layers"), lw);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9.0f);
  ImGui::SliderInt("##layers", &t.layers, 1, 4, "%d", ImGuiSliderFlags_AlwaysClamp);
  Probe(s, "train_layers");
  ImGui::SameLine();
  ImGui::TextUnformatted(_("positions"));
  ImGui::SameLine();
  ImGui::BeginDisabled(!c.positional_encoding);
  int pos = static_cast<int>(t.positional);
  bool p = ImGui::RadioButton(_("learned"), &pos, static_cast<int>(Positional::Learned));
  ImGui::SameLine();
  p |= ImGui::RadioButton(_("sinusoidal"), &pos, static_cast<int>(Positional::Sinusoidal));
  if (p) t.positional = static_cast<Positional>(pos);
  ImGui::EndDisabled();
  HelpMarker(
      _("How the model knows where each token is: a learned vector per position, or the fixed sin/cos "
        "encoding. Turn off Positional encoding in Configuration to train without either."));

  FormLabel(_("steps"), lw);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
  ImGui::InputInt("##steps", &t.steps, 100, 1000);
  t.steps = std::clamp(t.steps, 1, 100000);
  Probe(s, "train_steps");
  ImGui::SameLine();
  ImGui::TextUnformatted(_("learning rate"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.0f);
  ImGui::InputFloat("##lr", &t.lr, 0.0f, 0.0f, "%.4g");
  t.lr = std::clamp(t.lr, 1e-6f, 1.0f);
  Probe(s, "train_lr");
  ImGui::SameLine();
  ImGui::TextUnformatted(_("seed"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.0f);
  int seed = static_cast<int>(t.seed);
  if (ImGui::InputInt("##train_seed", &seed, 0, 0)) t.seed = static_cast<std::uint64_t>(std::max(seed, 0));
  Probe(s, "train_seed");
  ImGui::TreePop();
}

void DrawRunStatus(AppState& s) {
  TrainSession& t = Training(s);
  const TrainStatus st = CurrentStatus(s);
  const auto& p = t.progress;
  const float frac = p && p->total > 0 ? static_cast<float>(p->step) / p->total : 0.0f;
  char overlay[320];
  if (p)
    std::snprintf(overlay, sizeof overlay, _("%s: step %d of %d, %.0f steps/s"), _(ToString(st)), p->step, p->total,
                  p->steps_per_second);
  else
    std::snprintf(overlay, sizeof overlay, "%s", _("not started: press Train"));
  ImGui::ProgressBar(frac, ImVec2(-1.0f, 0.0f), overlay);
  Probe(s, "train_progress");
  if (p && !p->curve.empty()) {
    const CurvePoint& c = p->curve.back();
    std::string line = _("loss ") + Sig(c.loss, 3) + _("; accuracy on this step's batch:");
    for (float a : c.accuracy) line += " " + Sig(a, 3);
    if (!p->snapshots.empty() && !p->snapshots.back()->heldout.accuracy.empty()) {
      line += _("; on held-out sequences:");
      for (double a : p->snapshots.back()->heldout.accuracy) line += " " + Sig(a, 3);
    }
    Muted(line.c_str());
  }
  // The task's defaults' message, while it is shown, follows the model source.
  if (!t.defaults_note.shown.empty() && t.message == t.defaults_note.shown)
    t.message = t.defaults_note.shown = TaskDefaultsMessage(s);
  if (!t.message.empty())
    MessageBox(t.message, t.message_ok ? Pal().notice_bg : Pal().error_bg,
               t.message_ok ? Pal().notice_text : Pal().error_text);
}

void DrawFiles(AppState& s) {
  TrainSession& t = Training(s);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("Checkpoint"));
  ImGui::SameLine();
  const float buttons = (ImGui::CalcTextSize(_("Save")).x + ImGui::CalcTextSize(_("Load")).x) +
                        ImGui::GetStyle().FramePadding.x * 4 + ImGui::GetStyle().ItemSpacing.x * 2;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - buttons);
  ImGui::InputTextWithHint("##train_path", "model.npz", t.path.data(), t.path.size());
  Probe(s, "train_path");
  ImGui::SameLine();
  if (ImGui::Button(_("Save"))) SaveCheckpoint(s, t.path.data());
  Probe(s, "train_save");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("The model the views show (the timeline's step) as the checkpoint mhaviz train writes."));
  ImGui::SameLine();
  if (ImGui::Button(_("Load"))) LoadCheckpoint(s, t.path.data());
  Probe(s, "train_load");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("A checkpoint from mhaviz train --out, or one saved here."));
}

}  // namespace

void DrawTrainView(AppState& s) {
  PrepareTrainView(s);
  const float lw = ImGui::CalcTextSize("positions").x + ImGui::GetStyle().ItemSpacing.x * 2;
  DrawTask(s, lw);
  DrawModelLine(s, lw);
  DrawRunSettings(s, lw);
  DrawRunStatus(s);
  DrawFiles(s);
  DrawTrainExportRow(s);
  const bool heads = CurrentHeads(s).probe != nullptr, curves = !Training(s).runs.empty();
  if (heads || curves) ImGui::Separator();
  // Heads and curves side by side where the tab is wide enough, else one under the other.
  const float fs = ImGui::GetFontSize();
  if (heads && curves && ImGui::GetContentRegionAvail().x >= fs * 46.0f &&
      ImGui::BeginTable("##train_split", 2, ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupColumn(_("heads"), ImGuiTableColumnFlags_WidthStretch, 1.15f);
    ImGui::TableSetupColumn(_("curves"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableNextColumn();
    DrawTrainTimeline(s);
    DrawHeadsGrid(s);
    ImGui::TableNextColumn();
    DrawTrainCurves(s);
    ImGui::EndTable();
  } else {
    if (heads) {
      DrawTrainTimeline(s);
      DrawHeadsGrid(s);
    }
    if (curves) DrawTrainCurves(s);
  }
}

nlohmann::json DumpTrainView(AppState& s) {
  using nlohmann::json;
  const TrainSession& t = Training(s);
  json j;
  j["task"] = {{"name", ToString(t.task.kind)}, {"offsets", t.task.offsets}, {"explanation", Explain(t.task)}};
  j["settings"] = {{"layers", t.layers}, {"positional", ToString(t.positional)},
                   {"steps", t.steps},   {"lr", t.lr},
                   {"seed", t.seed},     {"batch", t.batch}};
  j["status"] = ToString(CurrentStatus(s));
  j["message"] = t.message;
  json runs = json::array();
  for (const auto& r : t.runs) {
    json o{{"id", r.id}, {"label", r.label}, {"shown", r.shown}};
    if (r.progress) {
      const Progress& p = *r.progress;
      o["step"] = p.step;
      o["total"] = p.total;
      o["finished"] = p.finished;
      o["diverged"] = p.diverged;
      o["curve_points"] = p.curve.size();
      o["snapshots"] = p.snapshots.size();
      if (!p.curve.empty()) {
        o["loss"] = dump::Num(p.curve.back().loss);
        o["accuracy"] = p.curve.back().accuracy;
      }
      if (!p.snapshots.empty()) o["heldout_accuracy"] = p.snapshots.back()->heldout.accuracy;
    }
    o["story"] = RunStory(r);
    runs.push_back(std::move(o));
  }
  j["runs"] = runs;
  j["shown_run"] = t.shown_run;
  j["timeline"] = t.timeline;
  j["big_head"] = t.big_head;
  const HeadsPicture p = CurrentHeads(s);
  if (p.probe) {
    j["shown_step"] = p.step;
    j["probe_tokens"] = p.probe->tokens;
    json heads = json::array();
    for (const auto& h : *p.heads)
      heads.push_back({{"layer", h.layer}, {"head", h.head}, {"label", h.label}, {"score", h.score}});
    j["heads"] = heads;
    // The grid as drawn: [layer][head][query][key].
    json grid = json::array();
    for (const Trace& tr : p.probe->layers) {
      json layer = json::array();
      for (int h = 0; h < tr.cfg.num_heads; ++h) layer.push_back(dump::Matrix(tr.AttnHead(h)));
      grid.push_back(std::move(layer));
    }
    j["attention"] = grid;
  }
  j["source"] = {{"trained", UsingTrainedModel(s)},
                 {"name", UsingTrainedModel(s) ? s.choice.source.name : std::string()},
                 {"layer", s.choice.layer}};
  return j;
}

// --train-autostart, --train-task, --train-offsets.
void DeclareTrainFlags(CLI::App& app, const std::string& g, ViewFlagActions& actions) {
  app.add_flag_callback(
         "--train-autostart", [&actions] { actions.push_back([](AppState& s) { Training(s).autostart = true; }); },
         "press Train when the Train view first opens (with --view train: at start)")
      ->group(g);
  app.add_option_function<std::string>(
         "--train-task",
         [&actions](const std::string& v) {
           actions.push_back([v](AppState& s) { Training(s).task.kind = ParseTask(v); });
         },
         "the Train view's task: offsets, reverse, sort or induction")
      ->type_name("NAME")
      ->group(g)
      ->check(CLI::IsMember({"offsets", "reverse", "sort", "induction"}));
  options::IntFlag(
      app, "--train-offsets", 1, 4,
      [&actions](int v) { actions.push_back([v](AppState& s) { Training(s).task.offsets = v; }); },
      "the offsets task's K: predict the tokens 1..K back (default 2)")
      ->type_name("K")
      ->group(g);
}

ViewEntry TrainView() {
  ViewEntry v{"train", N_("Train"), N_("Train a model and watch its heads learn"),
              "train on a task (offsets, reverse, sort, induction): curves, timeline, heads"};
  v.essentials = "train_start;train_pause;train_reset";
  v.heads = false;
  v.draw = &DrawTrainView;
  v.dump = &DumpTrainView;
  v.veil = false;              // it shows its own model, not the configuration above
  v.update = &UpdateTraining;  // the run's newest snapshot may set `dirty`
  v.animating = &TrainViewAnimating;
  v.probe = &TrainProbeJson;
  v.flags = &DeclareTrainFlags;
  return v;
}

}  // namespace mha::gui
