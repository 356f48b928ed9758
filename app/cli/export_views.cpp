// `mhaviz export --view cost|flash`: the Cost and Flash views as pictures
// (render/cost_flash.hpp), with the numbers they state on stdout.
#include <cstdio>
#include <iostream>
#include <utility>

#include "commands.hpp"
#include "io/files.hpp"
#include "options/terminal.hpp"
#include "render/cost_flash.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

int WriteCostOrFlash(const ExportArgs& e, const Trace& t, const std::string& sentence, double computed_ms) {
  // Render everything before writing anything, so a rendering error leaves no files.
  std::vector<std::pair<std::string, std::string>> files;
  render::Image img;
  const bool cost = e.view == "cost";
  if (cost) {
    render::CostPictureOptions o;
    o.scale = e.scale > 0 ? e.scale : o.scale;
    o.sentence = e.header ? sentence : std::string();
    if (!e.png_path.empty()) {
      img = render::DrawCostPicture(t, o);
      files.emplace_back(e.png_path, render::EncodePng(img));
    }
    if (!e.svg_path.empty()) files.emplace_back(e.svg_path, render::CostPictureSvg(t, o));
  } else {
    render::FlashPictureOptions o;
    o.scale = e.scale > 0 ? e.scale : o.scale;
    o.head = e.head;
    o.br = e.tile_br;
    o.bc = e.tile_bc;
    o.sentence = e.header ? sentence : std::string();
    if (!e.png_path.empty()) {
      img = render::DrawFlashPicture(t, o);
      files.emplace_back(e.png_path, render::EncodePng(img));
    }
    if (!e.svg_path.empty()) files.emplace_back(e.svg_path, render::FlashPictureSvg(t, o));
  }
  io::WriteFilesAtomic(files);
  for (const std::string& n : img.notes) std::cerr << "mhaviz export: note: " << TerminalSafe(n, true) << "\n";
  if (e.quiet) return 0;
  if (cost) {
    const render::CostNumbers c = render::CostNumbersOf(t);
    std::cout << "cost of one layer at n = " << c.n << ", d_model = " << c.d_model << " (computed in " << computed_ms
              << " ms): attention core " << Thousands(c.core_flops) << " FLOPs, projections "
              << Thousands(c.projection_flops) << " FLOPs";
    if (c.ffn_flops > 0) std::cout << ", feed-forward " << Thousands(c.ffn_flops) << " FLOPs";
    std::cout << "; the core overtakes the projections at n = " << c.crossover_n << "\n";
  } else {
    render::FlashPictureOptions o;
    o.head = e.head;
    o.br = e.tile_br;
    o.bc = e.tile_bc;
    const render::FlashNumbers f = render::FlashNumbersOf(t, o);
    char line[256];
    std::snprintf(line, sizeof line,
                  "Flash attention, head %d: tiles of %d x %d, %d in all, %d skipped; largest difference from "
                  "the standard context %.3g\n",
                  f.head, f.br, f.bc, f.tiles, f.skipped, f.max_diff);
    std::cout << line;
  }
  for (const auto& [path, bytes] : files)
    std::cout << "wrote " << TerminalSafe(path) << " ("
              << (path == e.png_path ? std::to_string(img.width) + " x " + std::to_string(img.height) + " px, "
                                     : std::string())
              << (bytes.size() + 1023) / 1024 << " KiB)\n";
  return 0;
}

}  // namespace mha::cli
