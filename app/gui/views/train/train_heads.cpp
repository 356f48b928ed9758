// The heads as they learn: a timeline over the shown run's snapshots, and every head
// of every layer on the fixed probe example as a layers x heads grid (BertViz's model
// view), each map labelled with what the head does; a click opens one large with
// its tokens.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/train/parts.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

bool IsMasked(const Trace& t, int h, int i, int j) {
  const float sc = t.scores(static_cast<Eigen::Index>(h) * t.seq + i, j);
  return std::isinf(sc) && sc < 0;
}

const HeadProfile* ProfileOf(const HeadsPicture& p, int layer, int head) {
  for (const auto& h : *p.heads)
    if (h.layer == layer && h.head == head) return &h;
  return nullptr;
}

std::string LabelText(const HeadProfile* h) {
  if (!h) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%s %.2f", HeadPatternText(h->label).c_str(), h->score);
  return b;
}

// One head's map as a texture (masked cells grey, as in the heatmaps tab), `side` pixels.
bool DrawSmallMap(AppState& s, const HeadsPicture& p, int layer, int head, float side, const std::string& key) {
  const Trace& t = p.probe->layers[static_cast<std::size_t>(layer)];
  const int seq = t.seq;
  const std::string id = "train map " + std::to_string(layer) + " " + std::to_string(head);
  int ready = 0;
  const unsigned tex = s.ui.matrices.Get(
      id, key, seq, seq,
      [&](std::uint8_t* rgba, int row0, int row1) {
        for (int i = row0; i < row1; ++i)
          for (int j = 0; j < seq; ++j) {
            const render::Rgb c = IsMasked(t, head, i, j)
                                      ? render::kMaskedColour
                                      : render::Colormap(t.attn(static_cast<Eigen::Index>(head) * seq + i, j));
            std::uint8_t* px = &rgba[(static_cast<std::size_t>(i - row0) * seq + j) * 4];
            px[0] = c[0];
            px[1] = c[1];
            px[2] = c[2];
          }
      },
      &ready);
  const ImVec2 a = ImGui::GetCursorScreenPos();
  ImGui::PushID(id.c_str());
  const bool clicked = ImGui::InvisibleButton("##map", ImVec2(side, side));
  ImGui::PopID();
  Probe(s, id.c_str());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  AddImageRows(dl, tex, a, ImVec2(a.x + side, a.y + side), ready, seq);  // a big map: over a few frames
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(a.x + side + 1, a.y + side + 1),
              ImGui::IsItemHovered() ? Pal().highlight : Pal().block_border, 0.0f, 0,
              ImGui::IsItemHovered() ? 2.0f : 1.0f);
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int i = std::clamp(static_cast<int>((m.y - a.y) / side * seq), 0, seq - 1);
    const int j = std::clamp(static_cast<int>((m.x - a.x) / side * seq), 0, seq - 1);
    ImGui::BeginTooltip();
    ImGui::Text(_("layer %d, head %d"), layer, head);
    ImGui::Text(_("query %d \"%s\", key %d \"%s\""), i, t.in.tokens[static_cast<std::size_t>(i)].c_str(), j,
                t.in.tokens[static_cast<std::size_t>(j)].c_str());
    ImGui::Text(_("weight %.4f"), static_cast<double>(t.attn(static_cast<Eigen::Index>(head) * seq + i, j)));
    ImGui::TextDisabled(_("Click to open it large."));
    ImGui::EndTooltip();
  }
  return clicked;
}

void DrawBigHead(AppState& s, const HeadsPicture& p, const std::string& key) {
  const int H = p.cfg->layer.num_heads;
  const int layer = Training(s).big_head / H, head = Training(s).big_head % H;
  const Trace& t = p.probe->layers[static_cast<std::size_t>(layer)];
  if (ImGui::Button(_("Back to all heads"))) Training(s).big_head = -1;
  Probe(s, "train_back");
  ImGui::SameLine();
  const HeadProfile* prof = ProfileOf(p, layer, head);
  ImGui::Text(_("layer %d, head %d: %s"), layer, head, prof ? LabelText(prof).c_str() : "");
  MatrixArgs a;
  a.id = "train big head";
  a.key = key + "|" + std::to_string(Training(s).big_head);
  const Eigen::Map<const Mat> m = t.AttnHead(head);
  a.data = m.data();
  a.rows = t.seq;
  a.cols = t.seq;
  a.row_labels = &t.in.tokens;
  a.col_labels = &t.in.tokens;
  a.fixed_decimals = true;
  a.row_axis = _("query");
  a.col_axis = _("key");
  const float fs = ImGui::GetFontSize();
  a.size = ImVec2(ImGui::GetContentRegionAvail().x,
                  std::max(fs * 20.0f, std::min(ImGui::GetContentRegionAvail().x, fs * 40.0f)));
  const MatrixResult r = DrawMatrix(s, a);
  s.ui.probe["train big head"] = {r.min.x, r.min.y, r.max.x - r.min.x, r.max.y - r.min.y};
  DrawScaleLegend(ColourScale::Sequential, 1.0f, std::min(ImGui::GetContentRegionAvail().x, fs * 24.0f),
                  _("attention weight"), t.cfg.mask == Mask::Causal);
}

}  // namespace

void DrawTrainTimeline(AppState& s) {
  TrainSession& t = Training(s);
  if (t.show_loaded) {
    Muted(i18n::Format(_("The heads of %s on held-out example 0 of its task (a checkpoint has no timeline)."),
                       t.loaded_path.c_str())
              .c_str());
    return;
  }
  if (t.shown_run < 0 || t.shown_run >= static_cast<int>(t.runs.size())) return;
  const TrainRunRecord& r = t.runs[static_cast<std::size_t>(t.shown_run)];
  if (!r.progress || r.progress->snapshots.empty()) return;
  const auto& snaps = r.progress->snapshots;
  const int n = static_cast<int>(snaps.size());
  int k = t.timeline < 0 ? n - 1 : std::min(t.timeline, n - 1);
  const Snapshot& sn = *snaps[static_cast<std::size_t>(k)];
  char fmt[160];
  std::snprintf(fmt, sizeof fmt, _("step %d of %d"), sn.step, r.progress->total);
  const float fs = ImGui::GetFontSize();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("Timeline"));
  ImGui::SameLine();
  const float button = ImGui::GetFrameHeight();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 2 * (button + ImGui::GetStyle().ItemInnerSpacing.x) -
                          (ImGui::CalcTextSize(_("Follow")).x + ImGui::CalcTextSize(_("Replay")).x) - fs * 3.5f);
  int changed = -2;
  if (ImGui::SliderInt("##timeline", &k, 0, n - 1, fmt, ImGuiSliderFlags_NoInput)) changed = k;
  Probe(s, "timeline");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("Drag to replay how the heads learned; the other views follow."));
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::PushButtonRepeat(true);
  if (ImGui::ArrowButton("##earlier", ImGuiDir_Left) && k > 0) changed = k - 1;
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::ArrowButton("##later", ImGuiDir_Right) && k < n - 1) changed = k + 1;
  ImGui::PopButtonRepeat();
  ImGui::SameLine();
  // Replay: from the start (or where the slider is), a snapshot every 150 ms.
  if (ImGui::Button((std::string(t.playing ? _("Stop") : _("Replay")) + "###replay").c_str())) {
    t.playing = !t.playing;
    if (t.playing && k == n - 1) changed = 0;
    t.played_at = ImGui::GetTime();
  }
  Probe(s, "timeline_play");
  if (t.playing && changed == -2 && ImGui::GetTime() - t.played_at >= 0.15) {
    t.played_at = ImGui::GetTime();
    if (k + 1 < n)
      changed = k + 1;
    else
      t.playing = false;
  }
  ImGui::SameLine();
  bool follow = t.timeline < 0;
  if (ImGui::Checkbox(_("Follow"), &follow)) changed = follow ? -1 : k;
  Probe(s, "timeline_follow");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("Keep the newest snapshot shown while training runs."));
  if (changed != -2) ShowSnapshot(s, t.shown_run, changed == n - 1 && r.progress->running ? -1 : changed);

  // What happened when, as the snapshots' labels tell it.
  const std::string story = RunStory(r);
  if (!story.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped("%s", story.c_str());
    ImGui::PopStyleColor();
  }
}

void DrawHeadsGrid(AppState& s) {
  const HeadsPicture p = CurrentHeads(s);
  if (!p.probe || p.probe->layers.empty()) return;
  const int L = static_cast<int>(p.probe->layers.size()), H = p.cfg->layer.num_heads;
  // A snapshot's probe never changes; a loaded model's pass changes with each recompute.
  const std::string key = "train|" + std::to_string(reinterpret_cast<std::uintptr_t>(p.probe)) + "|" +
                          std::to_string(p.step) + "|" + std::to_string(p.step < 0 ? s.result.generation : 0);
  if (Training(s).big_head >= L * H) Training(s).big_head = -1;
  if (Training(s).big_head >= 0) return DrawBigHead(s, p, key);

  const float fs = ImGui::GetFontSize();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float row_label_w = L > 1 ? ImGui::CalcTextSize("layer 0").x + st.ItemSpacing.x : 0.0f;
  const float avail = ImGui::GetContentRegionAvail().x - row_label_w;
  const float label_w = ImGui::CalcTextSize("previous-token 0.00").x;
  // As big as the width allows, up to 12 font heights; never so small the label is lost.
  // and short enough that every layer fits the height left (a head title and a label each).
  const float rows_h = ImGui::GetContentRegionAvail().y - fs * 2.0f;
  const float fit_h = rows_h / L - 2 * ImGui::GetTextLineHeightWithSpacing() - st.ItemSpacing.y;
  const float side = std::floor(std::clamp(std::min(avail / H - st.ItemSpacing.x, fit_h), fs * 3.0f, fs * 12.0f));
  const float col_w = std::max(side, std::min(label_w, avail / H - st.ItemSpacing.x));
  for (int l = 0; l < L; ++l) {
    for (int h = 0; h < H; ++h) {
      if (h > 0) ImGui::SameLine(row_label_w + h * (col_w + st.ItemSpacing.x));
      ImGui::BeginGroup();
      if (h == 0 && L > 1) {
        ImGui::AlignTextToFramePadding();
        ImGui::Text(_("layer %d"), l);
        ImGui::SameLine(row_label_w);
      }
      ImGui::BeginGroup();
      ImGui::Text(_("head %d"), h);
      if (DrawSmallMap(s, p, l, h, side, key)) Training(s).big_head = l * H + h;
      const HeadProfile* prof = ProfileOf(p, l, h);
      const std::string label = Ellipsize(LabelText(prof), col_w);
      ImGui::PushStyleColor(ImGuiCol_Text, prof && prof->label != "spread" ? Pal().ok_text : Pal().muted_text);
      ImGui::TextUnformatted(label.c_str());
      ImGui::PopStyleColor();
      if (prof && ImGui::IsItemHovered())
        ImGui::SetTooltip(_("Mean attention weight on the key this pattern names, over %s held-out sequences.\n"
                            "Below %.1f on every pattern: spread."),
                          "128", kMinLabelScore);
      ImGui::EndGroup();
      ImGui::EndGroup();
    }
  }
  DrawScaleLegend(ColourScale::Sequential, 1.0f, std::min(ImGui::GetContentRegionAvail().x, fs * 24.0f),
                  _("attention weight"), p.cfg->layer.mask == Mask::Causal);
}

}  // namespace mha::gui
