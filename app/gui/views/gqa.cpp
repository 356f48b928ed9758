// Grouped-query and multi-query attention: which query heads share which K/V head,
// and the parameters and KV-cache bytes that saves for the current sequence
// (DescribeGqa). The num_kv_heads choices here edit the configuration, live.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

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
struct GqaState {
  Cached<GqaFacts> cache;  // the last valid configuration's while the typed one cannot run
};

const Cached<GqaFacts>& GqaCache(AppState& s) {
  auto& c = s.views.Get<GqaState>().cache;
  const Config& cfg = DescribedConfig(s, true);
  const int skv = std::max(CurrentSeqKv(s), 1);
  const std::string key = std::to_string(cfg.d_model) + " " + std::to_string(cfg.num_heads) + " " +
                          std::to_string(cfg.kv_heads()) + " " + std::to_string(skv);
  return Refresh(c, key, [&](GqaFacts& v) {
    if (cfg.num_heads < 1 || cfg.num_heads > Limits::kMaxHeads || cfg.d_model < 1 || cfg.d_model % cfg.num_heads)
      throw Error("num_heads = " + std::to_string(cfg.num_heads) + " does not divide d_model = " +
                  std::to_string(cfg.d_model) + ": fix that first (see Configuration).");
    v = DescribeGqa(cfg, skv);
  });
}

// One hue per K/V head group, light enough for dark text.
ImU32 GroupColour(int g, int groups) {
  const float h = groups > 0 ? std::fmod(0.58f + 0.618034f * g, 1.0f) : 0.6f;
  float r, gg, b;
  ImGui::ColorConvertHSVtoRGB(h, 0.28f, 0.97f, r, gg, b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(r, gg, b, 1.0f));
}

void Diagram(const GqaFacts& f, float width) {
  const float fs = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = Pal();
  const ImU32 text = IM_COL32(30, 36, 48, 255);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const int H = f.num_heads, G = f.num_kv_heads;
  const float label_w = std::max(ImGui::CalcTextSize(_("K/V heads")).x, ImGui::CalcTextSize(_("Q heads")).x) + fs;
  const float avail = std::max(width - label_w, fs * 4.0f);
  const float qw = std::min(fs * 4.0f, avail / H), box_h = fs * 1.6f, rise = fs * 3.2f;
  const float total = qw * H;
  const float x0 = o.x + label_w;
  const ImU32 label_c = ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddText(ImVec2(o.x, o.y + (box_h - fs) * 0.5f), label_c, _("Q heads"));
  dl->AddText(ImVec2(o.x, o.y + box_h + rise + (box_h - fs) * 0.5f), label_c, _("K/V heads"));
  // K/V heads: each as wide as its group of query heads.
  for (int g = 0; g < G; ++g) {
    const auto& qs = f.query_heads_of[static_cast<std::size_t>(g)];
    const float a = x0 + qs.front() * qw, b = x0 + (qs.back() + 1) * qw;
    const ImVec2 p(a + 2, o.y + box_h + rise), q(b - 2, o.y + 2 * box_h + rise);
    // Lines from every query head of the group down to it.
    for (int h : qs) {
      const float cx = x0 + (h + 0.5f) * qw;
      dl->AddLine(ImVec2(cx, o.y + box_h), ImVec2((a + b) * 0.5f, p.y), pal.block_border, 1.5f);
    }
    dl->AddRectFilled(p, q, GroupColour(g, G), 4.0f);
    dl->AddRect(p, q, pal.block_border, 4.0f);
    const std::string l = Ellipsize("K/V " + std::to_string(g), q.x - p.x - 4);
    const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
    dl->AddText(ImVec2((p.x + q.x - ts.x) * 0.5f, (p.y + q.y - ts.y) * 0.5f), text, l.c_str());
  }
  for (int h = 0; h < H; ++h) {
    const ImVec2 p(x0 + h * qw + 2, o.y), q(x0 + (h + 1) * qw - 2, o.y + box_h);
    dl->AddRectFilled(p, q, GroupColour(f.kv_head_of[static_cast<std::size_t>(h)], G), 4.0f);
    dl->AddRect(p, q, pal.block_border, 4.0f);
    const std::string l = qw >= ImGui::CalcTextSize("Q00").x + 6 ? "Q" + std::to_string(h) : std::to_string(h);
    const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
    if (ts.x <= q.x - p.x) dl->AddText(ImVec2((p.x + q.x - ts.x) * 0.5f, (p.y + q.y - ts.y) * 0.5f), text, l.c_str());
  }
  ImGui::Dummy(ImVec2(label_w + total, 2 * box_h + rise + 2));
}

}  // namespace

void DrawGqaView(AppState& s) {
  SectionTitle(s, _("Grouped-query and multi-query attention"),
               _("Query heads in a group share one K/V head: W_K, W_V and the KV cache shrink, while every query head "
                 "still has its own attention map."),
               true);
  Config& c = s.choice.cfg;
  // num_kv_heads: every divisor of num_heads, live (a trained model's are its own).
  if (UsingTrainedModel(s)) {
    Muted(_("The trained model's own grouping (its shape is fixed):"));
  } else if (c.num_heads >= 1 && c.num_heads <= Limits::kMaxHeads) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(_("num_kv_heads"));
    for (int k = c.num_heads; k >= 1; --k) {
      if (c.num_heads % k) continue;
      ImGui::SameLine();
      std::string label = std::to_string(k);
      if (k == c.num_heads)
        label += _(" (multi-head)");
      else if (k == 1)
        label += _(" (multi-query)");
      const bool on = c.kv_heads() == k;
      if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
      if (ImGui::GetContentRegionAvail().x <
          ImGui::CalcTextSize(label.c_str()).x + 2 * ImGui::GetStyle().FramePadding.x)
        ImGui::NewLine();
      if (ImGui::Button(label.c_str()) && !on) {
        c.num_kv_heads = k == c.num_heads ? 0 : k;
        s.dirty = true;
      }
      Probe(s, ("kv " + std::to_string(k)).c_str());
      if (on) ImGui::PopStyleColor();
    }
  }
  const auto& gc = GqaCache(s);
  if (!gc.ok) {
    MessageBox(gc.error, Pal().error_bg, Pal().error_text);
    return;
  }
  const GqaFacts& f = gc.value;
  const float fs = ImGui::GetFontSize();
  char buf[1200];
  if (f.kind == "multi-head")
    std::snprintf(buf, sizeof buf,
                  _("Multi-Head Attention: each of the %d query heads has its own K/V head. Pick fewer K/V heads above "
                    "to see what grouping saves."),
                  f.num_heads);
  else if (f.kind == "multi-query")
    std::snprintf(buf, sizeof buf, _("MQA (multi-query attention): all %d query heads share 1 K/V head."), f.num_heads);
  else
    std::snprintf(
        buf, sizeof buf,
        P_("GQA (grouped-query attention): %d query heads share %d K/V heads, %d query head per group.",
           "GQA (grouped-query attention): %d query heads share %d K/V heads, %d query heads per group.", f.group_size),
        f.num_heads, f.num_kv_heads, f.group_size);
  ImGui::Spacing();
  ImGui::TextWrapped("%s", buf);
  ImGui::Spacing();
  Diagram(f, ImGui::GetContentRegionAvail().x);
  Probe(s, "gqa_diagram");
  ImGui::Spacing();

  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoHostExtendX;
  auto pct = [](std::int64_t saved, std::int64_t total) {
    char p[32];
    std::snprintf(p, sizeof p, " (%.0f%%)", total > 0 ? 100.0 * saved / total : 0.0);
    return std::string(p);
  };
  const std::string rows[2][4] = {
      {_("W_K, W_V + biases (parameters)"), Thousands(f.kv_params), Thousands(f.mha_kv_params),
       Thousands(f.params_saved) + pct(f.params_saved, f.mha_kv_params)},
      {i18n::Format(P_("KV cache for %d token, one layer", "KV cache for %d tokens, one layer", CurrentSeqKv(s)),
                    CurrentSeqKv(s)),
       Bytes(f.kv_cache_bytes), Bytes(f.mha_kv_cache_bytes),
       Bytes(f.cache_bytes_saved) + pct(f.cache_bytes_saved, f.mha_kv_cache_bytes)}};
  const std::string heads[4] = {
      "", i18n::Format(P_("with %d K/V head", "with %d K/V heads", f.num_kv_heads), f.num_kv_heads),
      i18n::Format(P_("multi-head (%d K/V head)", "multi-head (%d K/V heads)", f.num_heads), f.num_heads), _("saved")};
  if (ImGui::BeginTable("##gqa_sizes", 4, flags)) {
    // Fixed widths from the texts: right-aligned cells cannot size a column themselves.
    for (int k = 0; k < 4; ++k) {
      float w = ImGui::CalcTextSize(heads[k].c_str()).x;
      for (const auto& r : rows) w = std::max(w, ImGui::CalcTextSize(r[k].c_str()).x);
      ImGui::TableSetupColumn(heads[k].c_str(), ImGuiTableColumnFlags_WidthFixed, w + fs * 0.5f);
    }
    ImGui::TableHeadersRow();
    for (const auto& r : rows) {
      ImGui::TableNextRow();
      for (int k = 0; k < 4; ++k) {
        ImGui::TableNextColumn();
        if (k > 0)
          ImGui::SetCursorPosX(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x -
                               ImGui::CalcTextSize(r[k].c_str()).x);
        ImGui::TextUnformatted(r[k].c_str());
      }
    }
    ImGui::EndTable();
  }
  Probe(s, "gqa_sizes");
  std::snprintf(buf, sizeof buf,
                _("KV cache = 2 (K and V) \xC3\x97 num_kv_heads %d \xC3\x97 head_dim %d \xC3\x97 %d tokens \xC3\x97 4 "
                  "bytes (float32) = %s bytes: what a decoder keeps per layer while it generates, so fewer K/V heads "
                  "let it serve longer texts. W_Q and W_O keep their size (%d query heads)."),
                f.num_kv_heads, f.head_dim, CurrentSeqKv(s), Thousands(f.kv_cache_bytes).c_str(), f.num_heads);
  ImGui::PushTextWrapPos(std::max(ImGui::GetCursorPosX() + fs * 10.0f, ImGui::GetContentRegionAvail().x));
  Muted(buf);
  ImGui::PopTextWrapPos();
}

json DumpGqaView(AppState& s) {
  const auto& c = GqaCache(s);
  if (!c.ok) return dump::Error(c.error);
  const GqaFacts& f = c.value;
  return {{"kind", f.kind},
          {"num_heads", f.num_heads},
          {"num_kv_heads", f.num_kv_heads},
          {"group_size", f.group_size},
          {"head_dim", f.head_dim},
          {"kv_head_of", f.kv_head_of},
          {"query_heads_of", f.query_heads_of},
          {"kv_params", f.kv_params},
          {"mha_kv_params", f.mha_kv_params},
          {"kv_cache_bytes", f.kv_cache_bytes},
          {"mha_kv_cache_bytes", f.mha_kv_cache_bytes},
          {"params_saved", f.params_saved},
          {"cache_bytes_saved", f.cache_bytes_saved}};
}

ViewEntry GqaView() {
  ViewEntry v{"gqa", N_("GQA"), N_("Grouped-query and multi-query attention"),
              "which query heads share each K/V head, and what that saves"};
  v.essentials = "gqa_diagram;gqa_sizes";
  v.heads = false;
  v.draw = &DrawGqaView;
  v.dump = &DumpGqaView;
  v.shows = "gqa_diagram";
  return v;
}

}  // namespace mha::gui
