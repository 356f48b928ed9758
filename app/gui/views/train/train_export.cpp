#include "gui/views/train/train_export.hpp"

#include <cstdio>
#include <functional>
#include <memory>
#include <utility>

#include "gui/draw/widgets.hpp"
#include "gui/sources/exports.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/style/theme.hpp"
#include "io/files.hpp"
#include "render/train_render.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

struct Kind {
  TrainExport id;
  const char* button;
  const char* suffix;
  const char* tooltip;
};

const Kind kKinds[] = {
    {TrainExport::GridPng, N_("Grid PNG"), "-grid.png",
     N_("Every head at the timeline's step, as on screen, for a slide.")},
    {TrainExport::GridSvg, N_("Grid SVG"), "-grid.svg", N_("The same grid as an SVG (one shape per cell).")},
    {TrainExport::Gif, "GIF", ".gif", N_("The grid over every snapshot of the run, captioned with step and accuracy.")},
    {TrainExport::CurvesPng, N_("Curves PNG"), "-curves.png", N_("Loss and accuracy per target against the step.")},
    {TrainExport::CurvesSvg, N_("Curves SVG"), "-curves.svg", N_("The curves as an SVG.")},
    {TrainExport::CurvesCsv, N_("Curves CSV"), "-curves.csv",
     N_("Every step: lr, loss, accuracy per target, gradient norm.")},
};

const Kind& KindOf(TrainExport k) { return kKinds[static_cast<int>(k)]; }

const TrainRunRecord* ShownRun(const AppState& s) {
  const TrainSession& t = Training(s);
  if (t.show_loaded || t.shown_run < 0 || t.shown_run >= static_cast<int>(t.runs.size())) return nullptr;
  const TrainRunRecord& r = t.runs[static_cast<std::size_t>(t.shown_run)];
  return r.progress ? &r : nullptr;
}

// What the grid draws of a loaded checkpoint: copies, since the window's own pass
// changes with the next recompute while the export runs.
struct LoadedGrid {
  ModelTrace probe;
  std::vector<HeadProfile> heads;
  std::string title;
};

// The bytes of `kind`, drawn from immutable inputs only (it runs on a task).
std::function<std::string()> Job(const AppState& s, TrainExport kind) {
  const TrainRunRecord* run = ShownRun(s);
  std::shared_ptr<const Progress> progress = run ? run->progress : nullptr;
  const std::string title = run ? run->label : std::string();
  if (kind == TrainExport::GridPng || kind == TrainExport::GridSvg) {
    render::GridOptions o;
    o.title = title;
    const bool svg = kind == TrainExport::GridSvg;
    if (Training(s).show_loaded && Training(s).loaded && UsingTrainedModel(s)) {
      auto in = std::make_shared<LoadedGrid>();
      in->probe = s.result.pass;
      in->heads = Training(s).loaded_heads;
      in->title = Training(s).loaded_path;
      return [in, o, svg] {
        render::GridInput g;
        g.probe = &in->probe;
        g.tokens = in->probe.layers.empty() ? std::vector<std::string>() : in->probe.layers.front().in.tokens;
        g.heads = &in->heads;
        g.title = in->title;
        return svg ? render::ModelGridSvg(g, o) : render::EncodePng(render::DrawModelGrid(g, o));
      };
    }
    std::shared_ptr<const Snapshot> snap;
    if (progress) {
      const int n = static_cast<int>(progress->snapshots.size());
      const int k = Training(s).timeline < 0 ? n - 1 : std::min(Training(s).timeline, n - 1);
      if (k >= 0) snap = progress->snapshots[static_cast<std::size_t>(k)];
      o.total_steps = progress->total;
    }
    return [snap, o, svg] {
      return svg ? render::ModelGridSvg(*snap, o) : render::EncodePng(render::DrawModelGrid(*snap, o));
    };
  }
  if (kind == TrainExport::Gif) {
    render::GifOptions o;
    o.grid.title = title;
    o.grid.total_steps = progress->total;
    return [progress, o] { return render::EncodeGridGif(progress->snapshots, o); };
  }
  render::CurveOptions o;
  o.title = title;
  const int targets = NumTargets(run->task);
  switch (kind) {
    case TrainExport::CurvesPng: return [progress, o] { return render::EncodePng(render::DrawCurves(*progress, o)); };
    case TrainExport::CurvesSvg: return [progress, o] { return render::CurvesSvg(*progress, o); };
    default: return [progress, targets] { return render::CurvesCsv(*progress, targets); };
  }
}

}  // namespace

std::string TrainExportPath(const AppState& s, TrainExport kind) {
  std::string stem = Training(s).export_stem.data();
  if (stem.empty()) stem = "mhaviz-train";
  return stem + KindOf(kind).suffix;
}

bool TrainExportAvailable(const AppState& s, TrainExport kind) {
  const TrainRunRecord* run = ShownRun(s);
  if (kind == TrainExport::GridPng || kind == TrainExport::GridSvg)
    return (run && !run->progress->snapshots.empty()) ||
           (Training(s).show_loaded && Training(s).loaded && UsingTrainedModel(s));
  if (!run) return false;
  return kind == TrainExport::Gif ? !run->progress->snapshots.empty() : !run->progress->curve.empty();
}

bool TrainExportRunning(const AppState& s) { return Training(s).export_job.Running(); }

void StartTrainExport(AppState& s, TrainExport kind) {
  TrainSession& t = Training(s);
  if (TrainExportRunning(s)) return;
  if (!TrainExportAvailable(s, kind)) {
    t.message = _("Nothing to export yet: train a model (the GIF and the curves need a run), or load a checkpoint.");
    t.message_ok = false;
    return;
  }
  const std::string path = TrainExportPath(s, kind);
  const std::string shown = AbsolutePath(path);
  auto job = Job(s, kind);
  t.message = i18n::Format(_("Exporting %s ..."), shown.c_str());
  t.message_ok = true;
  // The outcome's words now, on the UI thread: the export runs on another.
  const std::string saved_fmt = _("Saved %s (%s bytes)."),
                    failed = i18n::Format(_("Could not export %s: "), shown.c_str());
  t.export_job.Start([job = std::move(job), path, shown, saved_fmt,
                      failed](TaskContext<std::pair<bool, std::string>>&) -> std::pair<bool, std::string> {
    try {
      const std::string bytes = job();
      io::WriteFileAtomic(path, bytes);
      return {true,
              i18n::Format(saved_fmt.c_str(), shown.c_str(), Thousands(static_cast<long long>(bytes.size())).c_str())};
    } catch (const std::exception& e) {
      return {false, failed + e.what()};
    }
  });
}

bool PollTrainExport(AppState& s) {
  TrainSession& t = Training(s);
  if (t.export_job.Running()) return true;
  if (!t.export_job.Poll()) return false;
  const auto outcome = t.export_job.result();
  t.message = outcome ? outcome->second : t.export_job.error();
  t.message_ok = outcome && outcome->first;
  return false;
}

void DrawTrainExportRow(AppState& s) {
  const bool busy = PollTrainExport(s);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("Export"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10.0f);
  if (Training(s).export_stem[0] == '\0')
    std::snprintf(Training(s).export_stem.data(), Training(s).export_stem.size(), "mhaviz-train");
  ImGui::InputText("##train_export_stem", Training(s).export_stem.data(), Training(s).export_stem.size());
  Probe(s, "train_export_stem");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("The files' stem: each button adds its own ending (-grid.png, .gif, ...)."));
  for (const Kind& k : kKinds) {
    ImGui::SameLine();
    const float w = ImGui::CalcTextSize(_(k.button)).x + 2 * ImGui::GetStyle().FramePadding.x;
    if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
    ImGui::BeginDisabled(busy || !TrainExportAvailable(s, k.id));
    if (ImGui::Button((std::string(_(k.button)) + "##" + k.button).c_str())) StartTrainExport(s, k.id);
    ImGui::EndDisabled();
    Probe(s, (std::string("train_export ") + k.button).c_str());
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s\n%s", _(k.tooltip), AbsolutePath(TrainExportPath(s, k.id)).c_str());
  }
}

}  // namespace mha::gui
