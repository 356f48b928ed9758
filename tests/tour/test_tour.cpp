// Lesson files: the five built-in lessons load with their steps and questions, hostile
// files are refused with the file, the place and the field named, and the answers the
// questions compute follow the live inputs.
#include <cstring>
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

const LoadContext kCtx{{"heatmaps", "query", "softmax", "flash", "next", "gqa", "proof", "patch"}, ""};

std::string Wrap(const std::string& step) {
  return R"({"format": "mhaviz-lesson", "title": {"ko": "t", "en": "t"}, "steps": [)" + step + "]}";
}
std::string Caption() { return R"("caption": {"ko": "k", "en": "e"})"; }

std::string Refusal(const std::string& text, const std::string& labels = "") {
  try {
    ParseLesson(text, "bad.json", {kCtx.views, labels});
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

namespace {

// A labels file of a 2-layer, 4-head model whose proof table has the rows given
// ({phenomenon, carriers}); no head has a job.
std::string LabelsWithTable(const TempDir& dir,
                            const std::vector<std::pair<std::string, std::vector<std::string>>>& rows) {
  nlohmann::json table = {{"rows", nlohmann::json::array()}};
  for (const auto& [phenomenon, carriers] : rows)
    table["rows"].push_back({{"phenomenon", phenomenon}, {"carriers", carriers}});
  const std::string path = dir / "labels.json";
  io::WriteFileAtomic(
      path, nlohmann::json{{"num_layers", 2}, {"num_heads", 4}, {"labels", nlohmann::json::array()}, {"table", table}}
                .dump());
  return path;
}

// A step on mhaviz-small asking for the carrier of `at`, with `options` (JSON).
std::string CarrierStep(const std::string& at, const std::string& options) {
  return R"({"view": "proof", "model": "mhaviz-small", "sentence": "a", )" + Caption() +
         R"(, "question": {"kind": "choice", "prompt": {"ko": "p", "en": "p"}, "compute": "carrier", "at": ")" + at +
         R"(", "options": )" + options + "}}";
}

const char* const kHeadOptions =
    R"([{"ko": "L0H0", "en": "L0H0"}, {"ko": "L1H2", "en": "L1H2"}, {"ko": "L1H3", "en": "L1H3"}, )"
    R"({"ko": "없음", "en": "no single head", "none": true}])";

Answer CarrierAnswer(const std::string& at, const std::string& labels, const char* options = kHeadOptions) {
  const Lesson l = ParseLesson(Wrap(CarrierStep(at, options)), "carrier.json", {{}, labels});
  return ComputeAnswer(*l.steps.at(0).question, {});
}

}  // namespace

TEST_CASE("tour: a carrier question's answer is the labels file's proof table, not the lesson's") {
  // The shipped labels file: each carrier question of lesson 004 gets the carriers of its
  // phenomenon's row, and its answer is the option naming the (single) carrier or, with
  // none, the option marked none.
  const nlohmann::json labels =
      nlohmann::json::parse(io::ReadFile(io::FindAsset("models", "mhaviz-small.labels.json"), 1 << 22));
  const Lesson l = LoadLesson(FindLesson("004"));
  int asked = 0;
  for (const Step& s : l.steps) {
    if (!s.question || s.question->compute != Compute::Carrier) continue;
    ++asked;
    const Question& q = *s.question;
    INFO(q.at);
    std::vector<std::string> want;
    for (const nlohmann::json& r : labels.at("table").at("rows"))
      if (r.at("phenomenon") == q.at) want = r.at("carriers").get<std::vector<std::string>>();
    std::vector<std::string> got;
    for (const HeadRef& h : q.carriers) got.push_back(HeadName(h));
    CHECK(got == want);
    const Answer a = ComputeAnswer(q, {});
    REQUIRE(a.ok);
    if (want.empty()) {
      CHECK(a.option == q.none_option);
      CHECK(q.none_option >= 0);
    } else {
      REQUIRE(a.option >= 0);
      CHECK(q.options[static_cast<std::size_t>(a.option)].en == want.front());
    }
    CHECK(IsRight(q, a, a.option, 0, -1, -1));
    for (int o = 0; o < static_cast<int>(q.options.size()); ++o)
      if (o != a.option) CHECK(!IsRight(q, a, o, 0, -1, -1));
  }
  CHECK(asked >= 2);

  // A retrained model's table: the same lesson file, other answers.
  TempDir dir;
  const std::string path = LabelsWithTable(
      dir, {{"attractor", {"L1H2"}}, {"honorific", {}}, {"classifier", {"L0H1"}}, {"shared", {"L0H0", "L1H3"}}});
  Answer a = CarrierAnswer("attractor", path);
  CHECK((a.ok && a.option == 1 && a.shown == "L1H2"));
  a = CarrierAnswer("honorific", path);
  CHECK((a.ok && a.option == 3 && a.shown.empty()));
  // A carrier no option names: no option is right, and `shown` names it.
  a = CarrierAnswer("classifier", path);
  CHECK((a.ok && a.option == -1 && a.shown == "L0H1"));
  // Two heads that each take it to chance alone: either is right, "none" is not.
  a = CarrierAnswer("shared", path);
  CHECK((a.option == 0 && a.also == std::vector<int>{2} && a.shown == "L0H0, L1H3"));
  Question q;
  q.kind = QuestionKind::Choice;
  CHECK(IsRight(q, a, 0, 0, -1, -1));
  CHECK(IsRight(q, a, 2, 0, -1, -1));
  CHECK(!IsRight(q, a, 3, 0, -1, -1));
  // No option marked none, and no carrier: nothing is right.
  a = CarrierAnswer("honorific", path, R"([{"ko": "L0H0", "en": "L0H0"}, {"ko": "L1H2", "en": "L1H2"}])");
  CHECK((a.ok && a.option == -1));
}

TEST_CASE("tour: a bad carrier question or patch field names the field") {
  TempDir dir;
  const std::string labels = LabelsWithTable(dir, {{"attractor", {"L1H2"}}, {"honorific", {}}});
  const LoadContext ctx{{"proof", "patch", "heatmaps"}, labels};
  auto refusal = [&](const std::string& step) {
    try {
      ParseLesson(Wrap(step), "bad.json", ctx);
    } catch (const LessonError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(refusal(CarrierStep("attractor", kHeadOptions)), Contains("accepted"));
  CHECK_THAT(refusal(CarrierStep("nope", kHeadOptions)),
             Contains("bad.json, at /steps/0/question/at: the proof table has no phenomenon 'nope'; its phenomena "
                      "are 'attractor', 'honorific'."));
  CHECK_THAT(refusal(CarrierStep("attractor", R"([{"ko": "a", "en": "L0H0"}, {"ko": "b", "en": "the noun"}])")),
             Contains("/steps/0/question/options/1/en: an option of a carrier question names a head"));
  CHECK_THAT(refusal(CarrierStep("attractor", R"([{"ko": "a", "en": "L0H0"}, {"ko": "b", "en": "L2H0"}])")),
             Contains("/steps/0/question/options/1/en: layer 2 does not exist"));
  CHECK_THAT(refusal(CarrierStep("attractor", R"([{"ko": "a", "en": "L0H0"}, {"ko": "b", "en": "L0H5"}])")),
             Contains("/steps/0/question/options/1/en: head 5 does not exist"));
  CHECK_THAT(refusal(CarrierStep("attractor", R"([{"ko": "a", "en": "L0H0", "none": true}, )"
                                              R"({"ko": "b", "en": "x", "none": true}])")),
             Contains("/steps/0/question/options/1/none: only one option says no single head"));
  CHECK_THAT(refusal(CarrierStep("attractor", R"([{"ko": "a", "en": "L0H0"}, {"ko": "b", "en": "x", "none": 1}])")),
             Contains("/steps/0/question/options/1/none: true marks"));
  CHECK_THAT(refusal(R"({"view": "heatmaps", )" + Caption() +
                     R"(, "question": {"kind": "choice", "prompt": {"ko": "p", "en": "p"}, "answer": 0, )"
                     R"("options": [{"ko": "a", "en": "a"}, {"ko": "b", "en": "b", "none": true}]}})"),
             Contains("/steps/0/question/options/1/none: \"none\" marks the answer of a carrier question"));
  std::string seeded = CarrierStep("attractor", kHeadOptions);
  seeded.replace(seeded.find(R"("model": "mhaviz-small", )"), 25, "");
  CHECK_THAT(refusal(seeded), Contains("/steps/0/question/compute: carrier is measured on mhaviz-small"));
  std::string number = CarrierStep("attractor", kHeadOptions);
  number.replace(number.find(R"("kind": "choice")"), 16, R"("kind": "number")");
  number.replace(number.find(R"(, "options": )"), std::string(R"(, "options": )").size() + std::strlen(kHeadOptions),
                 "");
  CHECK_THAT(refusal(number), Contains("/steps/0/question/kind: carrier is asked as a choice"));
  std::string no_at = CarrierStep("", kHeadOptions);
  CHECK_THAT(refusal(no_at), Contains("/steps/0/question/at: a carrier is of a phenomenon"));
  // A labels file without a proof table.
  const std::string bare = dir / "bare.json";
  io::WriteFileAtomic(bare, R"({"num_layers": 2, "num_heads": 4, "labels": []})");
  CHECK_THAT(Refusal(Wrap(CarrierStep("attractor", kHeadOptions)), bare),
             Contains("/steps/0/question/compute: mhaviz-small's labels file has no proof table"));

  // The Patch view's fields.
  const std::string small = R"({"view": "patch", "model": "mhaviz-small", "sentence": "a", )" + Caption() + ", ";
  const Lesson ok = ParseLesson(
      Wrap(small + R"("patch": {"clean": "The men", "corrupt": "The man", "target": "are"}})"), "ok.json", ctx);
  const StepState& st = ok.steps.at(0).state;
  CHECK((st.patch_set && st.patch_clean == "The men" && st.patch_corrupt == "The man" && st.patch_target == "are"));
  CHECK(!ParseLesson(Wrap(small + R"("patch": {"clean": "a", "corrupt": "b"}})"), "ok.json", ctx)
             .steps.at(0)
             .state.patch_target.size());
  CHECK_THAT(refusal(small + R"("patch": {"clean": "a"}})"), Contains("/steps/0/patch/corrupt: missing"));
  CHECK_THAT(refusal(small + R"("patch": {"clean": "", "corrupt": "b"}})"),
             Contains("/steps/0/patch/clean: an empty sentence"));
  CHECK_THAT(refusal(small + R"("patch": {"clean": "a", "corrupt": 3}})"), Contains("/steps/0/patch/corrupt"));
  CHECK_THAT(refusal(small + R"("patch": {"clean": "a", "corrupt": "b", "targte": "c"}})"), Contains("/steps/0/patch"));
  CHECK_THAT(refusal(small + R"("patch": {"clean": ")" + std::string(513, 'x') + R"(", "corrupt": "b"}})"),
             Contains("/steps/0/patch/clean: 513 bytes is more than a patched sentence may hold (512)"));
  CHECK_THAT(refusal(R"({"view": "patch", )" + Caption() + R"(, "patch": {"clean": "a", "corrupt": "b"}})"),
             Contains("/steps/0/patch: activation patching runs a language model"));
}
