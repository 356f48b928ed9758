// Sentence: the text field, example sentences, and the tokens as chips.
#include <cstring>

#include "gui/panels.hpp"
#include "gui/theme.hpp"
#include "gui/widgets.hpp"

namespace mha::gui {
namespace {

const char* const kExamples[] = {
    "The cat sat on the mat.",
    "고양이가 쥐를 잡았다",
    "The animal didn't cross the street because it was too tired.",
    "나는 어제 친구와 함께 영화를 봤다.",
    "Attention is all you need.",
    "The keys to the cabinet are on the table.",
    "저 고양이는 생선을 좋아한다.",
    "I saw the man with the telescope.",
};

// Token chips, wrapped to the available width. Returns the hovered chip or -1.
int DrawChips(const std::vector<std::string>& tokens, int highlight) {
  constexpr std::size_t kMaxChips = 300;  // beyond this the panel would only scroll
  const ImGuiStyle& st = ImGui::GetStyle();
  const Palette& pal = Pal();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float right = ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x;
  const float pad_x = st.FramePadding.x * 0.8f, pad_y = st.FramePadding.y * 0.6f;
  const float index_scale = 0.72f;
  ImFont* font = ImGui::GetFont();
  const float fs = ImGui::GetFontSize();
  int hovered = -1;
  const std::size_t n = std::min(tokens.size(), kMaxChips);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string idx = std::to_string(i);
    const ImVec2 idx_size = font->CalcTextSizeA(fs * index_scale, FLT_MAX, 0.0f, idx.c_str());
    const std::string label = Ellipsize(tokens[i], fs * 14.0f);
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    const ImVec2 size(ts.x + idx_size.x + 3 * pad_x, ts.y + 2 * pad_y);
    if (i > 0) {
      ImGui::SameLine(0.0f, st.ItemSpacing.x * 0.6f);
      if (ImGui::GetCursorScreenPos().x + size.x > right) ImGui::NewLine();
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::PushID(static_cast<int>(i));
    ImGui::Dummy(size);
    ImGui::PopID();
    const bool hot = ImGui::IsItemHovered() || static_cast<int>(i) == highlight;
    if (ImGui::IsItemHovered()) {
      hovered = static_cast<int>(i);
      ImGui::SetTooltip("token %d: \"%s\"", static_cast<int>(i), tokens[i].c_str());
    }
    const ImVec2 q(p.x + size.x, p.y + size.y);
    dl->AddRectFilled(p, q, hot ? pal.highlight_bg : pal.chip_bg, size.y * 0.5f);
    dl->AddRect(p, q, hot ? pal.highlight : pal.chip_border, size.y * 0.5f);
    dl->AddText(font, fs * index_scale, ImVec2(p.x + pad_x, p.y + pad_y + (ts.y - idx_size.y) * 0.5f), pal.muted_text,
                idx.c_str());
    dl->AddText(ImVec2(p.x + 2 * pad_x + idx_size.x, p.y + pad_y), pal.chip_text, label.c_str());
  }
  if (tokens.size() > n) ImGui::TextDisabled("... and %d more tokens", static_cast<int>(tokens.size() - n));
  return hovered;
}

}  // namespace

const char* const* ExampleSentences(int* count) {
  *count = static_cast<int>(sizeof kExamples / sizeof kExamples[0]);
  return kExamples;
}

void DrawSentencePanel(AppState& s) {
  SectionTitle(s, "Sentence", "Type any sentence, English or Korean. Every edit recomputes at once.");
  auto& buf = s.ui.sentence_buf;
  if (s.ui.focus_sentence) {
    ImGui::SetKeyboardFocusHere();
    s.ui.focus_sentence = false;
  }
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::InputTextWithHint("##sentence", "e.g. The cat sat on the mat.", buf.data(), buf.size())) {
    s.choice.sentence = buf.data();
    s.files.input_path.clear();  // typing replaces embeddings loaded from a file
    s.files.input = Inputs();
    s.dirty = true;
  }
  Probe(s, "sentence");
  if (std::strlen(buf.data()) + 4 >= buf.size())
    MessageBox("The field is full: a sentence can have at most " + Thousands(static_cast<long long>(kSentenceCap)) +
                   " bytes here. Longer text is cut off.",
               Pal().notice_bg, Pal().notice_text);

  int n = 0;
  const char* const* examples = ExampleSentences(&n);
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::BeginCombo("##examples", "Pick an example sentence...", ImGuiComboFlags_HeightLarge)) {
    for (int i = 0; i < n; ++i) {
      if (ImGui::Selectable(examples[i], s.choice.sentence == examples[i])) {
        s.choice.sentence = examples[i];
        SyncBuffersFromChoice(s);
        s.files.input_path.clear();
        s.files.input = Inputs();
        s.dirty = true;
      }
    }
    ImGui::EndCombo();
  }
  Probe(s, "examples");

  if (!s.files.input_path.empty()) {
    MessageBox("x comes from " + s.files.input_path + " (token labels #0, #1, ...). Type a sentence to use it instead.",
               Pal().notice_bg, Pal().notice_text);
  }
  const auto& tokens = s.result.tokens;
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::Text("%d token%s (seq = %d)", static_cast<int>(tokens.size()), tokens.size() == 1 ? "" : "s",
              static_cast<int>(tokens.size()));
  ImGui::PopStyleColor();
  const int hovered = DrawChips(tokens, s.ui.hover_token);
  if (hovered >= 0) s.ui.hover_token_next = hovered;
  if (!s.result.notice.empty()) MessageBox(s.result.notice, Pal().notice_bg, Pal().notice_text);
}

}  // namespace mha::gui
