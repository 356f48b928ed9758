#include "gui/state/tour_state.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "gui/state/app_state.hpp"

namespace mha::gui {

tour::Answer TourAnswer(const AppState& s) {
  const TourPlay& t = s.ui.tour;
  tour::Answer none;
  if (!t.active || t.step >= static_cast<int>(t.lesson.steps.size())) return none;
  const auto& q = t.lesson.steps[static_cast<std::size_t>(t.step)].question;
  if (!q) return none;
  if (!s.result.ok || s.result.generation == 0) {
    none.error = "the step is still being computed";
    if (q->compute == tour::Compute::Fixed) return tour::ComputeAnswer(*q, {});
    return none;
  }
  tour::AnswerInputs in;
  in.trace = &s.result.trace;
  in.tokens = &s.result.tokens;
  in.next = &s.result.next;
  in.head = s.choice.head;
  return tour::ComputeAnswer(*q, in);
}

bool TourOnStep(const AppState& s) {
  const TourPlay& t = s.ui.tour;
  return t.active && s.ui.present && s.choice.view == t.applied_view && s.choice.sentence == t.applied_sentence &&
         s.choice.head == t.applied_head && s.choice.cfg.num_heads == t.applied_num_heads;
}

int TourAnswered(const TourPlay& t) {
  return static_cast<int>(std::count_if(t.given.begin(), t.given.end(), [](const TourGiven& g) { return g.given; }));
}

nlohmann::json TourProbeJson(const AppState& s) {
  const TourPlay& t = s.ui.tour;
  if (!t.active) return nlohmann::json::object();
  nlohmann::json j = {{"id", t.lesson.id},
                      {"path", t.lesson.path},
                      {"step", t.step},
                      {"steps", t.lesson.steps.size()},
                      {"questions", t.lesson.Questions()},
                      {"answered", TourAnswered(t)},
                      {"on_step", TourOnStep(s)},
                      {"lang", t.lang}};
  const tour::Step& st = t.lesson.steps[static_cast<std::size_t>(t.step)];
  j["view"] = st.state.view;
  j["caption"] = st.caption.In(t.lang);
  j["head"] = st.state.head;
  j["layer"] = st.state.layer;
  if (st.question) {
    const tour::Answer a = TourAnswer(s);
    const TourGiven& g = t.given[static_cast<std::size_t>(t.step)];
    j["question"] = {{"kind", st.question->kind == tour::QuestionKind::Choice   ? "choice"
                              : st.question->kind == tour::QuestionKind::Number ? "number"
                                                                                : "cell"},
                     {"at", st.question->at},
                     {"given", g.given},
                     {"revealed", g.given},
                     {"right", g.given && tour::IsRight(*st.question, a, g.option, g.number, g.row, g.col)},
                     {"answer",
                      {{"ok", a.ok},
                       {"error", a.error},
                       {"option", a.option},
                       {"number", a.number},
                       {"row", a.row},
                       {"col", a.col},
                       {"shown", a.shown}}}};
  }
  return j;
}

}  // namespace mha::gui
