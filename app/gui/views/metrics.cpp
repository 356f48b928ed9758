// Head metrics: each head's mean entropy, mean max weight and what it mostly
// attends to (SummarizeHeads), and how alike the heads are (HeadDivergence, the
// mean Jensen-Shannon divergence between their maps). Both cached per trace.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;
using dump::Matrix;

namespace {

// The head x head divergence covers the first kMaxDivergenceHeads heads only (the view
// says so): it costs num_heads^2 / 2 * seq * seq_kv logarithms (55 s on the window's
// thread at 64 heads x 1024 tokens), which bounds both its time and the copy of their
// maps its task works on (the trace may change while it runs).
constexpr int kMaxDivergenceHeads = 16;
using Maps = std::shared_ptr<const std::vector<Mat>>;

Maps CopyMaps(const Trace& t) {
  auto maps = std::make_shared<std::vector<Mat>>();
  for (int h = 0; h < std::min(t.cfg.num_heads, kMaxDivergenceHeads); ++h) maps->push_back(t.AttnHead(h));
  return maps;
}

// The view's own state (AppState::views).
struct MetricsState {
  Cached<Eigen::MatrixXd> divergence;
  int divergence_of = 0;  // num_heads of the trace `divergence` covers (its first rows() heads)
  Task<Eigen::MatrixXd> task;
  std::string task_key;  // the trace the task computes for
  int task_heads = 0;
  // A copy of the maps made beside a big trace on the recompute's task (the prime
  // hook), for the trace `maps_key`; the task takes it when it starts.
  Maps maps;
  std::string maps_key;
};

// The mean JS divergence of every pair of `maps`, stopping early once cancelled.
Eigen::MatrixXd DivergenceOf(const std::vector<Mat>& maps, TaskContext<Eigen::MatrixXd>& ctx) {
  const int n = static_cast<int>(maps.size());
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(n, n);
  ctx.SetTotal(n * (n - 1) / 2);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      ctx.Check();
      d(a, b) = d(b, a) = MeanJensenShannon(maps[a], maps[b]);
      ctx.Advance();
    }
  return d;
}

// The divergence of the trace shown, computed by a task. With `wait` false, while the
// task runs the last result is kept and marked stale (or, with none of this size, ok
// is false and error is empty); the dump waits.
const Cached<Eigen::MatrixXd>& DivergenceCache(AppState& s, bool wait = true) {
  MetricsState& st = s.views.Get<MetricsState>();
  auto& c = st.divergence;
  if (!HasResults(s)) return NoTrace(c, s);
  const Trace& t = s.result.trace;
  const std::string key = GenKey(s);
  if (c.key == key) return c;
  if (st.task_key != key) {
    try {
      Maps maps = st.maps_key == key ? st.maps : nullptr;
      st.maps.reset();  // the task holds it now (or it was another trace's)
      if (!maps) maps = CopyMaps(t);
      st.task_key = key;
      st.task_heads = static_cast<int>(maps->size());
      st.task.Start([maps](TaskContext<Eigen::MatrixXd>& ctx) { return DivergenceOf(*maps, ctx); });
    } catch (const std::exception& e) {  // no thread or no memory for the copy
      c.key = key;
      c.ok = false;
      c.error = std::string(_("Could not compute the divergence: ")) + e.what();
      return c;
    }
  }
  st.task.Poll();
  if (st.task.Running()) {
    if (!wait) {
      // Keep showing the last result while it fits this trace's heads; else "computing".
      const bool fits = c.ok && c.value.rows() == st.task_heads && st.divergence_of == t.cfg.num_heads;
      c.stale = fits;
      if (!fits) {
        c.ok = false;
        c.error.clear();
      }
      return c;
    }
    st.task.Wait();
    st.task.Poll();
  }
  c.key = key;
  c.stale = false;
  const auto v = st.task.result();
  c.ok = v != nullptr;
  c.error = v ? std::string() : std::string(_("Could not compute the divergence: ")) + st.task.error();
  if (v) c.value = *v;
  st.divergence_of = t.cfg.num_heads;
  return c;
}

// Beside a big trace, on the recompute's task: the copy of the maps the divergence
// works on (64 MB at 16 heads x 1024 tokens, 35 ms of the window's frame to copy).
Primed PrimeMetrics(const Trace& t, const Choice&) {
  Maps maps = CopyMaps(t);
  return [maps](AppState& s) {
    MetricsState& st = s.views.Get<MetricsState>();
    st.maps = maps;
    st.maps_key = GenKey(s);
  };
}

// A value with a bar behind it, the bar `frac` of the cell.
void BarCell(double v, double frac, int digits = 3) {
  const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(
      p, ImVec2(p.x + w * static_cast<float>(std::clamp(frac, 0.0, 1.0)), p.y + h), Pal().chip_bg);
  ImGui::TextUnformatted(Sig(v, digits).c_str());
}

// Why a head has its label, or none: its strongest relation against chance.
std::string ChanceTooltip(const HeadSummary& h) {
  if (h.rows == 0) return _("No relation to measure.");
  char buf[1536];
  std::snprintf(buf, sizeof buf,
                P_("Strongest: %s, mean weight %.3f over %d row.\nAn even spread gives it %.3f (1/n); the lift is "
                   "(%.3f - %.3f) / (1 - %.3f) = %.2f (a label needs %.2f).\nA head picking one key per row at random "
                   "does as well with probability %.3f (a label needs under %.2f).",
                   "Strongest: %s, mean weight %.3f over %d rows.\nAn even spread gives it %.3f (1/n); the lift is "
                   "(%.3f - %.3f) / (1 - %.3f) = %.2f (a label needs %.2f).\nA head picking one key per row at random "
                   "does as well with probability %.3f (a label needs under %.2f).",
                   h.rows),
                PatternShown(h.strongest), h.score, h.rows, h.chance, h.score, h.chance, h.chance, h.lift, kMinLift,
                h.chance_p, kMaxChanceP);
  return buf;
}

}  // namespace

namespace {

// The columns of the summary table (header and minimum width), the table's natural
// width from them, and where the divergence goes: beside the table when there is room,
// else below it.
struct Col {
  const char* head;
  float min_w;
};
struct MetricsLayout {
  std::vector<Col> columns;
  ImVec2 avail;
  float table_w = 0, div_w = 0;
  bool side = false;
};

MetricsLayout LayOut(const Trace& t) {
  const float fs = ImGui::GetFontSize();
  const bool gqa = t.cfg.kv_heads() != t.cfg.num_heads;
  const bool cross = t.in.cross();
  MetricsLayout l;
  l.avail = ImGui::GetContentRegionAvail();
  std::vector<Col>& columns = l.columns;
  columns = {{_("head"), 0.0f}};
  if (gqa) columns.push_back({_("K/V head"), 0.0f});
  char vs_width[64];
  std::snprintf(vs_width, sizeof vs_width, _("%.2f vs %.2f"), 0.0, 0.33);
  for (const Col& c : std::initializer_list<Col>{{_("map"), fs * 1.6f},
                                                 {_("mostly attends to"), ImGui::CalcTextSize(_("no clear pattern")).x},
                                                 {_("vs chance"), ImGui::CalcTextSize(vs_width).x},
                                                 {_("mean entropy"), fs * 4.0f},
                                                 {_("mean max weight"), fs * 4.0f},
                                                 {cross ? "-##s" : _("self"), fs * 3.0f},
                                                 {cross ? "-##p" : _("previous"), fs * 3.0f},
                                                 {cross ? "-##n" : _("next"), fs * 3.0f},
                                                 {_("first token"), fs * 3.0f}})
    columns.push_back(c);
  const ImGuiStyle& st = ImGui::GetStyle();
  float natural = st.ScrollbarSize + 2.0f;
  for (const Col& c : columns)
    natural += std::max(ImGui::CalcTextSize(c.head, nullptr, true).x, c.min_w) + 2 * st.CellPadding.x + 1.0f;
  l.div_w = std::clamp(l.avail.x - natural - fs, fs * 13.0f, fs * 26.0f);
  l.side = l.avail.x - l.div_w - fs >= natural;  // never squeeze the table: below it instead
  l.table_w = l.side ? std::min(natural, l.avail.x - l.div_w - fs) : l.avail.x;
  return l;
}

// The table of every head's summary (and the note on chance under it).
void DrawSummaryTable(AppState& s, const std::vector<HeadSummary>& heads, const MetricsLayout& l) {
  const Trace& t = s.result.trace;
  const float fs = ImGui::GetFontSize();
  const int H = t.cfg.num_heads;
  const bool gqa = t.cfg.kv_heads() != H;
  const bool cross = t.in.cross();
  const double ln_n = std::log(static_cast<double>(std::max(t.seq_kv, 1)));
  const std::vector<Col>& columns = l.columns;
  const ImVec2 avail = l.avail;
  const float table_w = l.table_w;
  ImGui::BeginGroup();
  const int cols = static_cast<int>(columns.size());
  const float row_h = std::max(ImGui::GetTextLineHeight(), fs * 1.6f);
  // Every head's row; the table scrolls only when there are many heads.
  const float pad = 2 * ImGui::GetStyle().CellPadding.y;
  const float table_h = std::min(ImGui::GetTextLineHeight() + pad + (row_h + pad) * H + 4.0f,
                                 std::max(avail.y - fs * 3.0f, (row_h + 2 * ImGui::GetStyle().CellPadding.y) * 9.0f));
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
  if (ImGui::BeginTable("##head_metrics", cols, flags, ImVec2(table_w, std::max(table_h, fs * 6.0f)))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    for (const Col& c : columns)
      ImGui::TableSetupColumn(c.head, ImGuiTableColumnFlags_WidthFixed,
                              std::max(ImGui::CalcTextSize(c.head, nullptr, true).x, c.min_w));
    ImGui::TableHeadersRow();
    for (const HeadSummary& h : heads) {
      ImGui::TableNextRow(0, row_h);
      ImGui::TableNextColumn();
      ImGui::Text("%d", h.head);
      if (gqa) {
        ImGui::TableNextColumn();
        ImGui::Text("%d", t.KvHeadOf(h.head));
      }
      ImGui::TableNextColumn();
      {
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float side_px = fs * 1.4f;
        const ImTextureID tex =
            reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(s.ui.textures.Texture(h.head)));
        ImGui::GetWindowDrawList()->AddImage(tex, p, ImVec2(p.x + side_px, p.y + side_px));
        ImGui::Dummy(ImVec2(side_px, side_px));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("head %d's attention map (Heatmaps tab)"), h.head);
      }
      ImGui::TableNextColumn();
      if (h.pattern != HeadPattern::Spread)
        ImGui::PushStyleColor(ImGuiCol_Text, Pal().ok_text);
      else
        ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
      ImGui::TextUnformatted(PatternShown(h.pattern));
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ChanceTooltip(h).c_str());
      // The strongest relation's mean weight against what an even spread gives it.
      ImGui::TableNextColumn();
      if (h.rows > 0) {
        ImGui::Text(_("%.2f vs %.2f"), h.score, h.chance);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", ChanceTooltip(h).c_str());
      } else {
        ImGui::TextDisabled("-");
      }
      ImGui::TableNextColumn();
      BarCell(h.mean_entropy, ln_n > 0 ? h.mean_entropy / ln_n : 0.0);
      ImGui::TableNextColumn();
      BarCell(h.mean_max_weight, h.mean_max_weight);
      for (double v : {h.self, h.previous, h.next}) {
        ImGui::TableNextColumn();
        if (cross)
          ImGui::TextDisabled("-");
        else
          BarCell(v, v, 2);
      }
      ImGui::TableNextColumn();
      BarCell(h.first, h.first, 2);
    }
    ImGui::EndTable();
  }
  Probe(s, "head_metrics");
  char buf[2048];
  const int n = t.seq_kv;
  std::snprintf(buf, sizeof buf,
                _("%sThe numbers under self, previous, next and first token are the mean weight put there. 'vs "
                  "chance' sets the largest against an even spread (1/n: here 1/%d = %.2f). A head 'mostly attends "
                  "to' a relation only where it beats chance: at least %.0f%% of the way from 1/n to 1 (here %.2f), "
                  "on enough rows that a head picking keys at random would do as well less than %.0f%% of the time. "
                  "Otherwise: no clear pattern."),
                cross ? _("Cross-attention: key j is a memory token, so self / previous / next mean nothing. ") : "", n,
                1.0 / std::max(n, 1), kMinLift * 100.0, 1.0 / std::max(n, 1) + kMinLift * (1.0 - 1.0 / std::max(n, 1)),
                kMaxChanceP * 100.0);
  // Presented, in the header's "?": at 200 % text it pushed the divergence map below the
  // window.
  if (s.ui.present) {
    Explanation(buf);
  } else {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + table_w);
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextUnformatted(buf);
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
  }
  ImGui::EndGroup();
}

// How alike the heads are: the divergence of every pair, as a matrix and in words.
void DrawDivergence(AppState& s, const MetricsLayout& l) {
  const int H = s.result.trace.cfg.num_heads;
  const float fs = ImGui::GetFontSize();
  const ImVec2 avail = l.avail;
  const bool side = l.side;
  const float div_w = l.div_w;
  char buf[2048];
  ImGui::BeginGroup();
  const auto& dc = DivergenceCache(s, /*wait=*/false);
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + (side ? div_w : avail.x));
  ImGui::TextUnformatted(_("How different are the heads?"));
  ImGui::PopTextWrapPos();
  if (s.ui.font_bold) ImGui::PopFont();
  if (dc.stale) {
    ImGui::SameLine();
    ImGui::TextDisabled(_("(updating...)"));
  }
  if (!dc.ok && dc.error.empty()) {
    Muted(_("Computing the divergence of every pair of heads (the window stays usable meanwhile)..."));
  } else if (!dc.ok) {
    MessageBox(dc.error, Pal().error_bg, Pal().error_text);
  } else {
    const Eigen::MatrixXd& d = dc.value;
    const int K = static_cast<int>(d.rows());  // the first K heads: the divergence is bounded to them
    if (K < H) {
      std::snprintf(buf, sizeof buf,
                    _("Showing the first %d of %d heads: each pair of heads costs seq x seq_kv logarithms, so the "
                      "divergence covers at most %d heads (all 256 at 1024 tokens would take minutes)."),
                    K, H, K);
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + (side ? div_w : avail.x));
      Muted(buf);
      ImGui::PopTextWrapPos();
    }
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + (side ? div_w : avail.x));
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextUnformatted(
        _("The mean Jensen-Shannon divergence of their attention maps: 0 = the same pattern, "
          "ln 2 = nothing in common."));
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    // Most alike and most different pair, in words.
    if (K >= 2) {
      int a0 = 0, b0 = 1, a1 = 0, b1 = 1;
      for (int i = 0; i < K; ++i)
        for (int j = i + 1; j < K; ++j) {
          if (d(i, j) < d(a0, b0)) a0 = i, b0 = j;
          if (d(i, j) > d(a1, b1)) a1 = i, b1 = j;
        }
      std::snprintf(buf, sizeof buf, _("most alike: heads %d and %d (%s)\nmost different: heads %d and %d (%s)"), a0,
                    b0, Sig(d(a0, b0), 3).c_str(), a1, b1, Sig(d(a1, b1), 3).c_str());
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + (side ? div_w : avail.x));
      ImGui::TextUnformatted(buf);
      ImGui::PopTextWrapPos();
    }
    const Mat df = d.cast<float>();
    MatrixArgs m;
    m.id = "head divergence";
    m.key = dc.key;
    m.data = df.data();
    m.rows = m.cols = K;
    m.scale = ColourScale::Sequential;
    m.range = static_cast<float>(std::log(2.0));
    m.fixed_decimals = true;
    m.row_axis = _("head");
    m.col_axis = _("head");
    const float room = side ? div_w : std::min(avail.x, fs * 26.0f);
    m.size =
        ImVec2(room, side ? std::max(fs * 6.0f, std::min(room, ImGui::GetContentRegionAvail().y - fs * 2.0f)) : room);
    m.max_cell = fs * 2.6f;
    DrawMatrix(s, m);
    Probe(s, "head_divergence");
    DrawScaleLegend(ColourScale::Sequential, m.range, room, _("JS divergence"), false);
  }
  ImGui::EndGroup();
}

}  // namespace

void DrawMetricsView(AppState& s) {
  SectionTitle(s, _("Head metrics"),
               _("What each head mostly attends to, how focused it is (entropy: 0 = one key, ln n = spread evenly), "
                 "and how alike the heads are."),
               true);
  if (!HaveResultsToShow(s)) return;
  const auto& sc = SummariesCache(s);
  if (!sc.ok) {
    MessageBox(sc.error, Pal().error_bg, Pal().error_text);
    return;
  }
  const auto& heads = sc.value;
  s.ui.textures.Sync(s.result);            // the heatmaps' own textures, for the thumbnails
  if (!s.ui.present) DrawWeightsBadge(s);  // (presented, the header says it)
  // Seeded random weights seldom make a head specialise (every head reads "no clear
  // pattern"): offer heads that do, built by hand.
  if (s.choice.files.weights_path.empty() &&
      std::all_of(heads.begin(), heads.end(), [](const HeadSummary& h) { return h.pattern == HeadPattern::Spread; })) {
    Muted(_("Random weights rarely make a head specialise; trained models have heads that do."));
    ImGui::SameLine();
    if (ImGui::SmallButton(_("Show four heads that specialise"))) LoadPositionalHeadsExample(s);
    Probe(s, "heads_example");
  }
  const MetricsLayout l = LayOut(s.result.trace);
  DrawSummaryTable(s, heads, l);
  if (l.side) ImGui::SameLine(0, ImGui::GetFontSize());
  DrawDivergence(s, l);
}

json DumpMetricsView(AppState& s) {
  const auto& c = SummariesCache(s);
  const auto& d = DivergenceCache(s);
  if (!c.ok) return dump::Error(c.error);
  json heads = json::object();
  json list = json::array();
  for (const HeadSummary& h : c.value)
    list.push_back({{"head", h.head},
                    {"mean_entropy", h.mean_entropy},
                    {"mean_max_weight", h.mean_max_weight},
                    {"self", h.self},
                    {"previous", h.previous},
                    {"next", h.next},
                    {"first", h.first},
                    {"pattern", ToString(h.pattern)},
                    {"strongest", ToString(h.strongest)},
                    {"score", h.score},
                    {"chance", h.chance},
                    {"lift", h.lift},
                    {"chance_p", h.chance_p},
                    {"rows", h.rows}});
  heads["summaries"] = list;
  if (d.ok) {
    heads["divergence"] = Matrix(d.value);
    heads["divergence_heads"] = d.value.rows();  // the first ones, of num_heads
  } else {
    heads["divergence_error"] = d.error;
  }
  return heads;
}

ViewEntry MetricsView() {
  ViewEntry v{"metrics", N_("Metrics"), N_("Head metrics and similarity"),
              "each head's entropy, sharpness and pattern; how alike heads are"};
  v.heads = false;
  v.alias = "heads";
  v.draw = &DrawMetricsView;
  v.dump = &DumpMetricsView;
  v.prime = &PrimeMetrics;
  v.shows = "head_metrics";
  return v;
}

}  // namespace mha::gui
