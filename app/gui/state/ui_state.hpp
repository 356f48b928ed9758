// What only the window cares about: the text fields, fonts, textures, splitters, the
// Export panel, timings and what the last frame laid out (for the tests). Nothing the
// core computes depends on it.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "gui/state/notice.hpp"
#include "gui/state/textures.hpp"
#include "gui/state/tour_state.hpp"
#include "render/colormap.hpp"

struct ImFont;

namespace mha::gui {

// Bytes the sentence fields hold. ImGui's InputText stops taking text at this size;
// the Sentence panel says so when the field is full.
inline constexpr std::size_t kSentenceCap = 8192;

// The text sizes (percent) the View menu, Ctrl+= / Ctrl+- and --text-size offer.
inline constexpr int kMinTextSize = 75;
inline constexpr int kMaxTextSize = 300;

// Splitter positions, saved in imgui.ini's [mhaviz][Layout] (see settings.cpp). (The
// exported figure's layout is render::Layout.)
struct Splitters {
  float left_width = 0.0f;      // pixels at scale 1; 0 = default
  float flow_height = 0.0f;     // pixels at scale 1; 0 = default
  bool flow_collapsed = false;  // shape-flow panel folded to its title line
};

// The Export panel: where and how the heatmaps (or the head view) are written.
struct ExportForm {
  std::array<char, 1024> path{};
  bool selected_only = false;  // the enlarged head only, instead of all heads + mean
  int scale = 2;
  bool values = true;
  int columns = 0;         // maps per row; 0 = chosen for a 16:9 figure
  bool header = true;      // the formula, sentence and configuration above the maps
  bool fit_16_9 = false;   // pad the figure to exactly 16:9 (a slide)
  bool head_view = false;  // the head view's lines (the heads switched on there) instead of heatmaps
  bool notebook = false;   // a Jupyter notebook of the lessons' code (and its .npz) instead of a picture
  std::array<char, 1024> screenshot_path{};
  std::string message;  // last result, shown under the buttons
  bool message_ok = true;
};

// Requests that panels make and the frame carries out after the recompute.
struct Pending {
  bool export_png = false;
  bool export_svg = false;
  bool export_notebook = false;  // File -> Export notebook, whatever the panel's choice
  std::string screenshot;        // non-empty: capture the window after rendering
};

struct Timing {
  double last_recompute_ms = 0.0;  // MakeInputs + weights + Forward
  double last_upload_ms = 0.0;     // colour-mapping + texture upload
  double last_frame_ms = 0.0;
  std::vector<double> frame_ms, recompute_ms, upload_ms;  // samples, for --stats
  std::vector<double> ui_ms, draw_ms, swap_ms;            // frame phases (automation only)
  std::vector<double> cpu_ms;                             // process CPU time per frame
  std::vector<double> triangles;                          // triangles ImGui submits per frame
  // The window's own thread, per frame (its CPU time: what waiting for a core on a
  // busy machine does not inflate): frames over kFrameBudgetMs, and the slowest.
  int frames_over_budget = 0;
  double slowest_frame_ms = 0.0;
  int slowest_frame = 0;
  std::vector<std::array<double, 2>> over_budget;  // the last few: frame, ms (--probe)
  // Every frame's work on the window thread, counted in kWorkBinMs-wide bins (the last
  // holds everything longer): tests take a median and a high percentile over the frames
  // they drive, which one frame slowed by a busy machine does not decide.
  static constexpr double kWorkBinMs = 2.0;
  std::array<int, 128> work_hist{};
};

// A frame's budget (30 frames a second): longer work goes to a task.
inline constexpr double kFrameBudgetMs = 33.0;

// What the heatmap grid and the shape-flow table chose to show in the last frame, so
// tests (--probe, --dump-state) can check that labels stay readable and nothing is cut.
struct LayoutReport {
  // Attention weights grid (all heads + mean, or the enlarged head).
  int maps = 0, grid_cols = 0, grid_rows = 0;
  float cell_w = 0.0f, cell_h = 0.0f;     // pixels per cell
  bool row_labels = false;                // query tokens left of the rows
  std::string key_labels = "none";        // above the columns: none | upright | rotated | index
  float label_px = 0.0f;                  // font size of the token labels
  bool label_font = false;                // the smaller label font is loaded (on demand)
  bool values = false;                    // weights written in the cells
  float values_px = 0.0f;                 // ... at this font size
  bool scroll = false;                    // the grid is taller than its panel and scrolls
  int key_label_overlaps = 0;             // neighbouring maps whose key labels meet on a line
  float content_h = 0.0f, view_h = 0.0f;  // grid height, visible height
  // Shape-flow table.
  float flow_table_w = 0.0f;       // width the table has
  float flow_columns_w = 0.0f;     // width its columns take
  float flow_diagram_w = 0.0f;     // the block diagram beside it
  bool flow_params_small = false;  // the "parameters" column in the small font
  bool flow_scroll_x = false;      // the table scrolls sideways (narrower than its floors)
  int flow_shortened = 0;          // cells shortened with "..." (full text in the tooltip)
  std::string flow_input;          // the shape flow's input row: "formula | parameters"
  std::string present_header;      // presentation mode's header, its parts joined by " | "
  std::string present_name;        // the head's name in it (sources/shown_names.hpp)
  // Softmax & sqrt(d_k) view: cells with their number written in, and without ("…"); the
  // maps' titles cut with "…" (on two lines, a title still wider than its map).
  int scaling_values_shown = 0, scaling_values_hidden = 0, scaling_titles_cut = 0;
  // The teaching views' matrices (draw/matrix_view) with Hangul keys, by how the keys
  // are laid out: turned on their side (never: they stand upright, or on two staggered
  // lines), or upright.
  int matrix_hangul_rotated = 0, matrix_hangul_upright = 0;
  // Pictures a view still finishes over several frames at big sizes (the Head view's
  // search for lines, a big matrix's colours): automation's last frame waits for 0.
  int views_busy = 0;
};

struct Ui {
  std::array<char, kSentenceCap + 1> sentence_buf{};
  std::array<char, kSentenceCap + 1> memory_buf{};
  bool focus_sentence = true;  // keyboard focus to the sentence field on start
  int enlarged = -1;           // head shown alone; num_heads = the mean; -1 = grid
  int hover_step = -1;         // shape-flow row hovered last frame (table or diagram)
  int hover_step_next = -1;    // ... being collected this frame
  bool hover_from_diagram = false, hover_from_diagram_next = false;
  int hover_token = -1;  // token chip hovered last frame: highlights its row
  int hover_token_next = -1;
  float content_scale = 1.0f;                                     // monitor content scale (HiDPI)
  int text_size = 100;                                            // percent, for projectors
  int typed_value = 0;                                            // the Ctrl+click field of the stepping sliders
  render::ColourScale colour_scale = render::ColourScale::Fixed;  // heatmaps and their export
  bool present = false;    // presentation mode (F11): the open view takes the window
  int present_layout = 0;  // 0 one map large, 1 a 2x2 page, 2 every map
  int present_head = 0;    // the map the arrow keys are on
  // The explanations the presented view folded away last frame and this one: the
  // header's "?" opens last frame's (it is drawn before the view).
  std::vector<std::string> present_help, present_help_next;
  bool flow_folded_for_room = false;  // the shape flow shows its title only: big text in a small window
  // The batch the shape flow shows (lesson 000's x = torch.randn(32, 10, 512)): the
  // trace is one sentence; B of them at once multiply the batch axis and the FLOPs.
  int flow_batch = 1;
  bool dark = false;
  std::string lang_chosen;               // "en" / "ko" picked in View > Language (saved), "" = the environment's
  std::string lang_request;              // a language to switch to before the next frame ("" = none)
  std::vector<std::string> menu_labels;  // the menus as the last frame showed them (--dump-state)
  // Every text the last frame drew through ImGui (its log), for --dump-state: a test reads
  // what a learner reads, in the interface's language. Only filled under --dump-state.
  std::string shown_text;
  bool fonts_dirty = false;        // rebuild the font atlas before the next frame
  ImFont* font_bold = nullptr;     // headings
  ImFont* font_small = nullptr;    // token indices, at 3/4 size (Latin only)
  ImFont* font_label = nullptr;    // heatmap token labels at 4/5 size, once asked for
  ImFont* font_numbers = nullptr;  // weights in big heatmap cells: digits at 7/4 size
  bool want_label_font = false;    // the heatmaps asked for font_label (loaded with the next rebuild)
  std::string font_notice;         // shown when NanumGothic could not be loaded
  std::string font_path;           // the file the UI font came from ("" = ImGui's own)
  std::vector<Notice> notices;     // one-time notices (settings file, flags, the sentence field's cap)
  HeatmapTextures textures;
  // Rectangles of key widgets in window pixels, for the GUI tests (--probe).
  std::map<std::string, std::array<float, 4>> probe;
  LayoutReport report;       // what the last frame laid out (--probe, --dump-state)
  bool select_view = false;  // the tab bar switches to choice.view this frame
  MatrixTextures matrices;   // the teaching views' small matrices (draw/matrix_view.hpp)
  Splitters splitters;
  ExportForm exports;
  Pending pending;
  TourPlay tour;  // a lesson tour being played (Lesson > Open, --lesson)
  Timing timing;
  bool churn = false;  // --churn: recompute every frame (benchmark)
  bool quit = false;
};

}  // namespace mha::gui
