// The registry of the results area's views: one line per view (MHAVIZ_VIEWS in
// registry.cpp) drives the tab bar, the View menu, --view (its names and its help),
// the views' own flags, the frame's per-view work, the work a view does beside a big
// trace (its prime hook), --probe, and --dump-state's "views" (which the GUI tests read
// the list of views from).
//
// Adding a view touches two places (docs/architecture.md has the recipe):
//   1. its own file or folder under views/ (CMake picks it up), holding its drawing,
//      its dump, its state (a type of its own, kept in AppState::views: ViewStore)
//      and a function `ViewEntry NameView()` that fills in the entry below;
//   2. one line of MHAVIZ_VIEWS in registry.cpp, where the view's tab goes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gui/state/recompute_state.hpp"

struct ImVec2;

namespace CLI {
class App;
}

namespace mha::gui {

struct AppState;

// What a view's flags do once parsed: each is applied to the state after the settings
// are loaded, in the order given (ApplyTeachFlags).
using ViewFlagActions = std::vector<std::function<void(AppState&)>>;

struct ViewEntry {
  const char* name = "";              // --view NAME; --dump-state's "view" and views.NAME_view ('-' as '_'): the
                                      // tab's label in lower case, and the file's name (views/NAME.cpp or views/NAME/)
  const char* tab = "";               // the tab's label: a word or two, so every tab shows at 1280 px (the menu
                                      // entry is its tooltip)
  const char* menu = "";              // the View menu's entry and the tab's tooltip
  const char* help = "";              // one line in --help
  const char* alias = nullptr;        // the name --view also takes (a view renamed keeps its old one working)
  void (*draw)(AppState&) = nullptr;  // draws into the current tab
  // What the view shows as JSON, from the same caches it draws (--dump-state's
  // views.NAME_view); null: nothing to dump (the heatmaps are in "trace").
  nlohmann::json (*dump)(AppState&) = nullptr;
  // The probe (widget name) the view's drawing makes once it shows the current trace: the
  // GUI tests open every view and look for it. Null for a view that brings its own model
  // (Train) or needs one (Next: a language model's).
  const char* shows = nullptr;
  // The probes of what the view's presented form must show in the window (its maps,
  // table or plot, and its stepping controls), ';' between them; null: `shows`. The
  // projector test presents every view and looks for each.
  const char* essentials = nullptr;
  bool scrolls = true;  // drawn in its own scrolling child (the heatmaps fit themselves)
  bool veil = true;     // dimmed while it shows the last valid results (not Train: its own model)
  bool heads = true;    // shows one head at a time (s.choice.head): presentation's arrow keys step it

  // Presentation mode (F11): what the view shows full window, under the header. Null:
  // its usual draw, with its explanations folded behind the header's "?".
  void (*presented)(AppState&) = nullptr;
  // PgDn (dir 1) / PgUp (dir -1) in presentation mode: a step of the view's own
  // sequence (Flash's tiles, Generate's pieces). Null: the view has none.
  void (*step)(AppState&, int dir) = nullptr;

  // Optional hooks, for a view with work of its own beyond drawing:
  void (*update)(AppState&) = nullptr;  // every frame, before the one recompute
  // What the view would compute from a new trace in its first frame, computed instead
  // beside a big trace on the recompute's task (state/recompute_state.hpp): reads the
  // trace and the choice only, returns what to store in the view's state.
  PrimeHook prime = nullptr;
  bool (*animating)(const AppState&) = nullptr;        // true: the window keeps drawing (no idle wait)
  nlohmann::json (*probe)(const AppState&) = nullptr;  // --probe's entry under the view's name
  // Declares the view's own flags (in --help's "Teaching views" group `group`); what
  // they set goes into `actions`.
  void (*flags)(CLI::App& app, const std::string& group, ViewFlagActions& actions) = nullptr;
};

// Every view, in tab order.
const std::vector<ViewEntry>& Views();
// The view called `name` (or by its alias), or null.
const ViewEntry* FindView(const std::string& name);
// The tab's label and the View menu's entry, in the interface's language (each view's
// entry marks them N_(), so xgettext finds them).
const char* ViewTitle(const ViewEntry& v);
const char* ViewMenuTitle(const ViewEntry& v);
// "heatmaps, query, ...": the names --view accepts.
std::string ViewNamesJoined();

// The hooks of every view, for the frame, the main loop, the recompute, --probe and the
// flags.
void UpdateViews(AppState& s);
std::vector<PrimeHook> ViewPrimers();
bool ViewsAnimating(const AppState& s);
void ViewsProbeJson(const AppState& s, nlohmann::json& j);
void DeclareViewFlags(CLI::App& app, const std::string& group, ViewFlagActions& actions);

// While the configuration cannot run (ShowingLastValid), dims the rectangle a..b (a
// view showing the last valid results) under a veil of the window's background; else
// nothing. One mechanism for every view and for presentation mode.
void VeilLastValid(AppState& s, ImVec2 a, ImVec2 b);

// The view open (s.choice.view; the first if it names none).
const ViewEntry& ShownView(const AppState& s);

// Presentation mode (views/presented.cpp): the open view full window under a one-line
// header (the view, the weights, the layer and head, the knocked-out heads, and "?"
// for the explanations it folds); the arrow keys' head step and PgUp / PgDn's.
void DrawPresentedView(AppState& s);
void PresentedStepHeads(AppState& s, int dir);
void PresentedStepSequence(AppState& s, int dir);

// The tab bar of the results area, one tab per view; and the View menu's entries.
void DrawResultsArea(AppState& s);
void DrawViewMenuItems(AppState& s);

// What every view shows, as JSON (--dump-state's "views"): the selection, the list of
// views ("registry": name, tab, shows), then each view's Dump under "NAME_view".
std::string TeachViewsJson(AppState& s);

}  // namespace mha::gui
