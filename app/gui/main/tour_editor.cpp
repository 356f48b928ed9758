#include "gui/main/tour_editor.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <imgui.h>
#include <imgui_stdlib.h>
#include <nlohmann/json.hpp>

#include "gui/draw/widgets.hpp"
#include "gui/main/tour_play.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/registry.hpp"
#include "text/i18n.hpp"
#include "tour/tour_write.hpp"

namespace mha::gui {
namespace {

tour::LoadContext Context() {
  tour::LoadContext ctx;
  for (const ViewEntry& v : Views()) ctx.views.push_back(v.name);
  return ctx;
}

void Say(TourDraft& d, const std::string& message, bool ok) {
  d.message = message;
  d.message_ok = ok;
}

// Whether the language model shown is mhaviz-small: chosen in the app, or its file
// given to --model (by the name `mhaviz-small` or a path to it).
bool ShowsSmallModel(const AppState& s) {
  const std::string& name = s.choice.source.name;
  if (name == kSmallModelName || name == "mhaviz-small") return true;
  const std::string small = FindSmallModel();
  std::error_code ec;
  return !small.empty() && std::filesystem::equivalent(name, small, ec);
}

// Where the step's weights come from, as the lesson format names them; false (with
// why) for a source a lesson file cannot name (a checkpoint, files, edited weights).
bool RecordSource(const AppState& s, tour::StepState& st, std::string* why) {
  if (UsingTrainedModel(s)) {
    if (!UsingLanguageModel(s) || !ShowsSmallModel(s)) {
      *why = i18n::Format(_("A lesson step runs the seeded layer, a worked example or mhaviz-small; %s cannot be "
                            "named in a lesson file."),
                          s.choice.source.name.c_str());
      return false;
    }
    st.source = tour::Source::SmallModel;
    st.sentence = s.choice.sentence;
    return true;
  }
  const int preset = LessonPresetInUse(s);
  if (preset >= 0 || UsesPositionalHeadsExample(s)) {
    st.source = tour::Source::Preset;
    st.preset = preset == 0 ? "lesson" : preset == 1 ? "hand" : "heads";
    if (st.preset == "heads") st.sentence = s.choice.sentence;  // the four heads read its positions
    return true;
  }
  if (!s.choice.files.input_path.empty() || !s.choice.files.weights_path.empty()) {
    *why =
        _("This step's x or weights come from a file or the weight editor, which a lesson file cannot name: use "
          "the seeded weights (Lesson view: Use seeded weights) or a worked example.");
    return false;
  }
  st.source = tour::Source::Seeded;
  st.sentence = s.choice.sentence;
  // What the format holds of the sliders; the rest (threads, temperature) is the player's.
  const Config& c = s.choice.cfg;
  st.cfg.d_model = c.d_model;
  st.cfg.num_heads = c.num_heads;
  st.cfg.num_kv_heads = c.num_kv_heads;
  st.cfg.seed = c.seed;
  st.cfg.mask = c.mask;
  st.cfg.norm = c.norm;
  st.cfg.scale = c.scale;
  st.cfg.block = c.block;
  return true;
}

// The window's state as a step; false (with why) when a lesson file cannot hold it.
bool RecordStep(const AppState& s, tour::Step* step, std::string* why) {
  tour::StepState& st = step->state;
  st.view = s.choice.view;
  if (!RecordSource(s, st, why)) return false;
  if (s.choice.cross) st.memory = s.choice.memory;
  const bool small = st.source == tour::Source::SmallModel;
  st.layer = small ? s.choice.layer : 0;  // one layer but mhaviz-small's
  st.head = s.choice.head;
  st.query = s.choice.query;
  if (small) {
    st.knockout = s.choice.knockout.heads;
  } else if (!s.choice.knockout.heads.empty()) {
    *why = _("Recorded without its knocked-out heads: a lesson knocks heads out of mhaviz-small only.");
  }
  if (st.view == "flash") {
    st.flash_br = s.choice.flash.br;
    st.flash_bc = s.choice.flash.bc;
    st.flash_tile = s.choice.flash.tile;
  }
  // The Patch view's two sentences and target, as its fields hold them (the view says
  // whether they patch), within what the loader reads back: mhaviz-small, two sentences,
  // each of at most tour::kMaxPatchBytes.
  if (st.view == "patch") {
    const PatchChoice& p = s.choice.patch;
    const bool fits = p.clean.size() <= tour::kMaxPatchBytes && p.corrupt.size() <= tour::kMaxPatchBytes &&
                      p.target.size() <= tour::kMaxPatchBytes;
    if (small && fits && !p.clean.empty() && !p.corrupt.empty()) {
      st.patch_set = true;
      st.patch_clean = p.clean;
      st.patch_corrupt = p.corrupt;
      st.patch_target = p.target;
    } else {
      *why = i18n::Format(_("Recorded without the Patch view's sentences: a lesson patches mhaviz-small, on two "
                            "sentences of at most %d bytes each; the step plays the view's own sentences."),
                          static_cast<int>(tour::kMaxPatchBytes));
    }
  }
  st.flow_batch = s.ui.flow_batch;
  if (st.view == "generate" && small)
    st.generate_pieces = s.choice.generate.prompt == s.choice.sentence ? s.choice.generate.pieces : 0;
  return true;
}

std::string ModelName(const tour::StepState& st) {
  if (st.source == tour::Source::SmallModel) return "mhaviz-small";
  if (st.source == tour::Source::Preset) return st.preset;
  return "seeded";
}

// "view · model · sentence · L1H0 out": what the step shows, on one line.
std::string Summary(const tour::StepState& st) {
  std::string line = st.view + " \xC2\xB7 " + ModelName(st);
  if (!st.sentence.empty()) line += " \xC2\xB7 " + st.sentence;
  if (st.source == tour::Source::Seeded)
    line += i18n::Format(" \xC2\xB7 d_model %d, h %d", st.cfg.d_model, st.cfg.num_heads);
  std::string out;
  for (const HeadRef& h : st.knockout) out += (out.empty() ? "" : ", ") + HeadName(h);
  if (!out.empty()) line += " \xC2\xB7 " + i18n::Format(_("knocked out: %s"), out.c_str());
  return line;
}

// A text in both languages: two fields, labelled, the caption's taller.
void TextPair(AppState& s, const char* probe, tour::Text& t, float lines) {
  const float w = ImGui::GetContentRegionAvail().x;
  for (const auto& [lang, text] : {std::pair<const char*, std::string*>{"ko", &t.ko}, {"en", &t.en}}) {
    const std::string id = std::string("##") + probe + "_" + lang;
    const char* name = lang[0] == 'k' ? _("Korean") : _("English");
    if (lines > 1) {
      ImGui::TextDisabled("%s", name);
      ImGui::InputTextMultiline(id.c_str(), text, ImVec2(w, ImGui::GetTextLineHeight() * lines + 8));
    } else {  // one line: the language beside its field
      const float label_w = std::max(ImGui::CalcTextSize(_("Korean")).x, ImGui::CalcTextSize(_("English")).x);
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("%s", name);
      ImGui::SameLine(label_w + ImGui::GetStyle().ItemSpacing.x * 2);
      ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
      ImGui::InputText(id.c_str(), text);
    }
    Probe(s, (std::string(probe) + "_" + lang).c_str());
  }
}

void DrawStepList(AppState& s) {
  TourDraft& d = Draft();
  const int n = static_cast<int>(d.lesson.steps.size());
  if (n == 0)
    ImGui::TextWrapped("%s", _("No steps yet: set the window as the class should see it, then Add this as a step."));
  int move_from = -1, move_to = -1, remove = -1;
  for (int i = 0; i < n; ++i) {
    const tour::Step& step = d.lesson.steps[static_cast<std::size_t>(i)];
    ImGui::PushID(i);
    const std::string label = std::to_string(i + 1) + ". " + Summary(step.state) + (step.question ? "  ?" : "");
    const float buttons = ButtonWidth("\xE2\x86\x91") * 3 + ImGui::GetStyle().ItemSpacing.x * 3;
    if (ImGui::Selectable(Ellipsize(label, ImGui::GetContentRegionAvail().x - buttons).c_str(), d.selected == i, 0,
                          ImVec2(ImGui::GetContentRegionAvail().x - buttons, 0)))
      d.selected = i;
    Probe(s, ("draft_step " + std::to_string(i)).c_str());
    ImGui::SameLine();
    ImGui::BeginDisabled(i == 0);
    if (ImGui::SmallButton("\xE2\x86\x91")) move_from = i, move_to = i - 1;
    ImGui::EndDisabled();
    Probe(s, ("draft_up " + std::to_string(i)).c_str());
    ImGui::SameLine();
    ImGui::BeginDisabled(i + 1 == n);
    if (ImGui::SmallButton("\xE2\x86\x93")) move_from = i, move_to = i + 1;
    ImGui::EndDisabled();
    Probe(s, ("draft_down " + std::to_string(i)).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("\xC3\x97")) remove = i;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("Delete this step"));
    Probe(s, ("draft_delete " + std::to_string(i)).c_str());
    ImGui::PopID();
  }
  auto& steps = d.lesson.steps;
  if (move_from >= 0) {
    std::swap(steps[static_cast<std::size_t>(move_from)], steps[static_cast<std::size_t>(move_to)]);
    if (d.selected == move_from)
      d.selected = move_to;
    else if (d.selected == move_to)
      d.selected = move_from;
  }
  if (remove >= 0) {
    steps.erase(steps.begin() + remove);
    if (d.selected >= static_cast<int>(steps.size()) || d.selected > remove) --d.selected;
  }
}

// The answer kinds each kind of question can be asked with: typed (about the lesson) or
// computed on the live model.
std::vector<std::pair<tour::Compute, const char*>> Computes(tour::QuestionKind k) {
  using C = tour::Compute;
  if (k == tour::QuestionKind::Choice)
    return {{C::Fixed, N_("typed here (about the lesson)")},
            {C::TopNext, N_("the model's next piece after a piece (top_next)")},
            {C::AttnArgmax, N_("the key the head weighs most (attn_argmax)")}};
  if (k == tour::QuestionKind::Number)
    return {{C::Fixed, N_("typed here (about the lesson)")},
            {C::RowMax, N_("the largest weight in a row (row_max)")},
            {C::HeadDim, N_("d_model / num_heads (head_dim)")},
            {C::KvBytes, N_("the KV cache's bytes (kv_bytes)")}};
  return {{C::AttnArgmax, N_("the key the head weighs most (attn_argmax)")}};
}

// A combo of (value, untranslated label) pairs; true when the choice changed.
template <typename T>
bool PickOne(AppState& s, const char* id, const char* probe, T* value,
             const std::vector<std::pair<T, const char*>>& items) {
  const char* shown = "";
  for (const auto& [v, label] : items)
    if (v == *value) shown = _(label);
  bool changed = false;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
  if (ImGui::BeginCombo(id, shown)) {
    for (const auto& [v, label] : items)
      if (ImGui::Selectable(_(label), v == *value)) {
        changed = v != *value;
        *value = v;
      }
    ImGui::EndCombo();
  }
  Probe(s, probe);
  return changed;
}

void DrawOptions(AppState& s, tour::Question& q) {
  int remove = -1;
  for (std::size_t i = 0; i < q.options.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    ImGui::AlignTextToFramePadding();
    if (q.compute == tour::Compute::Fixed) {
      if (ImGui::RadioButton("##right", q.answer == static_cast<int>(i))) q.answer = static_cast<int>(i);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", _("The right option"));
      Probe(s, ("draft_right " + std::to_string(i)).c_str());
      ImGui::SameLine();
    }
    const float w =
        (ImGui::GetContentRegionAvail().x - ButtonWidth("\xC3\x97") - ImGui::GetStyle().ItemSpacing.x * 2) / 2;
    ImGui::SetNextItemWidth(w);
    ImGui::InputTextWithHint("##ko", _("Korean"), &q.options[i].ko);
    Probe(s, ("draft_option_ko " + std::to_string(i)).c_str());
    ImGui::SameLine();
    ImGui::SetNextItemWidth(w);
    ImGui::InputTextWithHint("##en", _("English"), &q.options[i].en);
    Probe(s, ("draft_option_en " + std::to_string(i)).c_str());
    ImGui::SameLine();
    ImGui::BeginDisabled(q.options.size() <= 2);
    if (ImGui::SmallButton("\xC3\x97")) remove = static_cast<int>(i);
    ImGui::EndDisabled();
    ImGui::PopID();
  }
  if (remove >= 0) {
    q.options.erase(q.options.begin() + remove);
    if (q.answer >= remove) q.answer = std::max(0, q.answer - 1);
  }
  ImGui::BeginDisabled(q.options.size() >= static_cast<std::size_t>(tour::kMaxOptions));
  if (ImGui::SmallButton(_("Add an option"))) q.options.push_back({});
  ImGui::EndDisabled();
  Probe(s, "draft_add_option");
}

// A field's name on its own line's left, the field after it: a question's fields fit the
// window's height at a projector's text size.
void InlineLabel(const char* label) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("%s", label);
  ImGui::SameLine();
}

void DrawQuestion(AppState& s, tour::Question& q) {
  using K = tour::QuestionKind;
  InlineLabel(_("Kind"));
  if (PickOne<K>(s, "##draft_kind", "draft_kind", &q.kind,
                 {{K::Choice, N_("choice among options")},
                  {K::Number, N_("a number")},
                  {K::Cell, N_("a cell: the class clicks the key")}})) {
    q.compute = Computes(q.kind).front().first;
    if (q.kind == K::Choice && q.options.size() < 2) q.options.resize(2);
    if (q.kind != K::Choice) q.options.clear();
  }
  ImGui::TextDisabled("%s", _("Question"));
  TextPair(s, "draft_prompt", q.prompt, 1);
  InlineLabel(_("The answer"));
  PickOne<tour::Compute>(s, "##draft_compute", "draft_compute", &q.compute, Computes(q.kind));
  const bool fixed = q.compute == tour::Compute::Fixed;
  if (!fixed)
    ImGui::TextWrapped("%s", _("Computed on the live model when the step is shown, never typed: it stays true if "
                               "the model is retrained."));
  if (q.compute == tour::Compute::TopNext || q.compute == tour::Compute::AttnArgmax ||
      q.compute == tour::Compute::RowMax) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
    ImGui::InputTextWithHint("##draft_at", _("a token or its index"), &q.at);
    Probe(s, "draft_at");
    ImGui::SameLine();
    ImGui::TextDisabled("%s", q.compute == tour::Compute::TopNext ? _("after this piece") : _("from this query"));
  }
  if (q.kind == K::Choice) DrawOptions(s, q);
  if (q.kind == K::Number) {
    if (fixed) {
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
      ImGui::InputDouble(_("answer"), &q.number, 0, 0, "%.6g");
      Probe(s, "draft_number");
    }
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
    if (ImGui::InputDouble(_("tolerance"), &q.tolerance, 0, 0, "%.6g")) q.tolerance = std::max(0.0, q.tolerance);
    Probe(s, "draft_tolerance");
  }
  ImGui::TextDisabled("%s", _("Said with the answer"));
  TextPair(s, "draft_reveal", q.reveal, 1);
}

void DrawSelected(AppState& s) {
  TourDraft& d = Draft();
  if (d.selected < 0 || d.selected >= static_cast<int>(d.lesson.steps.size())) return;
  tour::Step& step = d.lesson.steps[static_cast<std::size_t>(d.selected)];
  ImGui::Separator();
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  if (d.show_step > 0) {  // a step just recorded: its caption and question box in view
    --d.show_step;
    ImGui::SetScrollHereY(0.0f);
  }
  ImGui::TextUnformatted(i18n::Format(_("Step %d"), d.selected + 1).c_str());
  if (s.ui.font_bold) ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextDisabled("%s", Ellipsize(Summary(step.state), ImGui::GetContentRegionAvail().x).c_str());
  // Each step's fields have their own ids: a field being typed in keeps its text when
  // another step is selected.
  ImGui::PushID(d.selected);
  ImGui::TextDisabled("%s", _("Caption"));
  // Two lines each while a question is asked too: its fields need the height.
  TextPair(s, "draft_caption", step.caption, step.question ? 2.0f : 3.0f);
  bool ask = step.question.has_value();
  if (ImGui::Checkbox(_("Ask the class a question"), &ask)) {
    if (ask) {
      step.question = tour::Question{};
      step.question->options.resize(2);
      step.question->answer = 0;
      d.show_question = 3;
    } else {
      step.question.reset();
    }
  }
  Probe(s, "draft_question");
  if (step.question) {
    // The checkbox at the top of the body once ticked, so the fields under it are in view.
    if (d.show_question > 0) {
      --d.show_question;
      ImGui::SetScrollHereY(0.0f);
    }
    DrawQuestion(s, *step.question);
  }
  ImGui::PopID();
}

// The lesson as the loader reads it back: what Play plays and Save writes.
bool Checked(TourDraft& d, const std::string& name, tour::Lesson* out) {
  try {
    *out = tour::ParseLesson(tour::LessonJson(d.lesson), name, Context());
    return true;
  } catch (const std::exception& e) {
    Say(d, e.what(), false);
    return false;
  }
}

void DrawFileRow(AppState& s) {
  TourDraft& d = Draft();
  ImGui::Separator();
  ImGui::TextUnformatted(_("Lesson file:"));
  ImGui::SameLine();
  const float save_w = ButtonWidth(_("Save lesson")) + ButtonWidth(_("Play")) + ImGui::GetStyle().ItemSpacing.x * 3;
  ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 8, ImGui::GetContentRegionAvail().x - save_w));
  ImGui::InputTextWithHint("##draft_path", "my_lesson.json", &d.path);
  Probe(s, "draft_path");
  const bool empty = d.lesson.steps.empty();
  ImGui::BeginDisabled(empty || d.path.empty());
  ImGui::SameLine();
  if (ImGui::Button(_("Save lesson"))) {
    // A file of a few kilobytes: written on the UI thread, atomically.
    try {
      tour::SaveLesson(d.lesson, d.path, Context());
      d.saved = d.path;
      ++d.saves;
      Say(d, i18n::Format(_("Saved %d steps to %s."), static_cast<int>(d.lesson.steps.size()), d.path.c_str()), true);
    } catch (const std::exception& e) {
      Say(d, e.what(), false);
    }
  }
  ImGui::EndDisabled();
  Probe(s, "draft_save");
  ImGui::SameLine();
  ImGui::BeginDisabled(empty);
  if (ImGui::Button(_("Play"))) {
    tour::Lesson played;
    const std::string name = d.path.empty() ? std::string("new lesson") : d.path;
    if (Checked(d, name, &played)) {
      played.id = d.path.empty() ? std::string("new") : std::filesystem::path(d.path).stem().string();
      StartTour(s, std::move(played), std::max(d.selected, 0));
      Say(d, "", true);
    }
  }
  ImGui::EndDisabled();
  Probe(s, "draft_play");
  if (!d.message.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, d.message_ok ? Pal().ok_text : Pal().error_text);
    ImGui::TextWrapped("%s", d.message.c_str());
    ImGui::PopStyleColor();
    Probe(s, "draft_message");
  }
}

}  // namespace

TourDraft& Draft() {
  static TourDraft draft;
  return draft;
}

nlohmann::json TourDraftProbeJson() {
  const TourDraft& d = Draft();
  nlohmann::json steps = nlohmann::json::array();
  for (const tour::Step& step : d.lesson.steps) {
    const tour::StepState& st = step.state;
    nlohmann::json out = nlohmann::json::array();
    for (const HeadRef& h : st.knockout) out.push_back(HeadName(h));
    steps.push_back({{"view", st.view},
                     {"sentence", st.sentence},
                     {"model", ModelName(st)},
                     {"num_heads", st.cfg.num_heads},
                     {"layer", st.layer},
                     {"head", st.head},
                     {"knockout", out},
                     {"caption", {{"ko", step.caption.ko}, {"en", step.caption.en}}},
                     {"question", step.question.has_value()}});
    if (st.patch_set)
      steps.back()["patch"] = {{"clean", st.patch_clean}, {"corrupt", st.patch_corrupt}, {"target", st.patch_target}};
    if (step.question) {  // what was typed, in English: the tests wait on it
      nlohmann::json options = nlohmann::json::array();
      for (const tour::Text& o : step.question->options) options.push_back(o.en);
      steps.back()["ask"] = {{"prompt", step.question->prompt.en},
                             {"options", options},
                             {"answer", step.question->answer},
                             {"at", step.question->at}};
    }
  }
  return {{"editing", d.editing}, {"steps", steps},   {"selected", d.selected}, {"path", d.path},
          {"saved", d.saved},     {"saves", d.saves}, {"message", d.message},   {"message_ok", d.message_ok}};
}

void StartDraft(std::string path) {
  TourDraft& d = Draft();
  d = TourDraft{};
  d.editing = true;
  d.path = std::move(path);  // by value: AddDraftStep passes the draft's own path
}

void AddDraftStep(AppState& s) {
  TourDraft& d = Draft();
  if (!d.editing && d.lesson.steps.empty()) StartDraft(d.path);
  d.editing = true;
  if (d.lesson.steps.size() >= static_cast<std::size_t>(tour::kMaxSteps)) {
    Say(d, i18n::Format(_("A lesson holds at most %d steps."), tour::kMaxSteps), false);
    return;
  }
  tour::Step step;
  std::string why;
  if (!RecordStep(s, &step, &why)) {
    Say(d, why, false);
    return;
  }
  const int at = std::clamp(d.selected + 1, 0, static_cast<int>(d.lesson.steps.size()));
  d.lesson.steps.insert(d.lesson.steps.begin() + at, std::move(step));
  d.selected = at;
  d.show_step = 3;
  Say(d, why.empty() ? i18n::Format(_("Step %d recorded."), at + 1) : why, why.empty());
}

void DrawTourEditor(AppState& s) {
  TourDraft& d = Draft();
  if (!d.editing || (s.ui.tour.active && s.ui.present)) return;
  const float fs = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  // Beside the view rather than over all of it: at most about half the window's width.
  // As tall as the window under the menu bar: a step's caption and question need it.
  const float w = std::min(fs * 30, vp->WorkSize.x * 0.5f), h = std::max(vp->WorkSize.y - fs * 2.5f, fs * 12);
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x - w - fs * 0.5f, vp->WorkPos.y + fs * 2),
                          ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(w, h), ImGuiCond_FirstUseEver);
  const std::string title = std::string(_("Lesson being written")) + "###lesson_editor";
  if (!ImGui::Begin(title.c_str(), &d.editing, ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::End();
    return;
  }
  Probe(s, "draft_window");
  // The fields scroll; the file row (Save, Play and what they said) stays under them.
  const float footer = d.footer_h > 0 ? d.footer_h : ImGui::GetFrameHeightWithSpacing() * 2;
  ImGui::BeginChild("##draft_body", ImVec2(0, -footer));
  ImGui::TextDisabled("%s", _("Title"));
  TextPair(s, "draft_title", d.lesson.title, 1);
  ImGui::Separator();
  DrawStepList(s);
  if (ImGui::Button(_("Add this as a step"))) AddDraftStep(s);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", _("(records the view, sentence, model, sliders, head and knock-outs shown now)"));
  Probe(s, "draft_add");
  DrawSelected(s);
  ImGui::EndChild();
  Probe(s, "draft_body");
  const float top = ImGui::GetCursorPosY();
  DrawFileRow(s);
  d.footer_h = ImGui::GetCursorPosY() - top;
  ImGui::End();
}

void DrawTourEditorMenu(AppState& s) {
  TourDraft& d = Draft();
  if (ImGui::MenuItem(_("New lesson..."))) StartDraft("");
  Probe(s, "lesson_new");
  if (ImGui::MenuItem(_("Add this as a step"))) AddDraftStep(s);
  Probe(s, "lesson_add_step");
  ImGui::BeginDisabled(d.lesson.steps.empty() && !d.editing);
  if (ImGui::MenuItem(_("The lesson being written"), nullptr, d.editing)) d.editing = !d.editing;
  ImGui::EndDisabled();
  Probe(s, "lesson_editor");
}

}  // namespace mha::gui
