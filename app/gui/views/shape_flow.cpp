// The shape flow as a view of its own, so it can fill the projector's window (lesson
// 000): the same table and diagram as the panel over the tabs, and the batch the class
// reasons about. The trace is one sentence; B sentences of the same length at once
// multiply the batch axis and the FLOPs and share the parameters (ShownFlow).
#include <algorithm>
#include <string>

#include <CLI/CLI.hpp>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "options/flags.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;

namespace {

constexpr int kMaxBatch = 4096;

// "batch B" with - and + that double and halve (1, 2, 4 ... 32 ...), and a field to type
// any B: lesson 003's 32 is five clicks from 1.
void BatchControl(AppState& s) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("batch (sentences at once):"));
  ImGui::SameLine();
  if (ImGui::Button("-##flow_batch_half")) s.ui.flow_batch = std::max(1, s.ui.flow_batch / 2);
  Probe(s, "flow_batch_half");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("00000").x + 2 * ImGui::GetStyle().FramePadding.x);
  int b = s.ui.flow_batch;
  if (ImGui::InputInt("##flow_batch", &b, 0, 0)) s.ui.flow_batch = std::clamp(b, 1, kMaxBatch);
  Probe(s, "flow_batch");
  ImGui::SameLine();
  if (ImGui::Button("+##flow_batch_double")) s.ui.flow_batch = std::min(kMaxBatch, s.ui.flow_batch * 2);
  Probe(s, "flow_batch_double");
}

void DrawShapeFlowView(AppState& s) {
  SectionTitle(s, _("Every step's shape, parameters and FLOPs"),
               _("Each step's output shape, batch axis first, its learned parameters and its FLOPs. "
                 "The window runs one sentence; with a batch of B sentences of the same length every shape "
                 "starts with B and the FLOPs grow B times, while the parameters stay the same."),
               true);
  if (!HaveResultsToShow(s)) return;
  BatchControl(s);
  ImGui::Spacing();
  DrawFlowBody(s, ImGui::GetContentRegionAvail());
  Probe(s, "shape_flow_table");
}

json DumpShapeFlowView(AppState& s) {
  if (!HasResults(s)) return dump::Error("no trace");
  json rows = json::array();
  for (const FlowRow& r : ShownFlow(s, s.result.trace))
    rows.push_back({{"step", r.step},
                    {"tensor", r.tensor},
                    {"shape", r.shape},
                    {"param_count", r.param_count},
                    {"flops", r.flops}});
  return {{"batch", s.ui.flow_batch}, {"rows", rows}};
}

void DeclareShapeFlowFlags(CLI::App& app, const std::string& g, ViewFlagActions& actions) {
  options::IntFlag(
      app, "--flow-batch", 1, kMaxBatch,
      [&actions](int v) { actions.push_back([v](AppState& s) { s.ui.flow_batch = v; }); },
      "the batch the shape flow shows (default 1: the sentence alone)")
      ->type_name("B")
      ->group(g);
}

}  // namespace

ViewEntry ShapeFlowView() {
  ViewEntry v{"shape-flow", N_("Shape flow"), N_("Shape flow: every step's shape, parameters and FLOPs"),
              "the shape-flow table and block diagram, with a batch of B sentences"};
  v.heads = false;
  v.scrolls = false;  // the table scrolls itself
  v.draw = &DrawShapeFlowView;
  v.dump = &DumpShapeFlowView;
  v.shows = "shape_flow_table";
  v.essentials = "shape_flow_table;flow_batch";
  v.flags = &DeclareShapeFlowFlags;
  return v;
}

}  // namespace mha::gui
