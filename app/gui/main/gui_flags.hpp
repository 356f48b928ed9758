// `mhaviz gui`'s flags: the shared ones that say what to compute (options/flags.hpp,
// the same declaration `trace` uses), the teaching views' and automation's. Parsed
// before the settings are loaded; applied on top of them.
#pragma once

#include <string>
#include <vector>

#include "gui/state/app_state.hpp"
#include "gui/views/registry.hpp"
#include "options/flags.hpp"
#include "options/model_flags.hpp"

namespace mha::gui {

// --view NAME, --view-head H, --view-query I, --inspect TENSOR, --preset lesson | heads.
struct TeachFlags {
  std::string view;  // a name the registry has ("" = as saved)
  int head = -1, query = -1;
  std::string inspect;
  bool lesson = false;
  bool hand = false;      // --preset hand
  bool heads = false;     // --preset heads
  ViewFlagActions views;  // what the views' own flags set (the registry's ViewEntry::flags)
};

// The largest window (and so screenshot) mhaviz opens: 8K UHD. Its framebuffers, the
// screenshot's pixels and their PNG stay within the memory budget; 16384 x 16384 took
// 5.8 GB.
inline constexpr int kMaxWindowWidth = 7680;
inline constexpr int kMaxWindowHeight = 4320;

// Automation (tests, docs, bug reports, benchmarks) and the window.
struct GuiOptions {
  std::string screenshot, stats, dump_state, probe, export_path;
  int frames = 0;
  bool churn = false;
  int width = 0, height = 0;
  int settings = -1;          // -1 default, 0 no, 1 yes
  int enlarge = -1;           // a head, or Limits::kMaxHeads + 1 for "mean" (resolved to num_heads)
  bool present = false;       // --present: start in presentation mode
  int text_size = 0;          // --text-size PCT (0 = as saved)
  std::string colour_scale;   // --color-scale fixed|map|row ("" = as saved)
  std::string lang;           // --lang en|ko ("" = as saved, else the environment's)
  std::string lesson;         // --lesson ID|FILE: play a lesson tour
  int lesson_step = 1;        // --step N: from its step N (1 = the first)
  std::string lesson_out;     // --lesson-export DIR: a PNG of every step, then exit
  std::string lesson_record;  // --lesson-record FILE: start writing a lesson that saves to FILE
  bool automation() const { return frames > 0 || !stats.empty() || !lesson_out.empty(); }
};

struct GuiArgs {
  options::RunOptions run;
  TeachFlags teach;
  options::ModelFlags model;  // --model M.npz --tokens --example --layer: a trained model drives the views
  GuiOptions gui;
  bool help = false;
  std::string help_text;
};
void DeclareGuiFlags(CLI::App& app, GuiArgs& a);
GuiArgs ParseGuiArgs(const std::vector<std::string>& args);  // throws options::UsageError

// The flags on top of `s.choice` (defaults or saved settings). Reads --sentence-file,
// --input and --weights (mha::Error for a bad file).
void ApplyRunOptions(const options::RunOptions& o, AppState& s);
void ApplyTeachFlags(const TeachFlags& f, AppState& s);
// --model: ApplyModelFlags (sources/train_session.hpp).

}  // namespace mha::gui
