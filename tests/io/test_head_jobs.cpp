// The rule that gives a head a linguistic job (lm/head_jobs.hpp) and the places on a
// sentence where a job is read off the map, on hand-made reports and piece lists.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "lm/head_jobs.hpp"

namespace {

using mha::lm::PairsReport;
using mha::lm::PhenomenonScore;

PhenomenonScore Phenomenon(const std::string& name, double weight, double uniform, int correct, int pairs = 200) {
  PhenomenonScore p;
  p.phenomenon = name;
  p.pairs = pairs;
  p.correct = correct;
  p.accuracy = static_cast<double>(correct) / pairs;
  p.attention_pairs = pairs;
  p.uniform = uniform;
  p.best_layer = 1;
  p.best_head = 2;
  p.best_weight = weight;
  return p;
}

}  // namespace

TEST_CASE("a head gets a job only where its weight is twice uniform and 0.2 above it") {
  using mha::lm::BeatsChance;
  CHECK(BeatsChance(0.66, 0.25));
  CHECK_FALSE(BeatsChance(0.62, 0.43));  // 1.44 x uniform: the self-attending head on 이/가
  CHECK_FALSE(BeatsChance(0.28, 0.19));  // the English attractor's best head
  CHECK_FALSE(BeatsChance(0.30, 0.12));  // 2.5 x uniform but only 0.18 above it
  CHECK(BeatsChance(0.40, 0.20));        // the boundary holds
}

TEST_CASE("jobs from a pairs report: names, and no agreement claimed at chance") {
  PairsReport r;
  r.num_layers = 2;
  r.num_heads = 4;
  r.phenomena = {Phenomenon("particle 을/를", 0.99, 0.35, 150),
                 Phenomenon("particle 이/가", 0.62, 0.43, 190),
                 Phenomenon("numeral classifier", 0.66, 0.25, 177),
                 Phenomenon("honorific agreement", 0.63, 0.22, 106),
                 Phenomenon("agreement across an attractor", 0.70, 0.20, 190),
                 Phenomenon("something else", 0.9, 0.1, 200)};
  const auto jobs = mha::lm::HeadJobs(r);
  REQUIRE(jobs.size() == 4);
  CHECK(jobs[0].text == "particle → noun");
  CHECK(jobs[0].phenomenon == "particle 을/를");
  CHECK(jobs[1].text == "classifier → noun");
  // 106 of 200 is a coin's result: the head looks at the subject, the model does not agree.
  CHECK(jobs[2].job == "verb-subject");
  CHECK_FALSE(jobs[2].learned);
  CHECK(jobs[2].text == "looks at the subject");
  CHECK(jobs[3].text == "agreement");
  CHECK(jobs[3].learned);
  CHECK(mha::lm::LearnedAccuracy(200) == Approx(0.5 + 1.5 / std::sqrt(200.0)));
  r.phenomena[4].correct = 120;
  r.phenomena[4].accuracy = 0.6;
  CHECK(mha::lm::HeadJobs(r)[3].text == "looks at the subject");
}

TEST_CASE("the class's sentence: particles, the subject before the verb, a numeral's noun") {
  // <s> ▁고양이 가 ▁ 쥐 를 ▁잡았 다
  const std::vector<std::string> cat = {"<s>", "\xe2\x96\x81고양이", "가", "\xe2\x96\x81", "쥐",
                                        "를",  "\xe2\x96\x81잡았",   "다"};
  const auto sites = mha::lm::FindCues(cat);
  REQUIRE(sites.size() == 3);
  CHECK(sites[0].job == "particle-noun");
  CHECK(sites[0].query == 2);
  CHECK(sites[0].choose == 1);
  CHECK(sites[0].cue == std::vector<int>{1});
  CHECK(sites[1].job == "particle-noun");
  CHECK(sites[1].query == 5);
  CHECK(sites[1].cue == std::vector<int>{4});  // the lone word-start piece is no part of the noun
  CHECK(sites[2].job == "verb-subject");
  CHECK(sites[2].query == 5);
  CHECK(sites[2].cue == std::vector<int>{1, 2});
  CHECK(mha::lm::SiteUniform(sites[2]) == Approx(2.0 / 6));

  // <s> ▁책 ▁세 ▁권 을 ▁샀 다: 세 chooses the classifier and its noun is 책.
  const std::vector<std::string> books = {
      "<s>", "\xe2\x96\x81책", "\xe2\x96\x81세", "\xe2\x96\x81권", "을", "\xe2\x96\x81샀", "다"};
  const auto b = mha::lm::FindCues(books);
  REQUIRE(b.size() == 2);
  CHECK(b[0].job == "classifier-noun");
  CHECK(b[0].query == 2);
  CHECK(b[0].cue == std::vector<int>{1});
  CHECK(b[1].job == "particle-noun");  // no subject particle: no verb -> subject

  // An unfinished sentence (고양이가 쥐를) has no verb to read.
  const std::vector<std::string> half = {"<s>", "\xe2\x96\x81고양이", "가", "\xe2\x96\x81", "쥐", "를"};
  for (const auto& s : mha::lm::FindCues(half)) CHECK(s.job == "particle-noun");
}

TEST_CASE("a site's weight is read off the head's rows") {
  mha::Trace t;
  t.seq = 3;
  t.seq_kv = 3;
  t.attn = mha::Mat::Zero(2 * 3, 3);
  t.attn(1 * 3 + 2, 0) = 0.25f;  // head 1, row 2
  t.attn(1 * 3 + 2, 1) = 0.5f;
  mha::lm::CueSite site{"particle-noun", 2, 1, {0, 1}};
  CHECK(mha::lm::SiteWeight(t, 1, site) == Approx(0.75));
  CHECK(mha::lm::SiteWeight(t, 0, site) == Approx(0.0));
  CHECK(mha::lm::SiteUniform(site) == Approx(2.0 / 3));
}
