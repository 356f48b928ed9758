// A question's answer, computed from what the running model shows (the trace of the
// layer on screen, the language model's next pieces), so it follows the model: a
// retrained mhaviz-small changes the answer, never the lesson file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tour/tour.hpp"

namespace mha::tour {
namespace {

// A piece or token as a learner types it: SentencePiece's word mark (U+2581) dropped,
// and the app's way of showing it ("_" and a thin space, U+2009).
std::string Plain(const std::string& s) {
  static const std::string kMark = "\xE2\x96\x81", kShown = "_\xE2\x80\x89";
  std::string out = s.rfind(kShown, 0) == 0 ? s.substr(kShown.size()) : s;
  for (std::size_t p; (p = out.find(kMark)) != std::string::npos;) out.erase(p, kMark.size());
  return out;
}

std::string Fixed3(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

// The option whose text (in either language) is `piece`; -1 if none.
int OptionNamed(const Question& q, const std::string& piece) {
  for (std::size_t i = 0; i < q.options.size(); ++i)
    if (Plain(q.options[i].en) == piece || Plain(q.options[i].ko) == piece) return static_cast<int>(i);
  return -1;
}

Answer Failed(const std::string& why) {
  Answer a;
  a.error = why;
  return a;
}

Answer TopNext(const Question& q, const AnswerInputs& in) {
  if (!in.next || !in.tokens || in.next->empty()) return Failed("the next pieces need a language model (mhaviz-small)");
  const int pos = FindToken(*in.tokens, q.at);
  if (pos < 0 || pos >= static_cast<int>(in.next->size()) || (*in.next)[pos].empty())
    return Failed("the sentence has no piece '" + q.at + "'");
  const lm::NextPiece& top = (*in.next)[pos].front();
  Answer a;
  a.ok = true;
  a.number = top.probability;
  a.option = OptionNamed(q, Plain(top.piece));
  a.shown = Plain(top.piece) + " " + Fixed3(top.probability);
  return a;
}

// The step's head's row `q.at` of the layer shown: its weights over the keys.
const float* HeadRow(const Question& q, const AnswerInputs& in, int* row, int* cols, std::string* error) {
  if (!in.trace || !in.tokens || in.trace->attn.rows() == 0) {
    *error = "the attention weights are not computed";
    return nullptr;
  }
  const Trace& t = *in.trace;
  *row = FindToken(*in.tokens, q.at);
  if (*row < 0 || *row >= t.seq || in.head < 0 || in.head >= t.cfg.num_heads) {
    *error = "the sentence has no token '" + q.at + "'";
    return nullptr;
  }
  *cols = t.seq_kv;
  return t.attn.data() + (static_cast<std::ptrdiff_t>(in.head) * t.seq + *row) * t.seq_kv;
}

Answer AttnArgmax(const Question& q, const AnswerInputs& in) {
  Answer a;
  int row = 0, cols = 0;
  const float* w = HeadRow(q, in, &row, &cols, &a.error);
  if (!w) return a;
  int best = 0;
  for (int c = 1; c < cols; ++c)
    if (w[c] > w[best]) best = c;
  a.ok = true;
  a.row = row;
  a.col = best;
  a.number = w[best];
  const std::string key = best < static_cast<int>(in.tokens->size()) ? Plain((*in.tokens)[best]) : std::to_string(best);
  a.option = OptionNamed(q, key);
  a.shown = key + " " + Fixed3(w[best]);
  return a;
}

Answer RowMax(const Question& q, const AnswerInputs& in) {
  Answer a;
  int row = 0, cols = 0;
  const float* w = HeadRow(q, in, &row, &cols, &a.error);
  if (!w) return a;
  double m = 0;
  for (int c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(w[c]));
  a.ok = true;
  a.row = row;
  a.number = m;
  a.shown = Fixed3(m);
  return a;
}

Answer FromConfig(const Question& q, const AnswerInputs& in) {
  if (!in.trace || in.trace->cfg.num_heads <= 0) return Failed("the layer is not computed");
  const Config& c = in.trace->cfg;
  const int head_dim = c.d_model / c.num_heads;
  Answer a;
  a.ok = true;
  if (q.compute == Compute::HeadDim) {
    a.number = head_dim;
  } else {  // K and V: num_kv_heads x seq_kv x head_dim floats each
    const int kv = c.num_kv_heads > 0 ? c.num_kv_heads : c.num_heads;
    a.number = 2.0 * kv * in.trace->seq_kv * head_dim * 4.0;
  }
  a.shown = std::to_string(static_cast<long long>(a.number));
  return a;
}

// The proof table's carriers of the phenomenon, read when the lesson loaded: the option
// naming one (each carrier is right, when several each take it to chance alone), or the
// option marked none when no head alone does. A carrier no option names is option -1,
// and `shown` names it, as top_next does for a piece no option names.
Answer Carrier(const Question& q) {
  Answer a;
  a.ok = true;
  if (q.carriers.empty()) {
    a.option = q.none_option;
    return a;  // `shown` empty: no single head (the window says it in its language)
  }
  for (const HeadRef& h : q.carriers) {
    a.shown += (a.shown.empty() ? "" : ", ") + HeadName(h);
    const int o = OptionNamed(q, HeadName(h));
    if (o < 0 || o == q.none_option) continue;
    if (a.option < 0)
      a.option = o;
    else
      a.also.push_back(o);
  }
  return a;
}

}  // namespace

int FindToken(const std::vector<std::string>& tokens, const std::string& at) {
  if (!at.empty() && std::all_of(at.begin(), at.end(), ::isdigit)) {
    const long i = std::strtol(at.c_str(), nullptr, 10);
    return i < static_cast<long>(tokens.size()) ? static_cast<int>(i) : -1;
  }
  for (int i = static_cast<int>(tokens.size()) - 1; i >= 0; --i)
    if (Plain(tokens[static_cast<std::size_t>(i)]) == at) return i;
  return -1;
}

Answer ComputeAnswer(const Question& q, const AnswerInputs& in) {
  switch (q.compute) {
    case Compute::TopNext: return TopNext(q, in);
    case Compute::AttnArgmax: return AttnArgmax(q, in);
    case Compute::RowMax: return RowMax(q, in);
    case Compute::HeadDim:
    case Compute::KvBytes: return FromConfig(q, in);
    case Compute::Carrier: return Carrier(q);
    case Compute::Fixed: break;
  }
  Answer a;
  a.ok = true;
  a.option = q.answer;
  a.number = q.number;
  if (q.kind == QuestionKind::Choice && q.answer >= 0) a.shown = q.options[static_cast<std::size_t>(q.answer)].en;
  if (q.kind == QuestionKind::Number) a.shown = std::to_string(static_cast<long long>(std::llround(q.number)));
  return a;
}

bool IsRight(const Question& q, const Answer& a, int option, double number, int row, int col) {
  if (!a.ok) return false;
  switch (q.kind) {
    case QuestionKind::Choice:
      return a.option >= 0 && (option == a.option || std::find(a.also.begin(), a.also.end(), option) != a.also.end());
    case QuestionKind::Number: return std::fabs(number - a.number) <= q.tolerance;
    case QuestionKind::Cell: return row == a.row && col == a.col;
  }
  return false;
}

}  // namespace mha::tour
