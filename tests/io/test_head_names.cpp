// The proof table's statistics (lm/pairs_table.hpp), the names a head is given from its
// evidence (lm/head_names.hpp), and where that evidence is found (lm/head_evidence.hpp):
// the shipped file beside mhaviz-small, the cache, and files that must be ignored.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../temp_dir.hpp"
#include "lm/head_evidence.hpp"
#include "lm/head_labels.hpp"
#include "lm/head_names.hpp"

namespace {

using namespace mha;
using namespace mha::lm;

const std::string kModel = std::string(MHAVIZ_ASSETS) + "/models/mhaviz-small.npz";

// Evidence of a 2 x 2 model by hand: one phenomenon, its row of knock-outs.
HeadEvidence Hand(const std::string& phenomenon, int correct, int correct_without_l0h0, double p_l0h0,
                  const std::string& l0h0_pattern) {
  HeadEvidence e;
  e.validation.name = "valid.txt";
  e.pairs.name = "pairs.jsonl";
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h) {
      HeadProfile p;
      p.layer = l;
      p.head = h;
      p.back.assign(kMaxBack, 0.0);
      p.label = l == 0 && h == 0 ? l0h0_pattern : "spread";
      p.score = 0.9;
      e.profiles.push_back(p);
    }
  KnockoutTable& t = e.table;
  t.num_layers = t.num_heads = 2;
  t.heads = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  t.level = kDropAlpha / 4;
  t.plain.num_layers = t.plain.num_heads = 2;
  PhenomenonScore ph;
  ph.phenomenon = phenomenon;
  ph.pairs = 200;
  ph.correct = correct;
  ph.accuracy = correct / 200.0;
  ph.attention_pairs = 200;
  ph.mean_weight = {0.99, 0.1, 0.1, 0.1};  // L0H0 looks at the cue (a previous-token head's noun)
  ph.uniform = 0.35;
  ph.best_weight = 0.99;
  t.plain.phenomena.push_back(ph);
  PhenomenonRow r;
  r.phenomenon = phenomenon;
  r.pairs = 200;
  r.correct = correct;
  r.accuracy = ph.accuracy;
  r.band = CoinBand(200);
  r.learned = correct > r.band.hi_count;
  for (const HeadRef& h : t.heads) {
    KnockoutCell c;
    c.head = h;
    c.correct = h == HeadRef{0, 0} ? correct_without_l0h0 : correct;
    c.accuracy = c.correct / 200.0;
    c.p = h == HeadRef{0, 0} ? p_l0h0 : 1;
    c.significant = c.p <= t.level;
    c.to_chance = c.correct <= r.band.hi_count;
    r.cells.push_back(c);
  }
  t.rows.push_back(r);
  return e;
}

}  // namespace

TEST_CASE("exact binomial tails, the chance band and the McNemar drop", "[lm][proof]") {
  CHECK(CoinUpperTail(0, 10) == 1.0);
  CHECK(CoinUpperTail(11, 10) == 0.0);
  CHECK(CoinUpperTail(10, 10) == Approx(1.0 / 1024));
  CHECK(CoinUpperTail(8, 10) == Approx(56.0 / 1024));  // C(10,8) + C(10,9) + C(10,10) = 45 + 10 + 1
  // 200 pairs: a coin stays within 82..118 right with probability 0.99.
  const ChanceBand b = CoinBand(200);
  CHECK(b.hi_count == 118);
  CHECK(b.lo_count == 82);
  CHECK(2 * CoinUpperTail(119, 200) <= kChanceAlpha);
  CHECK(2 * CoinUpperTail(118, 200) > kChanceAlpha);
  // mhaviz-small's classifiers without L0H0: 45 pairs lost, 10 gained.
  CHECK(McNemarDrop(45, 10) == Approx(1.0286322577601759e-06).epsilon(1e-9));  // math.comb in Python
  CHECK(McNemarDrop(0, 0) == 1.0);
  CHECK(McNemarDrop(0, 5) == 1.0);
}

TEST_CASE("a head's name: causal before pattern before attention, and no job by attention alone", "[lm][proof]") {
  // A previous-token head that looks at the particles' nouns, with no knock-out cost.
  HeadEvidence e = Hand("particle 을/를", 192, 200, 1.0, "previous-token");
  HeadLabel l = NameHead(e, 0, 0);
  CHECK(l.name.text == "previous-token");
  CHECK(l.name.kind == "pattern");
  REQUIRE(l.also.size() == 1);
  CHECK(l.also[0].text == "looks at the noun");
  CHECK(l.also[0].kind == "attention");
  // Without its pattern the attention is all it is named for: never "particle → noun".
  e = Hand("particle 을/를", 192, 200, 1.0, "spread");
  CHECK(NameHead(e, 0, 0).name.text == "looks at the noun");
  // A significant drop of a learned phenomenon: the job, with the pattern beside it.
  e = Hand("numeral classifier", 177, 142, 1e-6, "previous-token");
  l = NameHead(e, 0, 0);
  CHECK(l.name.text == "classifier → noun");
  CHECK(l.name.kind == "causal");
  CHECK(l.name.evidence.find("0.885 -> 0.710") != std::string::npos);
  REQUIRE(l.also.size() == 1);  // the attention twin of the causal job is not repeated
  CHECK(l.also[0].text == "previous-token");
  // The same drop is no evidence where it is not significant, or the phenomenon was
  // never learned (106 of 200 is inside the band).
  CHECK(NameHead(Hand("numeral classifier", 177, 170, 0.02, "spread"), 0, 0).name.kind == "attention");
  e = Hand("honorific agreement", 106, 60, 1e-9, "spread");
  CHECK(NameHead(e, 0, 0).name.text == "looks at the subject");
  // A head with nothing measured is spread; a causal claim names the head it was measured on.
  CHECK(NameHead(e, 1, 1).name.text == "spread");
  CHECK(NameHead(Hand("numeral classifier", 177, 142, 1e-6, "spread"), 0, 1).name.kind == "none");
}

TEST_CASE("on the validation text, an induction head resting on the first piece is named induction", "[lm]") {
  // A head measured as a 2-layer model's induction head was: 0.68 on the first piece of
  // plain windows, 0.57 induction on repeated ones.
  HeadProfile p;
  p.back.assign(kMaxBack, 0.02);
  p.first = 0.68;
  p.induction = 0.57;
  LabelHead(p);
  REQUIRE(p.label == "first");
  NameOnValidation(p);
  CHECK(p.label == "induction");
  CHECK(p.score == 0.57);
  // Below the label threshold for induction it stays a first-piece head.
  HeadProfile sink;
  sink.back.assign(kMaxBack, 0.02);
  sink.first = 0.9;
  sink.induction = kMinLabelScore - 0.01;
  LabelHead(sink);
  NameOnValidation(sink);
  CHECK(sink.label == "first");
  // Another pattern is never renamed.
  HeadProfile prev;
  prev.back.assign(kMaxBack, 0.0);
  prev.back[0] = 0.95;
  prev.induction = 0.5;
  LabelHead(prev);
  NameOnValidation(prev);
  CHECK(prev.label == "previous-token");
}

TEST_CASE("evidence survives its JSON, and a file that does not fit is refused", "[lm][proof]") {
  const HeadEvidence e = Hand("numeral classifier", 177, 142, 1e-6, "previous-token");
  const HeadEvidence back = EvidenceFromJson(EvidenceJson(e), 2, 2);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h) CHECK(LabelJson(NameHead(back, l, h)) == LabelJson(NameHead(e, l, h)));
  CHECK_THROWS_WITH(EvidenceFromJson(EvidenceJson(e), 2, 4), Catch::Contains("another shape"));
  nlohmann::json j = EvidenceJson(e);
  j["table"]["heads"][0]["layer"] = 7;
  CHECK_THROWS_WITH(EvidenceFromJson(j, 2, 2), Catch::Contains("L7H0"));
  j = EvidenceJson(e);
  j.erase("profiles");
  CHECK_THROWS_WITH(EvidenceFromJson(j, 2, 2), Catch::Contains("missing"));
  TempDir dir;
  {
    std::ofstream deep(dir / "deep.json");
    deep << std::string(100000, '[');
  }
  CHECK_THROWS_WITH(LoadEvidence(dir / "deep.json", 2, 2), Catch::Contains("levels deep"));
  {
    std::ofstream big(dir / "big.json");
    big << std::string((4 << 20) + 10, ' ');
  }
  CHECK_THROWS_WITH(LoadEvidence(dir / "big.json", 2, 2), Catch::Contains("big.json"));
}

TEST_CASE("the shipped labels are found for mhaviz-small, the cache's for another checkpoint", "[lm][proof]") {
  TempDir dir;
  ::setenv("XDG_CACHE_HOME", dir.path.c_str(), 1);  // no other cache is read
  LanguageModel lm = LoadLanguageModel(kModel);
  std::string where;
  const std::optional<HeadEvidence> shipped = FindHeadEvidence(lm, &where);
  REQUIRE(shipped.has_value());
  CHECK(where == ShippedEvidencePath(kModel));
  CHECK(NameHead(*shipped, 1, 3).name.text == "induction");
  // The same weights in another file: its hash differs from the shipped labels'.
  const std::string copy = dir / "other.npz";
  std::filesystem::copy_file(kModel, copy);
  { std::ofstream(copy, std::ios::app) << 'x'; }
  lm.path = copy;
  CHECK_FALSE(FindHeadEvidence(lm, &where).has_value());
  // Measured once, it is found in the cache under the checkpoint's hash.
  HeadEvidence cached = *shipped;
  cached.checkpoint = {"other.npz", FileHash(copy)};
  std::filesystem::create_directories(EvidenceCacheDir());
  SaveEvidence(cached, EvidenceCacheDir() + "/" + cached.checkpoint.hash + ".json");
  // (no assets beside the copy: the app's pairs and validation text are the shipped ones)
  const std::optional<HeadEvidence> found = FindHeadEvidence(lm, &where);
  REQUIRE(found.has_value());
  CHECK(where.find(dir.path) == 0);
  // Labels measured on other pairs are not used.
  cached.pairs.hash = "0";
  SaveEvidence(cached, EvidenceCacheDir() + "/" + cached.checkpoint.hash + ".json");
  CHECK_FALSE(FindHeadEvidence(lm, &where).has_value());
  CHECK(where.find("other files") != std::string::npos);
  ::unsetenv("XDG_CACHE_HOME");
}
