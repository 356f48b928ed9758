#include "cli/train_exports.hpp"

#include <algorithm>
#include <cctype>

#include "io/files.hpp"
#include "options/flags.hpp"
#include "render/render.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool EndsWith(const std::string& path, const std::string& ext) {
  const std::string p = Lower(path);
  return p.size() > ext.size() && p.compare(p.size() - ext.size(), ext.size(), ext) == 0;
}

void CheckExtension(const std::string& flag, const std::string& path, const std::vector<std::string>& exts) {
  if (path.empty()) return;
  for (const std::string& e : exts)
    if (EndsWith(path, e)) return;
  std::string names;
  for (std::size_t i = 0; i < exts.size(); ++i) names += (i ? " or " : "") + exts[i];
  throw UsageError(flag + " '" + path + "' should end in " + names + ": " + flag +
                   " writes that format. Nothing was trained; fix the name and run again.");
}

std::vector<std::pair<std::string, std::string>> Named(const TrainExports& e) {
  return {{"--png", e.png}, {"--svg", e.svg}, {"--gif", e.gif}, {"--curves", e.curves}, {"--curves-csv", e.curves_csv}};
}

}  // namespace

void AddTrainExportFlags(CLI::App& app, TrainExports& e) {
  const char* group = "Pictures (written with the checkpoint)";
  TextFlag(app, "--png", e.png, "the layers x heads grid of attention on held-out example 0, at the end (PNG)")
      ->type_name("FILE")
      ->group(group);
  TextFlag(app, "--svg", e.svg, "the same grid as an SVG")->type_name("FILE")->group(group);
  TextFlag(app, "--gif", e.gif, "the grid over training, one frame per snapshot (every 2% of the run)")
      ->type_name("FILE")
      ->group(group);
  TextFlag(app, "--curves", e.curves, "loss and accuracy per target against the step (.png or .svg)")
      ->type_name("FILE")
      ->group(group);
  TextFlag(app, "--curves-csv", e.curves_csv, "the same curves as CSV (the columns of --log)")
      ->type_name("FILE")
      ->group(group);
}

void CheckExportPaths(const TrainExports& e, const std::vector<std::pair<std::string, std::string>>& others) {
  CheckExtension("--png", e.png, {".png"});
  CheckExtension("--svg", e.svg, {".svg"});
  CheckExtension("--gif", e.gif, {".gif"});
  CheckExtension("--curves", e.curves, {".png", ".svg"});
  CheckExtension("--curves-csv", e.curves_csv, {".csv"});
  std::vector<std::pair<std::string, std::string>> outputs = others;
  for (const auto& named : Named(e)) outputs.push_back(named);
  try {
    io::CheckOutputs(outputs);
  } catch (const io::OutputClash& c) {
    throw UsageError(std::string(c.what()) + " Nothing was trained.");
  } catch (const Error& c) {
    throw Error(std::string(c.what()) + " Nothing was trained; fix the path and run again.");
  }
}

void TryExports(const TrainExports& e, const Snapshot& first, const render::GridOptions& grid) {
  if (!e.svg.empty() && render::GridCellCount(first.probe) > render::kMaxSvgCells)
    throw UsageError("--svg: the grid would hold " + std::to_string(render::GridCellCount(first.probe)) +
                     " cells (layers x heads x seq x seq), too many for an SVG viewer (the limit is " +
                     std::to_string(render::kMaxSvgCells) +
                     "). Write --png instead, or use fewer layers, heads or --seq. "
                     "Nothing was trained.");
  if (!e.png.empty()) render::DrawModelGrid(first, grid);
  if (!e.svg.empty()) render::ModelGridSvg(first, grid);
  if (!e.gif.empty()) {
    render::GifOptions g;
    g.grid.title = grid.title;
    render::EncodeGridGif({std::shared_ptr<const Snapshot>(&first, [](const Snapshot*) {})}, g);
  }
}

void RenderExports(const TrainExports& e, const Progress& p, const render::GridOptions& grid, int num_targets,
                   std::vector<std::pair<std::string, std::string>>& files, std::vector<std::string>& notes) {
  const Snapshot* last = p.snapshots.empty() ? nullptr : p.snapshots.back().get();
  if (e.Pictures() && !last) throw Error("the run has no snapshot to draw.");
  if (!e.png.empty()) {
    const render::Image img = render::DrawModelGrid(*last, grid);
    notes.insert(notes.end(), img.notes.begin(), img.notes.end());
    files.emplace_back(e.png, render::EncodePng(img));
  }
  if (!e.svg.empty()) files.emplace_back(e.svg, render::ModelGridSvg(*last, grid));
  if (!e.gif.empty()) {
    render::GifOptions g;
    g.grid.title = grid.title;
    g.grid.total_steps = grid.total_steps;
    files.emplace_back(e.gif, render::EncodeGridGif(p.snapshots, g));
  }
  if (!e.curves.empty() && p.curve.empty()) {
    // A run stopped before its first step still writes its checkpoint.
    notes.push_back("--curves '" + e.curves + "' was not written: the run stopped before its first step.");
  } else if (!e.curves.empty()) {
    render::CurveOptions c;
    c.title = "Training: " + grid.title;
    files.emplace_back(
        e.curves, EndsWith(e.curves, ".svg") ? render::CurvesSvg(p, c) : render::EncodePng(render::DrawCurves(p, c)));
  }
  if (!e.curves_csv.empty()) files.emplace_back(e.curves_csv, render::CurvesCsv(p, num_targets));
}

}  // namespace mha::cli
