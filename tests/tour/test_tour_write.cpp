// Writing lesson files: what the writer writes loads back to the same steps, field by
// field (the five built-in lessons, and a lesson built here with every kind of field),
// and a save to a path that cannot take it is refused before anything is written.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "../temp_dir.hpp"
#include "io/files.hpp"
#include "tour/tour_write.hpp"

using Catch::Matchers::Contains;
using namespace mha;
using namespace mha::tour;

namespace {

void CheckSameText(const Text& a, const Text& b, const std::string& what) {
  INFO(what);
  CHECK(a.ko == b.ko);
  CHECK(a.en == b.en);
}

void CheckSameState(const StepState& a, const StepState& b) {
  CHECK(a.view == b.view);
  CHECK(a.source == b.source);
  CHECK(a.preset == b.preset);
  CHECK(a.sentence == b.sentence);
  CHECK(a.memory == b.memory);
  CHECK(a.cfg.d_model == b.cfg.d_model);
  CHECK(a.cfg.num_heads == b.cfg.num_heads);
  CHECK(a.cfg.num_kv_heads == b.cfg.num_kv_heads);
  CHECK(a.cfg.seed == b.cfg.seed);
  CHECK(a.cfg.mask == b.cfg.mask);
  CHECK(a.cfg.norm == b.cfg.norm);
  CHECK(a.cfg.scale == b.cfg.scale);
  CHECK(a.cfg.block == b.cfg.block);
  CHECK(a.layer == b.layer);
  CHECK(a.head == b.head);
  CHECK(a.head_job == b.head_job);
  CHECK(a.query == b.query);
  CHECK(a.knockout == b.knockout);
  CHECK(a.knockout_jobs == b.knockout_jobs);
  CHECK(a.flash_br == b.flash_br);
  CHECK(a.flash_bc == b.flash_bc);
  CHECK(a.flash_tile == b.flash_tile);
  CHECK(a.generate_pieces == b.generate_pieces);
  CHECK(a.flow_batch == b.flow_batch);
  CHECK(a.patch_set == b.patch_set);
  CHECK(a.patch_clean == b.patch_clean);
  CHECK(a.patch_corrupt == b.patch_corrupt);
  CHECK(a.patch_target == b.patch_target);
}

void CheckSameQuestion(const Question& a, const Question& b) {
  CHECK(a.kind == b.kind);
  CheckSameText(a.prompt, b.prompt, "prompt");
  REQUIRE(a.options.size() == b.options.size());
  for (std::size_t i = 0; i < a.options.size(); ++i) CheckSameText(a.options[i], b.options[i], "option");
  CHECK(a.compute == b.compute);
  CHECK(a.answer == b.answer);
  CHECK(a.number == b.number);
  CHECK(a.tolerance == b.tolerance);
  CHECK(a.at == b.at);
  CHECK(a.none_option == b.none_option);
  CHECK(a.carriers == b.carriers);
  CheckSameText(a.reveal, b.reveal, "reveal");
}

void CheckSameLesson(const Lesson& a, const Lesson& b) {
  CheckSameText(a.title, b.title, "title");
  REQUIRE(a.steps.size() == b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    INFO("step " << i + 1);
    CheckSameState(a.steps[i].state, b.steps[i].state);
    CheckSameText(a.steps[i].caption, b.steps[i].caption, "caption");
    REQUIRE(a.steps[i].question.has_value() == b.steps[i].question.has_value());
    if (a.steps[i].question) CheckSameQuestion(*a.steps[i].question, *b.steps[i].question);
  }
}

Lesson RoundTrip(const Lesson& l) { return ParseLesson(LessonJson(l), "written.json"); }

Step MakeStep(const std::string& view, const std::string& caption) {
  Step s;
  s.state.view = view;
  s.caption = {caption + " (ko) 헤드", caption};
  return s;
}

// A lesson with every kind of field the format holds, each away from its default.
Lesson EveryField() {
  Lesson l;
  l.title = {"모든 필드", "every field"};
  Step seeded = MakeStep("softmax", "seeded");
  seeded.state.sentence = "고양이가 쥐를 잡았다";
  seeded.state.memory = "the cat";
  seeded.state.cfg.d_model = 12;
  seeded.state.cfg.num_heads = 3;
  seeded.state.cfg.num_kv_heads = 1;
  seeded.state.cfg.seed = 7;
  seeded.state.cfg.mask = Mask::Causal;
  seeded.state.cfg.norm = Norm::Pre;
  seeded.state.cfg.scale = false;
  seeded.state.cfg.block = Block::Encoder;
  seeded.state.head = 2;
  seeded.state.query = 1;
  seeded.state.flash_br = 2;
  seeded.state.flash_bc = 3;
  seeded.state.flash_tile = 5;
  seeded.state.flow_batch = 32;
  Question number;
  number.kind = QuestionKind::Number;
  number.prompt = {"d_k는?", "d_k?"};
  number.number = 2.5;
  number.tolerance = 0.25;
  number.reveal = {"12 / 3 = 4", "12 / 3 = 4"};
  seeded.question = number;
  l.steps.push_back(seeded);

  Step none = MakeStep("heatmaps", "norm none");
  none.state.cfg.d_model = 8;
  none.state.cfg.num_heads = 2;
  none.state.cfg.norm = Norm::None;
  Question fixed_choice;
  fixed_choice.prompt = {"모양은?", "shape?"};
  fixed_choice.options = {{"(1, 4)", "(1, 4)"}, {"(4, 1)", "(4, 1)"}, {"\"따옴표\"\n", "\"quotes\"\n"}};
  fixed_choice.answer = 2;
  none.question = fixed_choice;
  l.steps.push_back(none);

  Step preset = MakeStep("lesson", "preset");
  preset.state.source = Source::Preset;
  preset.state.preset = "hand";
  l.steps.push_back(preset);

  Step job = MakeStep("head-view", "by job");
  job.state.source = Source::SmallModel;
  job.state.sentence = "고양이가 쥐를 잡았다. 고양이가 쥐를";
  job.state.head_job = "induction";
  job.state.layer = 1;  // the labels file's L1H3
  job.state.head = 3;
  job.state.knockout = {{0, 2}, {1, 0}};
  job.state.knockout_jobs = {"verb-subject"};
  Question cell;
  cell.kind = QuestionKind::Cell;
  cell.prompt = {"어디를?", "where?"};
  cell.compute = Compute::AttnArgmax;
  cell.at = "쥐를";
  job.question = cell;
  l.steps.push_back(job);

  Step next = MakeStep("generate", "top next, by index");
  next.state.source = Source::SmallModel;
  next.state.sentence = "고양이가 쥐를";
  next.state.layer = 1;
  next.state.head = 1;
  next.state.generate_pieces = 4;
  Question top;
  top.prompt = {"다음은?", "next?"};
  top.options = {{"를", "를"}, {"가", "가"}};
  top.compute = Compute::TopNext;
  top.at = "쥐";
  next.question = top;
  l.steps.push_back(next);

  for (Compute c : {Compute::RowMax, Compute::HeadDim, Compute::KvBytes}) {
    Step s = MakeStep("query", "computed number");
    s.state.sentence = "a b c";
    Question q;
    q.kind = QuestionKind::Number;
    q.prompt = {"값은?", "value?"};
    q.compute = c;
    q.tolerance = 0.01;
    if (c == Compute::RowMax) q.at = "2";
    s.question = q;
    l.steps.push_back(s);
  }
  Step argmax_choice = MakeStep("query", "argmax as a choice");
  argmax_choice.state.sentence = "a b c";
  Question ac;
  ac.prompt = {"어느 토큰?", "which token?"};
  ac.options = {{"a", "a"}, {"b", "b"}};
  ac.compute = Compute::AttnArgmax;
  ac.at = "c";
  argmax_choice.question = ac;
  l.steps.push_back(argmax_choice);

  Step patch = MakeStep("patch", "patch");
  patch.state.source = Source::SmallModel;
  patch.state.sentence = "The men near the old house";
  patch.state.patch_set = true;
  patch.state.patch_clean = "The men near the old house";
  patch.state.patch_corrupt = "The man near the old house";
  patch.state.patch_target = "are";
  Question carrier;
  carrier.prompt = {"어느 헤드?", "which head?"};
  carrier.options = {{"L0H0", "L0H0"}, {"L1H2", "L1H2"}, {"한 헤드가 맡지 않음", "no single head"}};
  carrier.none_option = 2;
  carrier.compute = Compute::Carrier;
  carrier.at = "agreement across an attractor";
  carrier.carriers = {{0, 0}};  // the shipped labels file's, which loading reads back
  patch.question = carrier;
  l.steps.push_back(patch);
  return l;
}

std::string Refusal(const Lesson& l, const std::string& path) {
  try {
    SaveLesson(l, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(saved)";
}

}  // namespace

TEST_CASE("tour write: every built-in lesson written and loaded back has the same steps") {
  for (const std::string& id : BuiltinLessonIds()) {
    INFO("lesson " << id);
    const Lesson l = LoadLesson(FindLesson(id));
    const std::string text = LessonJson(l);
    CheckSameLesson(l, ParseLesson(text, id));
    CHECK(LessonJson(ParseLesson(text, id)) == text);  // a fixed point: a second round changes nothing
    CHECK_THAT(text, Contains("\n   \"view\""));       // one space per level, as shipped
    CHECK_THAT(text, !Contains("\\u"));                // Korean stays as it is typed
  }
}

TEST_CASE("tour write: a lesson with every kind of field round-trips") {
  const Lesson l = EveryField();
  const Lesson back = RoundTrip(l);
  CheckSameLesson(l, back);
  const std::string text = LessonJson(l);
  // Only what a step sets: the seeded defaults and an unset head or layer are left out.
  const Lesson plain = [] {
    Lesson p;
    p.title = {"t", "t"};
    p.steps.push_back(MakeStep("heatmaps", "plain"));
    return p;
  }();
  const std::string plain_text = LessonJson(plain);
  for (const char* absent : {"config", "layer", "\"head\"", "query", "knockout", "flash", "generate", "question"})
    CHECK_THAT(plain_text, !Contains(absent));
  // The documented order: view, the source, the sentence, the sliders, the place, the caption, the question.
  const std::size_t view = text.find("\"view\""), sentence = text.find("\"sentence\""),
                    config = text.find("\"config\""), caption = text.find("\"caption\""),
                    question = text.find("\"question\"");
  CHECK((view < sentence && sentence < config && config < caption && caption < question));
  CHECK_THAT(text, Contains("\"answer\": 2.5"));
  CHECK_THAT(text, Contains("\"none\": true"));
  CHECK_THAT(text, Contains("\"patch\": {\n    \"clean\": \"The men near the old house\""));
  CHECK_THAT(text, Contains("{\n     \"job\": \"verb-subject\"\n    },\n    \"L0H2\""));
}

TEST_CASE("tour write: a lesson that would not load back is not written") {
  TempDir d;
  Lesson l = EveryField();
  l.steps[0].question->options = {{"only one", "only one"}};
  l.steps[0].question->kind = QuestionKind::Choice;
  l.steps[0].question->answer = 0;
  CHECK_THAT(Refusal(l, d / "l.json"), Contains("/steps/0/question/options: a choice question lists 2 to 8"));
  Lesson cut = EveryField();
  cut.steps[1].caption.ko = "\xED\x97";  // 헤 cut in the middle
  CHECK_THAT(Refusal(cut, d / "l.json"), Contains("not valid UTF-8"));
  CHECK(d.Count() == 0);
}

TEST_CASE("tour write: saving is atomic and refuses paths that cannot take the file") {
  TempDir d;
  const Lesson l = EveryField();
  SaveLesson(l, d / "lesson.json");
  CHECK(d.List() == std::vector<std::string>{"lesson.json"});  // no temporary file left beside it
  CheckSameLesson(l, LoadLesson(d / "lesson.json"));
  SaveLesson(l, d / "lesson.json");  // replaced in place
  CHECK(d.List() == std::vector<std::string>{"lesson.json"});

  CHECK_THAT(Refusal(l, d / "missing/lesson.json"), Contains("does not exist"));
  std::filesystem::create_directory(d / "adir");
  CHECK_THAT(Refusal(l, d / "adir"), Contains("directory"));
  CHECK(std::filesystem::is_empty(d / "adir"));
  // Read-only: a directory without write permission (root writes there anyway), and a
  // file system that takes no new files at all.
  std::filesystem::create_directory(d / "ro");
  std::filesystem::permissions(d / "ro", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  if (::geteuid() != 0) {
    CHECK_THAT(Refusal(l, d / "ro/lesson.json"), Contains("does not accept new files"));
    CHECK(std::filesystem::is_empty(d / "ro"));
  }
  std::filesystem::permissions(d / "ro", std::filesystem::perms::owner_all);
  CHECK_THAT(Refusal(l, "/proc/lesson.json"), Contains("Cannot write '/proc/lesson.json'"));
  CHECK(!std::filesystem::exists("/proc/lesson.json"));
  CHECK(d.List() == std::vector<std::string>{"adir", "lesson.json", "ro"});
}
