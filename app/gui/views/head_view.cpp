// Head view (BertViz's signature picture): the tokens twice, queries on the left and
// keys on the right, a line from each query to each key it attends to; the line's
// opacity is the weight, its colour the head's. Heads switch on and off; hovering a
// token keeps its lines alone. Offered for every model source: it reads s.result.trace.
#include <algorithm>
#include <memory>
#include <tuple>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "gui/panels/panels.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "render/head_view_render.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

void HeadToggles(AppState& s, int H) {
  auto& off = s.choice.head_view_off;
  if (ImGui::SmallButton(_("all"))) std::fill(off.begin(), off.end(), false);
  ImGui::SameLine();
  if (ImGui::SmallButton(_("none"))) std::fill(off.begin(), off.begin() + H, true);
  for (int h = 0; h < H; ++h) {
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize("head 00").x + 30) ImGui::NewLine();
    ImGui::PushID(h);
    ImGui::PushStyleColor(ImGuiCol_CheckMark, HeadColour(h));
    ImGui::PushStyleColor(ImGuiCol_FrameBg, HeadColour(h, 0.25f));
    bool on = !off[static_cast<std::size_t>(h)];
    char label[24];
    std::snprintf(label, sizeof label, "%d", h);
    if (ImGui::Checkbox(label, &on)) off[static_cast<std::size_t>(h)] = !on;
    ImGui::PopStyleColor(2);
    ImGui::PopID();
  }
  Probe(s, "head_view_toggles");
}

// One column of token labels; returns the row hovered, or -1.
int TokenColumn(const std::vector<std::string>& tokens, float x, float y, float w, float row_h, bool right_align,
                int highlight) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  int hovered = -1;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
    const float top = y + row_h * i;
    if (!ImGui::IsRectVisible(ImVec2(x, top), ImVec2(x + w, top + row_h))) continue;
    const bool in =
        mouse.x >= x && mouse.x < x + w && mouse.y >= top && mouse.y < top + row_h && ImGui::IsWindowHovered();
    if (in) hovered = i;
    if (in || i == highlight) dl->AddRectFilled(ImVec2(x, top), ImVec2(x + w, top + row_h), Pal().highlight_bg);
    const std::string t = ForDisplay(tokens[static_cast<std::size_t>(i)]);
    const float tw = ImGui::CalcTextSize(t.c_str()).x;
    const float tx = right_align ? x + w - tw - 4 : x + 4;
    dl->PushClipRect(ImVec2(x, top), ImVec2(x + w, top + row_h), true);
    dl->AddText(ImVec2(tx, top + (row_h - ImGui::GetFontSize()) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), t.c_str());
    dl->PopClipRect();
  }
  return hovered;
}

// Lines a frame draws at most.
constexpr std::size_t kMaxDrawnLines = 20000;
// Weights a search may read in the frame (a small trace's lines appear at once); a
// bigger one is a task.
constexpr double kSearchInFrame = 1 << 20;

// One search for lines (one selection of heads and hovered token on one trace): at 100
// heads x 1024 tokens it reads 100 million weights (115 ms, over the window's frame
// budget) and finds 360,000-600,000 lines, of which it keeps the strongest
// kMaxDrawnLines (past what a frame can draw: 600,000 lines were 40 ms a frame to
// submit) in a heap, so that its memory stays 1 MB.
struct LineSearch {
  std::vector<render::HeadViewLine> lines;  // the GUI places them: only head, query, key, weight are used
  std::size_t found = 0;                    // before the cap
  float cut_weight = 0;                     // the faintest line kept under the cap
};

// The search with no token hovered and the one for the hovered token, kept apart so
// that moving the mouse off a token shows the whole picture again at once; each with
// the last finished search, drawn while a new one on the same trace is under way (a
// head switched on or off).
struct LineSlot {
  std::string key, trace_key;  // what the task searches: the trace and layer; that and the selection
  Task<LineSearch> task;
  std::shared_ptr<const LineSearch> last_done;
  std::string last_done_trace_key;
};

// The view's own state (AppState::views).
struct HeadViewState {
  int hover_query = -1, hover_key = -1;  // the token hovered (its lines alone)
  LineSlot all, hovered;
};

// Every head switched on, keeping the strongest kMaxDrawnLines; then ordered head by
// head, query by query. Reads the trace in place (a TraceReader: the recompute stops
// it before it moves the trace).
LineSearch Search(const Trace& t, const render::HeadViewSelection& sel, TaskContext<LineSearch>& ctx) {
  LineSearch ls;
  const int H = t.cfg.num_heads;
  const auto weaker = [](const render::HeadViewLine& a, const render::HeadViewLine& b) { return a.weight > b.weight; };
  const render::HeadViewColumns unit;  // geometry unused: each frame places the lines
  std::vector<render::HeadViewLine> head;
  for (int h = 0; h < H; ++h) {
    ctx.Check();
    ctx.Progress(h, H);
    head.clear();
    render::AppendHeadViewLines(t, unit, sel, h, head);
    ls.found += head.size();
    for (const render::HeadViewLine& l : head) {
      if (ls.lines.size() < kMaxDrawnLines) {
        ls.lines.push_back(l);
        std::push_heap(ls.lines.begin(), ls.lines.end(), weaker);  // the faintest kept on top
      } else if (l.weight > ls.lines.front().weight) {
        std::pop_heap(ls.lines.begin(), ls.lines.end(), weaker);
        ls.lines.back() = l;
        std::push_heap(ls.lines.begin(), ls.lines.end(), weaker);
      }
    }
  }
  ctx.Progress(H, H);
  if (ls.found > ls.lines.size()) ls.cut_weight = ls.lines.front().weight;
  std::sort(ls.lines.begin(), ls.lines.end(), [](const auto& a, const auto& b) {
    return std::tie(a.head, a.query, a.key) < std::tie(b.head, b.query, b.key);
  });
  return ls;
}

// The search for the lines of the heads switched on and the hovered token (query `hq`,
// else key `hk`, -1 for none), started if new; returns its slot.
LineSlot& SearchLines(AppState& s, const Trace& t, int hq, int hk) {
  const int H = t.cfg.num_heads;
  render::HeadViewSelection sel;
  std::string key = GenKey(s) + " L" + std::to_string(UsingTrainedModel(s) ? s.choice.layer : 0) + " h";
  for (int h = 0; h < H; ++h) {
    sel.heads.push_back(!s.choice.head_view_off[static_cast<std::size_t>(h)]);
    key += sel.heads.back() ? '1' : '0';
  }
  sel.query = hq;
  sel.key = hq >= 0 ? -1 : hk;
  const std::string trace_key = key.substr(0, key.rfind(" h"));
  key += " q" + std::to_string(sel.query) + " k" + std::to_string(sel.key);
  HeadViewState& st = s.views.Get<HeadViewState>();
  LineSlot& slot = sel.query >= 0 || sel.key >= 0 ? st.hovered : st.all;
  slot.task.Poll();
  if (slot.key != key) {
    if (auto done = slot.task.result()) {
      slot.last_done = std::move(done);
      slot.last_done_trace_key = slot.trace_key;
    }
    slot.key = key;
    slot.trace_key = trace_key;
    auto work = [&t, sel](TaskContext<LineSearch>& ctx) { return Search(t, sel, ctx); };
    if (static_cast<double>(H) * t.seq * t.seq_kv <= kSearchInFrame)
      slot.task.RunHere(work);
    else
      slot.task.StartReading(s.result.readers, work);
    slot.task.Poll();
  }
  return slot;
}

}  // namespace

void DrawHeadView(AppState& s) {
  const Result& r = s.result;
  if (!HaveResultsToShow(s)) return;
  const Trace& t = r.trace;
  const int H = t.cfg.num_heads, seq = t.seq, seq_kv = t.seq_kv;
  LayerSelector(s, "##head_view_layer");
  Explanation(
      _("Each line joins a query token (left) to a key token (right); its opacity is the attention "
        "weight, its colour the head. Hover a token to keep only its lines; switch heads below."));
  HeadToggles(s, H);
  // The lines are the export's (render/head_view_render.hpp): the same weights, opacities and
  // faint-line cut-off. They are found once per trace, heads switched on and hovered
  // token, a few heads per frame, and placed where the canvas is each frame. This
  // frame's step of the search runs before the note above the canvas says how far it
  // is (for the token hovered in the last frame; a new one is searched after the canvas).
  HeadViewState& st = s.views.Get<HeadViewState>();
  {
    LineSlot& slot = SearchLines(s, t, st.hover_query, st.hover_key);
    const auto ls = slot.task.result();
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    if (!ls) {
      ImGui::TextWrapped(_("Finding the lines: %d of %d heads searched."), slot.task.step(), H);
      Probe(s, "head_view_searching");
    } else if (ls->found > ls->lines.size()) {
      ImGui::TextWrapped(_("The %zu strongest of %zu lines are drawn (weights from %.3f); hover a token for its own."),
                         ls->lines.size(), ls->found, static_cast<double>(ls->cut_weight));
      Probe(s, "head_view_capped");
    }
    ImGui::PopStyleColor();
  }

  // The last valid trace (dimmed) is labelled with its own tokens, not the typed ones.
  const std::vector<std::string>& qtok = r.ok ? r.tokens : t.in.tokens;
  const std::vector<std::string>& ktok = t.in.cross() ? (r.ok ? r.memory_tokens : t.in.memory_tokens) : qtok;
  render::HeadViewColumns c;
  c.row_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  float widest = ImGui::CalcTextSize("<s>").x;
  for (const auto& tk : qtok) widest = std::max(widest, ImGui::CalcTextSize(ForDisplay(tk).c_str()).x);
  for (const auto& tk : ktok) widest = std::max(widest, ImGui::CalcTextSize(ForDisplay(tk).c_str()).x);
  c.label_w = std::min(widest + 12, ImGui::GetContentRegionAvail().x * 0.3f);
  c.gap = std::clamp(ImGui::GetContentRegionAvail().x - 2 * c.label_w - 8, 80.0, 420.0);
  const int rows = std::max(seq, seq_kv);
  if (s.ui.present) {
    // Presented, the rows spread down the window (up to 4 lines each) and the lines run
    // its width: 3 tokens' lines were a flat strip under the title on a projector.
    const ImVec2 room = ImGui::GetContentRegionAvail();
    c.row_h = std::clamp(static_cast<double>(room.y - 4) / rows, c.row_h, 4.0 * c.row_h);
    c.gap = std::max(80.0, static_cast<double>(room.x) - 2 * c.label_w - 8);
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  c.x = origin.x;
  c.y = origin.y;
  ImGui::Dummy(ImVec2(2 * c.label_w + c.gap, c.row_h * rows));
  Probe(s, "head_view_canvas");

  const auto X = [](double v) { return static_cast<float>(v); };
  const int hq = TokenColumn(qtok, X(c.x), X(c.y), X(c.label_w), X(c.row_h), true, st.hover_query);
  const int hk = TokenColumn(ktok, X(c.RightX()), X(c.y), X(c.label_w), X(c.row_h), false, st.hover_key);
  st.hover_query = hq;
  st.hover_key = hq >= 0 ? -1 : hk;

  // (a newly hovered token's search starts here: the note above is this frame's)
  const LineSlot& slot = SearchLines(s, t, st.hover_query, st.hover_key);
  std::shared_ptr<const LineSearch> drawn = slot.task.result();
  s.ui.report.views_busy += !drawn;
  if (!drawn && slot.last_done && slot.last_done_trace_key == slot.trace_key) drawn = slot.last_done;
  if (!drawn) return;
  const float top = ImGui::GetWindowPos().y, bottom = top + ImGui::GetWindowHeight();
  const float left = X(c.LeftX()), right = X(c.RightX());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (const render::HeadViewLine& l : drawn->lines) {
    const float y0 = X(c.RowY(l.query)), y1 = X(c.RowY(l.key));
    if (std::max(y0, y1) < top || std::min(y0, y1) > bottom) continue;
    dl->AddLine(ImVec2(left, y0), ImVec2(right, y1), HeadColour(l.head, l.opacity), 1.5f);
  }
}

nlohmann::json DumpHeadView(AppState& s) {
  const Result& r = s.result;
  nlohmann::json j{{"ok", r.ok}};
  if (!HasResults(s)) return j;
  const Trace& t = r.trace;
  j["tokens"] = r.ok ? r.tokens : t.in.tokens;
  j["layer"] = UsingTrainedModel(s) ? s.choice.layer : 0;
  j["min_weight_drawn"] = render::kHeadViewMinWeight;
  // Per head, per query: the weights the lines' opacities come from (lines under
  // min_weight_drawn are skipped), and whether the head is switched on.
  if (static_cast<double>(t.cfg.num_heads) * t.seq * t.seq_kv > dump::kMaxDumpWeights) {
    j["heads"] = dump::kWeightsLeftOut;
    return j;
  }
  nlohmann::json heads = nlohmann::json::array();
  for (int h = 0; h < t.cfg.num_heads; ++h) {
    const auto A = t.AttnHead(h);
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < t.seq; ++i) {
      std::vector<double> row(static_cast<std::size_t>(t.seq_kv));
      for (int k = 0; k < t.seq_kv; ++k) row[static_cast<std::size_t>(k)] = A(i, k);
      rows.push_back(row);
    }
    heads.push_back({{"head", h}, {"on", !s.choice.head_view_off[static_cast<std::size_t>(h)]}, {"weights", rows}});
  }
  j["heads"] = heads;
  return j;
}

ViewEntry HeadView() {
  ViewEntry v{"head-view", N_("Head view"), N_("Head view: query-to-key lines, one colour per head"),
              "BertViz's head view: lines from each query to its keys, opacity = weight"};
  v.essentials = "head_view_canvas;head_view_toggles";
  v.heads = false;
  v.draw = &DrawHeadView;
  v.dump = &DumpHeadView;
  v.shows = "head_view_canvas";
  return v;
}

}  // namespace mha::gui
