// Flash attention on the shipped language model, mhaviz-small: every layer's input
// run again with Attention::Flash gives the standard path's context, attn_out and out
// within float32's bound (testutil::Float32Tol, tests/core/close.hpp), for the default
// tile and tiles that do not divide the sentence.
#include <catch2/catch.hpp>

#include <string>

#include "../core/close.hpp"
#include "lm/language_model.hpp"
#include "mha/flash.hpp"
#include "mha/mha.hpp"

namespace {

// The largest |a - b| as a fraction of the bound for two float32 results (32 ulps) of
// b's scale, over `terms` summed terms: at most 1 passes.
double Ratio(const mha::Mat& a, const mha::Mat& b, double terms) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  const double tol = testutil::Float32Tol(std::vector<double>(b.data(), b.data() + b.size()), terms, 32);
  return (a - b).cwiseAbs().maxCoeff() / tol;
}

}  // namespace

TEST_CASE("mhaviz-small: every layer with Flash attention equals the standard path within float32's bound",
          "[flash][lm]") {
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
      // The paths differ in the attention's seq_kv and head_dim terms, then W_O's d_model
      // (and the FFN's d_ff on the way to out).
      const double n = s.seq_kv + cfg.d_model / cfg.num_heads + cfg.d_model;
      CHECK(Ratio(f.context, s.context, n) <= 1);
      CHECK(Ratio(f.attn_out, s.attn_out, n) <= 1);
      CHECK(Ratio(f.out, s.out, n + cfg.ffn_dim()) <= 1);
    }
  }
}
