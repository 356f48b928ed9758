// `mhaviz export`: the attention heatmaps as PNG and/or SVG, drawn on the CPU
// (no display, no OpenGL), for slides and handouts.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>

#include "commands.hpp"
#include "io/files.hpp"
#include "options/terminal.hpp"
#include "export_source.hpp"
#include "render/head_view_render.hpp"
#include "render/render.hpp"
#include "text/i18n.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

const char* kExportAbout =
    "Runs one multi-head attention layer on a sentence and draws the attention weights\n"
    "softmax(Q K^T / sqrt(d_k)) of every head, plus their mean, as heatmaps: rows are the\n"
    "query tokens, columns the key tokens, coloured with viridis on one fixed [0, 1] scale\n"
    "for all maps (or per map / per row: --color-scale). Works without a display (DISPLAY\n"
    "may be unset). Give at least one of --png / --svg, or --notebook for a Jupyter notebook\n"
    "that recomputes the same layer in PyTorch.";
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
    "  mhaviz export --view head --sentence \"The cat sat on the mat.\" --png heads.png --svg heads.svg\n"
    "  mhaviz export --view cost --sentence \"The cat sat on the mat.\" --png cost.png --svg cost.svg\n"
    "  mhaviz export --view flash --mask causal --head 1 --tile 3x5 --png flash.png\n"
    "  mhaviz export --view head --preset heads --sentence \"one two three four five\" --png pos.png\n"
    "  mhaviz export --sentence \"고양이가 쥐를 잡았다\" --mask causal --notebook cat.ipynb --lang ko\n"
    "  mhaviz export --model mhaviz-small --sentence \"고양이가 쥐를\" --ablate L1H3 --notebook lm.ipynb\n"
    "  mhaviz export --view head --model assets/models/mhaviz-small.npz --sentence \"고양이가 쥐를\" \\\n"
    "      --layer 1 --png lm.png                          a trained language model's layer 1\n"
    "\n"
    "Labels use NanumGothic (fonts-nanum, or assets/fonts next to the binary); set\n"
    "MHAVIZ_FONT=/path/to/font.ttf to use another TrueType font.\n"
    "\n"
    "Exit status: 0 ok, 1 runtime error (files, fonts), 2 usage error (flags). Files are\n"
    "written atomically: a failed write leaves no partial file behind.";

// A decimal as typed: digits with at most one '.' between them (strtod alone also took
// spaces, signs, hex, "inf" and "nan"); 0 for anything else.
double Decimal(const std::string& s) {
  const std::size_t dot = s.find('.');
  const bool digits = !s.empty() && s.find_first_not_of("0123456789.") == std::string::npos && s.size() <= 12 &&
                      s.find('.', dot == std::string::npos ? dot : dot + 1) == std::string::npos && s.front() != '.' &&
                      s.back() != '.';
  return digits ? std::strtod(s.c_str(), nullptr) : 0;
}

// "16:9" -> 1.777...: width over height, from 1:4 to 4:1.
double FitAspect(const std::string& v) {
  const std::size_t colon = v.find(':');
  const double w = colon == std::string::npos ? 0 : Decimal(v.substr(0, colon)),
               h = colon == std::string::npos ? 0 : Decimal(v.substr(colon + 1));
  if (!(w > 0 && h > 0 && w / h >= 0.25 && w / h <= 4.0))
    throw UsageError("--fit expects the slide's shape as W:H, e.g. 16:9 or 4:3 (from 1:4 to 4:1), got '" +
                     TerminalSafe(v) + "'.");
  return w / h;
}

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// --view head: the head view of the layer, every head (or --head K) on one picture.
int WriteHeadView(const ExportArgs& e, const Trace& t, const render::HeatmapOptions& ho, double computed_ms) {
  render::HeadViewOptions o;
  o.head = e.head_given ? e.head : -1;
  o.scale = e.scale > 0 ? e.scale : o.scale;
  o.header = e.header;
  o.title = "Head view" + (e.head_given ? " \u00B7 head " + std::to_string(e.head) : std::string());
  o.sentence = ho.sentence.empty() ? std::string() : ho.sentence;
  // Render everything before writing anything, so a rendering error leaves no files.
  std::vector<std::pair<std::string, std::string>> files;
  render::Image img;
  if (!e.png_path.empty()) {
    img = render::RenderHeadView(t, o);
    files.emplace_back(e.png_path, render::EncodePng(img));
  }
  if (!e.svg_path.empty()) files.emplace_back(e.svg_path, render::RenderHeadViewSvg(t, o));
  io::WriteFilesAtomic(files);
  if (e.quiet) return 0;
  const int H = t.cfg.num_heads;
  std::cout << "head view of " << t.seq << " query x " << t.seq_kv << " key tokens, "
            << (e.head_given ? "head " + std::to_string(e.head) : std::to_string(H) + (H == 1 ? " head" : " heads"))
            << " (computed in " << computed_ms << " ms)\n";
  for (const auto& [path, bytes] : files)
    std::cout << "wrote " << TerminalSafe(path) << " ("
              << (path == e.png_path ? std::to_string(img.width) + " x " + std::to_string(img.height) + " px, "
                                     : std::string())
              << (bytes.size() + 1023) / 1024 << " KiB)\n";
  return 0;
}

// --notebook: a name that says what it is, and no flag that shapes a picture.
void CheckNotebookArgs(const ExportArgs& e, const std::vector<std::string>& argv) {
  const std::string& p = e.notebook_path;
  const std::string ext = ".ipynb";
  const std::size_t slash = p.find_last_of('/');
  const std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  if (base.size() <= ext.size() || base.compare(base.size() - ext.size(), ext.size(), ext) != 0)
    throw UsageError(
        "--notebook writes a Jupyter notebook, whose name ends in .ipynb (Jupyter lists no other), "
        "and its tensors beside it under the same name ending in .npz: give e.g. --notebook cat.ipynb, "
        "got '" +
        TerminalSafe(p) + "'.");
  if (!e.png_path.empty() || !e.svg_path.empty())
    throw UsageError(
        "--notebook writes a notebook and the .npz it reads; write the pictures (--png, --svg) in a "
        "run of their own.");
  for (const char* f : {"--view", "--grid", "--head", "--scale", "--no-values", "--color-scale", "--colour-scale",
                        "--columns", "--no-header", "--fit", "--tile"})
    for (const std::string& a : argv)
      if (a == f || a.rfind(std::string(f) + "=", 0) == 0)
        throw UsageError(std::string(f) +
                         " shapes a picture; the notebook draws every head with matplotlib itself. Leave it out "
                         "with --notebook.");
}

}  // namespace

// --lang: the captions' language, applied as the flags are parsed (one export per process).
static std::string g_export_lang = "en";

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
                         "--color-scale " +
                             v + "."
                       : std::string();
          },
          ""))
      ->check(WholeNumber("--scale", 1, 8,
                          [](long long n) {
                            return n >= 1 && n <= 8
                                       ? std::string()
                                       : "--scale " + std::to_string(n) +
                                             " is out of range: use 1 (screen size) to 8; 2 is sharp on slides.";
                          }))
      ->type_name("N")
      ->group(kOutputGroup);
  auto colour = app.add_option("--color-scale,--colour-scale", e.colour_scale,
                               "what the colours are relative to: fixed (default: the weight on [0, 1],\n"
                               "heads compare by eye), map (each map's largest weight is brightest) or\n"
                               "row (each query's largest weight is brightest: long sentences)");
  colour->type_name("fixed|map|row")
      ->group(kOutputGroup)
      ->check(CLI::Validator(
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
  app.add_flag_callback(
         "--no-header", [&e] { e.header = false; },
         "leave out the title, sentence and configuration above the maps\n"
         "(notes on what was simplified then go to stderr only)")
      ->group(kOutputGroup);
  TextFlag(app, "--fit", e.fit,
           "a canvas of exactly this shape, e.g. 16:9 or 4:3: the columns are chosen\n"
           "to fill it and the figure is centred (a slide)")
      ->type_name("W:H")
      ->group(kOutputGroup);
  app.add_flag_callback(
         "--no-values", [&e] { e.values = false; }, "do not print the weights inside the cells")
      ->group(kOutputGroup);
  app.add_flag("-q,--quiet", e.quiet, "print nothing on success")->group(kOutputGroup);
  app.add_option("--view", e.view,
                 "what to draw: heatmaps (default: one map per head, and their mean), head\n"
                 "(the head view: the tokens in two columns, a line from each query to each key\n"
                 "it attends to, opacity = weight, a colour per head; --head K for one head),\n"
                 "cost (the Cost view: RNN / CNN / self-attention at this n and d_model, FLOPs\n"
                 "against n from the shape flow, the bytes of the n x n weights against Flash's)\n"
                 "or flash (the Flash view at its end: head --head K's grid cut into --tile\n"
                 "tiles, the weights recovered from m and l, and the largest difference\n"
                 "from the standard path's context)")
      ->type_name("heatmaps|head|cost|flash")
      ->group(kOutputGroup)
      ->check(CLI::Validator(
          [](std::string& v) {
            return v == "heatmaps" || v == "head" || v == "cost" || v == "flash"
                       ? std::string()
                       : "--view expects heatmaps (one map per head), head (the head view's lines), cost (what "
                         "attention costs as n grows) or flash (Flash attention's tiles), got '" +
                             v + "'.";
          },
          ""));
  TextFlag(app, "--tile", e.tile, "with --view flash: the tile, Br query rows x Bc keys, e.g. 4x4 (default) or 3x5")
      ->type_name("BRxBC")
      ->group(kOutputGroup)
      ->check(CLI::Validator(
          [](std::string& v) {
            return ParseNumberPair(v, 'x', 1, Limits::kMaxFlashTile)
                       ? std::string()
                       : "--tile expects Br x Bc as two whole numbers from 1 to " +
                             std::to_string(Limits::kMaxFlashTile) +
                             " joined by x, e.g. 4x4 or 3x5 (tiles that do not divide the sentence are fine), got '" +
                             TerminalSafe(v) + "'.";
          },
          ""));
  app.add_option_function<std::string>(
         "--lang", [](const std::string& v) { g_export_lang = v; },
         "the language of the titles and captions drawn into the picture: en (default) or\n"
         "ko (Korean, as the app's Korean interface writes them); messages stay English")
      ->type_name("en|ko")
      ->group(kOutputGroup)
      ->check(CLI::IsMember({"en", "ko"}));
  TextFlag(app, "--notebook", e.notebook_path,
           "write a Jupyter notebook of the lessons' PyTorch code that recomputes this\n"
           "layer (or trained model) step by step and with torch.nn.MultiheadAttention,\n"
           "checked against mhaviz's numbers; what it reads goes beside it as OUT.npz",
           "--notebook needs a file name ending in .ipynb, e.g. --notebook cat.ipynb.")
      ->type_name("OUT.ipynb")
      ->group(kOutputGroup);
  PresetFlag(app, [&e](const std::string& v) { e.preset = v; })->group("What to compute");
  options::AddModelFlags(app, e.source);
  app.add_flag("--grid", e.grid,
               "with --model: every head of every layer on one picture (a row of maps per layer),\n"
               "labelled with what each head does")
      ->group("A trained model (mhaviz train)");
}

ExportArgs ParseExportArgs(const std::vector<std::string>& argv) {
  ExportArgs e = ParseCommandArgs("export", kExportAbout, kExportFooter, DeclareExportFlags, argv);
  if (e.help) return e;
  if (g_export_lang == "ko" && !i18n::SetLanguage(i18n::Lang::kKorean)) {
    if (i18n::CatalogProblem().empty())
      throw Error(
          "--lang ko: the Korean translation (mhaviz.mo) was not found beside mhaviz or in its "
          "share/locale; build the mhaviz-translations target or reinstall.");
    // A damaged catalogue is a broken install, not a typo: the picture is still worth
    // drawing, in English, with the reason on stderr.
    std::cerr << "mhaviz export: note: " << TerminalSafe(i18n::CatalogProblem(), true) << "\n";
  }
  options::CheckModelFlags(
      argv, e.source,
      {"--png", "--svg", "--notebook", "--head", "--scale", "--no-values", "-q", "--quiet", "--grid", "--color-scale",
       "--colour-scale", "--columns", "--no-header", "--fit", "--view", "--sentence", "-s", "--lang", "--tile"});
  if (!e.preset.empty()) {
    if (!e.source.model.empty())
      throw UsageError("--preset and --model both say which weights to draw; give one of them.");
    if (!e.run.cfg_edits.empty() || !e.run.input_npz.empty() || !e.run.weights_npz.empty() || !e.run.memory.empty())
      throw UsageError("--preset " + e.preset +
                       " brings its own configuration, input and weights; leave out the "
                       "flags that set them (--heads, --d-model, --input, --weights, --memory, ...).");
    if ((e.preset == "lesson" || e.preset == "hand") && (e.run.sentence_given || !e.run.sentence_file.empty()))
      throw UsageError("--preset " + e.preset + " is a fixed example of " +
                       (e.preset == "lesson" ? "three made-up words" : "one made-up word") +
                       "; leave out the sentence.");
  }
  if (e.view == "head") {
    if (e.grid) throw UsageError("--grid draws heatmaps of every layer; the head view draws one layer (--layer i).");
    for (const char* f : {"--columns", "--fit", "--color-scale", "--colour-scale", "--no-values"})
      for (const std::string& a : argv)
        if (a == f || a.rfind(std::string(f) + "=", 0) == 0)
          throw UsageError(std::string(f) +
                           " shapes the heatmaps; the head view has no cells or columns of maps. "
                           "Leave it out, or use --view heatmaps.");
  }
  if (e.view == "cost" || e.view == "flash") {
    if (e.grid)
      throw UsageError("--grid draws heatmaps of every layer; --view " + e.view + " draws one layer (--layer i).");
    for (const char* f : {"--columns", "--fit", "--color-scale", "--colour-scale", "--no-values"})
      for (const std::string& a : argv)
        if (a == f || a.rfind(std::string(f) + "=", 0) == 0)
          throw UsageError(std::string(f) + " shapes the heatmaps; --view " + e.view +
                           " draws no maps of heads. Leave it out, or use --view heatmaps.");
    if (e.view == "cost" && e.head_given)
      throw UsageError(
          "--view cost draws the whole layer's cost; --head picks a head for --view flash, heatmaps or head.");
  }
  if (const auto tile = ParseNumberPair(e.tile, 'x', 1, Limits::kMaxFlashTile)) {  // (checked when parsed)
    if (e.view != "flash") throw UsageError("--tile sets Flash attention's tile for --view flash; leave it out here.");
    e.tile_br = tile->first;
    e.tile_bc = tile->second;
  }
  if (e.grid && e.source.model.empty())
    throw UsageError("--grid draws every layer and head of a trained model: give the checkpoint with --model M.npz.");
  if (e.grid && (e.head_given || e.source.layer != 0))
    throw UsageError("--grid draws every layer and every head; leave out --head and --layer.");
  if (!e.notebook_path.empty()) {
    CheckNotebookArgs(e, argv);
    return e;
  }
  if (e.png_path.empty() && e.svg_path.empty())
    throw UsageError(
        "say where to write the heatmaps: --png FILE.png and/or --svg FILE.svg (or, for a Jupyter notebook of the "
        "same computation in PyTorch, --notebook FILE.ipynb). See 'mhaviz export --help'.");
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
    if (!e.notebook_path.empty()) return ExportNotebook(e);
    io::CheckOutputs({{"--png", e.png_path}, {"--svg", e.svg_path}});  // before anything is computed or drawn
    if (e.grid) return ExportGrid(e);
    const std::string& png_path = e.png_path;
    const std::string& svg_path = e.svg_path;
    const bool head_given = e.head_given, quiet = e.quiet, head_view = e.view == "head";
    render::HeatmapOptions ho;
    if (e.head_given) ho.head = e.head;
    if (e.scale > 0) ho.scale = e.scale;
    ho.values = e.values;
    render::ParseColourScale(e.colour_scale, &ho.colour_scale);  // (checked when parsed)
    ho.columns = e.columns;
    ho.header = e.header;
    if (!e.fit.empty()) ho.fit = FitAspect(e.fit);

    // The picture's size follows from the flags and the token counts: refused before
    // the forward pass, not after it.
    int H = 0;
    const auto check = [&](const Config& cfg, long long seq, long long seq_kv) {
      H = cfg.num_heads;
      if (head_given && (ho.head < 0 || ho.head >= H))
        throw UsageError("--head " + std::to_string(ho.head) + " is out of range: with num_heads = " +
                         std::to_string(H) + " the heads are numbered 0 to " + std::to_string(H - 1) +
                         ". (--heads sets how many heads there are; --head picks the one to draw.)");
      if (e.view == "cost") return;
      if (e.view == "flash") {
        if (!svg_path.empty() && seq * seq_kv > render::kMaxSvgCells)
          throw UsageError("the Flash picture's SVG would hold " + Thousands(seq * seq_kv) + " cells (" +
                           std::to_string(seq) + " x " + std::to_string(seq_kv) + " tokens), over the --svg limit of " +
                           Thousands(render::kMaxSvgCells) + ". Use fewer tokens, or write only a --png.");
        return;
      }
      if (head_view) {
        if (std::max(seq, seq_kv) > render::kHeadViewMaxTokens)
          throw UsageError("the head view draws at most " + std::to_string(render::kHeadViewMaxTokens) +
                           " tokens per column, and this input has " + std::to_string(std::max(seq, seq_kv)) +
                           ": the columns would be taller than any page. Use fewer tokens, or --view heatmaps.");
        return;
      }
      const long long svg_cells = (head_given ? 1 : H) * seq * seq_kv;
      if (!svg_path.empty() && svg_cells > render::kMaxSvgCells)
        throw UsageError("the SVG would hold " + Thousands(svg_cells) + " cells (" +
                         (head_given ? std::string("one head") : std::to_string(H) + " heads") + " x " +
                         std::to_string(seq) + " x " + std::to_string(seq_kv) +
                         " tokens), too many for any viewer (the --svg limit is " + Thousands(render::kMaxSvgCells) +
                         "). Export one head with --head K, use fewer tokens or heads, or write only a --png.");
    };
    const auto t0 = std::chrono::steady_clock::now();
    const ExportSource src = LoadExportSource(e, check);
    const auto t1 = std::chrono::steady_clock::now();
    if (!src.notice.empty()) std::cerr << "mhaviz export: note: " << TerminalSafe(src.notice, true) << "\n";
    const Trace& t = src.Layer();
    // The header shows the sentence as typed rather than the tokens joined by spaces.
    ho.sentence = src.sentence;
    ho.memory = src.memory;
    ho.positional = src.positional;
    ho.weights = src.weights;
    if (head_view) return WriteHeadView(e, t, ho, Ms(t1 - t0));
    if (e.view == "cost" || e.view == "flash") return WriteCostOrFlash(e, t, src.sentence, Ms(t1 - t0));

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
                << (H == 1 ? " head" : " heads") << " (computed in " << Ms(t1 - t0) << " ms)\n";
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
