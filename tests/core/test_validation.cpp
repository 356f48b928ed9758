// Validation messages teach: they say what is wrong and what would work.
#include <catch2/catch.hpp>

#include "mha/mha.hpp"
#include "fixtures.hpp"

using Catch::Matchers::Contains;

namespace {
std::string Why(const mha::Config& c, int seq = 3, int seq_kv = 3) {
  try {
    mha::Validate(c, seq, seq_kv);
  } catch (const mha::Error& e) {
    return e.what();
  }
  return "";
}
mha::Config C(int d, int h, int g = 0) { return fixtures::Shape(d, h, g); }
}  // namespace

TEST_CASE("d_model not divisible by num_heads names both and suggests valid values", "[validate]") {
  const std::string m = Why(C(100, 8));
  CHECK_THAT(m, Contains("d_model = 100 is not divisible by num_heads = 8"));
  CHECK_THAT(m, Contains("each head gets d_model / num_heads dimensions"));
  CHECK_THAT(m, Contains("Try d_model = 96 or 104"));
  CHECK(mha::NearestValidDModel(100, 8) == std::make_pair(96, 104));
  CHECK(mha::NearestValidDModel(96, 8) == std::make_pair(96, 96));
  CHECK(mha::NearestValidDModel(5, 8) == std::make_pair(8, 8));
}

TEST_CASE("head-count suggestions are the common counts that divide d_model", "[validate]") {
  CHECK(mha::CommonHeadCounts(524) == std::vector<int>{1, 2, 4});  // 524 = 4 x 131
  CHECK(mha::CommonHeadCounts(768) == std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256});
  CHECK(mha::CommonHeadCounts(7) == std::vector<int>{1});
  CHECK_THAT(Why(C(524, 3)), Contains("or num_heads in {1, 2, 4}."));
  CHECK_THAT(Why(C(524, 3)), !Contains("131"));
  CHECK_THAT(Why(C(10, 3)), Contains("Try d_model = 9 or 12, or num_heads = 1 or 2."));
  CHECK_THAT(Why(C(7, 2)), Contains("or num_heads = 1."));
}

TEST_CASE("num_heads not divisible by num_kv_heads explains grouped-query attention", "[validate]") {
  const std::string m = Why(C(64, 8, 3));
  CHECK_THAT(m, Contains("num_heads = 8 is not divisible by num_kv_heads = 3"));
  CHECK_THAT(m, Contains("{1, 2, 4, 8}"));
  CHECK_THAT(m, Contains("multi-query"));
  CHECK_THAT(Why(C(64, 8, 16)), Contains("not divisible by num_kv_heads = 16"));
}

TEST_CASE("sizes must be positive and under the caps", "[validate]") {
  CHECK_THAT(Why(C(0, 8)), Contains("d_model = 0 must be greater than 0"));
  CHECK_THAT(Why(C(-4, 2)), Contains("must be greater than 0"));
  CHECK_THAT(Why(C(64, 0)), Contains("num_heads = 0 must be at least 1"));
  CHECK_THAT(Why(C(2000000, 8)), Contains("cap of 4096"));
  CHECK_THAT(Why(C(4, 8)), Contains("more than d_model"));
  CHECK_THAT(Why(C(64, 8), 0, 0), Contains("no tokens"));
  CHECK_THAT(Why(C(64, 8), 5000, 5000), Contains("cap of 1024"));
  CHECK_THAT(Why(C(4096, 256), 1024, 1024), Contains("MiB"));
  mha::Config t = C(64, 8);
  t.temperature = 0;
  CHECK_THAT(Why(t), Contains("temperature"));
  CHECK(Why(C(512, 8)).empty());
  CHECK(Why(C(512, 8, 1)).empty());
}

TEST_CASE("weights with the wrong shape or non-finite values are named", "[validate]") {
  mha::Config c = C(8, 2);
  mha::Weights w = mha::InitWeights(c);
  w.W_k = mha::Mat::Zero(8, 4);
  try {
    mha::CheckWeights(w, c);
    FAIL("wrong shape accepted");
  } catch (const mha::Error& e) {
    CHECK_THAT(std::string(e.what()), Contains("W_k has shape (8, 4)"));
    CHECK_THAT(std::string(e.what()), Contains("need (8, 8)"));
  }
  w = mha::InitWeights(c);
  w.b_o[3] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(mha::CheckWeights(w, c), Contains("b_o contains NaN or Inf"));
}

TEST_CASE("an empty sentence and causal cross-attention are refused clearly", "[validate]") {
  mha::Config c = C(16, 2);
  CHECK_THROWS_WITH(mha::MakeInputs("   ", "", c), Contains("empty"));
  c.mask = mha::Mask::Causal;
  const auto in = mha::MakeInputs("a b", "c d e", c);
  CHECK_THROWS_WITH(mha::Forward(c, std::make_shared<const mha::Weights>(mha::InitWeights(c)), in),
                    Contains("no 'later' to hide"));
}
