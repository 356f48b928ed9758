// Flash attention on the shipped language model, mhaviz-small: every layer's input
// run again with Attention::Flash gives the standard path's context and attn_out
// within 2e-6, for the default tile and tiles that do not divide the sentence.
#include <catch2/catch.hpp>

#include <string>

#include "lm/language_model.hpp"
#include "mha/flash.hpp"
#include "mha/mha.hpp"

namespace {

// The largest |a - b| / max(1, |b|): 2e-6 absolute up to 1, float's relative
// precision past it (the same sum in another order differs by a few ulps of the value).
double Largest(const mha::Mat& a, const mha::Mat& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return ((a - b).array().abs() / b.array().abs().max(1.0f)).maxCoeff();
}

}  // namespace

TEST_CASE("mhaviz-small: every layer with Flash attention equals the standard path within 2e-6", "[flash][lm]") {
  const mha::lm::LanguageModel lm = mha::lm::LoadLanguageModel(std::string(MHAVIZ_ASSETS) + "/models/mhaviz-small.npz");
  // Long enough to fill the model's context: several key tiles per query block.
  std::string text;
  while (text.size() < 4000)
    text += "The cat sat on the mat, and 고양이가 쥐를 잡았다. Select the cells, then Format. ";
  const mha::lm::SentenceRun r = mha::lm::RunOnSentence(lm, text, 1);
  REQUIRE(r.trace.layers.size() == static_cast<std::size_t>(lm.model.cfg.num_layers));
  REQUIRE(r.trace.layers[0].seq == lm.model.cfg.max_seq);
  for (std::size_t i = 0; i < r.trace.layers.size(); ++i) {
    const mha::Trace& s = r.trace.layers[i];
    REQUIRE(s.cfg.mask == mha::Mask::Causal);  // a language model: causal
    for (auto [br, bc] : {std::pair{0, 0}, {7, 13}, {1, 1000}}) {
      mha::Config cfg = s.cfg;
      cfg.attention = mha::Attention::Flash;
      cfg.flash_br = br, cfg.flash_bc = bc;
      const mha::Trace f = mha::Forward(cfg, s.weights, s.in);
      INFO("layer " << i << ", tile " << mha::FlashBr(cfg) << " x " << mha::FlashBc(cfg));
      CHECK(f.attn.size() == 0);
      CHECK(Largest(f.context, s.context) <= 2e-6);
      CHECK(Largest(f.attn_out, s.attn_out) <= 2e-6);
      CHECK(Largest(f.out, s.out) <= 2e-5);  // after LayerNorm's division by a small deviation
    }
  }
}
