// The curves: loss and each target's accuracy against step, one small plot each,
// every kept run overlaid in its own colour (h = 1 beside h = 2). Drawn with the
// ImDrawList: a polyline of at most one point per pixel column.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gui/draw/widgets.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/train/parts.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

struct Series {
  const TrainRunRecord* run;
  std::function<float(const CurvePoint&)> value;  // NaN: no value at this point
};

struct Plot {
  std::string title;
  float lo = 0, hi = 1;  // the y range
  bool log = false;      // the loss falls over orders of magnitude
};

float Map(const Plot& p, float v) {
  if (p.log) {
    const float a = std::log10(p.lo), b = std::log10(p.hi);
    return (std::log10(std::max(v, p.lo)) - a) / (b - a);
  }
  return (v - p.lo) / (p.hi - p.lo);
}

std::string Num(float v) {
  char b[32];
  std::snprintf(b, sizeof b, v != 0 && std::fabs(v) < 0.01f ? "%.1e" : "%.3g", static_cast<double>(v));
  return b;
}

// One plot of `size`; `max_step` is the x range shared by the plots.
void DrawPlot(AppState& s, const char* id, const Plot& p, const std::vector<Series>& series, int max_step,
              ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = Pal();
  const float fs = ImGui::GetFontSize();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  Probe(s, id);
  const bool hovered = ImGui::IsItemHovered();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddText(o, text, p.title.c_str());
  const float axis_w = ImGui::CalcTextSize(p.log ? "1.0e-04" : "0.5").x + fs * 0.4f;
  const ImVec2 a(o.x + axis_w, o.y + fs * 1.3f), b(o.x + size.x - fs * 0.3f, o.y + size.y - fs * 1.2f);
  const float pad = 3.0f;  // a curve at 1.0 (or at its minimum) stays off the frame
  if (b.x - a.x < 20 || b.y - a.y < 20) return;
  dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_FrameBg));
  dl->AddRect(a, b, pal.block_border);
  // The y axis at its ends and middle, the x axis at its ends.
  const float ticks[] = {0.0f, 0.5f, 1.0f};
  for (const float f : ticks) {
    const float y = b.y - pad - (b.y - a.y - 2 * pad) * f;
    const float v = p.log ? std::pow(10.0f, std::log10(p.lo) + f * (std::log10(p.hi) - std::log10(p.lo)))
                          : p.lo + f * (p.hi - p.lo);
    const std::string l = Num(v);
    const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
    dl->AddText(ImVec2(a.x - ts.x - fs * 0.2f, y - ts.y * 0.5f), pal.muted_text, l.c_str());
    if (f > 0 && f < 1) dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), pal.grid_line);
  }
  dl->AddText(ImVec2(a.x, b.y + fs * 0.1f), pal.muted_text, "0");
  const std::string last = _("step") + (" " + std::to_string(max_step));
  dl->AddText(ImVec2(b.x - ImGui::CalcTextSize(last.c_str()).x, b.y + fs * 0.1f), pal.muted_text, last.c_str());
  if (max_step <= 0) return;

  const float w = b.x - a.x, h = b.y - a.y - 2 * pad;
  dl->PushClipRect(a, b, true);
  std::vector<ImVec2> pts;
  for (const Series& sr : series) {
    const auto& curve = sr.run->progress->curve;
    pts.clear();
    int last_px = -1;
    for (const CurvePoint& cp : curve) {
      const float v = sr.value(cp);
      if (!std::isfinite(v)) continue;
      const float x = a.x + w * cp.step / max_step;
      const int px = static_cast<int>(x);
      const ImVec2 pt(x, b.y - pad - h * std::clamp(Map(p, v), 0.0f, 1.0f));
      if (px == last_px && !pts.empty()) {
        pts.back() = pt;  // one point per pixel column: the last of the steps it covers
        continue;
      }
      last_px = px;
      pts.push_back(pt);
    }
    if (pts.size() >= 2) dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), RunColour(sr.run->id), 0, 2.0f);
  }
  dl->PopClipRect();

  // Hover: the step under the pointer and each run's value there.
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (!hovered || m.x < a.x || m.x > b.x) return;
  const int step = std::clamp(static_cast<int>(std::lround((m.x - a.x) / w * max_step)), 1, max_step);
  dl->AddLine(ImVec2(m.x, a.y), ImVec2(m.x, b.y), pal.highlight);
  ImGui::BeginTooltip();
  ImGui::Text(_("%s at step %d"), p.title.c_str(), step);
  for (const Series& sr : series) {
    const auto& curve = sr.run->progress->curve;
    if (curve.empty() || curve.front().step > step) continue;
    const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(step - curve.front().step), curve.size() - 1);
    const float v = sr.value(curve[i]);
    if (!std::isfinite(v)) continue;
    ImGui::PushStyleColor(ImGuiCol_Text, RunColour(sr.run->id));
    ImGui::TextUnformatted("\xE2\x96\xA0");  // ■
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::Text("%s  %s", Num(v).c_str(), sr.run->label.c_str());
  }
  ImGui::EndTooltip();
}

// Each run's colour, label and a box to hide its curves.
void DrawLegend(AppState& s) {
  TrainSession& t = Training(s);
  for (std::size_t i = 0; i < t.runs.size(); ++i) {
    TrainRunRecord& r = t.runs[i];
    ImGui::PushID(r.id);
    ImGui::PushStyleColor(ImGuiCol_CheckMark, RunColour(r.id));
    ImGui::PushStyleColor(ImGuiCol_Text, RunColour(r.id));
    ImGui::Checkbox("##shown", &r.shown);
    ImGui::PopStyleColor(2);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("Show or hide this run's curves."));
    ImGui::SameLine();
    std::string more;
    if (r.progress) {
      const Progress& p = *r.progress;
      char b[96];
      std::snprintf(b, sizeof b, _("%d of %d steps"), p.step, p.total);
      more = b;
      if (!p.snapshots.empty() && !p.snapshots.back()->heldout.accuracy.empty()) {
        more += _("; held-out accuracy");
        for (const double acc : p.snapshots.back()->heldout.accuracy) more += " " + Num(static_cast<float>(acc));
      }
      if (p.diverged) more += _("; diverged");
    }
    const bool shown_run = static_cast<int>(i) == t.shown_run;
    if (ImGui::Selectable(Ellipsize(r.label, ImGui::GetContentRegionAvail().x).c_str(), shown_run)) {
      t.shown_run = static_cast<int>(i);
      t.timeline = -1;
      t.big_head = -1;
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(_("%s\n%s\nClick to show this run's heads and timeline."), r.label.c_str(), more.c_str());
    Probe(s, ("run " + std::to_string(r.id)).c_str());
    ImGui::PopID();
  }
  if (t.runs.size() > 1) {
    if (ImGui::SmallButton(_("Forget the older runs"))) ClearOldRuns(s);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("Keep only the current run's curves."));
  }
}

}  // namespace

std::string TargetName(const TaskSpec& t, int k) {
  switch (t.kind) {
    case TaskKind::Offsets: {
      if (k == 0) return _("1 back (previous)");
      char b[48];
      std::snprintf(b, sizeof b, _("%d back"), k + 1);
      return b;
    }
    case TaskKind::Reverse: return _("the mirror token");
    case TaskKind::Sort: return _("the next sorted token");
    case TaskKind::Induction: return _("the next token");
  }
  return _("target") + (" " + std::to_string(k));
}

ImU32 RunColour(int id) {
  // Tableau 10's first colours: distinct for the few runs a lesson compares.
  static const ImU32 kColours[] = {IM_COL32(31, 119, 180, 255),  IM_COL32(255, 127, 14, 255),
                                   IM_COL32(44, 160, 44, 255),   IM_COL32(214, 39, 40, 255),
                                   IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
                                   IM_COL32(227, 119, 194, 255), IM_COL32(127, 127, 127, 255)};
  return kColours[static_cast<std::size_t>(std::max(id - 1, 0)) % (sizeof kColours / sizeof kColours[0])];
}

void DrawTrainCurves(AppState& s) {
  TrainSession& t = Training(s);
  std::vector<const TrainRunRecord*> runs;
  int max_step = 0, targets = 0;
  float loss_lo = 1e9f, loss_hi = 0;
  const TaskSpec* task = nullptr;
  for (const auto& r : t.runs) {
    if (!r.shown || !r.progress) continue;
    runs.push_back(&r);
    max_step = std::max(max_step, r.progress->total);
    if (!task || r.id == t.runs[static_cast<std::size_t>(std::max(t.shown_run, 0))].id) task = &r.task;
    for (const auto& cp : r.progress->curve) {
      targets = std::max(targets, static_cast<int>(cp.accuracy.size()));
      if (std::isfinite(cp.loss) && cp.loss > 0) {
        loss_lo = std::min(loss_lo, cp.loss);
        loss_hi = std::max(loss_hi, cp.loss);
      }
    }
  }
  if (t.runs.empty()) return;
  std::vector<std::pair<Plot, std::vector<Series>>> plots;
  Plot loss{_("loss (log scale)"), loss_lo < loss_hi ? std::max(loss_lo, 1e-4f) : 0.01f,
            loss_lo < loss_hi ? loss_hi : 10.0f, true};
  std::vector<Series> ls;
  for (const auto* r : runs) ls.push_back({r, [](const CurvePoint& c) { return c.loss; }});
  plots.emplace_back(loss, std::move(ls));
  for (int k = 0; k < targets; ++k) {
    // A run's target k may not exist (a task with fewer targets): NaN leaves it out.
    std::vector<Series> as;
    for (const auto* r : runs)
      as.push_back({r, [k](const CurvePoint& c) {
                      return k < static_cast<int>(c.accuracy.size()) ? c.accuracy[static_cast<std::size_t>(k)] : NAN;
                    }});
    const std::string name = task ? TargetName(*task, k) : _("target") + (" " + std::to_string(k));
    plots.emplace_back(Plot{_("accuracy: ") + name, 0.0f, 1.0f, false}, std::move(as));
  }
  const float fs = ImGui::GetFontSize();
  const float avail = ImGui::GetContentRegionAvail().x;
  const int per_row = std::max(1, std::min(static_cast<int>(plots.size()), static_cast<int>(avail / (fs * 16.0f))));
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const ImVec2 size((avail - gap * (per_row - 1)) / per_row, fs * (per_row == 1 ? 7.5f : 9.0f));
  for (std::size_t i = 0; i < plots.size(); ++i) {
    if (i % per_row != 0) ImGui::SameLine();
    DrawPlot(s, i == 0 ? "plot loss" : ("plot accuracy " + std::to_string(i - 1)).c_str(), plots[i].first,
             plots[i].second, max_step, size);
  }
  DrawLegend(s);
}

}  // namespace mha::gui
