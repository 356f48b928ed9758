// Sentence: the text field, example sentences, and the tokens as chips.
#include <cstring>

#include <regex>
#include <vector>

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/files.hpp"
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
  if (!s.result.notice.empty()) MessageBox(ShownNotice(s.result.notice), Pal().notice_bg, Pal().notice_text);
}

// The notices of the tokenizer, the language model, the composing of typed text, the
// sentence field's cap, --preset and the settings file, in the interface's language.
// They are made in English (the command line and --dump-state keep those words, and
// some before the language is known); each sentence is rebuilt here from its parts.
// Anything else is shown as written.
std::string ShownNotice(const std::string& notice) {
  if (i18n::Current() == i18n::Lang::kEnglish) return notice;
  struct Rule {
    const char* pattern;
    const char* shown;
  };
  static const Rule kRules[] = {
      {R"(Input longer than (\d+) KiB was cut off there\.)", N_("Input longer than %s KiB was cut off there.")},
      {R"(Only the first (\d+) tokens are used \(cap\); (\d+) more were left out\.)",
       N_("Only the first %s tokens are used (cap); %s more were left out.")},
      {R"((\d+) byte\(s\) of invalid UTF-8 were replaced by U\+FFFD\.)",
       N_("%s byte(s) of invalid UTF-8 were replaced by U+FFFD.")},
      {R"(the sentence is (\d+) pieces long, but the model reads at most (\d+) \(its context, max_seq\): only the )"
       R"(first \d+ are shown\.)",
       N_("the sentence is %1$s pieces long, but the model reads at most %2$s (its context, max_seq): only the first "
          "%2$s "
          "are shown.")},
      {R"(The sentence was normalised to Unicode NFC: [^.]*\.)",
       N_("The sentence was normalised to Unicode NFC: decomposed letters (such as Hangul typed as separate jamo, "
          "common in text copied from macOS file names or PDFs) were composed, so it shows and embeds exactly like "
          "the same text typed on a keyboard.")},
      {R"(The memory sentence was normalised to Unicode NFC: [^.]*\.)",
       N_("The memory sentence was normalised to Unicode NFC: decomposed letters (such as Hangul typed as separate "
          "jamo, common in text copied from macOS file names or PDFs) were composed, so it shows and embeds exactly "
          "like the same text typed on a keyboard.")},
      {R"(The sentence field holds at most (\d+) bytes, so the text given was cut off there\. \(mhaviz trace and )"
       R"(export take longer text\.\))",
       N_("The sentence field holds at most %s bytes, so the text given was cut off there. (mhaviz trace and export "
          "take longer text.)")},
      {R"(--preset (\S+) sets its own configuration, so (.+) (?:was|were) not used\. Change the configuration after )"
       R"(it loads if you like\.)",
       N_("--preset %s sets its own configuration, so these flags were not used: %s. Change the configuration after "
          "it loads if you like.")},
      {R"(The settings file (.+) could not be read \((.*)\), so mhaviz started with the default sentence and )"
       R"(configuration\. It was kept as (.+), nothing in it is lost\.)",
       N_("The settings file %s could not be read (%s), so mhaviz started with the default sentence and "
          "configuration. It was kept as %s, nothing in it is lost.")},
      {R"(The settings file (.+) could not be read \((.*)\), so mhaviz started with the default sentence and )"
       R"(configuration\. It is left as it is \((.*)\)\.)",
       N_("The settings file %s could not be read (%s), so mhaviz started with the default sentence and "
          "configuration. It is left as it is (%s).")},
  };
  std::string out = notice;
  for (const Rule& r : kRules) {
    const std::regex re(r.pattern);
    std::smatch m;
    if (!std::regex_search(out, m, re)) continue;
    std::string arg[3];
    for (std::size_t k = 1; k < m.size() && k <= 3; ++k) arg[k - 1] = m[k].str();
    std::vector<char> buf(std::strlen(_(r.shown)) + arg[0].size() + arg[1].size() + arg[2].size() + 1);
    std::snprintf(buf.data(), buf.size(), _(r.shown), arg[0].c_str(), arg[1].c_str(), arg[2].c_str());
    out = m.prefix().str() + buf.data() + m.suffix().str();
  }
  return out;
}

}  // namespace mha::gui
