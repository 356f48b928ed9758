// Lesson files: the five built-in lessons load with their steps and questions, hostile
// files are refused with the file, the place and the field named, and the answers the
// questions compute follow the live inputs.
#include <string>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "../temp_dir.hpp"
#include "io/assets.hpp"
#include "io/files.hpp"
#include "tour/tour.hpp"
#include "tour/tour_json.hpp"

using Catch::Matchers::Contains;
using namespace mha;
using namespace mha::tour;

namespace {

const LoadContext kCtx{{"heatmaps", "query", "softmax", "flash", "next", "gqa"}, ""};

std::string Wrap(const std::string& step) {
  return R"({"format": "mhaviz-lesson", "title": {"ko": "t", "en": "t"}, "steps": [)" + step + "]}";
}
std::string Caption() { return R"("caption": {"ko": "k", "en": "e"})"; }

std::string Refusal(const std::string& text) {
  try {
    ParseLesson(text, "bad.json", kCtx);
  } catch (const LessonError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("tour: the built-in lessons load, each with 6 steps and 2 questions or more") {
  const auto ids = BuiltinLessonIds();
  REQUIRE(ids == std::vector<std::string>{"000", "001", "002", "003", "004"});
  for (const auto& id : ids) {
    INFO("lesson " << id);
    const Lesson l = LoadLesson(FindLesson(id));
    CHECK(l.id == id);
    CHECK(l.steps.size() >= 6);
    CHECK(l.Questions() >= 2);
    CHECK(!l.title.ko.empty());
    for (const Step& s : l.steps) {
      CHECK(!s.caption.ko.empty());
      CHECK(!s.caption.en.empty());
      CHECK(s.caption.ko != s.caption.en);
    }
  }
}

// The head the shipped labels file names for `job`: among the heads whose label is the
// job, the one with the highest profile score of that name (0 where the profile has none),
// the first in the file's order on a tie. Read here from the file itself.
HeadRef LabelledHead(const nlohmann::json& labels, const std::string& job) {
  HeadRef best{-1, -1};
  double best_score = -1;
  for (const nlohmann::json& l : labels.at("labels")) {
    if (l.at("label").at("job") != job) continue;
    const HeadRef h{l.at("layer").get<int>(), l.at("head").get<int>()};
    double score = 0;
    for (const nlohmann::json& p : labels.at("profiles"))
      if (p.at("layer") == h.layer && p.at("head") == h.head && p.contains(job)) score = p.at(job).get<double>();
    if (score > best_score) best = h, best_score = score;
  }
  return best;
}

TEST_CASE("tour: a head named by its job is the labelled head") {
  const nlohmann::json labels =
      nlohmann::json::parse(io::ReadFile(io::FindAsset("models", "mhaviz-small.labels.json"), 1 << 22));
  const HeadRef induction_head = LabelledHead(labels, "induction");
  const HeadRef subject_head = LabelledHead(labels, "verb-subject");
  REQUIRE(induction_head.layer >= 0);
  REQUIRE(subject_head.layer >= 0);
  const Lesson l = LoadLesson(FindLesson("004"));
  int induction = 0, knockout = 0;
  for (const Step& s : l.steps) {
    if (s.state.head_job == "induction") {
      ++induction;
      CHECK(s.state.layer == induction_head.layer);
      CHECK(s.state.head == induction_head.head);
    }
    if (!s.state.knockout_jobs.empty()) {
      ++knockout;
      CHECK(s.state.knockout == std::vector<HeadRef>{subject_head});
    }
  }
  CHECK(induction >= 1);
  CHECK(knockout >= 1);
}

TEST_CASE("tour: of two heads with a job, a step gets the one named by it with the higher score") {
  TempDir dir;
  const std::string path = dir / "labels.json";
  auto label = [](int layer, int head, const char* job, const char* also) {
    return "{\"layer\": " + std::to_string(layer) + ", \"head\": " + std::to_string(head) +
           ", \"label\": {\"job\": \"" + job + "\"}, \"also\": [" +
           (also[0] ? std::string("{\"job\": \"") + also + "\"}" : std::string()) + "]}";
  };
  auto profile = [](int layer, int head, double induction) {
    return "{\"layer\": " + std::to_string(layer) + ", \"head\": " + std::to_string(head) +
           ", \"induction\": " + std::to_string(induction) + "}";
  };
  // L1H1 and L1H3 are both named induction, L1H3 the stronger; L1H0 lists induction only
  // under "also", with the highest score of all; verb-subject: L1H2 named, L1H0 "also".
  io::WriteFileAtomic(path, "{\"num_layers\": 2, \"num_heads\": 4, \"labels\": [" + label(1, 0, "spread", "induction") +
                                ", " + label(1, 1, "induction", "") + ", " + label(1, 2, "verb-subject", "") + ", " +
                                label(1, 3, "induction", "") + "], \"profiles\": [" + profile(1, 0, 0.9) + ", " +
                                profile(1, 1, 0.46) + ", " + profile(1, 2, 0.0) + ", " + profile(1, 3, 0.57) + "]}");
  CHECK(HeadsWithJob("induction", path) == std::vector<HeadRef>{{1, 3}, {1, 1}, {1, 0}});
  CHECK(HeadsWithJob("verb-subject", path) == std::vector<HeadRef>{{1, 2}});
  // The same scores the other way round: the step follows them.
  io::WriteFileAtomic(path, "{\"num_layers\": 2, \"num_heads\": 4, \"labels\": [" + label(1, 1, "induction", "") +
                                ", " + label(1, 3, "induction", "") + "], \"profiles\": [" + profile(1, 1, 0.57) +
                                ", " + profile(1, 3, 0.46) + "]}");
  CHECK(HeadsWithJob("induction", path) == std::vector<HeadRef>{{1, 1}, {1, 3}});
  const LoadContext ctx{kCtx.views, path};
  const Lesson l = ParseLesson(Wrap(R"({"view": "heatmaps", "model": "mhaviz-small", "sentence": "a", )"
                                    R"("head": {"job": "induction"}, )" +
                                    Caption() + "}"),
                               "two.json", ctx);
  CHECK(l.steps.at(0).state.layer == 1);
  CHECK(l.steps.at(0).state.head == 1);
}

TEST_CASE("tour: hostile lesson files name the file, the place and the field") {
  const std::string ok = R"({"view": "heatmaps", )" + Caption() + "}";
  CHECK_THAT(Refusal(Wrap(ok)), Contains("accepted"));
  CHECK_THAT(Refusal(Wrap(R"({)" + Caption() + "}")), Contains("bad.json, at /steps/0/view: missing"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "nope", )" + Caption() + "}")),
             Contains("/steps/0/view: there is no view 'nope'"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "head": 8, )" + Caption() + "}")),
             Contains("/steps/0/head: head 8 does not exist"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "model": "mhaviz-small", "sentence": "a", "head": "L2H0", )" +
                          Caption() + "}")),
             Contains("layer 2 does not exist"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "model": "mhaviz-small", "sentence": "a", "head": {"job": "x"}, )" +
                          Caption() + "}")),
             Contains("no head of mhaviz-small carries the job 'x'"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "colour": 1, )" + Caption() + "}")),
             Contains("/steps/0/colour: unknown field"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "config": {"d_model": 100}, )" + Caption() + "}")),
             Contains("/steps/0/config: d_model = 100 is not divisible"));
  const std::string huge(5000, 'a');
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "caption": {"ko": ")" + huge + R"(", "en": "e"}})")),
             Contains("/steps/0/caption/ko: 5000 bytes"));
  CHECK_THAT(Refusal(std::string(11u << 20, ' ')), Contains("more than a lesson file may hold"));
  CHECK_THAT(Refusal(std::string(100000, '[')), Contains("nested 17 levels deep"));
  CHECK_THAT(Refusal("{\n \"format\": \"mhaviz-lesson\",\n \"title\": \"\xC3\x28\"}"), Contains("bad.json, line 3"));
  CHECK_THAT(Refusal("{\n \"format\": \"mhaviz-lesson\",\n \"title\": \"\xC3\x28\"}"), Contains("UTF-8"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "question": {"kind": "number", "prompt": {"ko": "k", "en": "e"},
             "compute": "head_dim", "answer": 64}, )" +
                          Caption() + "}")),
             Contains("/steps/0/question/answer: this answer is computed"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "batch": 0, )" + Caption() + "}")), Contains("/steps/0/batch"));
  CHECK_THAT(Refusal(Wrap(R"({"view": "heatmaps", "knockout": ["L0H1"], )" + Caption() + "}")),
             Contains("/steps/0/knockout: heads are knocked out of a trained model"));
}

TEST_CASE("tour: computed answers follow the inputs") {
  Trace t;
  t.cfg.d_model = 8;
  t.cfg.num_heads = 2;
  t.seq = t.seq_kv = 3;
  t.attn = Mat::Zero(6, 3);
  t.attn.row(3) << 0.1f, 0.2f, 0.7f;  // head 1, query 0
  t.attn.row(5) << 0.6f, 0.3f, 0.1f;  // head 1, query 2
  const std::vector<std::string> tokens = {
      "\xE2\x96\x81"
      "a",
      "b", "c"};
  Question q;
  q.kind = QuestionKind::Cell;
  q.compute = Compute::AttnArgmax;
  q.at = "c";
  AnswerInputs in{&t, &tokens, nullptr, 1};
  Answer a = ComputeAnswer(q, in);
  REQUIRE(a.ok);
  CHECK((a.row == 2 && a.col == 0));
  CHECK(IsRight(q, a, -1, 0, 2, 0));
  CHECK(!IsRight(q, a, -1, 0, 2, 1));
  q.at = "0";
  a = ComputeAnswer(q, in);
  CHECK((a.row == 0 && a.col == 2));
  q.at = "z";
  CHECK(!ComputeAnswer(q, in).ok);

  q.kind = QuestionKind::Number;
  q.compute = Compute::HeadDim;
  CHECK(ComputeAnswer(q, in).number == 4);
  q.compute = Compute::KvBytes;  // K and V: 2 heads x 3 keys x 4 dims x 4 bytes each
  CHECK(ComputeAnswer(q, in).number == 2 * 2 * 3 * 4 * 4);

  const std::vector<std::vector<lm::NextPiece>> next = {{},
                                                        {{7,
                                                          "\xE2\x96\x81"
                                                          "x",
                                                          0.9}},
                                                        {}};
  q.kind = QuestionKind::Choice;
  q.compute = Compute::TopNext;
  q.at = "b";
  q.options = {{"y", "y"}, {"x", "x"}};
  in.next = &next;
  a = ComputeAnswer(q, in);
  CHECK(a.option == 1);
  CHECK(IsRight(q, a, 1, 0, -1, -1));
  CHECK(!IsRight(q, a, 0, 0, -1, -1));
}
