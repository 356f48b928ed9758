// Tensor inspector: any tensor of the trace as a heatmap of its values with its
// shape. Clicking a shape-flow step opens its result here (one head of a per-head
// tensor via HeadSlice, the Q/K/V projections with their heads merged back via
// MergeHeads); the step's parameters are one click away.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;
using dump::Matrix;

namespace {

bool PerHead(const std::string& n) {
  return n == "q" || n == "k" || n == "v" || n == "scores" || n == "attn" || n == "context";
}

// The tensors a result is made from: its inputs and learned parameters.
std::vector<std::string> Related(const std::string& n, const Trace& t) {
  const bool pre = t.cfg.norm == Norm::Pre;
  const std::string src = pre ? "x_ln" : "x";
  const std::string mem = t.in.cross() ? "memory" : src;
  if (n == "q") return {src, "W_q", "b_q"};
  if (n == "k") return {mem, "W_k", "b_k"};
  if (n == "v") return {mem, "W_v", "b_v"};
  if (n == "x_ln") return {"x", "ln_gamma", "ln_beta"};
  if (n == "scores") return {"q", "k"};
  if (n == "attn") return {"scores"};
  if (n == "context") return {"attn", "v"};
  if (n == "concat") return {"context"};
  if (n == "attn_out") return {"concat", "W_o", "b_o"};
  if (n == "residual") return {"x", "attn_out"};
  if (n == "out")
    return t.cfg.norm == Norm::Post ? std::vector<std::string>{"residual", "ln_gamma", "ln_beta"}
                                    : std::vector<std::string>{"x", "attn_out"};
  if (n == "ffn_ln") return {"out", "ln2_gamma", "ln2_beta"};
  if (n == "ffn_hidden") return {pre ? "ffn_ln" : "out", "ffn_W1", "ffn_b1"};
  if (n == "ffn_out") return {"ffn_hidden", "ffn_W2", "ffn_b2"};
  if (n == "ffn_residual") return {"out", "ffn_out"};
  if (n == "block_out") return {"ffn_residual", "ln2_gamma", "ln2_beta"};
  return {};
}

void Select(AppState& s, const std::string& name) {
  s.teach.inspect.tensor = name;
  s.teach.inspect.step.clear();
  s.teach.inspect.mode = PerHead(name) ? InspectSelection::Mode::Head : InspectSelection::Mode::Whole;
}

}  // namespace

void DrawInspectorView(AppState& s) {
  SectionTitle(s, _("Tensor inspector"),
               _("Click any step of the shape flow above to see the values it produced, with their shape. Blue is "
                 "negative, white zero, red positive."),
               true);
  if (!HaveResultsToShow(s)) return;
  const Trace& t = s.result.trace;
  InspectSelection& sel = s.teach.inspect;
  const auto tensors = Tensors(t);
  const float fs = ImGui::GetFontSize();

  // Any tensor by name.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("tensor"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 14.0f);
  const std::string current = sel.tensor + "  " +
                              (FindTensor(tensors, sel.tensor) ? ShapeString(FindTensor(tensors, sel.tensor)->shape)
                                                               : std::string("(not in this trace)"));
  if (ImGui::BeginCombo("##inspect_tensor", current.c_str(), ImGuiComboFlags_HeightLarge)) {
    for (const TensorView& v : tensors) {
      const std::string label = v.name + "  " + ShapeString(v.shape);
      if (ImGui::Selectable(label.c_str(), v.name == sel.tensor)) Select(s, v.name);
    }
    ImGui::EndCombo();
  }
  Probe(s, "inspect_tensor");
  if (PerHead(sel.tensor)) {
    ImGui::SameLine(0, fs);
    int mode = sel.mode == InspectSelection::Mode::Merged ? 1 : 0;
    bool m = ImGui::RadioButton(_("one head"), &mode, 0);
    ImGui::SameLine();
    m |= ImGui::RadioButton(_("all heads side by side"), &mode, 1);
    if (m) sel.mode = mode ? InspectSelection::Mode::Merged : InspectSelection::Mode::Head;
    if (sel.mode == InspectSelection::Mode::Head) {
      ImGui::SameLine(0, fs);
      HeadPicker(s, "##inspect_head");
    }
  }
  if (!sel.step.empty()) {
    const std::string from = i18n::Format(_("from the step \"%s\""), sel.step.c_str());
    SameLineIfFits(ImGui::CalcTextSize(from.c_str()).x, fs);
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", from.c_str());
  }
  // Inputs and parameters of this tensor, one click away.
  const auto related = Related(sel.tensor, t);
  if (!related.empty()) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(_("made from"));
    for (const std::string& r : related) {
      if (!FindTensor(tensors, r)) continue;
      ImGui::SameLine();
      if (ImGui::SmallButton(r.c_str())) Select(s, r);
      Probe(s, ("related " + r).c_str());
    }
  }

  const auto& c = InspectCache(s);
  if (!c.ok) {
    MessageBox(c.error, Pal().error_bg, Pal().error_text);
    return;
  }
  const InspectedTensor& it = c.value;
  const std::string stored = it.shape != it.full_shape
                                 ? i18n::Format(_(" (stored as %s)"), ShapeString(it.full_shape).c_str())
                                 : std::string();
  const std::string masked =
      it.neg_inf ? i18n::Format(_("; %d masked (-\xE2\x88\x9E)"), static_cast<int>(it.neg_inf)) : std::string();
  const std::string line =
      i18n::Format(_("%s   shape %s%s   values from %s to %s%s"), it.title.c_str(), ShapeString(it.shape).c_str(),
                   stored.c_str(), Sig(it.min).c_str(), Sig(it.max).c_str(), masked.c_str());
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(line.c_str());
  if (s.ui.font_bold) ImGui::PopFont();
  Probe(s, "inspect_info");
  if (!it.note.empty()) Muted(it.note.c_str());

  const bool weights = sel.tensor == "attn";
  MatrixArgs a;
  a.id = "inspector";
  a.key = c.key;
  a.data = it.values.data();
  a.rows = static_cast<int>(it.values.rows());
  a.cols = static_cast<int>(it.values.cols());
  a.row_labels = it.row_labels.empty() ? nullptr : &it.row_labels;
  a.col_labels = it.col_labels.empty() ? nullptr : &it.col_labels;
  a.scale = weights ? ColourScale::Sequential : ColourScale::Diverging;
  a.range = weights ? 1.0f : std::max(it.abs_max, 1e-6f);
  a.row_axis = it.row_labels.empty() ? _("row") : _("token");
  a.col_axis = it.col_labels.empty() ? _("column") : _("key");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Small tensors keep cells big enough for labels and values; the view scrolls if need be.
  const float min_cell = a.rows <= 32 ? fs * 1.5f : 3.0f;
  a.size = ImVec2(avail.x, std::max(avail.y - ImGui::GetTextLineHeightWithSpacing() * 1.6f,
                                    a.rows * min_cell + (a.col_labels ? fs * 6.5f : fs * 1.5f)));
  a.max_cell = fs * 3.2f;
  a.square = false;
  a.fixed_decimals = weights;
  // One head's weights: the cells its causal mask hides are grey, as in the heatmaps.
  const Trace& tr = s.result.trace;
  if (weights && s.teach.inspect.mode == InspectSelection::Mode::Head && a.rows == tr.seq && a.cols == tr.seq_kv &&
      s.teach.head >= 0 && s.teach.head < tr.cfg.num_heads)
    a.masked_by = tr.ScoresHead(s.teach.head).data();
  a.col_group = it.col_group;
  a.col_group_label = it.col_group_label.empty() ? nullptr : it.col_group_label.c_str();
  DrawMatrix(s, a);
  Probe(s, "inspect_map");
  DrawScaleLegend(a.scale, a.range, std::min(avail.x, fs * 24.0f), weights ? _("weight") : _("value"), it.neg_inf > 0);
}

json DumpInspectorView(AppState& s) {
  const auto& c = InspectCache(s);
  const InspectSelection::Mode mode = s.teach.inspect.mode;
  json iv{{"tensor", s.teach.inspect.tensor},
          {"mode", mode == InspectSelection::Mode::Head     ? "head"
                   : mode == InspectSelection::Mode::Merged ? "merged"
                                                            : "whole"},
          {"step", s.teach.inspect.step}};
  if (!c.ok) {
    iv["error"] = c.error;
    return iv;
  }
  const InspectedTensor& t = c.value;
  iv["title"] = t.title;
  iv["shape"] = t.shape;
  iv["full_shape"] = t.full_shape;
  iv["rows"] = t.values.rows();
  iv["cols"] = t.values.cols();
  iv["min"] = t.min;
  iv["max"] = t.max;
  iv["neg_inf"] = t.neg_inf;
  if (t.values.size() <= dump::kMaxDumpValues) iv["values"] = Matrix(t.values);
  return iv;
}

ViewEntry InspectorView() {
  ViewEntry v{"inspector", N_("Inspect"), N_("Tensor inspector"),
              "any tensor of the trace, as a heatmap with its values"};
  v.draw = &DrawInspectorView;
  v.dump = &DumpInspectorView;
  v.shows = "inspect_map";
  return v;
}

}  // namespace mha::gui
