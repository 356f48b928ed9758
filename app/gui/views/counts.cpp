// Head count vs parameters: for the current d_model, every valid num_heads with its
// head_dim, the attention layer's parameters, FLOPs and KV cache (HeadCountTable,
// the same sums as the shape-flow table). Clicking a row uses that many heads.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/draw/table_fit.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;

namespace {

// The view's own state (AppState::views).
struct HeadCountState {
  Cached<std::vector<HeadCountRow>>
      cache;  // the configuration and token counts only: shown even when the configuration cannot run
};

const Cached<std::vector<HeadCountRow>>& HeadCountCache(AppState& s) {
  auto& c = s.views.Get<HeadCountState>().cache;
  const Config& cfg = DescribedConfig(s, false);
  const int seq = CurrentSeq(s), skv = CurrentSeqKv(s);
  const std::string key = std::to_string(cfg.d_model) + " " + std::to_string(cfg.num_heads) + " " +
                          std::to_string(cfg.kv_heads()) + " " + std::to_string(seq) + " " + std::to_string(skv);
  return Refresh(c, key, [&](std::vector<HeadCountRow>& v) {
    if (cfg.d_model < 1 || cfg.d_model > Limits::kMaxDModel)
      throw Error("d_model = " + std::to_string(cfg.d_model) + " is outside 1 .. " +
                  std::to_string(Limits::kMaxDModel) + ".");
    v = HeadCountTable(cfg, std::max(seq, 1), std::max(skv, 1));
  });
}

// The current row's marker (translated where it is drawn).
constexpr const char* kCurrent = N_("\xE2\x97\x80 current");

void RightAligned(const std::string& text) {
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize(text.c_str()).x);
  ImGui::TextUnformatted(text.c_str());
}

// A column's header and the width of its widest cell.
struct Column {
  std::string header;
  float cells_w;
};

// The table's columns, each as wide as its widest cell (a header wider than that goes
// onto two lines where the table would otherwise run past the window).
std::vector<Column> CountColumns(const std::vector<HeadCountRow>& rows, const Config& cfg, int skv, bool gqa) {
  const std::string g = std::to_string(cfg.kv_heads());
  // The current row's marker sits beside its num_heads, in the frozen first column:
  // it costs no column of its own and stays in view while the rest scrolls.
  std::vector<Column> columns{{"num_heads", 0.0f},
                              {"head_dim = d_k", 0.0f},
                              {_("parameters (W_Q, W_K, W_V, W_O + biases)"), 0.0f},
                              {_("FLOPs (attention)"), 0.0f},
                              {i18n::Format(P_("KV cache (%d token)", "KV cache (%d tokens)", skv), skv), 0.0f}};
  if (gqa) {
    columns.push_back({i18n::Format(_("parameters, %s K/V heads"), g.c_str()), 0.0f});
    columns.push_back({i18n::Format(_("FLOPs, %s K/V heads"), g.c_str()), 0.0f});
    columns.push_back({i18n::Format(_("KV cache, %s K/V heads"), g.c_str()), 0.0f});
  }
  for (const HeadCountRow& r : rows) {
    const std::string cells[] = {std::to_string(r.num_heads) + "  " + _(kCurrent),
                                 std::to_string(r.head_dim),
                                 Thousands(r.params),
                                 Thousands(r.flops),
                                 Bytes(r.kv_cache_bytes),
                                 Thousands(r.gqa_params),
                                 Thousands(r.gqa_flops),
                                 Bytes(r.gqa_kv_cache_bytes)};
    for (std::size_t k = 0; k < columns.size(); ++k)
      columns[k].cells_w = std::max(columns[k].cells_w, TextWidth(cells[k]));
  }
  return columns;
}

}  // namespace

void DrawCountsView(AppState& s) {
  const Config& cfg = DescribedConfig(s, false);
  // A trained model's shape is its own: its rows compare, they do not switch.
  const bool editable = !UsingTrainedModel(s);
  char sub[1024];
  std::snprintf(sub, sizeof sub,
                editable ? _("For d_model = %d: more heads cut the same %d dimensions into thinner slices, so the "
                             "parameters stay the same and the FLOPs barely change. Click a row to use it.")
                         : _("For d_model = %d (the trained model's): more heads cut the same %d dimensions into "
                             "thinner slices, so the parameters stay the same and the FLOPs barely change."),
                cfg.d_model, cfg.d_model);
  SectionTitle(s, _("Head count vs parameters"), sub, true);
  const auto& c = HeadCountCache(s);
  if (!c.ok) {
    MessageBox(c.error, Pal().error_bg, Pal().error_text);
    return;
  }
  const auto& rows = c.value;
  const bool gqa = std::any_of(rows.begin(), rows.end(), [](const HeadCountRow& r) { return r.has_gqa; });
  const bool listed = std::any_of(rows.begin(), rows.end(), [](const HeadCountRow& r) { return r.current; });
  const int seq = std::max(CurrentSeq(s), 1), skv = std::max(CurrentSeqKv(s), 1);
  const float fs = ImGui::GetFontSize(), pad = ImGui::GetStyle().CellPadding.x;

  const std::vector<Column> columns = CountColumns(rows, cfg, skv, gqa);
  float one_line = 0.0f;
  for (const Column& c : columns) one_line += std::max(TextWidth(c.header), c.cells_w) + fs * 0.3f + 2 * pad;
  const bool wrap = one_line > ImGui::GetContentRegionAvail().x;

  const int cols = static_cast<int>(columns.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit;
  const float line = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const float head = wrap ? line + ImGui::GetTextLineHeight() : line;
  // Room for the notes under the table, unless presented (they go to the header's "?").
  const float notes_h = FoldingExplanations() ? 0.0f : ImGui::GetTextLineHeightWithSpacing() * 4.0f;
  const float table_h = std::min(line * (static_cast<float>(rows.size()) + 0.4f) + head + fs * 0.5f,
                                 std::max(line * 4.0f, ImGui::GetContentRegionAvail().y - notes_h));
  if (ImGui::BeginTable("##head_count", cols, flags, ImVec2(0, table_h))) {
    // Where even two-line headers do not fit (the K/V-head columns), num_heads stays put.
    ImGui::TableSetupScrollFreeze(1, 1);
    for (const Column& c : columns) {
      const std::string h = FittedHeader(c.header, c.cells_w, wrap);
      ImGui::TableSetupColumn(h.c_str(), ImGuiTableColumnFlags_WidthFixed,
                              std::max(TextWidth(h), c.cells_w) + fs * 0.3f);
    }
    ImGui::TableHeadersRow();
    for (const HeadCountRow& r : rows) {
      ImGui::TableNextRow();
      if (r.current) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, Pal().highlight_bg);
      ImGui::TableNextColumn();
      ImGui::PushID(r.num_heads);
      const std::string label = std::to_string(r.num_heads);
      if (ImGui::Selectable(label.c_str(), false,
                            ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap) &&
          !r.current && editable) {
        Config& choice = s.choice.cfg;
        choice.num_heads = r.num_heads;
        if (choice.num_kv_heads > 0 && (choice.num_kv_heads > r.num_heads || r.num_heads % choice.num_kv_heads != 0))
          choice.num_kv_heads = 0;  // that GQA grouping does not fit: plain multi-head
        s.dirty = true;
      }
      Probe(s, ("head_count " + label).c_str());
      if (ImGui::IsItemHovered() && !r.current && editable) ImGui::SetTooltip(_("Use num_heads = %d"), r.num_heads);
      ImGui::PopID();
      if (r.current) {
        ImGui::SameLine();
        ImGui::PushStyleColor(ImGuiCol_Text, Pal().highlight);
        ImGui::TextUnformatted(_(kCurrent));
        ImGui::PopStyleColor();
        Probe(s, "head_count current");
      }
      ImGui::TableNextColumn();
      RightAligned(std::to_string(r.head_dim));
      ImGui::TableNextColumn();
      RightAligned(Thousands(r.params));
      ImGui::TableNextColumn();
      RightAligned(Thousands(r.flops));
      ImGui::TableNextColumn();
      RightAligned(Bytes(r.kv_cache_bytes));
      if (gqa) {
        for (int k = 0; k < 3; ++k) {
          ImGui::TableNextColumn();
          if (!r.has_gqa) {
            ImGui::TextDisabled("-");
            continue;
          }
          RightAligned(k == 0   ? Thousands(r.gqa_params)
                       : k == 1 ? Thousands(r.gqa_flops)
                                : Bytes(r.gqa_kv_cache_bytes));
        }
      }
      Probe(s, ("head_count end " + label).c_str());  // the row's last cell
    }
    ImGui::EndTable();
  }
  Probe(s, "head_count_table");
  std::string note = i18n::Format(_("num_heads must divide d_model (each head gets d_model / num_heads dimensions), "
                                    "so these are the divisors of %d. "),
                                  cfg.d_model);
  if (!listed)
    note +=
        i18n::Format(_("Your num_heads = %d is not in the list: it does not divide %d. "), cfg.num_heads, cfg.d_model);
  note += i18n::Format(_("Why the FLOPs still grow a little: the softmax runs once per head (%d x %d exponentials "
                         "each), while the projections and q\xC2\xB7k cost the same in total."),
                       seq, skv);
  Explanation(note.c_str());
  if (s.result.ok) {
    // The shape flow's total counts every row; this table the attention's alone.
    long long flow_params = 0, flow_flops = 0;
    for (const FlowRow& r : s.result.trace.flow) {
      flow_params += r.param_count;
      flow_flops += r.flops;
    }
    const bool encoder = s.result.trace.cfg.block == mha::Block::Encoder;
    Explanation(
        i18n::Format(encoder ? _("These columns count the attention itself: the Q, K, V and output projections, the "
                                 "scores, the softmax and the weighted sum. The shape flow's total also counts the "
                                 "input (the positional encoding), the residual and the LayerNorms and the "
                                 "feed-forward block: %s learned numbers and %s FLOPs for the current configuration.")
                             : _("These columns count the attention itself: the Q, K, V and output projections, the "
                                 "scores, the softmax and the weighted sum. The shape flow's total also counts the "
                                 "input (the positional encoding), the residual and the LayerNorm: %s learned "
                                 "numbers and %s FLOPs for the current configuration."),
                     Thousands(flow_params).c_str(), Thousands(flow_flops).c_str())
            .c_str());
  }
  if (gqa)
    Explanation(
        i18n::Format(_("The K/V-head columns: grouped-query attention with num_kv_heads = %d: K and V get fewer "
                       "heads than Q, so W_K, W_V and the KV cache shrink; '-' where it does not divide num_heads."),
                     cfg.kv_heads())
            .c_str());
}

json DumpCountsView(AppState& s) {
  const auto& c = HeadCountCache(s);
  if (!c.ok) return dump::Error(c.error);
  json rows = json::array();
  for (const HeadCountRow& r : c.value) {
    json row{{"num_heads", r.num_heads}, {"head_dim", r.head_dim}, {"current", r.current},
             {"params", r.params},       {"flops", r.flops},       {"kv_cache_bytes", r.kv_cache_bytes}};
    if (r.has_gqa)
      row["gqa"] = {{"num_kv_heads", r.num_kv_heads},
                    {"params", r.gqa_params},
                    {"flops", r.gqa_flops},
                    {"kv_cache_bytes", r.gqa_kv_cache_bytes}};
    rows.push_back(row);
  }
  return {{"d_model", DescribedConfig(s, false).d_model}, {"rows", rows}};
}

ViewEntry CountsView() {
  ViewEntry v{"counts", N_("Counts"), N_("Head count vs parameters"),
              "parameters, FLOPs and KV cache for each head count"};
  v.heads = false;
  v.alias = "head-count";
  v.draw = &DrawCountsView;
  v.dump = &DumpCountsView;
  v.shows = "head_count_table";
  return v;
}

}  // namespace mha::gui
