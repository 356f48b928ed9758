#include "gui/main/tour_play.hpp"

#include <algorithm>
#include <cstdlib>

#include <imgui.h>

#include "gui/draw/widgets.hpp"
#include "gui/main/tour_editor.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/heatmaps/heatmaps.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

const char* Lang() { return i18n::Code(i18n::Current()); }

// The source and the sentence: a source is chosen before the sentence, since leaving a
// trained model gives its old sentence back and a preset may read the sentence's tokens.
void ApplySource(AppState& s, const tour::StepState& st) {
  switch (st.source) {
    case tour::Source::SmallModel:
      if (!UsingLanguageModel(s)) UseSmallModel(s);
      SetSentence(s, st.sentence);
      break;
    case tour::Source::Preset:
      if (UsingTrainedModel(s)) UseSeededSource(s);
      if (!st.sentence.empty()) SetSentence(s, st.sentence);
      if (st.preset == "heads")
        LoadPositionalHeadsExample(s);
      else
        LoadLessonPreset(s, st.preset == "hand" ? 1 : 0);
      break;
    case tour::Source::Seeded: {
      if (UsingTrainedModel(s)) UseSeededSource(s);
      UseSentenceInputs(s);
      UseSeededWeights(s);
      const int threads = s.choice.cfg.threads;
      s.choice.cfg = st.cfg;
      s.choice.cfg.threads = threads;
      if (!st.sentence.empty()) SetSentence(s, st.sentence);
      break;
    }
  }
  s.choice.memory = st.memory;
  s.choice.cross = !st.memory.empty();
  SyncBuffersFromChoice(s);
}

void ApplyViewSteps(AppState& s, const tour::StepState& st) {
  s.ui.flow_batch = st.flow_batch;
  if (st.flash_tile >= 0) s.choice.flash = {st.flash_br, st.flash_bc, st.flash_tile};
  if (st.generate_pieces >= 0) {
    s.choice.generate.prompt = s.choice.sentence;
    s.choice.generate.pieces = st.generate_pieces;
  }
  if (st.patch_set) {  // the Patch view patches them on its worker (PatchChoice::serial)
    s.choice.patch.clean = st.patch_clean;
    s.choice.patch.corrupt = st.patch_corrupt;
    s.choice.patch.target = st.patch_target;
    ++s.choice.patch.serial;
  }
}

std::string StepLine(const TourPlay& t) {
  return i18n::Format(_("Lesson %s · step %d of %d"), t.lesson.id.c_str(), t.step + 1,
                      static_cast<int>(t.lesson.steps.size()));
}

// The question's widgets: options, a number field, or the keys of the row (a cell).
void DrawAsk(AppState& s, const tour::Question& q, TourGiven& g) {
  TourPlay& t = s.ui.tour;
  if (q.kind == tour::QuestionKind::Choice) {
    for (std::size_t i = 0; i < q.options.size(); ++i) {
      const std::string label = q.options[i].In(t.lang) + "##opt" + std::to_string(i);
      // The first option starts its own line: after a wrapped question, SameLine would
      // put it beside the question's first line, wherever the widest line leaves room.
      if (i > 0) SameLineIfFits(ButtonWidth(label.c_str()));
      if (ImGui::Button(label.c_str())) g = {true, static_cast<int>(i), 0, -1, -1};
      Probe(s, ("lesson_option " + std::to_string(i)).c_str());
    }
  } else if (q.kind == tour::QuestionKind::Number) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    const bool enter = ImGui::InputText("##lesson_number", t.number_buf.data(), t.number_buf.size(),
                                        ImGuiInputTextFlags_CharsScientific | ImGuiInputTextFlags_EnterReturnsTrue);
    Probe(s, "lesson_number");
    ImGui::SameLine();
    if ((ImGui::Button(_("Answer")) || enter) && t.number_buf[0] != 0)
      g = {true, -1, std::strtod(t.number_buf.data(), nullptr), -1, -1};
    Probe(s, "lesson_answer");
  } else {
    const tour::Answer a = TourAnswer(s);
    const int row = a.ok ? a.row : -1;
    ImGui::TextDisabled("%s", _("Click the key:"));
    for (int c = 0; row >= 0 && c < s.result.trace.seq_kv && c < static_cast<int>(s.result.tokens.size()); ++c) {
      const std::string label =
          DisplayPiece(s.result.tokens[static_cast<std::size_t>(c)]) + "##key" + std::to_string(c);
      SameLineIfFits(ButtonWidth(label.c_str()));
      if (ImGui::Button(label.c_str())) g = {true, -1, 0, row, c};
      Probe(s, ("lesson_key " + std::to_string(c)).c_str());
    }
  }
}

// After the answer: right or not, the answer as the live model gives it, the reveal.
void DrawReveal(AppState& s, const tour::Question& q, const TourGiven& g) {
  const TourPlay& t = s.ui.tour;
  const tour::Answer a = TourAnswer(s);
  if (!a.ok) {
    ImGui::TextDisabled("%s", _("The answer is being computed..."));
    return;
  }
  const bool right = tour::IsRight(q, a, g.option, g.number, g.row, g.col);
  ImGui::PushStyleColor(ImGuiCol_Text, right ? Pal().ok_text : Pal().notice_text);
  std::string shown = a.shown;
  if (q.kind == tour::QuestionKind::Choice && a.option >= 0)
    shown = q.options[static_cast<std::size_t>(a.option)].In(t.lang);
  if (q.compute == tour::Compute::TopNext || q.compute == tour::Compute::AttnArgmax) shown = a.shown;
  // A carrier no option names, or several carriers: the heads; none: no single head.
  if (q.compute == tour::Compute::Carrier && (a.option < 0 || !a.also.empty()))
    shown = a.shown.empty() ? _("no single head") : a.shown;
  const std::string line = i18n::Format(right ? _("Right: %s") : _("The answer: %s"), shown.c_str());
  ImGui::TextWrapped("%s", line.c_str());
  ImGui::PopStyleColor();
  Probe(s, "lesson_reveal");
  if (q.compute != tour::Compute::Fixed) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", q.compute == tour::Compute::Carrier ? _("(from the model's measured proof table)")
                                                                  : _("(computed now, on the model shown)"));
  }
  const std::string& reveal = q.reveal.In(t.lang);
  if (!reveal.empty()) ImGui::TextWrapped("%s", reveal.c_str());
  // The outlines the view draws (TourOutline), named so the class knows which is which.
  const TourOutline& o = t.outline;
  if (o.on && (o.piece_row >= 0 || !o.phenomenon.empty()))
    ImGui::TextDisabled("%s", _("On the view: the answer's row is outlined in pink."));
  else if (o.on)
    ImGui::TextDisabled("%s", o.pick_col >= 0
                                  ? _("On the view: the answer is outlined in pink, your pick dashed white.")
                                  : _("On the view: the answer is outlined in pink."));
}

// "Back to the lesson" and "Leave the lesson", on the line so far.
void RestoreAndLeave(AppState& s) {
  ImGui::SameLine();
  if (ImGui::Button(_("Back to the lesson"))) ApplyTourStep(s, s.ui.tour.step);
  Probe(s, "lesson_restore");
  ImGui::SameLine();
  if (ImGui::Button(_("Leave the lesson"))) LeaveTour(s);
  Probe(s, "lesson_leave");
}

// The width DrawNav's buttons take.
float NavWidth(const AppState& s) {
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  float w = ButtonWidth(_("\xE2\x86\x90 Back")) + gap + ButtonWidth(_("Next \xE2\x86\x92")) + gap +
            ButtonWidth(_("Leave the lesson"));
  if (!TourOnStep(s)) w += gap + ButtonWidth(_("Back to the lesson"));
  return w;
}

// Back, Next and Leave, from the cursor on.
void DrawNav(AppState& s) {
  TourPlay& t = s.ui.tour;
  const int n = static_cast<int>(t.lesson.steps.size());
  ImGui::BeginDisabled(t.step == 0);
  if (ImGui::Button(_("\xE2\x86\x90 Back"))) ApplyTourStep(s, t.step - 1);
  ImGui::EndDisabled();
  Probe(s, "lesson_prev");
  ImGui::SameLine();
  ImGui::BeginDisabled(t.step + 1 >= n);
  if (ImGui::Button(_("Next \xE2\x86\x92"))) ApplyTourStep(s, t.step + 1);
  ImGui::EndDisabled();
  Probe(s, "lesson_next");
  if (!TourOnStep(s)) {
    RestoreAndLeave(s);
    return;
  }
  ImGui::SameLine();
  if (ImGui::Button(_("Leave the lesson"))) LeaveTour(s);
  Probe(s, "lesson_leave");
}

}  // namespace

tour::Lesson LoadTourLesson(const std::string& id_or_path) {
  tour::LoadContext ctx;
  for (const ViewEntry& v : Views()) ctx.views.push_back(v.name);
  return tour::LoadLesson(tour::FindLesson(id_or_path), ctx);
}

void StartTour(AppState& s, tour::Lesson lesson, int step) {
  TourPlay& t = s.ui.tour;
  t.lesson = std::move(lesson);
  t.given.assign(t.lesson.steps.size(), TourGiven{});
  t.active = true;
  t.open_error.clear();
  ApplyTourStep(s, step);
}

void ApplyTourStep(AppState& s, int step) {
  TourPlay& t = s.ui.tour;
  if (!t.active || t.lesson.steps.empty()) return;
  t.step = std::clamp(step, 0, static_cast<int>(t.lesson.steps.size()) - 1);
  t.number_buf[0] = 0;
  const tour::StepState& st = t.lesson.steps[static_cast<std::size_t>(t.step)].state;
  ApplySource(s, st);
  s.choice.layer = st.layer;
  s.choice.head = st.head;
  s.choice.query = st.query;
  SetKnockedOut(s, st.knockout);
  ApplyViewSteps(s, st);
  s.ui.enlarged = -1;
  ShowView(s, st.view);
  SetPresentation(s, true);
  // A step that names its head shows that head large; else every head.
  const bool one = !st.head_job.empty() || st.head != 0;
  s.ui.present_layout = one ? 0 : 2;
  s.ui.present_head = st.head;
  s.dirty = true;
  t.applied_view = st.view;
  t.applied_sentence = s.choice.sentence;
  t.applied_head = s.choice.head;
  t.applied_num_heads = s.choice.cfg.num_heads;
}

void LeaveTour(AppState& s) {
  s.ui.tour.active = false;
  SetPresentation(s, false);
}

bool TourKeys(AppState& s) {
  TourPlay& t = s.ui.tour;
  if (!t.active || !s.ui.present || ImGui::GetIO().WantTextInput) return false;
  constexpr int kRight = 262, kLeft = 263;
  if (ImGui::IsKeyPressed(kRight, false)) ApplyTourStep(s, t.step + 1);
  if (ImGui::IsKeyPressed(kLeft, false)) ApplyTourStep(s, t.step - 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) LeaveTour(s);
  return true;
}

float TourBandHeight(const AppState& s) {
  const float fs = ImGui::GetFontSize();
  const float want = s.ui.tour.band_h > 0 ? s.ui.tour.band_h : fs * 8.0f;
  return std::clamp(want, fs * 4.0f, ImGui::GetIO().DisplaySize.y * 0.45f);
}

void DrawTourBand(AppState& s) {
  TourPlay& t = s.ui.tour;
  t.lang = Lang();
  const tour::Step& step = t.lesson.steps[static_cast<std::size_t>(t.step)];
  const float top = ImGui::GetCursorPosY();
  // The first line: the step, the lesson's title (shortened to what the line leaves),
  // and Back, Next and Leave at its right edge, where they stay from step to step and
  // take no line of the view's.
  const float nav_w = NavWidth(s), fs = ImGui::GetFontSize();
  const float line_x = ImGui::GetCursorPosX(), line_w = ImGui::GetContentRegionAvail().x;
  ImGui::AlignTextToFramePadding();
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(StepLine(t).c_str());
  if (s.ui.font_bold) ImGui::PopFont();
  ImGui::SameLine();
  const float title_w = ImGui::GetContentRegionAvail().x - nav_w - fs;
  if (title_w > fs * 3.0f) {
    ImGui::TextDisabled("%s", Ellipsize(t.lesson.title.In(t.lang), title_w).c_str());
    ImGui::SameLine();
  } else if (ImGui::GetContentRegionAvail().x < nav_w) {
    ImGui::NewLine();
  }
  ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX(), line_x + line_w - nav_w));
  DrawNav(s);
  ImGui::TextWrapped("%s", step.caption.In(t.lang).c_str());
  Probe(s, "lesson_caption");
  if (step.question) {
    TourGiven& g = t.given[static_cast<std::size_t>(t.step)];
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().accent);
    ImGui::TextWrapped("%s %s", _("Question:"), step.question->prompt.In(t.lang).c_str());
    ImGui::PopStyleColor();
    Probe(s, "lesson_question");
    if (!g.given)
      DrawAsk(s, *step.question, g);
    else
      DrawReveal(s, *step.question, g);
  }
  t.band_h = ImGui::GetCursorPosY() - top + ImGui::GetStyle().WindowPadding.y * 2;
}

void DrawTourReturn(AppState& s) {
  TourPlay& t = s.ui.tour;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(StepLine(t).c_str());
  RestoreAndLeave(s);
}

void DrawTourMenu(AppState& s) {
  TourPlay& t = s.ui.tour;
  for (const std::string& id : tour::BuiltinLessonIds()) {
    std::string label = id;
    try {
      label += "  " + LoadTourLesson(id).title.In(Lang());
    } catch (const std::exception&) {
    }
    if (ImGui::MenuItem(label.c_str())) {
      try {
        StartTour(s, LoadTourLesson(id), 0);
      } catch (const std::exception& e) {
        t.open_error = e.what();
      }
    }
  }
  ImGui::Separator();
  ImGui::TextUnformatted(_("A lesson file:"));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 18);
  ImGui::InputText("##lesson_path", t.open_path.data(), t.open_path.size());
  ImGui::SameLine();
  if (ImGui::Button(_("Open"))) {
    try {
      StartTour(s, LoadTourLesson(t.open_path.data()), 0);
      ImGui::CloseCurrentPopup();
    } catch (const std::exception& e) {
      t.open_error = e.what();
    }
  }
  if (!t.open_error.empty()) {
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().error_text);
    ImGui::TextWrapped("%s", t.open_error.c_str());
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
  }
  ImGui::Separator();
  DrawTourEditorMenu(s);
  if (t.active) {
    ImGui::Separator();
    if (ImGui::MenuItem(_("Leave the lesson"), "Esc")) LeaveTour(s);
  }
}

}  // namespace mha::gui
