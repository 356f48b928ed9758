// Sentence: the text field, example sentences, and the tokens as chips.
#include <cstring>

#include <vector>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "text/normalize.hpp"
#include "text/i18n.hpp"

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

}  // namespace

const char* const* ExampleSentences(int* count) {
  *count = static_cast<int>(sizeof kExamples / sizeof kExamples[0]);
  return kExamples;
}

void DrawSentencePanel(AppState& s) {
  SectionTitle(s, _("Sentence"), _("English or Korean; edits recompute at once."));
  auto& buf = s.ui.sentence_buf;
  if (s.ui.focus_sentence) {
    ImGui::SetKeyboardFocusHere();
    s.ui.focus_sentence = false;
  }
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::InputTextWithHint("##sentence", _("e.g. The cat sat on the mat."), buf.data(), buf.size())) {
    // The field cannot hold emoji: it must not replace them unless they were edited.
    if (std::string typed = text::KeepBeyondBmp(s.choice.sentence, FromDisplay(buf.data()));
        text::TypedChange(s.choice.sentence, typed)) {
      s.choice.sentence = std::move(typed);
      s.choice.files.input_path.clear();  // typing replaces embeddings loaded from a file
      s.choice.files.input = Inputs();
      s.dirty = true;
    }
  }
  Probe(s, "sentence");
  if (std::strlen(buf.data()) + 4 >= buf.size())
    MessageBox(i18n::Format(_("The field is full: a sentence can have at most %s bytes here. Longer text is cut off."),
                            Thousands(static_cast<long long>(kSentenceCap)).c_str()),
               Pal().notice_bg, Pal().notice_text);

  int n = 0;
  const char* const* examples = ExampleSentences(&n);
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::BeginCombo("##examples", _("Pick an example sentence..."), ImGuiComboFlags_HeightLarge)) {
    for (int i = 0; i < n; ++i) {
      if (ImGui::Selectable(examples[i], s.choice.sentence == examples[i])) {
        s.choice.sentence = examples[i];
        SyncBuffersFromChoice(s);
        s.choice.files.input_path.clear();
        s.choice.files.input = Inputs();
        s.dirty = true;
      }
    }
    ImGui::EndCombo();
  }
  Probe(s, "examples");

  if (!s.choice.files.input_path.empty()) {
    MessageBox(i18n::Format(_("x comes from %s. Type a sentence to use it instead."),
                            SourceShown(s.choice.files.input_path).c_str()),
               Pal().notice_bg, Pal().notice_text);
  }
  const auto& tokens = s.result.tokens;
  ImGui::Spacing();
  if (tokens.empty() && s.choice.files.input_path.empty() && !s.result.ok) {
    // The error where the learner is typing, on the line the token count takes.
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().error_text);
    ImGui::TextWrapped(_("The sentence is empty: type at least one word."));
    ImGui::PopStyleColor();
    Probe(s, "sentence_error");
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::Text(P_("%d token (seq = %d)", "%d tokens (seq = %d)", tokens.size()), static_cast<int>(tokens.size()),
                static_cast<int>(tokens.size()));
    ImGui::PopStyleColor();
  }
  const int hovered = TokenChips(s, "##chips", tokens, s.ui.hover_token);
  if (hovered >= 0) s.ui.hover_token_next = hovered;
  if (UsingLanguageModel(s) && !s.result.byte_spelled.empty()) {
    // Byte pieces read as noise unless said what they are.
    std::string note;
    for (const lm::ByteSpelling& b : s.result.byte_spelled) {
      note += note.empty() ? "" : "; ";
      note += b.text + " = " + b.pieces;
    }
    note += i18n::Format(s.result.byte_spelled.size() == 1
                             ? _(": a character not among the model's %d pieces, spelled as its UTF-8 bytes, one piece "
                                 "per byte.")
                             : _(": characters not among the model's %d pieces, spelled as their UTF-8 bytes, one "
                                 "piece per byte."),
                         s.choice.source.lm->tokenizer.vocab_size());
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped("%s", ForDisplay(note).c_str());
    ImGui::PopStyleColor();
    Probe(s, "byte_pieces_note");
  }
  if (!s.result.notices.empty()) MessageBox(Shown(s.result.notices), Pal().notice_bg, Pal().notice_text);
}

}  // namespace mha::gui
