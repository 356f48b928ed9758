#include "gui/main/gui_flags.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <limits>

#include "gui/sources/file_sources.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/views/registry.hpp"
#include "io/files.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

const char* kAbout =
    "Opens the desktop app: type a sentence, see the shape flow and every head's attention\n"
    "heatmap, recomputed live. With no flags it restores the last sentence and configuration;\n"
    "the flags below override the saved settings.";
const char* kFooter =
    "Settings live in $XDG_CONFIG_HOME/mhaviz (default ~/.config/mhaviz): settings.json and imgui.ini.\n"
    "Exit status: 0 ok, 1 runtime error (no display, no OpenGL 3.3, unwritable file), 2 usage error.";

void DeclareTeachFlags(CLI::App& app, TeachFlags& t) {
  const std::string g = "Teaching views";
  app.add_option_function<std::string>(
         "--view", [&t](const std::string& v) { t.view = v; }, "start on a view: " + ViewNamesJoined())
      ->type_name("NAME")
      ->group(g)
      ->check(CLI::Validator(
          [](std::string& v) {
            return FindView(v) ? std::string() : "--view must be one of " + ViewNamesJoined() + "; got '" + v + "'.";
          },
          ""));
  options::IntFlag(
      app, "--view-head", 0, Limits::kMaxHeads - 1, [&t](int v) { t.head = v; },
      "the head the query, scaling and inspector views show (default 0)")
      ->type_name("H")
      ->group(g);
  options::IntFlag(
      app, "--view-query", 0, Limits::kMaxTokens - 1, [&t](int v) { t.query = v; },
      "the query token of the step-by-step view (default 0)")
      ->type_name("I")
      ->group(g);
  options::TextFlag(app, "--inspect", t.inspect,
                    "the tensor inspector shows TENSOR (an .npz key: x, W_q, q, scores, concat, ...)")
      ->type_name("TENSOR")
      ->group(g);
  options::PresetFlag(app, [&t](const std::string& v) {
    (v == "lesson" ? t.lesson : v == "hand" ? t.hand : t.heads) = true;
  })->group(g);
  DeclareViewFlags(app, g, t.views);  // each view's own (the Train view's --train-*)
}

void DeclareAutomationFlags(CLI::App& app, GuiOptions& o) {
  const std::string g = "Automation (tests, docs, bug reports, benchmarks)";
  options::IntFlag(
      app, "--frames", 1, 1000000, [&o](int v) { o.frames = v; },
      "render N frames, then exit (more while a big recompute\nfinishes on its worker thread)")
      ->group(g);
  options::TextFlag(app, "--screenshot", o.screenshot,
                    "save a PNG of the window after the last frame (without --frames:\n"
                    "when the window is closed)")
      ->type_name("FILE")
      ->group(g);
  options::TextFlag(app, "--stats", o.stats, "write the median frame, recompute and texture upload times (JSON)")
      ->type_name("FILE.json")
      ->group(g);
  app.add_flag("--churn", o.churn, "recompute every frame, as while a slider is dragged")->group(g);
  options::IntFlag(
      app, "--width", 200, kMaxWindowWidth, [&o](int v) { o.width = v; },
      "window width in pixels (default 1600, at most " + std::to_string(kMaxWindowWidth) + ")")
      ->type_name("W")
      ->group(g);
  options::IntFlag(
      app, "--height", 150, kMaxWindowHeight, [&o](int v) { o.height = v; },
      "window height in pixels (default 1000, at most " + std::to_string(kMaxWindowHeight) + ")")
      ->type_name("H")
      ->group(g);
  options::TextFlag(app, "--dump-state", o.dump_state,
                    "at exit, write the sentence, configuration and the full trace (JSON)")
      ->type_name("FILE")
      ->group(g);
  options::TextFlag(app, "--probe", o.probe, "while running, keep FILE updated with widget positions and state (JSON)")
      ->type_name("FILE")
      ->group(g);
  app.add_option_function<std::string>(
         "--enlarge",
         [&o](const std::string& v) {
           o.enlarge = v == "mean" ? Limits::kMaxHeads + 1 : static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
         },
         "start with head K (0 .. num_heads-1, or 'mean') enlarged")
      ->type_name("K")
      ->group(g)
      ->check(CLI::Validator([check = options::WholeNumber("--enlarge", 0, Limits::kMaxHeads - 1)](
                                 std::string& v) { return v == "mean" ? std::string() : check(v); },
                             ""));
  app.add_flag("--present", o.present, "start in presentation mode (F11): the open view (--view) fills the window")
      ->group(g);
  options::IntFlag(
      app, "--text-size", kMinTextSize, kMaxTextSize, [&o](int v) { o.text_size = v; },
      "text size in percent, as the View menu and Ctrl+= / Ctrl+- set it (" + std::to_string(kMinTextSize) + " to " +
          std::to_string(kMaxTextSize) + "; 150 or 200 for a projector)")
      ->type_name("PCT")
      ->group(g);
  app.add_option("--color-scale,--colour-scale", o.colour_scale,
                 "the heatmaps' colour scale: fixed (0 to 1), map (per map max) or row (per row max)")
      ->type_name("fixed|map|row")
      ->group(g)
      ->check(CLI::IsMember({"fixed", "map", "row"}));
  app.add_option("--lang", o.lang,
                 "the interface's language: en (English) or ko (Korean, 한국어); default: as last\n"
                 "chosen in View > Language, else LANGUAGE / LC_ALL / LC_MESSAGES / LANG")
      ->type_name("en|ko")
      ->group(g)
      ->check(CLI::IsMember({"en", "ko"}));
  options::TextFlag(app, "--lesson", o.lesson,
                    "play a lesson tour: a built-in lesson's id (000 to 004; mhaviz lesson --list)\n"
                    "or a lesson file (docs/lessons.md), in presentation mode")
      ->type_name("ID|FILE")
      ->group(g);
  options::IntFlag(
      app, "--step", 1, tour::kMaxSteps, [&o](int v) { o.lesson_step = v; },
      "with --lesson: start at step N (1: the first)")
      ->type_name("N")
      ->group(g);
  options::TextFlag(app, "--lesson-export", o.lesson_out,
                    "with --lesson: save every step as DIR/step-01.png, ... (the window as it shows\n"
                    "the step), then exit (mhaviz lesson ID --export DIR runs this)")
      ->type_name("DIR")
      ->group(g);
  options::TextFlag(app, "--lesson-record", o.lesson_record,
                    "start writing a lesson that Save writes to FILE: the Lesson menu's editor\n"
                    "opens, Add this as a step records the window (docs/lessons.md)")
      ->type_name("FILE")
      ->group(g);
  options::TextFlag(app, "--export", o.export_path,
                    "export the heatmaps (.png or .svg), or the notebook (.ipynb, with its\n"
                    ".npz beside it), after the last frame, as Ctrl+S does")
      ->type_name("FILE")
      ->group(g);
  app.add_flag_callback(
         "--settings", [&o] { o.settings = 1; },
         "load and save the user's settings file (default: yes, except\n"
         "with --frames / --screenshot / --stats)")
      ->group(g);
  app.add_flag_callback(
         "--no-settings", [&o] { o.settings = 0; }, "do not load or save the settings file")
      ->group(g);
}

}  // namespace

void DeclareGuiFlags(CLI::App& app, GuiArgs& a) {
  options::AddRunFlags(app, a.run);
  DeclareTeachFlags(app, a.teach);
  options::AddModelFlags(app, a.model);
  DeclareAutomationFlags(app, a.gui);
}

GuiArgs ParseGuiArgs(const std::vector<std::string>& args) {
  GuiArgs a = options::ParseCommandArgs("gui", kAbout, kFooter, DeclareGuiFlags, args);
  if (!a.gui.stats.empty() && a.gui.frames == 0) a.gui.frames = 10;
  // Each is written on its own: two that are one file (o.png and ./o.png, a symlink)
  // would leave only the last.
  const GuiOptions& g = a.gui;
  // The export writes the heatmaps as PNG or SVG; any other name wrote nothing the user
  // asked for (out.gif, or a name without an extension).
  const auto ends = [&](const char* ext) {
    const std::string p = g.export_path;
    const std::size_t n = std::strlen(ext);
    return p.size() > n && std::equal(p.end() - n, p.end(), ext, [](char x, char y) { return std::tolower(x) == y; });
  };
  if (!g.export_path.empty() && !ends(".png") && !ends(".svg") && !ends(".ipynb"))
    throw options::UsageError("--export '" + g.export_path +
                              "' should end in .png or .svg (the heatmaps) or .ipynb (a Jupyter notebook): the "
                              "export writes one of those (a GIF of training is 'mhaviz train --gif').");
  try {  // every output before the first frame: a typo must not cost the session
    io::CheckOutputs({{"--screenshot", g.screenshot},
                      {"--dump-state", g.dump_state},
                      {"--probe", g.probe},
                      {"--stats", g.stats},
                      {"--export", g.export_path},
                      {"--lesson-record", g.lesson_record}});
  } catch (const io::OutputClash& e) {
    throw options::UsageError(e.what());
  }
  if (!a.gui.lesson_out.empty()) {
    if (a.gui.lesson.empty())
      throw options::UsageError("--lesson-export DIR saves the steps of a lesson: give it with --lesson ID|FILE.");
    a.gui.frames = std::numeric_limits<int>::max();  // until the last step is saved
    const std::string& dir = a.gui.lesson_out;
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
      throw options::UsageError("--lesson-export: '" + dir +
                                "' is a file, not a directory: give a directory for the step pictures (it is "
                                "created if missing).");
    std::filesystem::create_directories(dir, ec);
    if (ec && !std::filesystem::is_directory(dir))
      throw options::UsageError("--lesson-export: cannot create the directory '" + dir + "': " + ec.message() +
                                ". Choose a directory you can write to.");
    try {  // the first step's picture before any work, as every output is checked
      io::CheckOutputs({{"--lesson-export", (std::filesystem::path(a.gui.lesson_out) / "step-01.png").string()}});
    } catch (const Error& e) {
      throw options::UsageError(e.what());
    }
  }
  if (a.gui.lesson_step != 1 && a.gui.lesson.empty())
    throw options::UsageError("--step N chooses the step of a lesson: give the lesson with --lesson ID|FILE.");
  if (a.model.model.empty() && (!a.model.tokens.empty() || a.model.example != 0 || a.model.layer != 0))
    throw options::UsageError(
        "--tokens, --example and --layer choose what a trained model runs on: give the "
        "checkpoint with --model M.npz.");
  return a;
}

void ApplyRunOptions(const options::RunOptions& o, AppState& s) {
  s.choice.cfg = o.ConfigOver(s.choice.cfg);
  if (!o.sentence.empty()) s.choice.sentence = o.sentence;
  // The text field's own cap (SyncBuffersFromChoice) applies.
  if (!o.sentence_file.empty()) s.choice.sentence = options::ReadSentenceFile(o.sentence_file);
  if (!o.memory.empty()) {
    s.choice.memory = o.memory;
    s.choice.cross = true;
  }
  if (!o.input_npz.empty()) {
    s.choice.files.input = options::LoadInputNpz(o);
    s.choice.files.input_path = o.input_npz;
    s.choice.cfg.d_model = static_cast<int>(s.choice.files.input.x.cols());
    s.choice.cfg.positional_encoding = false;  // x already holds whatever encoding it had
  }
  if (!o.weights_npz.empty()) {
    auto npz = io::LoadNpz(o.weights_npz, io::WeightsFilter(o.weights_npz, &s.choice.cfg));
    s.choice.files.weights =
        std::make_shared<const Weights>(io::WeightsFromNpz(std::move(npz), o.weights_npz, &s.choice.cfg));
    s.choice.files.weights_path = o.weights_npz;
  }
  SyncBuffersFromChoice(s);
  Training(s).flag_edits = o.cfg_edits;  // the Train view's task defaults go under them
  s.dirty = true;
}

namespace {

// A preset fixes its own configuration: the flags (or settings) it replaced get a
// notice rather than being dropped in silence ("--mask causal" with "--preset heads").
void NoteOverridden(const Config& was, const Config& now, const char* preset, AppState& s) {
  const Config def;
  std::string list;
  auto note = [&](bool given, bool differs, const std::string& what) {
    if (given && differs) list += (list.empty() ? "" : ", ") + what;
  };
  note(was.mask != def.mask, was.mask != now.mask, std::string("--mask ") + ToString(was.mask));
  note(was.norm != def.norm, was.norm != now.norm, std::string("--norm ") + ToString(was.norm));
  note(was.num_heads != def.num_heads, was.num_heads != now.num_heads, "--heads " + std::to_string(was.num_heads));
  note(was.d_model != def.d_model, was.d_model != now.d_model, "--d-model " + std::to_string(was.d_model));
  note(was.num_kv_heads != def.num_kv_heads, was.num_kv_heads != now.num_kv_heads,
       "--kv-heads " + std::to_string(was.num_kv_heads));
  note(was.scale != def.scale, was.scale != now.scale, "--no-scale");
  if (!list.empty())
    s.ui.notices.push_back({N_("--preset %s sets its own configuration, so these flags were not used: %s. Change the "
                               "configuration after it loads if you like."),
                            {preset, list}});
}

}  // namespace

void ApplyTeachFlags(const TeachFlags& f, AppState& s) {
  const Config before = s.choice.cfg;
  if (f.lesson) LoadLessonExample(s);
  if (f.hand) LoadLessonPreset(s, 1);
  if (f.heads) LoadPositionalHeadsExample(s);
  if (f.lesson || f.hand || f.heads)
    NoteOverridden(before, s.choice.cfg, f.lesson ? "lesson" : f.hand ? "hand" : "heads", s);
  if (!f.view.empty()) ShowView(s, FindView(f.view)->name);  // an alias names the view by its name
  for (const auto& apply : f.views) apply(s);
  if (f.head >= 0) {
    const int H = s.choice.cfg.num_heads;
    if (f.head >= H)
      throw options::UsageError("--view-head " + std::to_string(f.head) + " does not exist: with num_heads = " +
                                std::to_string(H) + " the heads are numbered 0 to " + std::to_string(H - 1) +
                                ". (--heads sets how many heads there are; --view-head picks one.)");
    s.choice.head = f.head;
  }
  if (f.query >= 0) s.choice.query = f.query;
  if (!f.inspect.empty()) {
    s.choice.inspect.tensor = f.inspect;
    s.choice.inspect.step.clear();
    const bool per_head = f.inspect == "q" || f.inspect == "k" || f.inspect == "v" || f.inspect == "scores" ||
                          f.inspect == "attn" || f.inspect == "context";
    s.choice.inspect.mode = per_head ? InspectSelection::Mode::Head : InspectSelection::Mode::Whole;
    if (f.view.empty()) {
      ShowView(s, "inspect");
    }
  }
}

}  // namespace mha::gui
