// `mhaviz export`: the attention heatmaps as PNG and/or SVG, drawn on the CPU
// (no display, no OpenGL), for slides and handouts.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "commands.hpp"
#include "io/files.hpp"
#include "options/terminal.hpp"
#include "render/render.hpp"

namespace mha::cli {
namespace {

const char* kExportAbout =
    "Runs one multi-head attention layer on a sentence and draws the attention weights\n"
    "softmax(Q K^T / sqrt(d_k)) of every head, plus their mean, as heatmaps: rows are the\n"
    "query tokens, columns the key tokens, coloured with viridis on one fixed [0, 1] scale\n"
    "for all maps (or per map / per row: --color-scale). Works without a display (DISPLAY\n"
    "may be unset). Give at least one of --png / --svg.";
const char* kExportFooter =
    "Big inputs stay bounded: labels and printed weights are left out when the cells are\n"
    "too small, PNGs are capped at 16 megapixels, and an SVG is refused above 300,000 cells\n"
    "(export one head with --head K instead). Notes on stderr say what was simplified.\n"
    "\n"
    "Examples:\n"
    "  mhaviz export --sentence \"The quick brown fox jumps over the lazy dog .\" --png fox.png\n"
    "  mhaviz export --sentence \"고양이가 쥐를 잡았다\" --heads 2 --d-model 64 --svg cat.svg\n"
    "  mhaviz export --sentence \"I saw her duck\" --heads 8 --kv-heads 2 --head 3 --png h3.png\n"
    "  mhaviz export --sentence \"I saw her duck\" --heads 8 --fit 16:9 --no-header --png slide.png\n"
    "  mhaviz export --sentence-file long.txt --color-scale row --columns 3 --svg rows.svg\n"
    "\n"
    "Labels use NanumGothic (fonts-nanum, or assets/fonts next to the binary); set\n"
    "MHAVIZ_FONT=/path/to/font.ttf to use another TrueType font.\n"
    "\n"
    "Exit status: 0 ok, 1 runtime error (files, fonts), 2 usage error (flags). Files are\n"
    "written atomically: a failed write leaves no partial file behind.";

// "16:9" -> 1.777...: width over height, from 1:4 to 4:1.
double FitAspect(const std::string& v) {
  const std::size_t colon = v.find(':');
  char* end = nullptr;
  double w = 0, h = 0;
  if (colon != std::string::npos && colon > 0) {
    const std::string a = v.substr(0, colon), b = v.substr(colon + 1);
    w = std::strtod(a.c_str(), &end);
    if (*end != '\0') w = 0;
    h = std::strtod(b.c_str(), &end);
    if (b.empty() || *end != '\0') h = 0;
  }
  if (!(w > 0 && h > 0 && w / h >= 0.25 && w / h <= 4.0))
    throw UsageError("--fit expects the slide's shape as W:H, e.g. 16:9 or 4:3 (from 1:4 to 4:1), got '" + v + "'.");
  return w / h;
}

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

void DeclareExportFlags(CLI::App& app, ExportArgs& e) {
  AddRunFlags(app, e.run);
  TextFlag(app, "--png", e.png_path, "write a PNG image (labels in NanumGothic, Korean included)")
      ->type_name("FILE")
      ->group(kOutputGroup);
  TextFlag(app, "--svg", e.svg_path,
           "write an SVG: every cell a vector <rect> whose tooltip holds the query,\n"
           "key, weight and raw score; labels are text")
      ->type_name("FILE")
      ->group(kOutputGroup);
  // --head's range depends on --heads: checked with the configuration (ExportCommand).
  IntFlag(
      app, "--head", -(1 << 30), 1 << 30,
      [&e](int v) {
        e.head = v;
        e.head_given = true;
      },
      "draw only head K, larger (heads are numbered 0 .. num_heads-1);\n"
      "default: every head and the mean over heads",
      {}, "heads are numbered 0 to num_heads - 1, and num_heads <= " + std::to_string(Limits::kMaxHeads))
      ->type_name("K")
      ->group(kOutputGroup);
  // --scale is the resolution; a colour-scale name given to it is pointed at
  // --color-scale rather than told "expects a whole number".
  app.add_option("--scale", e.scale, "PNG resolution multiplier, 1..8 (default 2, sharp on slides)")
      ->check(CLI::Validator(
          [](std::string& v) {
            render::ColourScale sc;
            return render::ParseColourScale(v, &sc)
                       ? "--scale sets the PNG resolution (a whole number from 1 to 8). For the colour scale use "
                         "--color-scale " + v + "."
                       : std::string();
          },
          ""))
      ->check(WholeNumber("--scale", 1, 8,
                          [](long long n) {
                            return n >= 1 && n <= 8 ? std::string()
                                                    : "--scale " + std::to_string(n) +
                                                          " is out of range: use 1 (screen size) to 8; 2 is sharp on slides.";
                          }))
      ->type_name("N")
      ->group(kOutputGroup);
  auto colour = app.add_option("--color-scale,--colour-scale", e.colour_scale,
                               "what the colours are relative to: fixed (default: the weight on [0, 1],\n"
                               "heads compare by eye), map (each map's largest weight is brightest) or\n"
                               "row (each query's largest weight is brightest: long sentences)");
  colour->type_name("fixed|map|row")->group(kOutputGroup)->check(CLI::Validator(
      [](std::string& v) {
        render::ColourScale sc;
        return render::ParseColourScale(v, &sc) ? std::string()
                                                : "--color-scale expects fixed, map or row, got '" + v + "'.";
      },
      ""));
  IntFlag(
      app, "--columns", 1, 64, [&e](int v) { e.columns = v; },
      "maps per row (default: chosen so the figure is close to 16:9)",
      [](long long n) {
        return n >= 1 && n <= 64 ? std::string()
                                 : "--columns " + std::to_string(n) + " is out of range: use 1 to 64 maps per row.";
      })
      ->type_name("N")
      ->group(kOutputGroup);
  app.add_flag_callback("--no-header", [&e] { e.header = false; },
                        "leave out the title, sentence and configuration above the maps\n"
                        "(notes on what was simplified then go to stderr only)")
      ->group(kOutputGroup);
  TextFlag(app, "--fit", e.fit,
           "a canvas of exactly this shape, e.g. 16:9 or 4:3: the columns are chosen\n"
           "to fill it and the figure is centred (a slide)")
      ->type_name("W:H")
      ->group(kOutputGroup);
  app.add_flag_callback("--no-values", [&e] { e.values = false; }, "do not print the weights inside the cells")
      ->group(kOutputGroup);
  app.add_flag("-q,--quiet", e.quiet, "print nothing on success")->group(kOutputGroup);
  AddModelSourceFlags(app, e.source);
  app.add_flag("--grid", e.grid,
               "with --model: every head of every layer on one picture (a row of maps per layer),\n"
               "labelled with what each head does")
      ->group("A trained model (mhaviz train)");
}

ExportArgs ParseExportArgs(const std::vector<std::string>& argv) {
  ExportArgs e = ParseCommandArgs("export", kExportAbout, kExportFooter, DeclareExportFlags, argv);
  if (e.help) return e;
  CheckModelSourceFlags(argv, e.source,
                        {"--png", "--svg", "--head", "--scale", "--no-values", "-q", "--quiet", "--grid",
                          "--color-scale", "--colour-scale", "--columns", "--no-header", "--fit"});
  if (e.grid && e.source.model.empty())
    throw UsageError("--grid draws every layer and head of a trained model: give the checkpoint with --model M.npz.");
  if (e.grid && (e.head_given || e.source.layer != 0))
    throw UsageError("--grid draws every layer and every head; leave out --head and --layer.");
  if (e.png_path.empty() && e.svg_path.empty())
    throw UsageError("say where to write the heatmaps: --png FILE.png and/or --svg FILE.svg. "
                     "See 'mhaviz export --help'.");
  if (e.png_path.empty() == false && e.png_path == e.svg_path)
    throw UsageError("--png and --svg name the same file '" + e.png_path + "'; give each its own name.");
  if (!e.fit.empty()) FitAspect(e.fit);  // refused here, before anything is computed
  return e;
}

int ExportCommand(const std::vector<std::string>& argv) {
  return Guard("export", [&] {
    const ExportArgs e = ParseExportArgs(argv);
    if (e.help) {
      std::cout << e.help_text;
      return 0;
    }
    if (e.grid) return ExportGrid(e);
    const RunOptions& o = e.run;
    const std::string& png_path = e.png_path;
    const std::string& svg_path = e.svg_path;
    const bool head_given = e.head_given, quiet = e.quiet;
    render::HeatmapOptions ho;
    if (e.head_given) ho.head = e.head;
    if (e.scale > 0) ho.scale = e.scale;
    ho.values = e.values;
    render::ParseColourScale(e.colour_scale, &ho.colour_scale);  // (checked when parsed)
    ho.columns = e.columns;
    ho.header = e.header;
    if (!e.fit.empty()) ho.fit = FitAspect(e.fit);

    // The trace to draw: a sentence's, or a trained model's layer (--model).
    Prepared p;
    LoadedModelTrace m;
    const bool trained = !e.source.model.empty();
    if (trained) {
      m = LoadForTrace(e.source.model, e.source.tokens, e.source.example, e.source.layer);
      p.cfg = m.Layer().cfg;
    } else {
      p = Prepare(o);
      if (!p.notice.empty()) std::cerr << "mhaviz export: note: " << TerminalSafe(p.notice, true) << "\n";
    }
    const int H = p.cfg.num_heads;
    if (head_given && (ho.head < 0 || ho.head >= H))
      throw UsageError("--head " + std::to_string(ho.head) + " is out of range: with num_heads = " +
                       std::to_string(H) + " the heads are numbered 0 to " + std::to_string(H - 1) +
                       ". (--heads sets how many heads there are; --head picks the one to draw.)");
    // The SVG's size follows from the flags and the token counts: refused before the
    // forward pass, not after it.
    const long long seq = trained ? m.Layer().seq : p.in.x.rows();
    const long long seq_kv = trained ? m.Layer().seq_kv : p.in.cross() ? p.in.memory.rows() : p.in.x.rows();
    const long long svg_cells = (head_given ? 1 : H) * seq * seq_kv;
    if (!svg_path.empty() && svg_cells > render::kMaxSvgCells)
      throw UsageError("the SVG would hold " + Thousands(svg_cells) + " cells (" +
                       (head_given ? std::string("one head") : std::to_string(H) + " heads") + " x " +
                       std::to_string(seq) + " x " + std::to_string(seq_kv) +
                       " tokens), too many for any viewer (the --svg limit is " + Thousands(render::kMaxSvgCells) +
                       "). Export one head with --head K, use fewer tokens or heads, or write only a --png.");
    const auto t0 = std::chrono::steady_clock::now();
    const Trace t = trained ? m.Layer() : Forward(p.cfg, p.weights, p.in);
    const auto t1 = std::chrono::steady_clock::now();

    // The header shows the sentence as typed rather than the tokens joined by spaces.
    if (trained) {
      ho.sentence = "layer " + std::to_string(m.layer) + " of " + e.source.model;
      // The layer itself runs without PE: the model adds it to the embeddings below layer 0.
      switch (m.model.cfg.positional) {
        case Positional::Learned: ho.positional = "learned positional embeddings, added below layer 0"; break;
        case Positional::Sinusoidal: ho.positional = "sinusoidal PE, added below layer 0"; break;
        case Positional::None: ho.positional = "no positional encoding"; break;
      }
    } else if (o.input_npz.empty()) {
      ho.sentence = p.sentence;  // as read: --sentence-file included
      ho.memory = o.memory;
    }

    // Render everything before writing anything, so a rendering error leaves no files.
    std::string png, svg;
    render::Image img;
    double png_ms = 0, enc_ms = 0, svg_ms = 0;
    if (!png_path.empty()) {
      const auto a0 = std::chrono::steady_clock::now();
      img = render::RenderHeatmaps(t, ho);
      const auto a1 = std::chrono::steady_clock::now();
      png = render::EncodePng(img);
      const auto a2 = std::chrono::steady_clock::now();
      png_ms = Ms(a1 - a0);
      enc_ms = Ms(a2 - a1);
      for (const auto& n : img.notes) std::cerr << "mhaviz export: note: " << TerminalSafe(n, true) << "\n";
    }
    if (!svg_path.empty()) {
      const auto a0 = std::chrono::steady_clock::now();
      svg = render::RenderHeatmapsSvg(t, ho);
      svg_ms = Ms(std::chrono::steady_clock::now() - a0);
    }
    // Both files are staged before either is renamed into place: one bad path leaves
    // neither file behind, and no half-written file ever.
    std::vector<std::pair<std::string, std::string>> files;
    if (!png_path.empty()) files.emplace_back(png_path, std::move(png));
    if (!svg_path.empty()) files.emplace_back(svg_path, std::move(svg));
    io::WriteFilesAtomic(files);
    if (!quiet) {  // after the writes: a failed run prints nothing as if it had worked
      std::cout << "attention of " << t.seq << " query x " << t.seq_kv << " key tokens, " << H
                << (H == 1 ? " head" : " heads") << " (forward " << Ms(t1 - t0) << " ms)\n";
      for (const auto& [path, bytes] : files) {
        if (path == png_path)
          std::cout << "wrote " << TerminalSafe(path) << " (" << img.width << " x " << img.height << " px, "
                    << (bytes.size() + 1023) / 1024 << " KiB; drawn in " << png_ms << " ms, encoded in " << enc_ms
                    << " ms)\n";
        else
          std::cout << "wrote " << TerminalSafe(path) << " (" << Thousands(render::SvgCellCount(t, ho)) << " cells, "
                    << (bytes.size() + 1023) / 1024 << " KiB; drawn in " << svg_ms << " ms)\n";
      }
    }
    return 0;
  });
}

}  // namespace mha::cli
