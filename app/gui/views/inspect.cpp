// Tensor inspector: any tensor of the trace as a heatmap of its values with its
// shape. Clicking a shape-flow step opens its result here (one head of a per-head
// tensor via HeadSlice, the Q/K/V projections with their heads merged back via
// MergeHeads); the step's parameters are one click away.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/pytorch_copy.hpp"
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

// A (rows, cols) picture of a tensor, ready to draw and to dump.
struct InspectedTensor {
  std::string title;                                // "q[head 1]", "q (heads merged)", "W_q"
  std::vector<std::int64_t> shape;                  // the shape shown, with the batch axis where it has one
  std::vector<std::int64_t> full_shape;             // the stored tensor's shape
  Mat values;                                       // rows x cols as drawn (a 1-D tensor is one row)
  std::vector<std::string> row_labels, col_labels;  // "" = numbered
  float min = 0, max = 0, abs_max = 0;              // over the finite values
  int neg_inf = 0;                                  // masked scores
  std::string note;                                 // what this tensor is, one line
  int col_group = 0;                                // > 0: columns come in heads of this many (concat, W_q, ...)
  std::string col_group_label;                      // "head", "K/V head"
};

// The view's own state (AppState::views).
struct InspectState {
  Cached<InspectedTensor> cache;  // the selected tensor as drawn
};

void FillStats(InspectedTensor& it) {
  it.min = std::numeric_limits<float>::infinity();
  it.max = -std::numeric_limits<float>::infinity();
  it.neg_inf = 0;
  for (Eigen::Index k = 0; k < it.values.size(); ++k) {
    const float v = it.values.data()[k];
    if (std::isinf(v) && v < 0) {
      ++it.neg_inf;
      continue;
    }
    if (!std::isfinite(v)) continue;
    it.min = std::min(it.min, v);
    it.max = std::max(it.max, v);
  }
  if (it.min > it.max) it.min = it.max = 0.0f;
  it.abs_max = std::max(std::abs(it.min), std::abs(it.max));
}

// What a tensor is, in the lesson's words.
std::string Describe(const std::string& name) {
  static const std::pair<const char*, const char*> kNotes[] = {
      {"x", N_("the input: one row per token (embedding + positional encoding)")},
      {"memory", N_("the memory sentence that keys and values are read from (cross-attention)")},
      {"W_q", N_("W_Q, the query projection: Q = x W_Q + b_Q")},
      {"b_q", N_("b_Q, the query bias")},
      {"W_k", N_("W_K, the key projection: K = x W_K + b_K (cross-attention: m W_K, m = the memory)")},
      {"b_k", N_("b_K, the key bias")},
      {"W_v", N_("W_V, the value projection: V = x W_V + b_V (cross-attention: m W_V, m = the memory)")},
      {"b_v", N_("b_V, the value bias")},
      {"W_o", N_("W_O, the output projection: attn_out = concat W_O + b_O")},
      {"b_o", N_("b_O, the output bias")},
      {"ln_gamma", N_("LayerNorm scale (gamma)")},
      {"ln_beta", N_("LayerNorm shift (beta)")},
      {"ln_eps", N_("LayerNorm epsilon")},
      {"x_ln", N_("LN(x): the sublayer's input in the pre-LN arrangement")},
      {"q", N_("the queries: what each token is looking for")},
      {"k", N_("the keys: what each token offers to be found by")},
      {"v", N_("the values: what each token passes on when attended to")},
      {"scores", N_("q k^T / sqrt(d_k) (masked entries are -inf): before the softmax")},
      {"attn", N_("the softmax weights: each row sums to 1")},
      {"context", N_("attn V: each query's weighted sum of the values")},
      {"concat", N_("the heads' context side by side again: (seq, num_heads x head_dim)")},
      {"attn_out", N_("concat W_O + b_O: the heads mixed back together")},
      {"residual", N_("x + attn_out: the residual connection")},
      {"out", N_("the attention sublayer's output")},
      {"ffn_W1", N_("W1 of the feed-forward network: d_model -> d_ff")},
      {"ffn_b1", N_("b1 of the feed-forward network")},
      {"ffn_W2", N_("W2 of the feed-forward network: d_ff -> d_model")},
      {"ffn_b2", N_("b2 of the feed-forward network")},
      {"ln2_gamma", N_("second LayerNorm scale (gamma)")},
      {"ln2_beta", N_("second LayerNorm shift (beta)")},
      {"ffn_ln", N_("LN2(out): the FFN's input in the pre-LN arrangement")},
      {"ffn_hidden", N_("act(x W1 + b1): the FFN's wide hidden layer, one row per token")},
      {"ffn_out", N_("ffn_hidden W2 + b2: back to d_model")},
      {"ffn_residual", N_("out + ffn_out: the FFN's residual connection")},
      {"block_out", N_("the encoder block's output")},
  };
  for (const auto& [n, d] : kNotes)
    if (name == n) return _(d);
  return "";
}

// Largest tensor picture drawn (and kept): bigger tensors are shown every k-th row/column.
constexpr std::int64_t kMaxInspectValues = std::int64_t(1) << 22;

// One tensor of the trace as drawn: as stored, one head of it, or its heads merged.
void BuildInspected(const Trace& t, const InspectSelection& sel, int head, InspectedTensor& it) {
  const auto tensors = Tensors(t);
  const TensorView* tv = FindTensor(tensors, sel.tensor);
  if (!tv) throw Error("This trace has no tensor '" + sel.tensor + "' (it exists only in other configurations).");
  it = InspectedTensor{};
  it.full_shape = tv->shape;
  it.note = Describe(sel.tensor);
  const auto& qtok = QueryTokens(t);
  const auto& ktok = KeyTokens(t);
  const bool per_head = tv->shape.size() == 4;
  const bool kv = sel.tensor == "k" || sel.tensor == "v";
  Mat m;
  if (per_head && sel.mode == InspectSelection::Mode::Merged) {
    m = MergeHeads(*tv);
    it.title = i18n::Format(_("%s (all heads side by side)"), sel.tensor.c_str());
    it.shape = {1, tv->shape[2], tv->shape[1] * tv->shape[3]};
    it.row_labels = kv ? ktok : qtok;
  } else if (per_head) {
    const int h = kv ? t.KvHeadOf(head) : head;
    const TensorView hv = HeadSlice(*tv, h);
    m = Eigen::Map<const Mat>(hv.data, hv.shape[0], hv.shape[1]);
    it.title = hv.name;
    if (kv && t.cfg.kv_heads() != t.cfg.num_heads) it.title += i18n::Format(_(" (read by query head %d)"), head);
    it.shape = {1, 1, hv.shape[0], hv.shape[1]};
    it.row_labels = kv ? ktok : qtok;
    if (sel.tensor == "scores" || sel.tensor == "attn") it.col_labels = ktok;
  } else if (tv->shape.size() == 3) {
    m = Eigen::Map<const Mat>(tv->data, tv->shape[1], tv->shape[2]);
    it.title = sel.tensor;
    it.shape = tv->shape;
    it.row_labels = sel.tensor == "memory" ? ktok : qtok;
  } else if (tv->shape.size() == 2) {
    m = Eigen::Map<const Mat>(tv->data, tv->shape[0], tv->shape[1]);
    it.title = sel.tensor;
    it.shape = tv->shape;
  } else if (tv->shape.size() == 1) {
    m = Eigen::Map<const Mat>(tv->data, 1, tv->shape[0]);
    it.title = sel.tensor;
    it.shape = tv->shape;
  } else {  // a scalar (ln_eps)
    m = Mat::Constant(1, 1, *tv->data);
    it.title = sel.tensor;
    it.shape = tv->shape;
  }
  // Very large tensors: every k-th row and column, so the texture stays bounded.
  const std::int64_t n = static_cast<std::int64_t>(m.rows()) * m.cols();
  if (n > kMaxInspectValues) {
    const int k = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n) / kMaxInspectValues)));
    Mat sub((m.rows() + k - 1) / k, (m.cols() + k - 1) / k);
    for (Eigen::Index i = 0; i < sub.rows(); ++i)
      for (Eigen::Index j = 0; j < sub.cols(); ++j) sub(i, j) = m(i * k, j * k);
    m.swap(sub);
    it.row_labels.clear();
    it.col_labels.clear();
    it.note +=
        (it.note.empty() ? "" : ". ") + i18n::Format(_("Too big to draw whole: every %dth row and column shown"), k);
  }
  // Columns that are heads side by side: concat, merged q/k/v/context, W_q/W_k/W_v and their biases.
  const int hd = t.cfg.head_dim();
  const bool merged = per_head && sel.mode == InspectSelection::Mode::Merged;
  if (it.col_labels.empty() && n <= kMaxInspectValues && hd > 0 && hd < m.cols() &&
      (merged || sel.tensor == "concat" || sel.tensor == "W_q" || sel.tensor == "b_q" || sel.tensor == "W_k" ||
       sel.tensor == "b_k" || sel.tensor == "W_v" || sel.tensor == "b_v")) {
    it.col_group = hd;
    const bool kv_side = sel.tensor == "k" || sel.tensor == "v" || sel.tensor == "W_k" || sel.tensor == "b_k" ||
                         sel.tensor == "W_v" || sel.tensor == "b_v";
    it.col_group_label = kv_side && t.cfg.kv_heads() != t.cfg.num_heads ? _("K/V head") : _("head");
  }
  it.values = std::move(m);
  FillStats(it);
}

const Cached<InspectedTensor>& InspectCache(AppState& s) {
  auto& c = s.views.Get<InspectState>().cache;
  if (!HasResults(s)) return NoTrace(c, s);
  ClampSelection(s);
  const InspectSelection& sel = s.choice.inspect;
  const std::string key = GenKey(s) + " " + sel.tensor + " m" + std::to_string(static_cast<int>(sel.mode)) + " h" +
                          std::to_string(s.choice.head);
  return Refresh(c, key, [&](InspectedTensor& v) { BuildInspected(s.result.trace, sel, s.choice.head, v); });
}

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
  s.choice.inspect.tensor = name;
  s.choice.inspect.step.clear();
  s.choice.inspect.mode = PerHead(name) ? InspectSelection::Mode::Head : InspectSelection::Mode::Whole;
}

}  // namespace

void DrawInspectView(AppState& s) {
  SectionTitle(s, _("Tensor inspector"),
               _("Click any step of the shape flow above to see the values it produced, with their shape. Blue is "
                 "negative, white zero, red positive."),
               true);
  if (!HaveResultsToShow(s)) return;
  const Trace& t = s.result.trace;
  InspectSelection& sel = s.choice.inspect;
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
  CopyAsPyTorchButton(s, notebook::Snippet::Tensor, "copy_pytorch");
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
  if (weights && s.choice.inspect.mode == InspectSelection::Mode::Head && a.rows == tr.seq && a.cols == tr.seq_kv &&
      s.choice.head >= 0 && s.choice.head < tr.cfg.num_heads)
    a.masked_by = tr.ScoresHead(s.choice.head).data();
  a.col_group = it.col_group;
  a.col_group_label = it.col_group_label.empty() ? nullptr : it.col_group_label.c_str();
  DrawMatrix(s, a);
  Probe(s, "inspect_map");
  DrawScaleLegend(a.scale, a.range, std::min(avail.x, fs * 24.0f), weights ? _("weight") : _("value"), it.neg_inf > 0);
}

json DumpInspectView(AppState& s) {
  const auto& c = InspectCache(s);
  const InspectSelection::Mode mode = s.choice.inspect.mode;
  json iv{{"tensor", s.choice.inspect.tensor},
          {"mode", mode == InspectSelection::Mode::Head     ? "head"
                   : mode == InspectSelection::Mode::Merged ? "merged"
                                                            : "whole"},
          {"step", s.choice.inspect.step},
          {"pytorch", PyTorchSnippetFor(s, notebook::Snippet::Tensor)}};
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

ViewEntry InspectView() {
  ViewEntry v{"inspect", N_("Inspect"), N_("Tensor inspector"),
              "any tensor of the trace, as a heatmap with its values"};
  v.alias = "inspector";
  v.draw = &DrawInspectView;
  v.dump = &DumpInspectView;
  v.shows = "inspect_map";
  return v;
}

}  // namespace mha::gui
