#include "gui/state/tour_state.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "gui/state/app_state.hpp"

namespace mha::gui {

namespace {

const tour::Question* StepQuestion(const TourPlay& t) {
  if (!t.active || t.step < 0 || t.step >= static_cast<int>(t.lesson.steps.size())) return nullptr;
  const auto& q = t.lesson.steps[static_cast<std::size_t>(t.step)].question;
  return q ? &*q : nullptr;
}

tour::AnswerInputs LiveInputs(const AppState& s) {
  tour::AnswerInputs in;
  in.trace = &s.result.trace;
  in.tokens = &s.result.tokens;
  in.next = &s.result.next;
  in.head = s.choice.head;
  return in;
}

// The key an option names (a choice about where a head looks), or -1.
int OptionKey(const AppState& s, const tour::Question& q, int option) {
  if (option < 0 || option >= static_cast<int>(q.options.size())) return -1;
  const tour::Text& o = q.options[static_cast<std::size_t>(option)];
  const int k = tour::FindToken(s.result.tokens, o.en);
  return k >= 0 ? k : tour::FindToken(s.result.tokens, o.ko);
}

}  // namespace

tour::Answer TourAnswer(const AppState& s) {
  tour::Answer none;
  const tour::Question* q = StepQuestion(s.ui.tour);
  if (!q) return none;
  // A carrier is the labels file's, read when the lesson loaded: no live result needed.
  if (q->compute == tour::Compute::Carrier) return tour::ComputeAnswer(*q, {});
  if (!s.result.ok || s.result.generation == 0) {
    none.error = "the step is still being computed";
    if (q->compute == tour::Compute::Fixed) return tour::ComputeAnswer(*q, {});
    return none;
  }
  return tour::ComputeAnswer(*q, LiveInputs(s));
}

TourOutline TourRevealOutline(const AppState& s) {
  TourOutline o;
  const TourPlay& t = s.ui.tour;
  const tour::Question* q = StepQuestion(t);
  if (!q || !TourOnStep(s)) return o;
  if (q->compute == tour::Compute::Carrier) {
    o.view = t.lesson.steps[static_cast<std::size_t>(t.step)].state.view;
    o.phenomenon = q->at;
    o.on = t.given[static_cast<std::size_t>(t.step)].given;
    o.pending = !o.on;
    return o;
  }
  const bool piece = q->compute == tour::Compute::TopNext;
  const bool cell = q->kind == tour::QuestionKind::Cell || q->compute == tour::Compute::AttnArgmax ||
                    q->compute == tour::Compute::RowMax;
  if (!piece && !cell) return o;
  o.view = t.lesson.steps[static_cast<std::size_t>(t.step)].state.view;
  const TourGiven& g = t.given[static_cast<std::size_t>(t.step)];
  if (!g.given) {
    // (a piece: the Next view hides the row the question asks about until it is answered)
    o.pending = true;
    if (piece && s.result.ok) o.piece_row = tour::FindToken(s.result.tokens, q->at);
    // (a cell: the row asked about, which the heatmap points out; its weights stay as
    // the map shows them, and the answer's cell is outlined only once answered)
    if (cell && s.result.ok && !q->at.empty()) {
      o.head = s.choice.head;
      o.row = tour::FindToken(s.result.tokens, q->at);
    }
    return o;
  }
  if (!s.result.ok || s.result.generation == 0) return o;
  if (piece) {
    const int pos = tour::FindToken(s.result.tokens, q->at);
    if (pos < 0 || pos >= static_cast<int>(s.result.next.size()) ||
        s.result.next[static_cast<std::size_t>(pos)].empty())
      return o;
    o.on = true;
    o.piece_row = pos;
    o.piece = s.result.next[static_cast<std::size_t>(pos)].front().piece;
    return o;
  }
  // The cell: the row's largest weight, which row_max's number is too.
  tour::Question where = *q;
  where.kind = tour::QuestionKind::Cell;
  where.compute = tour::Compute::AttnArgmax;
  const tour::Answer a = tour::ComputeAnswer(where, LiveInputs(s));
  if (!a.ok) return o;
  o.on = true;
  o.head = s.choice.head;
  o.row = a.row;
  o.col = a.col;
  const int pick = q->kind == tour::QuestionKind::Cell     ? g.col
                   : q->kind == tour::QuestionKind::Choice ? OptionKey(s, *q, g.option)
                                                           : -1;
  if (pick >= 0 && pick != a.col && (q->kind != tour::QuestionKind::Cell || g.row == a.row)) {
    o.pick_row = a.row;
    o.pick_col = pick;
  }
  return o;
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
                       {"also", a.also},
                       {"shown", a.shown}}}};
  }
  const TourOutline& o = t.outline;
  if (o.on && !o.phenomenon.empty())
    j["reveal"] = {{"view", o.view}, {"phenomenon", o.phenomenon}};
  else if (o.on && o.piece_row >= 0)
    j["reveal"] = {{"view", o.view}, {"row", o.piece_row}, {"piece", o.piece}};
  else if (o.on)
    j["reveal"] = {{"view", o.view}, {"head", o.head},         {"row", o.row},
                   {"col", o.col},   {"pick_row", o.pick_row}, {"pick_col", o.pick_col}};
  else
    j["reveal"] = nullptr;
  j["reveal_pending"] = o.pending;
  return j;
}

}  // namespace mha::gui
