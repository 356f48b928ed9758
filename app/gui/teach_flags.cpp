// The teaching views' command-line flags (their names and the JSON of what each
// view shows come from the registry, gui/views/registry.cpp).
#include "gui/teach_views.hpp"

namespace mha::gui {

std::string TeachFlagsHelp() {
  return "\n"
         "Teaching views:\n" +
         ViewFlagHelp() +
         "  --view-head H       the head the query, scaling and inspector views show (default 0)\n"
         "  --view-query I      the query token of the step-by-step view (default 0)\n"
         "  --inspect TENSOR    the tensor inspector shows TENSOR (an .npz key: x, W_q, q, scores, concat, ...)\n"
         "  --preset lesson     start on the lesson's worked example (X = [[1,2,3,4],[5,6,7,8],[9,10,11,12]],\n"
         "                      d_model 4, 2 heads, identity weights); replaces the sentence and configuration\n"
         "  --preset heads      four hand-built positional heads (previous, self, first, next word) on the\n"
         "                      sentence's tokens: x = positional encoding only, d_model 64, 4 heads\n";
}

bool TeachFlagTakesValue(const std::string& f) {
  return f == "--view" || f == "--view-head" || f == "--view-query" || f == "--inspect" || f == "--preset";
}

bool ParseTeachFlag(cli::Args& a, const std::string& f, TeachFlags& out) {
  if (f == "--view") {
    const std::string v = a.Value(f);
    out.view = ViewIndexByName(v);
    if (out.view < 0) throw cli::UsageError("--view must be one of " + ViewNamesJoined() + "; got '" + v + "'.");
    return true;
  }
  if (f == "--view-head") {
    out.head = a.Int(f, 0, Limits::kMaxHeads - 1);
    return true;
  }
  if (f == "--view-query") {
    out.query = a.Int(f, 0, Limits::kMaxTokens - 1);
    return true;
  }
  if (f == "--inspect") {
    out.inspect = a.Value(f);
    return true;
  }
  if (f == "--preset") {
    const std::string v = a.Value(f);
    if (v != "lesson" && v != "heads")
      throw cli::UsageError("--preset must be 'lesson' (the lesson's worked example) or 'heads' (four hand-built "
                            "positional heads on the sentence); got '" + v + "'.");
    (v == "lesson" ? out.lesson : out.heads) = true;
    return true;
  }
  return false;
}

void ApplyTeachFlags(const TeachFlags& f, AppState& s) {
  if (f.lesson) LoadLessonExample(s);
  if (f.heads) LoadPositionalHeadsExample(s);
  if (f.view >= 0) {
    s.teach.view = static_cast<View>(f.view);
    s.teach.select_view = true;
  }
  if (f.head >= 0) s.teach.head = f.head;
  if (f.query >= 0) s.teach.query = f.query;
  if (!f.inspect.empty()) {
    s.teach.inspect.tensor = f.inspect;
    s.teach.inspect.step.clear();
    const bool per_head = f.inspect == "q" || f.inspect == "k" || f.inspect == "v" || f.inspect == "scores" ||
                          f.inspect == "attn" || f.inspect == "context";
    s.teach.inspect.mode = per_head ? InspectSelection::Mode::Head : InspectSelection::Mode::Whole;
    if (f.view < 0) {
      s.teach.view = View::Inspector;
      s.teach.select_view = true;
    }
  }
}

}  // namespace mha::gui
