// `mhaviz export --model M.npz --grid`: every head of every layer of a checkpoint on
// one picture, the same layers x heads grid `mhaviz train --png` draws, with each head
// labelled by what it does on held-out examples of the model's task.
#include <iostream>
#include <utility>

#include "cli/ablate_apply.hpp"
#include "commands.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"
#include "lm/ablate_model.hpp"
#include "mha/heads.hpp"
#include "render/train_render.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

// The head labels of a checkpoint trained on a task, on the held-out examples the app
// labels them on (in parts the memory estimate sizes); none for one that was not.
std::vector<HeadProfile> LabelHeads(const Model& m, const std::string& name) {
  if (m.cfg.task.empty()) return {};
  const TaskSpec t = io::ParseTaskJson(m.cfg.task, "the checkpoint");
  Trainer trainer;
  return lm::HeldOutLabels(trainer, m, t, name);
}

}  // namespace

int ExportGrid(const ExportArgs& e) {
  const lm::LoadedModelTrace m =
      lm::LoadForTrace(e.source.model, e.source.tokens, e.source.example, 0, TraceHowFor(e.run, e.source.model));
  if (!e.svg_path.empty() && render::GridCellCount(m.trace) > render::kMaxSvgCells)
    throw UsageError("the SVG would hold " + Thousands(render::GridCellCount(m.trace)) +
                     " cells, too many for any viewer (the limit is " + Thousands(render::kMaxSvgCells) +
                     "). Write only a --png, or give fewer --tokens.");
  const std::vector<HeadProfile> heads = LabelHeads(m.model, e.source.model);
  render::GridInput in;
  in.probe = &m.trace;
  in.tokens = TokenLabels(m.model.cfg, m.trace.tokens);
  in.heads = &heads;
  in.title = render::ModelTitle(m.model.cfg);
  in.subtitle = (e.source.tokens.empty() ? "held-out example " + std::to_string(e.source.example) : "your tokens") +
                " \u00B7 " + e.source.model;
  render::GridOptions o;
  if (e.scale > 0) o.scale = e.scale;
  // Render everything before writing anything, so an error leaves no files.
  std::vector<std::pair<std::string, std::string>> files;
  render::Image img;
  if (!e.png_path.empty()) {
    img = render::DrawModelGrid(in, o);
    for (const auto& n : img.notes) std::cerr << "mhaviz export: note: " << n << "\n";
    files.emplace_back(e.png_path, render::EncodePng(img));
  }
  if (!e.svg_path.empty()) files.emplace_back(e.svg_path, render::ModelGridSvg(in, o));
  io::WriteFilesAtomic(files);
  if (!e.quiet)
    for (const auto& [path, bytes] : files)
      std::cout << "wrote " << path << " (" << m.model.cfg.num_layers << " layers x " << m.model.cfg.layer.num_heads
                << " heads"
                << (path == e.png_path ? ", " + std::to_string(img.width) + " x " + std::to_string(img.height) + " px"
                                       : std::string())
                << ", " << (bytes.size() + 1023) / 1024 << " KiB)\n";
  return 0;
}

}  // namespace mha::cli
