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

// Token chips, wrapped to the available width, in a box of at most a few lines
// that scrolls; chips out of view are not drawn. Returns the hovered chip or -1.
int DrawChips(const AppState& s, const std::vector<std::string>& tokens, int highlight) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const Palette& pal = Pal();
  ImFont* small = s.ui.font_small ? s.ui.font_small : ImGui::GetFont();
  const float fs = ImGui::GetFontSize();
  const float pad_x = st.FramePadding.x * 0.7f, pad_y = st.FramePadding.y * 0.5f;
  const float gap = st.ItemSpacing.x * 0.6f, line_gap = st.ItemSpacing.y * 0.8f;
  const float width = ImGui::GetContentRegionAvail().x - st.ScrollbarSize;
  const float chip_h = fs + 2 * pad_y;

  // Layout first (no drawing), so the box gets the height of its content.
  struct Chip {
    ImVec2 pos, size;
    std::string label, idx;
    float idx_w;
  };
  std::vector<Chip> chips(tokens.size());
  float x = 0, y = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    Chip& c = chips[i];
    c.idx = std::to_string(i);
    c.idx_w = small->CalcTextSizeA(small->FontSize, FLT_MAX, 0.0f, c.idx.c_str()).x;
    c.label = Ellipsize(tokens[i], std::min(fs * 14.0f, width - c.idx_w - 3 * pad_x));
    c.size = ImVec2(ImGui::CalcTextSize(c.label.c_str()).x + c.idx_w + 3 * pad_x, chip_h);
    if (x > 0 && x + c.size.x > width) {
      x = 0;
      y += chip_h + line_gap;
    }
    c.pos = ImVec2(x, y);
    x += c.size.x + gap;
  }
  const float content_h = tokens.empty() ? 0.0f : y + chip_h;
  const float max_h = 5 * chip_h + 4 * line_gap;
  int hovered = -1;
  ImGui::BeginChild("##chips", ImVec2(0, std::min(content_h, max_h) + 2.0f), false);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float top = ImGui::GetWindowPos().y, bottom = top + ImGui::GetWindowSize().y;
  for (std::size_t i = 0; i < chips.size(); ++i) {
    const Chip& c = chips[i];
    const ImVec2 p(o.x + c.pos.x, o.y + c.pos.y), q(p.x + c.size.x, p.y + c.size.y);
    if (q.y < top || p.y > bottom) continue;  // scrolled out of view
    const ImVec2 m = ImGui::GetIO().MousePos;
    const bool over = ImGui::IsWindowHovered() && m.x >= p.x && m.x < q.x && m.y >= p.y && m.y < q.y;
    if (over) {
      hovered = static_cast<int>(i);
      ImGui::SetTooltip("token %d: \"%s\"", static_cast<int>(i), tokens[i].c_str());
    }
    const bool hot = over || static_cast<int>(i) == highlight;
    // Square corners: a rounded, outlined chip is ~100 anti-aliased triangles, a
    // square one ~20, and a software rasteriser (Mesa llvmpipe) pays per triangle.
    dl->AddRectFilled(p, q, hot ? pal.highlight_bg : pal.chip_bg);
    dl->AddRect(p, q, hot ? pal.highlight : pal.chip_border);
    dl->AddText(small, small->FontSize, ImVec2(p.x + pad_x, std::round(p.y + (chip_h - small->FontSize) * 0.5f)),
                pal.muted_text, c.idx.c_str());
    dl->AddText(ImVec2(p.x + 2 * pad_x + c.idx_w, p.y + pad_y), pal.chip_text, c.label.c_str());
  }
  ImGui::Dummy(ImVec2(width, content_h));
  ImGui::EndChild();
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
  const int hovered = DrawChips(s, tokens, s.ui.hover_token);
  if (hovered >= 0) s.ui.hover_token_next = hovered;
  if (!s.result.notice.empty()) MessageBox(s.result.notice, Pal().notice_bg, Pal().notice_text);
}

}  // namespace mha::gui
