// The Importance view's in-context learning curve (icl_plot.hpp).
#include "gui/views/importance/icl_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

// The loss on each next piece of A, first copy then second, intact and knocked out:
// two lines over the 2 (span - 1) predictions, the copies split by a dashed line.
void DrawIclPlot(AppState& s, const ImportanceResult& m, float width) {
  SectionTitle(s, _("In-context learning: a random span, then the same span again"));
  const std::string head = m.icl_heads.empty() ? "" : HeadName(m.icl_heads[0]);
  if (m.partial && m.plain.first.empty()) {
    // (measured after the heads' labels, before the knock-outs)
    Muted(
        _("Being measured: the loss on a random span and on the same span again, intact and without the "
          "induction head."));
    Probe(s, "importance_icl_pending");
    return;
  }
  if (m.icl_span < 2 || m.plain.first.empty()) {
    Muted(_("The model's context is too short to repeat a span."));
    return;
  }
  ImGui::TextWrapped(_("%d sequences of a span A of %d random pieces, then A again. In the first copy the next piece "
                       "cannot be guessed; in the second it is the one that followed last time, which an induction "
                       "head looks up. Knocked out: %s (the highest induction score, %.2f)."),
                     m.icl_sequences, m.icl_span, head.c_str(), m.icl_induction);
  std::vector<double> a = m.plain.first, b = m.knocked_curve.first;
  a.insert(a.end(), m.plain.second.begin(), m.plain.second.end());
  b.insert(b.end(), m.knocked_curve.second.begin(), m.knocked_curve.second.end());
  double top = 0;
  for (double v : a) top = std::max(top, v);
  for (double v : b) top = std::max(top, v);
  top = std::max(1.0, std::ceil(top));
  const float fh = ImGui::GetTextLineHeight();
  const float axis_w = ImGui::CalcTextSize("00").x + 6, h = std::clamp(width * 0.45f, 120.0f, 300.0f);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 o(p.x + axis_w + fh, p.y + fh * 0.5f);  // the plot's top left
  const float w = std::max(60.0f, width - axis_w - fh - 8), ph = h - 2 * fh;
  ImGui::InvisibleButton("##icl_plot", ImVec2(width, h + fh));
  Probe(s, "importance_icl_plot");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const int n = static_cast<int>(a.size());
  const auto X = [&](int i) { return o.x + w * (static_cast<float>(i) + 0.5f) / static_cast<float>(n); };
  const auto Y = [&](double v) { return o.y + ph * (1.0f - static_cast<float>(v / top)); };
  dl->AddRect(o, ImVec2(o.x + w, o.y + ph), muted);
  for (int t = 0; t <= 2; ++t) {
    const double v = top * t / 2;
    char lab[16];
    std::snprintf(lab, sizeof lab, "%.0f", v);
    dl->AddText(ImVec2(o.x - ImGui::CalcTextSize(lab).x - 4, Y(v) - fh * 0.5f), muted, lab);
    if (t > 0 && t < 2) dl->AddLine(ImVec2(o.x, Y(v)), ImVec2(o.x + w, Y(v)), Pal().grid_line);
  }
  AddTextVertical(dl, ImVec2(p.x, o.y + ph * 0.5f + ImGui::CalcTextSize(_("loss (nats)")).x * 0.5f), muted,
                  _("loss (nats)"));
  // The copies: a dashed line where the second begins.
  const float mid = o.x + w * 0.5f;
  for (float y = o.y; y < o.y + ph; y += 8) dl->AddLine(ImVec2(mid, y), ImVec2(mid, std::min(y + 4, o.y + ph)), muted);
  dl->AddText(ImVec2(o.x + 4, o.y + ph + 2), muted, _("first copy"));
  dl->AddText(ImVec2(mid + 4, o.y + ph + 2), muted, _("second copy"));
  const ImU32 intact = Pal().accent, without = IM_COL32(220, 90, 60, 255);
  for (const auto& [line, col] : {std::make_pair(&a, intact), std::make_pair(&b, without)}) {
    std::vector<ImVec2> pts;
    for (int i = 0; i < n; ++i) pts.push_back(ImVec2(X(i), Y((*line)[static_cast<std::size_t>(i)])));
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, 2.0f);
  }
  if (ImGui::IsItemHovered()) {
    const int i = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - o.x) / w * n), 0, n - 1);
    const int k = i % (n / 2) + 1;
    ImGui::SetTooltip(i < n / 2 ? _("first copy, piece %d -> %d: intact %.3f nats, without %s %.3f")
                                : _("second copy, piece %d -> %d: intact %.3f nats, without %s %.3f"),
                      k, k + 1, a[static_cast<std::size_t>(i)], head.c_str(), b[static_cast<std::size_t>(i)]);
  }
  // The legend, with the means the CLI prints.
  const auto Legend = [&](ImU32 col, const std::string& what, const RepeatLoss& r) {
    const ImVec2 q = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(ImVec2(q.x, q.y + fh * 0.35f), ImVec2(q.x + fh, q.y + fh * 0.65f), col);
    ImGui::Dummy(ImVec2(fh + 4, fh));
    ImGui::SameLine();
    ImGui::TextWrapped(_("%s: first copy %.2f, second copy %.2f nats"), what.c_str(), r.first_mean, r.second_mean);
  };
  Legend(intact, _("intact model"), m.plain);
  char without_text[96];
  std::snprintf(without_text, sizeof without_text, _("without %s"), head.c_str());
  Legend(without, without_text, m.knocked_curve);
  (void)text;
}

}  // namespace mha::gui
