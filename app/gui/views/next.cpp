// Next-token panel: after each position, the language model's five likeliest next
// pieces with their probabilities (softmax of the logits row), as Transformer
// Explainer shows for GPT-2. Only a language model predicts pieces.
#include <cstdio>
#include <string>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

void DrawNextView(AppState& s) {
  if (!UsingLanguageModel(s)) {
    ImGui::TextWrapped(_("Next-piece predictions come from a language model. Pick \"%s\" under Model (left) and type "
                         "any English or Korean sentence."),
                       kSmallModelName);
    return;
  }
  const auto& next = s.result.next;
  if (!s.result.ok || next.empty()) {
    Muted(_("Type a sentence: the predictions appear for each of its pieces."));
    return;
  }
  Explanation(i18n::Format(_("After each piece, the model's %d likeliest next pieces and their probabilities (the "
                             "softmax of its output logits at that position; \"_\" starts a word). The model sees "
                             "only the pieces up to that position (causal mask)."),
                           kNextTopK)
                  .c_str());
  const int k = kNextTopK;
  // With heads knocked out: P(the sentence's own next piece) before -> after, and the
  // likeliest pieces are the ablated model's.
  const auto& before = s.result.p_before;
  const auto& after = s.result.p_after;
  const bool knocked = !after.empty();
  if (knocked)
    ImGui::TextWrapped(_("Knocked out: %s. \"next: before -> after\" is the probability of the piece that really "
                         "comes next in your sentence, from the whole model and from the model without those heads; "
                         "the likeliest pieces are the model's without them."),
                       KnockoutText(s, true).c_str());
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
  if (!ImGui::BeginTable("##next_tokens", k + 2 + (knocked ? 1 : 0), flags)) return;
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn(_("after"));
  if (knocked) ImGui::TableSetupColumn(_("next: before -> after"));
  for (int j = 0; j < k; ++j) ImGui::TableSetupColumn(j == 0 ? _("likeliest next") : (std::to_string(j + 1)).c_str());
  ImGui::TableHeadersRow();
  const float bar_w = ImGui::CalcTextSize("0000000000").x;
  // A lesson's question about this row's likeliest piece, not answered yet: the row's
  // predictions stay hidden until the class has answered.
  const TourOutline& o = s.ui.tour.outline;
  for (std::size_t i = 0; i < next.size(); ++i) {
    ImGui::TableNextRow();
    if (o.pending && o.piece_row == static_cast<int>(i)) {
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%d", static_cast<int>(i));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(i < s.result.tokens.size() ? s.result.tokens[i].c_str() : "");
      for (int c = 0; c < k + (knocked ? 1 : 0); ++c) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("?");
      }
      Probe(s, "next_hidden_row");
      continue;
    }
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%d", static_cast<int>(i));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(i < s.result.tokens.size() ? s.result.tokens[i].c_str() : "");
    if (knocked) {
      ImGui::TableNextColumn();
      if (i < after.size() && i + 1 < s.result.tokens.size()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " %.3f -> %.3f", before[i], after[i]);
        // Red where the knock-out cost the piece more than half its probability.
        const bool lost = after[i] < 0.5 * before[i] && before[i] > 0.05;
        if (lost) ImGui::PushStyleColor(ImGuiCol_Text, Pal().error_text);
        ImGui::TextUnformatted((s.result.tokens[i + 1] + buf).c_str());
        if (lost) ImGui::PopStyleColor();
      }
    }
    for (const lm::NextPiece& p : next[i]) {
      ImGui::TableNextColumn();
      // A bar under the text: its length is the probability.
      const ImVec2 pos = ImGui::GetCursorScreenPos();
      const float h = ImGui::GetTextLineHeight();
      ImGui::GetWindowDrawList()->AddRectFilled(
          pos, ImVec2(pos.x + bar_w * static_cast<float>(p.probability), pos.y + h), Pal().highlight_bg);
      char prob[32];
      std::snprintf(prob, sizeof prob, " %.3f", p.probability);
      ImGui::TextUnformatted((DisplayPiece(p.piece) + prob).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip(_("piece id %d, probability %.6f"), p.id, p.probability);
    }
    // A lesson's revealed answer: the row whose likeliest piece it asked for.
    if (s.ui.tour.outline.on && s.ui.tour.outline.piece_row == static_cast<int>(i))
      DrawRevealRow(s, ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y, true);
  }
  ImGui::EndTable();
  Probe(s, "next_tokens_table");
}

nlohmann::json DumpNextView(AppState& s) {
  nlohmann::json j{{"available", UsingLanguageModel(s) && s.result.ok}};
  if (!UsingLanguageModel(s)) return j;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : s.result.next) {
    nlohmann::json r = nlohmann::json::array();
    for (const lm::NextPiece& p : row) r.push_back({{"id", p.id}, {"piece", p.piece}, {"probability", p.probability}});
    rows.push_back(r);
  }
  j["next"] = rows;
  if (!s.result.p_after.empty()) {
    j["knocked_out"] = KnockoutText(s);
    j["before"] = s.result.p_before;  // P(the sentence's next piece), whole model
    j["after"] = s.result.p_after;    // ... without the knocked-out heads
    nlohmann::json top = nlohmann::json::array();
    for (const auto& row : s.result.next_before)
      top.push_back(row.empty() ? nlohmann::json()
                                : nlohmann::json{{"piece", row[0].piece}, {"probability", row[0].probability}});
    j["top_before"] = top;
  }
  j["notice"] = English(s.result.notices);
  return j;
}

ViewEntry NextView() {
  ViewEntry v{"next", N_("Next"), N_("Next-piece predictions of the language model"),
              "the language model's 5 likeliest next pieces after each position"};
  v.essentials = "next_tokens_table";
  v.heads = false;
  v.draw = &DrawNextView;
  v.dump = &DumpNextView;
  return v;
}

}  // namespace mha::gui
