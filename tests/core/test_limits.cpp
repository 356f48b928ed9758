// Regression tests for the value limits that keep float32 from overflowing.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "mha/mha.hpp"
#include "fixtures.hpp"

namespace {
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const mha::Error& e) {
    return e.what();
  }
  return "(no error)";
}

mha::Config Small() { return fixtures::Shape(8, 2); }
}  // namespace

TEST_CASE("temperature below the minimum is refused", "[limits][regression]") {
  // Was: temperature 1e-40 made 1/T overflow, scores +-inf and attn NaN.
  mha::Config cfg = Small();
  for (float t : {1e-40f, 1e-10f, 9.9e-4f}) {
    cfg.temperature = t;
    INFO(t);
    CHECK_THAT(ErrorOf([&] { mha::Validate(cfg, 3, 3); }),
               Catch::Contains("below the minimum of 0.001") && Catch::Contains("Try"));
  }
  cfg.temperature = mha::Limits::kMinTemperature;
  CHECK_NOTHROW(mha::Validate(cfg, 3, 3));
  const mha::Inputs in = mha::MakeInputs("the cat sat", "", cfg);
  const mha::Trace t = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
  CHECK(t.attn.allFinite());
}

TEST_CASE("weights beyond the value limit or non-finite are refused with their position", "[limits][regression]") {
  const mha::Config cfg = Small();
  mha::Weights w = mha::InitWeights(cfg);
  w.W_k(3, 5) = 1.5e5f;
  CHECK_THAT(
      ErrorOf([&] { mha::CheckWeights(w, cfg); }),
      Catch::Contains("Weight W_k holds 150000 at row 3, column 5") && Catch::Contains("Scale the weights down"));
  w.W_k(3, 5) = mha::Limits::kMaxAbsValue;  // the limit itself is fine
  CHECK_NOTHROW(mha::CheckWeights(w, cfg));
  w.b_v[6] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THAT(ErrorOf([&] { mha::CheckWeights(w, cfg); }),
             Catch::Contains("Weight b_v contains NaN or Inf values (nan at index 6)") && Catch::Contains("finite"));
  w.b_v[6] = 0;
  w.ln_beta[0] = -std::numeric_limits<float>::infinity();
  CHECK_THAT(ErrorOf([&] { mha::CheckWeights(w, cfg); }),
             Catch::Contains("Weight ln_beta contains NaN or Inf values (-inf at index 0)"));
}

TEST_CASE("inputs beyond the value limit or non-finite are refused", "[limits][regression]") {
  const mha::Config cfg = Small();
  const auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  mha::Inputs in = mha::MakeInputs("the cat sat", "", cfg);
  in.x(1, 1) = 2e5f;
  CHECK_THAT(ErrorOf([&] { mha::Forward(cfg, w, in); }), Catch::Contains("larger than 100000"));
  in.x(1, 1) = std::numeric_limits<float>::infinity();
  CHECK_THAT(ErrorOf([&] { mha::Forward(cfg, w, in); }), Catch::Contains("NaN or Inf"));
  in.x(1, 1) = 0;
  in.memory = mha::Mat::Constant(2, 8, -3e5f);
  in.memory_tokens = {"a", "b"};
  CHECK_THAT(ErrorOf([&] { mha::Forward(cfg, w, in); }), Catch::Contains("larger than 100000"));
}

TEST_CASE("FFN weights beyond the value limit are refused", "[limits][regression]") {
  // Was: only finiteness was checked, so 1e30 in ffn_W1 overflowed to Inf/NaN.
  mha::Config cfg = Small();
  cfg.block = mha::Block::Encoder;
  mha::Weights w = mha::InitWeights(cfg);
  w.ffn_W1(0, 0) = 1e30f;
  CHECK_THAT(ErrorOf([&] { mha::CheckWeights(w, cfg); }), Catch::Contains("ffn_W1") &&
                                                              Catch::Contains("row 0, column 0") &&
                                                              Catch::Contains("limit of |value| <= 100000"));
}
