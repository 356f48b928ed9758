// One query, step by step: the hand calculation of one row of one head, from q and
// every key's k to the weighted sum of the values, which is the trace's context
// row. Every number is ExplainQuery's (mha/teach.hpp), cached per trace + selection.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/pytorch_copy.hpp"
#include "gui/draw/table_fit.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;
using dump::Num;
using dump::Vec;

namespace {

// The view's own state (AppState::views).
// How the key table writes its cells: vector entries shown, significant digits,
// whether headers wider than their cells go onto two lines, whether the cells'
// padding is halved (the inner borders still part the columns), and whether a masked
// key's "hidden (later token)" goes onto two lines (the causal mask's widest cell).
struct KeyTableFit {
  int shown = 9;
  int digits = 4;
  bool wrap = false;
  bool tight = false;
  bool mask_wrap = false;
};

// What the mask column says of a masked key, written as `f`.
std::string MaskText(const KeyTableFit& f) {
  return f.mask_wrap ? TwoLineHeader(_("hidden (later token)")) : std::string(_("hidden (later token)"));
}

// The cells' padding, left and right, written as `f`.
float CellPadX(const KeyTableFit& f) { return ImGui::GetStyle().CellPadding.x * (f.tight ? 0.5f : 1.0f); }

struct QueryState {
  Cached<QueryExplanation> cache;  // the selected head's and query's explanation
  KeyTableFit fit;                 // the key table's writing, for fit_key
  std::string fit_key;             // the explanation, width and text size `fit` is for
};

const Cached<QueryExplanation>& QueryCache(AppState& s) {
  auto& c = s.views.Get<QueryState>().cache;
  if (!HasResults(s)) return NoTrace(c, s);
  ClampSelection(s);
  const std::string key = GenKey(s) + " h" + std::to_string(s.choice.head) + " q" + std::to_string(s.choice.query);
  return Refresh(c, key, [&](QueryExplanation& v) { v = ExplainQuery(s.result.trace, s.choice.head, s.choice.query); });
}

void QueryPicker(AppState& s) {
  const Trace& t = s.result.trace;
  const auto& tokens = t.in.tokens;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("query token"));
  ImGui::SameLine();
  auto name = [&](int i) { return std::to_string(i) + "  " + ForDisplay(tokens[static_cast<std::size_t>(i)]); };
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 11.0f);
  if (ImGui::BeginCombo("##query_token", name(s.choice.query).c_str(), ImGuiComboFlags_HeightLarge)) {
    ImGuiListClipper clip;
    clip.Begin(t.seq);
    while (clip.Step())
      for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i)
        if (ImGui::Selectable(name(i).c_str(), i == s.choice.query)) s.choice.query = i;
    ImGui::EndCombo();
  }
  Probe(s, "query_token");
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::ArrowButton("##qprev", ImGuiDir_Left)) s.choice.query = (s.choice.query + t.seq - 1) % t.seq;
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::ArrowButton("##qnext", ImGuiDir_Right)) s.choice.query = (s.choice.query + 1) % t.seq;
}

// A vector cell: elided text, the full vector in the tooltip.
void VecCell(const Eigen::Ref<const RowVec>& v, int shown, int digits = 4) {
  ImGui::TextUnformatted(VecString(v, shown, digits).c_str());
  if (ImGui::IsItemHovered() && (v.size() > shown || digits < 6)) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
    ImGui::TextUnformatted(VecString(v, static_cast<int>(v.size()), 6).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void NumCell(double v, int digits, bool muted = false) {
  if (muted) ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextUnformatted(Sig(v, digits).c_str());
  if (muted) ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%.9g", v);
}

}  // namespace

namespace {

// What each q·k is divided by in this configuration, in words.
std::string DivisionText(const QueryExplanation& e, const Trace& t) {
  std::string divide;
  if (e.scaled)
    divide = i18n::Format(_("d_k = head_dim = %d, so each q\xC2\xB7k is divided by \xE2\x88\x9A%d = %s"), e.head_dim,
                          e.head_dim, Sig(e.sqrt_dk).c_str());
  else
    divide =
        _("The \xE2\x88\x9A"
          "d_k scaling is off: q\xC2\xB7k is used as it is");
  if (e.temperature != 1.0f)
    divide += i18n::Format(
        e.scaled ? _(", and by the temperature %s (divisor %s)") : _(", only by the temperature %s (divisor %s)"),
        Sig(e.temperature).c_str(), Sig(e.divisor).c_str());
  divide += _(".");
  if (e.cross) divide += _(" Keys and values come from the memory sentence (cross-attention).");
  if (t.cfg.kv_heads() != t.cfg.num_heads)
    divide += i18n::Format(_(" Query head %d reads K/V head %d (GQA)."), e.head, e.kv_head);
  return divide;
}

std::vector<std::string> KeyHeaders(const QueryExplanation& e, bool causal) {
  std::vector<std::string> h{
      "j", e.cross ? _("memory token") : _("key token"), "k_j", _("q\xC2\xB7k_j"),
      e.divisor != 1.0f ? "score = q\xC2\xB7k_j \xC3\xB7 " + Sig(e.divisor) : std::string("score = q\xC2\xB7k_j")};
  if (causal) h.push_back(_("mask"));
  h.push_back(_("exp(score - max)"));  // ASCII: NanumGothic has no U+2212
  h.push_back(_("weight = exp / \xCE\xA3"));
  h.push_back("v_j");
  h.push_back(_("weight \xC3\x97 v_j"));
  return h;
}

// The bar beside each weight: narrower where the table is short of room.
float WeightBarWidth(const KeyTableFit& f) { return ImGui::GetFontSize() * (f.digits < 4 ? 2.0f : 3.0f); }

// The widths of the table's cells written as `f`: the widest of the first 64 keys'
// (what a projector shows at once, and ImGui's fitted columns measure the rows shown).
std::vector<float> KeyCellWidths(const QueryExplanation& e, bool causal, const KeyTableFit& f) {
  std::vector<float> w(causal ? 10 : 9, 0.0f);
  const float bar = WeightBarWidth(f) + ImGui::GetStyle().ItemSpacing.x, token_max = ImGui::GetFontSize() * 8.0f;
  for (std::size_t r = 0; r < std::min<std::size_t>(e.keys.size(), 64); ++r) {
    const KeyStep& k = e.keys[r];
    std::size_t c = 0;
    auto put = [&](float x) {
      w[c] = std::max(w[c], x);
      ++c;
    };
    put(TextWidth(std::to_string(k.index)));
    put(std::min(TextWidth(ForDisplay(k.token)), token_max));
    put(TextWidth(VecString(k.k, f.shown, f.digits)));
    put(TextWidth(Sig(k.dot, f.digits)));
    put(TextWidth(k.masked ? "-\xE2\x88\x9E" : Sig(k.scaled, f.digits)));
    if (causal) put(k.masked ? TextWidth(MaskText(f)) : 0.0f);
    put(TextWidth(Sig(k.exp_shifted, f.digits)));
    put(bar + TextWidth(Sig(k.weight, f.digits)));
    put(TextWidth(VecString(k.v, f.shown, f.digits)));
    put(TextWidth(VecString(k.weighted_v, f.shown, f.digits)));
  }
  return w;
}

float KeyTableWidth(const QueryExplanation& e, const std::vector<std::string>& headers, bool causal,
                    const KeyTableFit& f) {
  const std::vector<float> cells = KeyCellWidths(e, causal, f);
  const float pad = 2 * CellPadX(f) + 1;
  float w = 0.0f;
  for (std::size_t c = 0; c < cells.size(); ++c)
    w += std::max(cells[c], TextWidth(FittedHeader(headers[c], cells[c], f.wrap))) + pad;
  return w;
}

// The widest writing that fits `avail`: the most vector entries at 4 digits, then the
// headers on two lines, then half the padding, then 3 digits (their tooltips keep every
// digit), then the masked keys' note on two lines (a taller row, but the causal mask's
// extra column no longer pushes weight × v_j past the edge). Where none fits, the
// narrowest, and the table scrolls with j and the token frozen.
KeyTableFit FitKeyTable(const QueryExplanation& e, const std::vector<std::string>& headers, bool causal, float avail) {
  for (const KeyTableFit base : {KeyTableFit{9, 4, false, false, false}, KeyTableFit{9, 4, true, false, false},
                                 KeyTableFit{9, 4, true, true, false}, KeyTableFit{9, 3, true, true, false},
                                 KeyTableFit{9, 3, true, true, true}}) {
    if (base.mask_wrap && !causal) break;
    for (KeyTableFit f = base; f.shown >= 3; --f.shown)
      if (KeyTableWidth(e, headers, causal, f) <= avail) return f;
  }
  return {3, 3, true, true, causal};
}

// The table: one row per key, from q·k_j to weight × v_j.
void DrawKeyTable(AppState& s, const QueryExplanation& e, const KeyTableFit& f) {
  const int shown = f.shown, digits = f.digits;
  const float fs = ImGui::GetFontSize();
  const bool causal = s.result.trace.cfg.mask == Mask::Causal;
  const int cols = causal ? 10 : 9;
  const float line = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const float bottom = 4.5f * ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y * 3;
  const float head = f.wrap ? ImGui::GetTextLineHeight() : 0.0f;  // a header's second line
  const auto masked = std::count_if(e.keys.begin(), e.keys.end(), [](const KeyStep& k) { return k.masked; });
  const float mask_lines = causal && f.mask_wrap ? static_cast<float>(masked) * ImGui::GetTextLineHeight() : 0.0f;
  const float want =
      line * (static_cast<float>(e.keys.size()) + 1.3f) + head + mask_lines + ImGui::GetStyle().ScrollbarSize;
  const float table_h = std::max(std::min(want, ImGui::GetContentRegionAvail().y - bottom), line * 5.0f);
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit;
  // A lesson asking which key this row weighs most: the row is not pointed out before
  // the class answers; once it has, the answer's row (and a wrong pick) is outlined.
  const TourOutline& o = s.ui.tour.outline;
  int best = -1;
  for (const KeyStep& k : e.keys)
    if (!o.pending && !k.masked && (best < 0 || k.weight > e.keys[static_cast<std::size_t>(best)].weight))
      best = k.index;
  const bool reveal = o.on && o.head == e.head && o.row == e.query;
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, ImVec2(CellPadX(f), ImGui::GetStyle().CellPadding.y));
  const bool open = ImGui::BeginTable("##query_steps", cols, flags, ImVec2(0, table_h));
  ImGui::PopStyleVar();
  if (open) {
    ImGui::TableSetupScrollFreeze(2, 1);
    const std::vector<std::string> headers = KeyHeaders(e, causal);
    const std::vector<float> cells = KeyCellWidths(e, causal, f);
    for (std::size_t c = 0; c < headers.size(); ++c)
      ImGui::TableSetupColumn(FittedHeader(headers[c], cells[c], f.wrap).c_str());
    ImGui::TableHeadersRow();
    ImGuiListClipper clip;
    clip.Begin(static_cast<int>(e.keys.size()));
    while (clip.Step()) {
      for (int r = clip.DisplayStart; r < clip.DisplayEnd; ++r) {
        const KeyStep& k = e.keys[static_cast<std::size_t>(r)];
        ImGui::TableNextRow();
        if (k.index == best) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, Pal().highlight_bg);
        if (k.masked) ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
        ImGui::TableNextColumn();
        ImGui::Text("%d", k.index);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(Ellipsize(ForDisplay(k.token), fs * 8.0f).c_str());
        ImGui::TableNextColumn();
        VecCell(k.k, shown, digits);
        ImGui::TableNextColumn();
        NumCell(k.dot, digits);
        ImGui::TableNextColumn();
        if (k.masked)
          ImGui::TextUnformatted("-\xE2\x88\x9E");
        else
          NumCell(k.scaled, digits);
        if (causal) {
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(k.masked ? MaskText(f).c_str() : "");
        }
        ImGui::TableNextColumn();
        NumCell(k.exp_shifted, digits, k.masked);
        ImGui::TableNextColumn();
        {
          // The weight with a bar: the eye finds where the attention goes.
          const ImVec2 p = ImGui::GetCursorScreenPos();
          const float bw = WeightBarWidth(f), bh = ImGui::GetTextLineHeight();
          ImDrawList* dl = ImGui::GetWindowDrawList();
          dl->AddRectFilled(p, ImVec2(p.x + bw, p.y + bh), Pal().chip_bg);
          dl->AddRectFilled(p, ImVec2(p.x + bw * std::clamp(k.weight, 0.0f, 1.0f), p.y + bh), Pal().accent);
          ImGui::Dummy(ImVec2(bw, bh));
          ImGui::SameLine();
          NumCell(k.weight, digits, k.masked);
        }
        ImGui::TableNextColumn();
        VecCell(k.v, shown, digits);
        ImGui::TableNextColumn();
        VecCell(k.weighted_v, shown, digits);
        Probe(s, ("query_end " + std::to_string(k.index)).c_str());  // the row's last cell
        if (k.masked) ImGui::PopStyleColor();
        if (reveal && (k.index == o.col || k.index == o.pick_col))
          DrawRevealRow(s, line + (k.masked && f.mask_wrap ? ImGui::GetTextLineHeight() : 0.0f), k.index == o.col);
      }
    }
    ImGui::EndTable();
  }
  Probe(s, "query_table");
}

// The sum of weight × v_j, and the trace's own row next to it.
void DrawSum(AppState& s, const QueryExplanation& e, int shown) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                _("\xCE\xA3 exp = %s  (the largest score, %s, was subtracted before exp so nothing overflows; "
                  "the weights add up to 1)"),
                Sig(e.exp_sum).c_str(), Sig(e.max_scaled).c_str());
  Muted(buf);
  const float lw = ImGui::CalcTextSize(_("context row in the trace")).x + ImGui::CalcTextSize("  ").x;
  ImGui::TextUnformatted(_("\xCE\xA3 weight \xC3\x97 v_j"));
  ImGui::SameLine(lw);
  VecCell(e.context, std::max(shown, 9));
  Probe(s, "query_sum");
  ImGui::TextUnformatted(_("context row in the trace"));
  ImGui::SameLine(lw);
  VecCell(e.trace_context, std::max(shown, 9));
  const double scale = std::max(1.0, static_cast<double>(e.trace_context.cwiseAbs().maxCoeff()));
  const bool same = e.max_abs_diff <= 1e-5 * scale;
  if (e.max_abs_diff == 0.0f)
    std::snprintf(buf, sizeof buf, _("Equal: the sum is exactly the trace's context[head %d, token %d]."), e.head,
                  e.query);
  else if (same)
    std::snprintf(buf, sizeof buf,
                  _("Equal: the sum is the trace's context[head %d, token %d]; largest difference %s "
                    "(float rounding: the sum here is added up in double)."),
                  e.head, e.query, Sig(e.max_abs_diff, 2).c_str());
  else
    std::snprintf(buf, sizeof buf, _("Differs from the trace by %s: this is a bug, please report it."),
                  Sig(e.max_abs_diff, 2).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, same ? Pal().ok_text : Pal().error_text);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(buf);
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
}

}  // namespace

void DrawQueryView(AppState& s) {
  SectionTitle(s, _("One query, step by step"),
               _("The hand calculation, done by the app: q\xC2\xB7k for every key, divide by \xE2\x88\x9A"
                 "d_k, mask, "
                 "softmax, then add up weight \xC3\x97 v. The sum is exactly this token's row of the head's output."),
               true);
  if (!HaveResultsToShow(s)) return;
  HeadPicker(s, "##query_head");
  // Beside the head picker where it fits (at large text, under it).
  const ImGuiStyle& style = ImGui::GetStyle();
  SameLineIfFits(ImGui::CalcTextSize(_("query token")).x + style.ItemSpacing.x + ImGui::GetFontSize() * 11.0f +
                     2 * (style.ItemInnerSpacing.x + ImGui::GetFrameHeight()),
                 ImGui::GetFontSize() * 1.5f);
  QueryPicker(s);
  CopyAsPyTorchButton(s, notebook::Snippet::OneQuery, "copy_pytorch");
  const auto& c = QueryCache(s);
  if (!c.ok) {
    MessageBox(c.error, Pal().error_bg, Pal().error_text);
    return;
  }
  const QueryExplanation& e = c.value;
  const Trace& t = s.result.trace;
  const bool causal = t.cfg.mask == Mask::Causal;

  Muted(DivisionText(e, t).c_str());

  const std::vector<std::string> headers = KeyHeaders(e, causal);
  // Measured once per explanation, width and text size: every key's cells, formatted.
  QueryState& qs = s.views.Get<QueryState>();
  const float avail = ImGui::GetContentRegionAvail().x;
  const std::string fit_key = c.key + " " + std::to_string(avail) + " " + std::to_string(ImGui::GetFontSize());
  if (qs.fit_key != fit_key) {
    qs.fit = FitKeyTable(e, headers, causal, avail);
    qs.fit_key = fit_key;
  }
  const KeyTableFit fit = qs.fit;
  const int shown = fit.shown;

  // Regular font: the bold one has no Hangul.
  ImGui::Text(_("q of \"%s\" in head %d ="), ForDisplay(e.query_token).c_str(), e.head);
  ImGui::SameLine();
  VecCell(e.q, std::max(shown, 9));
  Probe(s, "query_q");

  DrawKeyTable(s, e, fit);
  DrawSum(s, e, shown);
}

json DumpQueryView(AppState& s) {
  const auto& c = QueryCache(s);
  if (!c.ok) return dump::Error(c.error);
  const QueryExplanation& e = c.value;
  json keys = json::array();
  for (const KeyStep& k : e.keys)
    keys.push_back({{"index", k.index},
                    {"token", k.token},
                    {"k", Vec(k.k)},
                    {"v", Vec(k.v)},
                    {"dot", Num(k.dot)},
                    {"scaled", Num(k.scaled)},
                    {"masked", k.masked},
                    {"exp_shifted", Num(k.exp_shifted)},
                    {"weight", Num(k.weight)},
                    {"weighted_v", Vec(k.weighted_v)}});
  return {{"pytorch", PyTorchSnippetFor(s, notebook::Snippet::OneQuery)},
          {"head", e.head},
          {"query", e.query},
          {"kv_head", e.kv_head},
          {"head_dim", e.head_dim},
          {"query_token", e.query_token},
          {"q", Vec(e.q)},
          {"scaled", e.scaled},
          {"sqrt_dk", e.sqrt_dk},
          {"temperature", e.temperature},
          {"divisor", e.divisor},
          {"max_scaled", Num(e.max_scaled)},
          {"exp_sum", e.exp_sum},
          {"keys", keys},
          {"context", Vec(e.context)},
          {"trace_context", Vec(e.trace_context)},
          {"max_abs_diff", e.max_abs_diff}};
}

ViewEntry QueryView() {
  ViewEntry v{"query", N_("Query"), N_("One query, step by step"),
              "one query's scores, softmax and weighted sum of values, by hand"};
  v.essentials = "query_token;query_table;query_sum";
  v.draw = &DrawQueryView;
  v.dump = &DumpQueryView;
  v.shows = "query_table";
  return v;
}

}  // namespace mha::gui
