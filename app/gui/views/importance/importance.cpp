// Importance view: what each head is worth to a trained model, by the causal test of
// knocking it out. Every head alone (then every layer's heads at once) is knocked out
// and the mean loss over the model's reference text is measured: a bar per head of
// the increase over the intact model, with the head's label beside it. Beside it, the
// in-context learning curve (Olsson et al. 2022): the loss on each piece of a repeated
// random span, first copy then second, intact and without the induction head.
//
// The numbers are `mhaviz ablate --json`'s and `mhaviz ablate --icl --json`'s (the
// same lm::AblationSubject, core MeasureImportance and MeasureRepeatLoss), on the model
// as chosen: with the knocked-out heads of the choice out in every measurement. They
// are measured by a task (measure.hpp: seconds, 64 validation windows by
// default), cancelled when the model or the knock-out changes, and kept per model,
// knock-out and amount of text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/shown_names.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/importance/icl_plot.hpp"
#include "gui/views/importance/measure.hpp"
#include "gui/panels/panels.hpp"
#include "gui/views/registry.hpp"
#include "lm/ablate_model.hpp"
#include "options/flags.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The view's own state (AppState::views): the amount of text, the measurement under
// way, and the finished ones (a few models and knock-outs at most).
struct ImportanceState {
  struct Entry {
    ImportanceKey key;
    std::shared_ptr<const ImportanceResult> result;
    std::string error;
  };
  int windows = kImportanceWindows;
  Task<ImportanceResult> task;
  ImportanceKey task_key;
  std::vector<Entry> cache;  // newest last
  int finished = 0;          // measurements finished (the probe's counter)
  // What the last frame drew while the task ran: the probe reports these bars, not a
  // publication that came in after the frame.
  std::shared_ptr<const ImportanceResult> drawn_so_far;
};

ImportanceState& St(AppState& s) { return s.views.Get<ImportanceState>(); }

// The key the view would show now: the model as chosen (its knocked-out heads that it
// has); no model when the source is not a trained one.
ImportanceKey CurrentKey(const AppState& s, const ImportanceState& st) {
  ImportanceKey k;
  if (!UsingTrainedModel(s)) return k;
  k.model = s.choice.source.model;
  k.mode = s.choice.knockout.mode;
  k.knocked = KnockoutPlan(s.choice.knockout, *k.model).heads();
  k.windows = UsingLanguageModel(s) ? st.windows : 0;
  return k;
}

const ImportanceState::Entry* Finished(const ImportanceState& st, const ImportanceKey& k) {
  for (const auto& e : st.cache)
    if (e.key == k) return &e;
  return nullptr;
}

// Every frame: a finished measurement goes into the cache (its means, measured for a
// mean knock-out, into the choice: every view then replaces the heads' context with
// the same means); one for another model, knock-out or amount of text is cancelled.
void UpdateImportance(AppState& s) {
  ImportanceState* st = s.views.Find<ImportanceState>() ? &St(s) : nullptr;
  if (!st) return;
  if (st->task.Poll() && st->task.Done()) {
    std::shared_ptr<const ImportanceResult> r = st->task.result();
    st->cache.push_back({st->task_key, r, st->task.error()});
    if (st->cache.size() > 8) st->cache.erase(st->cache.begin());
    ++st->finished;
    Knockout& k = s.choice.knockout;
    if (r && !r->means.empty() && UsingTrainedModel(s) && s.choice.source.model == st->task_key.model &&
        !KnockoutPlan(k, *st->task_key.model).mean()) {
      k.means = r->means;
      s.dirty |= !k.heads.empty();
    }
  }
  if (st->task.Running() && !(st->task_key == CurrentKey(s, *st))) st->task.Cancel();
}

void Start(AppState& s, ImportanceState& st, const ImportanceKey& k) {
  ImportanceInput in;
  in.key = k;
  if (UsingLanguageModel(s))
    in.lm = s.choice.source.lm;
  else
    in.name = s.choice.source.name;
  in.knockout = s.choice.knockout;
  st.task_key = k;
  st.task.Start([in](TaskContext<ImportanceResult>& ctx) { return MeasureImportance(in, ctx); });
}

bool ImportanceAnimating(const AppState& s) {
  const ImportanceState* st = s.views.Find<ImportanceState>();
  return st && st->task.Busy();
}

nlohmann::json ImportanceProbe(const AppState& s) {
  const ImportanceState* st = s.views.Find<ImportanceState>();
  if (!st) return {{"state", "idle"}, {"finished", 0}};
  const ImportanceKey k = CurrentKey(s, *st);
  const ImportanceState::Entry* e = k.model ? Finished(*st, k) : nullptr;
  const char* state = st->task.Running() ? "running" : e ? (e->result ? "done" : "error") : "idle";
  // While it runs, the heads' loss increases known so far (drawn as bars already).
  nlohmann::json so_far = nullptr;
  if (const auto p = st->task.Running() ? st->drawn_so_far : nullptr) {
    so_far = nlohmann::json::object();
    for (const HeadImportance& h : p->table.heads) so_far[HeadName(h.head)] = h.increase;
  }
  return {{"state", state},          {"finished", st->finished},  {"threads", st->task.threads()},
          {"step", st->task.step()}, {"total", st->task.total()}, {"so_far", so_far}};
}

std::string Fixed(double v, const char* fmt = "%.4f") {
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// A language model's head by the name every view gives it (sources/shown_names.hpp); a
// task model's by its pattern on the data the chart was measured on.
std::string LabelText(AppState& s, const ImportanceResult& m, const HeadRef& h) {
  if (UsingLanguageModel(s)) return NameShownHead(s, h.layer, h.head).text;
  const HeadProfile* p = lm::FindProfile(m.labels, h);
  return p ? HeadPatternText(p->label) + " " + Fixed(p->score, "%.2f") : "";
}

std::string AccuracyText(const StepStats& st) {
  std::string out;
  for (std::size_t k = 0; k < st.accuracy.size(); ++k) out += (k ? " / " : "") + Fixed(st.accuracy[k], "%.2f");
  return out;
}

// One row of the chart: the name and label on the left, a bar from the zero line
// (right for a loss increase, left for a decrease), the number after it.
void BarRow(AppState& s, const ImportanceResult& m, const std::string& name, const std::string& label,
            const HeadImportance& h, ImU32 colour, float lo, float hi, float width, float label_w, const char* probe) {
  const float name_w = ImGui::CalcTextSize("L00H00 ").x;
  const float num_w = ImGui::CalcTextSize("+0.0000").x + 16;
  std::string acc_sample;
  for (std::size_t k = 0; k < m.targets.size(); ++k) acc_sample += k ? " / 0.00" : "0.00";
  const float acc_w = m.targets.empty() ? 0 : ImGui::CalcTextSize(acc_sample.c_str()).x + 8;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float row_h = ImGui::GetTextLineHeightWithSpacing();
  const float bar_x0 = p.x + name_w + label_w, bar_w = std::max(40.0f, width - name_w - label_w - num_w - acc_w);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddText(p, colour, name.c_str());
  dl->PushClipRect(ImVec2(p.x + name_w, p.y), ImVec2(bar_x0 - 4, p.y + row_h), true);
  dl->AddText(ImVec2(p.x + name_w, p.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
  dl->PopClipRect();
  const auto X = [&](double v) { return bar_x0 + bar_w * static_cast<float>((v - lo) / (hi - lo)); };
  const float zero = X(0.0), end = X(h.increase);
  const float y0 = p.y + 2, y1 = p.y + row_h - 3;
  dl->AddRectFilled(ImVec2(std::min(zero, end), y0), ImVec2(std::max(zero, end) + (zero == end ? 1 : 0), y1), colour);
  dl->AddLine(ImVec2(zero, p.y), ImVec2(zero, p.y + row_h), ImGui::GetColorU32(ImGuiCol_TextDisabled));
  const std::string num = Fixed(h.increase, "%+.4f");
  dl->AddText(ImVec2(bar_x0 + bar_w + 6, p.y), ImGui::GetColorU32(ImGuiCol_Text), num.c_str());
  if (!m.targets.empty())
    dl->AddText(ImVec2(bar_x0 + bar_w + 6 + num_w, p.y), ImGui::GetColorU32(ImGuiCol_Text),
                AccuracyText(h.stats).c_str());
  ImGui::InvisibleButton(probe, ImVec2(width, row_h));
  Probe(s, probe);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("%s knocked out: loss %.4f -> %.4f (%+.4f nats)%s%s"), name.c_str(), m.table.base.loss,
                      h.stats.loss, h.increase, m.targets.empty() ? "" : _(", accuracy "),
                      m.targets.empty() ? "" : (AccuracyText(m.table.base) + " -> " + AccuracyText(h.stats)).c_str());
}

// A row still to be measured: its name and label, and in the bar's place what it waits
// for, so the chart's frame stands from the start and fills in.
void PendingRow(AppState& s, const std::string& name, const std::string& label, ImU32 colour, float width,
                float label_w, bool now, const char* probe) {
  const float name_w = ImGui::CalcTextSize("L00H00 ").x;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float row_h = ImGui::GetTextLineHeightWithSpacing(), bar_x0 = p.x + name_w + label_w;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddText(p, colour, name.c_str());
  dl->PushClipRect(ImVec2(p.x + name_w, p.y), ImVec2(bar_x0 - 4, p.y + row_h), true);
  dl->AddText(ImVec2(p.x + name_w, p.y), muted, label.c_str());
  dl->PopClipRect();
  dl->PushClipRect(ImVec2(bar_x0, p.y), ImVec2(p.x + width, p.y + row_h), true);
  dl->AddText(ImVec2(bar_x0, p.y), now ? ImGui::GetColorU32(ImGuiCol_Text) : muted,
              now ? _("being measured ...") : "\xE2\x80\xA6");
  dl->PopClipRect();
  ImGui::InvisibleButton(probe, ImVec2(width, row_h));
  Probe(s, probe);
}

// What the chart says it was measured on; while it is measured, how far it is.
void BarsIntro(const ImportanceResult& m, const std::string& reference) {
  const int heads = m.layers * m.num_heads;
  if (m.partial && !m.base_measured)
    ImGui::TextWrapped(_("Measuring on %s: the intact model first, then each head knocked out alone (%d of %d heads so "
                         "far). Longer bar = the model loses more without that head."),
                       reference.c_str(), m.heads_measured, heads);
  else if (m.partial)
    ImGui::TextWrapped(_("Measuring on %s: intact model %.4f nats; each head knocked out alone, %d of %d heads so far. "
                         "Longer bar = the model loses more without that head; a bar to the left: it does a little "
                         "better without it."),
                       reference.c_str(), m.table.base.loss, m.heads_measured, heads);
  else
    ImGui::TextWrapped(_("Measured on %s: intact model %.4f nats%s%s. Longer bar = the model loses more without that "
                         "head; a bar to the left: it does a little better without it."),
                       reference.c_str(), m.table.base.loss, m.targets.empty() ? "" : _(", accuracy "),
                       m.targets.empty() ? "" : AccuracyText(m.table.base).c_str());
}

const HeadImportance* Measured(const std::vector<HeadImportance>& v, int layer, int head) {
  for (const HeadImportance& x : v)
    if (x.head.layer == layer && x.head.head == head) return &x;
  return nullptr;
}

void DrawBars(AppState& s, const ImportanceResult& m, float width) {
  SectionTitle(s, _("Loss increase when one head is knocked out"));
  // The reference in the interface's language (m.reference is the CLI's English).
  const std::string reference = m.reference_windows > 0
                                    ? i18n::Format(P_("%d validation window of %d pieces",
                                                      "%d validation windows of %d pieces", m.reference_windows),
                                                   m.reference_windows, m.reference_pieces)
                                    : m.reference;
  BarsIntro(m, reference);
  if (!m.targets.empty()) {
    std::string t;
    for (const std::string& n : m.targets) t += (t.empty() ? "" : " / ") + n;
    Muted(i18n::Format(_("The numbers after each bar: accuracy per target (%s)."), t.c_str()).c_str());
  }
  double lo = 0, hi = 0;
  for (const auto* list : {&m.table.heads, &m.table.layers})
    for (const HeadImportance& h : *list) {
      lo = std::min(lo, h.increase);
      hi = std::max(hi, h.increase);
    }
  if (hi - lo < 1e-12) hi = lo + 1;
  // The label column fits the longest label (Korean ones are longer), up to a third of the row.
  char all_label[64];
  std::snprintf(all_label, sizeof all_label, _("all %d heads at once"), m.num_heads);
  float label_w = ImGui::CalcTextSize(all_label).x;
  for (int l = 0; l < m.layers; ++l)
    for (int h = 0; h < m.num_heads; ++h)
      label_w = std::max(label_w, ImGui::CalcTextSize(LabelText(s, m, {l, h}).c_str()).x);
  label_w = std::min(label_w + ImGui::CalcTextSize("  ").x, width / 3);
  for (int l = 0; l < m.layers; ++l) {
    ImGui::Spacing();
    // The layer's heading names its most important head: what the bars say in words.
    const HeadImportance* top = nullptr;
    int measured = 0;
    for (const HeadImportance& x : m.table.heads)
      if (x.head.layer == l) {
        ++measured;
        if (!top || x.increase > top->increase) top = &x;
      }
    if (measured < m.num_heads) {  // (measured so far: the most important is not known yet)
      ImGui::Text(_("layer %d"), l);
    } else if (top) {
      const std::string name = LabelText(s, m, top->head);
      const std::string label = name.empty() ? "" : " (" + name + ")";
      ImGui::Text(_("layer %d: the loss rises most without %s%s: %+.3f nats"), l, HeadName(top->head).c_str(),
                  label.c_str(), top->increase);
    }
    // The row measured now: the next head in (layer, head) order once the intact model is in.
    const int now = m.partial && m.base_measured ? m.heads_measured : -1;
    for (int h = 0; h < m.num_heads; ++h) {
      const HeadRef ref{l, h};
      if (const HeadImportance* x = Measured(m.table.heads, l, h)) {
        const std::string probe = "importance_bar " + HeadName(ref);
        BarRow(s, m, HeadName(ref), LabelText(s, m, ref), *x, HeadColour(h), static_cast<float>(lo),
               static_cast<float>(hi), width, label_w, probe.c_str());
      } else {
        const std::string probe = "importance_pending " + HeadName(ref);
        PendingRow(s, HeadName(ref), LabelText(s, m, ref), HeadColour(h), width, label_w, now == l * m.num_heads + h,
                   probe.c_str());
      }
    }
    if (m.num_heads > 1) {
      const std::string name = "L" + std::to_string(l), probe = "importance_layer " + std::to_string(l);
      if (const HeadImportance* all = Measured(m.table.layers, l, -1))
        BarRow(s, m, name, all_label, *all, Pal().muted_text, static_cast<float>(lo), static_cast<float>(hi), width,
               label_w, probe.c_str());
      else
        PendingRow(s, name, all_label, Pal().muted_text, width, label_w,
                   now >= m.layers * m.num_heads && static_cast<int>(m.table.layers.size()) == l,
                   ("importance_pending " + name).c_str());
    }
  }
}

const char* ModeName(AblationMode m) { return m == AblationMode::Mean ? "mean" : "zero"; }

// The knock-out's mode is the choice's (every view follows it); the amount of text the view's.
void DrawControls(AppState& s, ImportanceState& st) {
  int mode = s.choice.knockout.mode == AblationMode::Mean ? 1 : 0;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("Knock out by replacing its context with:"));
  SameLineIfFits(ToggleWidth(_("zeros")));
  bool changed = ImGui::RadioButton(_("zeros"), &mode, 0);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("The head's context becomes 0 before W_O."));
  SameLineIfFits(ToggleWidth(_("its mean")));
  changed |= ImGui::RadioButton(_("its mean"), &mode, 1);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        _("The head's context is replaced by its mean over the reference text: the head still adds its "
          "average, but nothing that depends on the sentence."));
  if (changed) {
    s.choice.knockout.mode = mode ? AblationMode::Mean : AblationMode::Zero;
    s.dirty = true;
  }
  if (UsingLanguageModel(s)) {
    const float combo_w = ImGui::CalcTextSize("00000000").x + ImGui::GetFrameHeight();
    SameLineIfFits(ImGui::CalcTextSize(_("validation windows:")).x + ImGui::GetStyle().ItemSpacing.x + combo_w, 20);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(_("validation windows:"));
    ImGui::SameLine();
    static const int choices[] = {64, 256, 0};
    char preview[32];
    std::snprintf(preview, sizeof preview, "%s", st.windows == 0 ? _("all") : std::to_string(st.windows).c_str());
    ImGui::SetNextItemWidth(combo_w);
    if (ImGui::BeginCombo("##importance_windows", preview)) {
      for (int c : choices) {
        const std::string label = c == 0 ? _("all") : std::to_string(c);
        if (ImGui::Selectable(label.c_str(), c == st.windows)) st.windows = c;
      }
      ImGui::EndCombo();
    }
    Probe(s, "importance_windows");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          _("More windows: steadier numbers, longer to measure. 64 take a few seconds; all of them "
            "take over 30 s of CPU time (minutes on a busy machine)."));
  }
}

void DrawImportanceView(AppState& s) {
  ImportanceState& st = St(s);
  Explanation(
      _("What each head is worth: knock it out (alone) and measure how much worse the model predicts "
        "its reference text. A picture shows what a head looks at; this shows whether the model uses "
        "it. The Model view's \"out\" switches knock heads out on your own sentence."));
  if (!UsingTrainedModel(s)) {
    ImGui::Spacing();
    Muted(
        _("Knocking heads out needs a trained model, with text to measure the loss on. Seeded random weights "
          "have nothing to lose."));
    UseSmallModelButton(s, "importance_use_small");
    return;
  }
  DrawControls(s, st);
  const ImportanceKey k = CurrentKey(s, st);
  const ImportanceState::Entry* e = Finished(st, k);
  if (!e && !st.task.Running()) Start(s, st, k);
  if (!k.knocked.empty()) {
    std::string names;
    for (const HeadRef& h : k.knocked) names += (names.empty() ? "" : ", ") + HeadName(h);
    Muted(i18n::Format(P_("The model as chosen: %s stays knocked out (the Model view's switches), so every bar is "
                          "measured with it out too; its own bar is 0.",
                          "The model as chosen: %s stay knocked out (the Model view's switches), so every bar is "
                          "measured with them out too; their own bars are 0.",
                          static_cast<int>(k.knocked.size())),
                       names.c_str())
              .c_str());
    Probe(s, "importance_knocked");
  }
  if (st.task.Running()) {
    const float f = static_cast<float>(st.task.step()) / static_cast<float>(std::max(1, st.task.total()));
    char over[128];
    std::snprintf(over, sizeof over, _("%d of %d"), st.task.step(), st.task.total());
    ImGui::ProgressBar(f, ImVec2(std::min(360.0f, ImGui::GetContentRegionAvail().x), 0), over);
    ImGui::SameLine();
    // Wrapped at the view's edge: at large text it would run past it.
    Muted(i18n::Format(_("Measuring on a worker thread: %s ..."), TaskStageText(st.task.stage()).c_str()).c_str());
    Probe(s, "importance_running");
  }
  // While it is measured: what is known so far, in the chart's frame.
  const std::shared_ptr<const ImportanceResult> so_far = !e && st.task.Running() ? st.task.Latest() : nullptr;
  st.drawn_so_far = so_far;
  if (!e && !so_far) return;
  if (e && !e->result) {
    MessageBox(std::string(_("Could not measure the heads: ")) + e->error, Pal().error_bg, Pal().error_text);
    return;
  }
  const ImportanceResult& m = e ? *e->result : *so_far;
  // The same numbers in a terminal (a Train view run is in memory: save it first).
  if (e && s.choice.source.run_id == 0 && k.knocked.empty()) {
    std::string cmd = "mhaviz ablate --model " + m.model + " --mode " + ModeName(k.mode);
    if (UsingLanguageModel(s)) cmd += " --windows " + std::to_string(k.windows);
    Muted(i18n::Format(_("The same numbers in a terminal: %s"), cmd.c_str()).c_str());
  }
  Probe(s, e ? "importance_table" : "importance_so_far");
  // Side by side where both fit (1920 px), else the curve under the bars.
  const float avail = ImGui::GetContentRegionAvail().x, gap = 24;
  const bool side = avail >= 1100;
  const float bars_w = side ? (avail - gap) * 0.58f : avail,
              icl_w = side ? avail - gap - bars_w : std::min(avail, 760.0f);
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + bars_w);
  DrawBars(s, m, bars_w);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  if (side) {
    ImGui::SameLine(0, gap);
  } else {
    ImGui::Spacing();
    ImGui::Spacing();
  }
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + icl_w);
  DrawIclPlot(s, m, icl_w);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

nlohmann::json StatsJson(const StepStats& st) { return {{"loss", st.loss}, {"accuracy", st.accuracy}}; }

nlohmann::json DumpImportanceView(AppState& s) {
  const ImportanceState* st = s.views.Find<ImportanceState>();
  nlohmann::json j = ImportanceProbe(s);
  j["available"] = false;
  if (!st) return j;
  const ImportanceKey k = CurrentKey(s, *st);
  j["mode"] = ModeName(k.mode);
  j["windows"] = k.windows;
  nlohmann::json knocked = nlohmann::json::array();
  for (const HeadRef& h : k.knocked) knocked.push_back(HeadName(h));
  j["knocked_out"] = knocked;
  const ImportanceState::Entry* e = k.model ? Finished(*st, k) : nullptr;
  if (!e) return j;
  if (!e->result) {
    j["error"] = e->error;
    return j;
  }
  const ImportanceResult& m = *e->result;
  j["available"] = true;
  j["model"] = m.model;
  j["reference"] = m.reference;
  j["layers"] = m.layers;
  j["num_heads"] = m.num_heads;
  j["targets"] = m.targets;
  j["base"] = StatsJson(m.table.base);
  nlohmann::json heads = nlohmann::json::array(), layers = nlohmann::json::array();
  for (const HeadImportance& h : m.table.heads) {
    const HeadProfile* p = lm::FindProfile(m.labels, h.head);
    heads.push_back({{"name", HeadName(h.head)},
                     {"layer", h.head.layer},
                     {"head", h.head.head},
                     {"label", p ? p->label : ""},
                     {"score", p ? p->score : 0.0},
                     {"shown", LabelText(s, m, h.head)},
                     {"loss", h.stats.loss},
                     {"increase", h.increase},
                     {"accuracy", h.stats.accuracy}});
  }
  for (const HeadImportance& l : m.table.layers)
    layers.push_back(
        {{"layer", l.head.layer}, {"loss", l.stats.loss}, {"increase", l.increase}, {"accuracy", l.stats.accuracy}});
  j["heads"] = heads;
  j["all_heads_of_layer"] = layers;
  nlohmann::json icl_heads = nlohmann::json::array();
  for (const HeadRef& h : m.icl_heads) icl_heads.push_back(HeadName(h));
  j["icl"] = {{"heads", icl_heads},
              {"span", m.icl_span},
              {"sequences", m.icl_sequences},
              {"plain",
               {{"first", m.plain.first_mean},
                {"second", m.plain.second_mean},
                {"first_curve", m.plain.first},
                {"second_curve", m.plain.second}}},
              {"ablated",
               {{"first", m.knocked_curve.first_mean},
                {"second", m.knocked_curve.second_mean},
                {"first_curve", m.knocked_curve.first},
                {"second_curve", m.knocked_curve.second}}}};
  return j;
}

void DeclareImportanceFlags(CLI::App& app, const std::string& g, ViewFlagActions& actions) {
  options::IntFlag(
      app, "--importance-windows", 0, 1 << 20,
      [&actions](int v) { actions.push_back([v](AppState& s) { St(s).windows = v; }); },
      "the Importance view's validation windows (language model; default 64, 0 = all)")
      ->type_name("N")
      ->group(g);
  app.add_option_function<std::string>(
         "--importance-mode",
         [&actions](const std::string& v) {
           const AblationMode m = v == "mean" ? AblationMode::Mean : AblationMode::Zero;
           actions.push_back([m](AppState& s) { s.choice.knockout.mode = m; });
         },
         "the knock-out's mode, in the Importance view and every other: zero (default) or mean")
      ->type_name("zero|mean")
      ->group(g)
      ->check(CLI::IsMember({"zero", "mean"}));
}

}  // namespace

ViewEntry ImportanceView() {
  ViewEntry v{"importance", N_("Importance"), N_("Importance: what each head is worth when knocked out"),
              "each head knocked out alone: the loss increase as bars, and the in-context learning curve"};
  v.essentials = "importance_windows";
  v.heads = false;
  v.draw = &DrawImportanceView;
  v.dump = &DumpImportanceView;
  v.update = &UpdateImportance;
  v.animating = &ImportanceAnimating;
  v.probe = &ImportanceProbe;
  v.flags = &DeclareImportanceFlags;
  return v;
}

}  // namespace mha::gui
