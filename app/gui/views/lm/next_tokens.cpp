// Next-token panel: after each position, the language model's five likeliest next
// pieces with their probabilities (softmax of the logits row), as Transformer
// Explainer shows for GPT-2. Only a language model predicts pieces.
#include <cstdio>
#include <string>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/registry.hpp"

namespace mha::gui {

void DrawNextTokensView(AppState& s) {
  if (!UsingLanguageModel(s)) {
    ImGui::TextWrapped("Next-piece predictions come from a language model. Pick \"%s\" under Model (left) and type "
                       "any English or Korean sentence.",
                       kSmallModelName);
    return;
  }
  const auto& next = s.source.next;
  if (!s.result.ok || next.empty()) {
    Muted("Type a sentence: the predictions appear for each of its pieces.");
    return;
  }
  ImGui::TextWrapped("After each piece, the model's %d likeliest next pieces and their probabilities (the softmax of "
                     "its output logits at that position; \"_\" starts a word). The model sees only the pieces up "
                     "to that position (causal mask).",
                     kNextTopK);
  const int k = kNextTopK;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                                ImGuiTableFlags_ScrollX;
  if (!ImGui::BeginTable("##next_tokens", k + 2, flags)) return;
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn("after");
  for (int j = 0; j < k; ++j) ImGui::TableSetupColumn(j == 0 ? "likeliest next" : (std::to_string(j + 1)).c_str());
  ImGui::TableHeadersRow();
  const float bar_w = ImGui::CalcTextSize("0000000000").x;
  for (std::size_t i = 0; i < next.size(); ++i) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%d", static_cast<int>(i));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(i < s.result.tokens.size() ? s.result.tokens[i].c_str() : "");
    for (const lm::NextPiece& p : next[i]) {
      ImGui::TableNextColumn();
      // A bar under the text: its length is the probability.
      const ImVec2 pos = ImGui::GetCursorScreenPos();
      const float h = ImGui::GetTextLineHeight();
      ImGui::GetWindowDrawList()->AddRectFilled(pos, ImVec2(pos.x + bar_w * static_cast<float>(p.probability), pos.y + h),
                                                Pal().highlight_bg);
      char prob[32];
      std::snprintf(prob, sizeof prob, " %.3f", p.probability);
      ImGui::TextUnformatted((DisplayPiece(p.piece) + prob).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("piece id %d, probability %.6f", p.id, p.probability);
    }
  }
  ImGui::EndTable();
  Probe(s, "next_tokens_table");
}

nlohmann::json DumpNextTokensView(AppState& s) {
  nlohmann::json j{{"available", UsingLanguageModel(s) && s.result.ok}};
  if (!UsingLanguageModel(s)) return j;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : s.source.next) {
    nlohmann::json r = nlohmann::json::array();
    for (const lm::NextPiece& p : row) r.push_back({{"id", p.id}, {"piece", p.piece}, {"probability", p.probability}});
    rows.push_back(r);
  }
  j["next"] = rows;
  j["notice"] = s.result.notice;
  return j;
}

ViewEntry NextTokensView() {
  ViewEntry v{"next", "Next", "Next-piece predictions of the language model",
              "the language model's 5 likeliest next pieces after each position"};
  v.draw = &DrawNextTokensView;
  v.dump = &DumpNextTokensView;
  return v;
}

}  // namespace mha::gui
