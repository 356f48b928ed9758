// The Heatmaps tab: the attention maps of every head (views/heatmaps/grid.cpp), under a
// banner that says what rows and columns are when the trace is cross-attention.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "gui/draw/pytorch_copy.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/heatmaps/heatmaps.hpp"
#include "gui/views/heatmaps/norms.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

void DrawCrossBanner(AppState& s) {
  if (!s.result.ok || !s.result.trace.in.cross()) return;
  const auto& c = SourcesCache(s);
  if (!c.ok) return;
  const AttentionSources& src = c.value;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Cross-attention (encoder-decoder): rows are the sentence's %d tokens (queries), columns the "
                "memory's %d tokens (keys and values), so each map is %d x %d. The Cross-attention tab compares "
                "it with self-attention.",
                src.seq, src.seq_kv, src.seq, src.seq_kv);
  MessageBox(buf, Pal().notice_bg, Pal().notice_text);
  Probe(s, "cross_banner");
}

}  // namespace

void DrawHeatmapsView(AppState& s) {
  DrawCrossBanner(s);
  DrawHeatmapsPanel(s);
}

// The weights themselves are --dump-state's "trace"; here, what "Copy as PyTorch" copies,
// and what each key adds when the maps show it (norms.hpp).
nlohmann::json DumpHeatmapsView(AppState& s) {
  nlohmann::json j = DumpHeatmapNorms(s);
  j["pytorch"] = PyTorchSnippetFor(s, notebook::Snippet::Heatmaps);
  return j;
}

ViewEntry HeatmapsView() {
  ViewEntry v{"heatmaps", N_("Heatmaps"), N_("Attention heatmaps (all heads)"),
              "the attention weights of every head and their mean"};
  v.draw = &DrawHeatmapsView;
  v.dump = &DumpHeatmapsView;
  v.shows = "map 0";
  v.scrolls = false;                 // the maps fit themselves
  v.presented = &DrawHeatmapsPanel;  // one map, a page or every map, under presentation's row
  v.prime = &PrimeHeatmapNorms;      // what each key adds, beside a big trace
  v.probe = &ProbeHeatmaps;
  v.flags = &DeclareHeatmapFlags;
  return v;
}

}  // namespace mha::gui
