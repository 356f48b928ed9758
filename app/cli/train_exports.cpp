#include "cli/train_exports.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "options/flags.hpp"
#include "render/render.hpp"

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

// The directory the atomic writer stages its temporary file in must exist and take
// new files; the path itself must not be a directory.
void CheckWritable(const std::string& flag, const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(flag + " '" + path + "': the directory '" + dir +
                "' does not exist. Nothing was trained; create it or fix the path, then run again.");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(flag + " '" + path + "': the directory '" + dir +
                "' cannot be written. Nothing was trained; choose a directory you can write to.");
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(flag + " '" + path + "' is a directory; give a file name. Nothing was trained.");
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

void CheckExportPaths(const TrainExports& e, const std::vector<std::string>& others) {
  CheckExtension("--png", e.png, {".png"});
  CheckExtension("--svg", e.svg, {".svg"});
  CheckExtension("--gif", e.gif, {".gif"});
  CheckExtension("--curves", e.curves, {".png", ".svg"});
  CheckExtension("--curves-csv", e.curves_csv, {".csv"});
  std::vector<std::string> paths = others;
  for (const auto& [flag, path] : Named(e))
    if (!path.empty()) {
      if (std::find(paths.begin(), paths.end(), path) != paths.end())
        throw UsageError(flag + " '" + path + "' names a file another output of this run writes too; give each "
                         "output its own name.");
      paths.push_back(path);
    }
  for (const auto& [flag, path] : Named(e))
    if (!path.empty()) CheckWritable(flag, path);
}

void TryExports(const TrainExports& e, const Snapshot& first, const render::GridOptions& grid) {
  if (!e.svg.empty() && render::GridCellCount(first.probe) > render::kMaxSvgCells)
    throw UsageError("--svg: the grid would hold " + std::to_string(render::GridCellCount(first.probe)) +
                     " cells (layers x heads x seq x seq), too many for an SVG viewer (the limit is " +
                     std::to_string(render::kMaxSvgCells) + "). Write --png instead, or use fewer layers, heads or --seq. "
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
    files.emplace_back(e.curves, EndsWith(e.curves, ".svg") ? render::CurvesSvg(p, c)
                                                            : render::EncodePng(render::DrawCurves(p, c)));
  }
  if (!e.curves_csv.empty()) files.emplace_back(e.curves_csv, render::CurvesCsv(p, num_targets));
}

}  // namespace mha::cli
