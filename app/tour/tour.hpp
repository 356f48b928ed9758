// Lesson tours: a lesson file (JSON, docs/lessons.md) is a title and a list of steps;
// a step is the state to show (a view, a sentence, a model or preset, the sliders, a
// layer, a head, knocked-out heads), a caption in Korean and English, and optionally a
// question the class answers before the app reveals it. The GUI plays a step by
// setting its Choice; the command line lists and exports them; the tests load them.
//
// A question about the model names what to compute (`compute`), never its answer, so
// it stays true when mhaviz-small is retrained; a head is named by its measured job
// ({"job": "induction"}, resolved through the model's labels file) for the same reason.
// Only questions about the lesson itself (a shape, a formula) carry a fixed answer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/ablation.hpp"
#include "mha/trace.hpp"

namespace mha::tour {

// Bounds of what a lesson file may hold, checked before and while it is read.
inline constexpr std::size_t kMaxLessonBytes = std::size_t(1) << 20;  // the whole file
inline constexpr std::size_t kMaxTextBytes = 4096;                    // one caption, option or reveal
inline constexpr int kMaxDepth = 16;                                  // nesting of arrays and objects
inline constexpr int kMaxSteps = 200;
inline constexpr int kMaxOptions = 8;
inline constexpr std::size_t kMaxPatchBytes = 512;  // one of the Patch view's sentences or its target

// A lesson file that cannot be played: the message names the file, where in it (a line
// and column for bad JSON, a JSON pointer such as /steps/3/head for a bad field) and why.
class LessonError : public Error {
 public:
  using Error::Error;
};

struct Text {
  std::string ko, en;
  const std::string& In(const std::string& lang) const { return lang == "ko" ? ko : en; }
};

// The model a step runs: the seeded layer of the typed sentence, a worked-example preset
// (the Lesson view's "lesson" or "hand", the four positional "heads"), or mhaviz-small.
enum class Source { Seeded, Preset, SmallModel };

struct StepState {
  std::string view;  // a registry name (--view)
  Source source = Source::Seeded;
  std::string preset;  // Source::Preset: lesson | hand | heads
  std::string sentence;
  std::string memory;  // cross-attention's second sentence ("" = self-attention)
  Config cfg;          // the sliders (Seeded); a preset or the model sets its own
  int layer = 0;
  int head = 0;                   // resolved (a job names it in the file)
  std::string head_job;           // the job it was named by ("" = by index)
  int query = 0;                  // the query token the teaching views show
  std::vector<HeadRef> knockout;  // resolved, sorted
  std::vector<std::string> knockout_jobs;
  int flash_br = 0, flash_bc = 0, flash_tile = -1;  // -1: leave the Flash view as it is
  int generate_pieces = -1;                         // -1: leave the Generate view as it is
  int flow_batch = 1;                               // the shape flow's batch: B sentences at once
  // The Patch view's sentences and target piece ("": the clean run's likeliest), which it
  // patches on its worker when the step is played; unset: the view is left as it is.
  bool patch_set = false;
  std::string patch_clean, patch_corrupt, patch_target;
};

enum class QuestionKind { Choice, Number, Cell };

// What an answer is computed from on the live model (Compute::Fixed: typed in the file,
// for a question about the lesson, not about the model).
enum class Compute {
  Fixed,
  TopNext,     // the model's likeliest next piece after the piece `at` (Choice: the option naming it)
  AttnArgmax,  // the key the step's head weighs most from query `at` (Cell; Choice: the option naming it)
  RowMax,      // the largest weight in the step's head's row `at` (Number)
  HeadDim,     // d_model / num_heads of the running configuration (Number)
  KvBytes,     // the KV cache's bytes for the running sentence, one layer, float32 (Number)
  Carrier,     // the head whose knock-out alone takes phenomenon `at` to chance, from the labels
               // file's proof table (Choice: the option naming it; none: the option marked "none")
};

struct Question {
  QuestionKind kind = QuestionKind::Choice;
  Text prompt;
  std::vector<Text> options;  // Choice
  Compute compute = Compute::Fixed;
  int answer = -1;       // Fixed Choice: the right option
  double number = 0;     // Fixed Number
  double tolerance = 0;  // Number: how far an answer may be off and still count
  std::string at;        // TopNext: a piece's text; AttnArgmax, RowMax: a token index or text;
                         // Carrier: a phenomenon of the proof table ("agreement across an attractor")
  Text reveal;           // said once the answer shows
  int none_option = -1;  // Carrier: the option marked {"none": true}, "no single head" (-1: none marked)
  // Carrier: the phenomenon's carriers, read from mhaviz-small's labels file when the
  // lesson loads (as a head named by its job is), so a retrained model changes the answer.
  std::vector<HeadRef> carriers;
};

struct Step {
  StepState state;
  Text caption;
  std::optional<Question> question;
};

struct Lesson {
  std::string id;    // the built-in's number ("004") or the file's stem
  std::string path;  // where it was read from
  Text title;
  std::vector<Step> steps;
  int Questions() const;
};

// What loading checks against: the views that exist (empty: not checked, the command line
// has no registry) and where mhaviz-small's head labels are ("": found in the assets).
struct LoadContext {
  std::vector<std::string> views;
  std::string labels_path;
};

// Reads and checks a lesson file (at most kMaxLessonBytes); throws LessonError.
Lesson LoadLesson(const std::string& path, const LoadContext& ctx = {});
// The same from text already read; `name` is what the errors call it.
Lesson ParseLesson(const std::string& text, const std::string& name, const LoadContext& ctx = {});

// The built-in lessons (assets/lessons/NNN_*.json), by id, sorted; and the file an id
// (or a path) names, or throws LessonError listing the ids there are.
std::vector<std::string> BuiltinLessonIds();
std::string FindLesson(const std::string& id_or_path);

// What an answer is computed from: the running model's result, as the window has it.
struct AnswerInputs {
  const Trace* trace = nullptr;                                   // the layer shown
  const std::vector<std::string>* tokens = nullptr;               // its tokens (a language model's pieces)
  const std::vector<std::vector<lm::NextPiece>>* next = nullptr;  // likeliest next pieces per position
  int head = 0;
};

struct Answer {
  bool ok = false;
  std::string error;       // why it could not be computed (the sentence lacks the piece, ...)
  int option = -1;         // Choice: the right option (-1: none of them; `shown` says what is)
  std::vector<int> also;   // Carrier: other options as right (several heads each take it to chance)
  double number = 0;       // Number; TopNext: the top piece's probability; AttnArgmax: its weight
  int row = -1, col = -1;  // Cell: the cell to outline
  std::string shown;       // the answer as the reveal writes it ("를 0.895", "(3, 64)")
};

// The answer to the step's question on the live inputs (a Fixed one as typed).
Answer ComputeAnswer(const Question& q, const AnswerInputs& in);
// The position `at` names among `tokens` (a number, or a token's text, its last
// occurrence; SentencePiece's word mark ignored); -1 if none.
int FindToken(const std::vector<std::string>& tokens, const std::string& at);
// Whether `given` (an option, a number, a cell "row,col") is the computed answer.
bool IsRight(const Question& q, const Answer& a, int option, double number, int row, int col);

}  // namespace mha::tour
