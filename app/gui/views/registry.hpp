// The registry of the results area's views: one table row per view drives the tab
// bar, the View menu, --view (its names and its help), and --dump-state's "views".
// Adding a view: its file in views/ (a Draw and, if it shows numbers, a Dump
// function) and its lines here (the id, the two declarations, the table row); plus
// the file in app/gui/CMakeLists.txt.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "gui/state/teach_state.hpp"
#include "text/i18n.hpp"

struct ImVec2;

namespace mha::gui {

struct AppState;


// Each view's Draw draws into the current tab; its Dump returns what the view shows
// as JSON, from the same caches the view draws (--dump-state's views.NAME_view).
void DrawHeatmapsView(AppState& s);  // heatmaps/heatmaps.cpp
void DrawQueryView(AppState& s);  // query.cpp
nlohmann::json DumpQueryView(AppState& s);
void DrawScalingView(AppState& s);  // scaling.cpp
nlohmann::json DumpScalingView(AppState& s);
void DrawHeadsView(AppState& s);  // heads.cpp
nlohmann::json DumpHeadsView(AppState& s);
void DrawHeadCountView(AppState& s);  // head_count.cpp
nlohmann::json DumpHeadCountView(AppState& s);
void DrawGqaView(AppState& s);  // gqa.cpp
nlohmann::json DumpGqaView(AppState& s);
void DrawCrossView(AppState& s);  // cross.cpp
nlohmann::json DumpCrossView(AppState& s);
void DrawLessonView(AppState& s);  // lesson.cpp
nlohmann::json DumpLessonView(AppState& s);
void DrawInspectorView(AppState& s);  // inspector.cpp
nlohmann::json DumpInspectorView(AppState& s);
void DrawTrainView(AppState& s);  // train/train.cpp
nlohmann::json DumpTrainView(AppState& s);
void DrawHeadView(AppState& s);  // lm/head_view.cpp
nlohmann::json DumpHeadView(AppState& s);
void DrawModelView(AppState& s);  // lm/model_view.cpp
nlohmann::json DumpModelView(AppState& s);
void DrawNextTokensView(AppState& s);  // lm/next_tokens.cpp
nlohmann::json DumpNextTokensView(AppState& s);
void DrawFlashView(AppState& s);  // flash.cpp
nlohmann::json DumpFlashView(AppState& s);
void DrawCostView(AppState& s);  // cost.cpp
nlohmann::json DumpCostView(AppState& s);

struct ViewEntry {
  View id;
  const char* name;  // --view NAME; --dump-state's "view" and views.NAME_view ('-' as '_')
  const char* tab;   // the tab's label: a word or two, so every tab shows at 1280 px (the menu
                     // entry is its tooltip); English, translated where drawn (ViewTitle)
  const char* menu;  // the View menu's entry and the tab's tooltip (ViewMenuTitle)
  const char* help;  // one line in --help
  void (*draw)(AppState&);
  nlohmann::json (*dump)(AppState&);  // null: nothing to dump (the heatmaps are in "trace")
  bool scrolls;  // drawn in its own scrolling child (the heatmaps fit themselves)
};

inline constexpr ViewEntry kViews[kViewCount] = {
    {View::Heatmaps, "heatmaps", N_("Heatmaps"), N_("Attention heatmaps (all heads)"),
     "the attention weights of every head and their mean", &DrawHeatmapsView, nullptr, false},
    {View::Query, "query", N_("Query"), N_("One query, step by step"),
     "one query's scores, softmax and weighted sum of values, by hand", &DrawQueryView, &DumpQueryView, true},
    {View::Scaling, "scaling", N_("Softmax"), N_("Scores, softmax and the \xE2\x88\x9A" "d_k scaling"),
     "scores, masked scores and weights, with and without sqrt(d_k)", &DrawScalingView,
     &DumpScalingView, true},
    {View::Heads, "heads", N_("Metrics"), N_("Head metrics and similarity"),
     "each head's entropy, sharpness and pattern; how alike heads are", &DrawHeadsView, &DumpHeadsView,
     true},
    {View::HeadCount, "head-count", N_("Counts"), N_("Head count vs parameters"),
     "parameters, FLOPs and KV cache for each head count", &DrawHeadCountView,
     &DumpHeadCountView, true},
    {View::Gqa, "gqa", N_("GQA"), N_("Grouped-query and multi-query attention"),
     "which query heads share each K/V head, and what that saves", &DrawGqaView, &DumpGqaView, true},
    {View::Cross, "cross", N_("Cross"), N_("Cross-attention vs self-attention"),
     "where queries, keys and values come from, beside self-attention", &DrawCrossView, &DumpCrossView, true},
    {View::Lesson, "lesson", N_("Lesson"), N_("Lesson example, weight editor and .npz files"),
     "the lesson's worked example, a weight editor and .npz files", &DrawLessonView, &DumpLessonView, true},
    {View::Inspector, "inspector", N_("Inspect"), N_("Tensor inspector"),
     "any tensor of the trace, as a heatmap with its values", &DrawInspectorView, &DumpInspectorView, true},
    {View::Train, "train", N_("Train"), N_("Train a model and watch its heads learn"),
     "train on a task (offsets, reverse, sort, induction): curves, timeline, heads", &DrawTrainView,
     &DumpTrainView, true},
    {View::HeadView, "head-view", N_("Head view"), N_("Head view: query-to-key lines, one colour per head"),
     "BertViz's head view: lines from each query to its keys, opacity = weight", &DrawHeadView, &DumpHeadView, true},
    {View::ModelView, "model-view", N_("Model view"), N_("Model view: every layer x head on the sentence"),
     "every layer x head as a small heatmap; click one to open it", &DrawModelView, &DumpModelView, true},
    {View::NextTokens, "next", N_("Next"), N_("Next-piece predictions of the language model"),
     "the language model's 5 likeliest next pieces after each position", &DrawNextTokensView,
     &DumpNextTokensView, true},
    {View::Flash, "flash", "Flash", "Flash attention, tile by tile",
     "Flash attention stepped tile by tile: m, l, rescale, memory, exact context", &DrawFlashView,
     &DumpFlashView, true},
    {View::Cost, "cost", "Cost", "What attention costs as n grows",
     "RNN / CNN / self-attention cost, FLOPs against n, the n x n bytes", &DrawCostView, &DumpCostView, true},
};

// The table is indexed by View: a row out of place would open the wrong tab.
constexpr bool RegistryInOrder() {
  for (int i = 0; i < kViewCount; ++i)
    if (static_cast<int>(kViews[i].id) != i) return false;
  return true;
}
static_assert(RegistryInOrder(), "kViews must list the views in the order of enum View");

inline const ViewEntry& ViewInfo(View v) { return kViews[static_cast<int>(v)]; }
const char* ViewName(View v);      // "heatmaps", "query", ...: --view and --dump-state
const char* ViewTitle(View v);     // the tab's label, in the interface's language
const char* ViewMenuTitle(View v); // the View menu's longer label, in the interface's language
// The index of the view called `name` (--view), or -1.
int ViewIndexByName(const std::string& name);
// "heatmaps, query, ...": the names --view accepts.
std::string ViewNamesJoined();
// --help's lines of --view: the flag, then one line per view (name and help).
std::string ViewFlagHelp();

// While the configuration cannot run (ShowingLastValid), dims the rectangle a..b (a
// view showing the last valid results) under a veil of the window's background; else
// nothing. One mechanism for every view and for presentation mode.
void VeilLastValid(AppState& s, ImVec2 a, ImVec2 b);

// The tab bar of the results area, one tab per view; and the View menu's entries.
void DrawResultsArea(AppState& s);
void DrawViewMenuItems(AppState& s);

// What every view shows, as JSON (--dump-state's "views"): the selection, then each
// view's Dump under "NAME_view".
std::string TeachViewsJson(AppState& s);

}  // namespace mha::gui
