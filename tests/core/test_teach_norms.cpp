// Post-LN and pre-LN side by side (mha/teach_norms.hpp): each arrangement's steps are
// the standard forward pass's tensors of that arrangement (RunArrangement runs Flash
// attention, equal within float rounding), its heads' weights the standard trace's, and
// post-LN's normalised rows have mean 0 and std 1 at initialisation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "close.hpp"
#include "fixtures.hpp"
#include "mha/mha.hpp"
#include "mha/teach_norms.hpp"

namespace {

// The standard trace's tensor of that .npz name.
const mha::Mat& Named(const mha::Trace& t, const std::string& name) {
  if (name == "x") return t.in.x;
  if (name == "x_ln") return t.x_ln;
  if (name == "attn_out") return t.attn_out;
  if (name == "residual") return t.residual;
  if (name == "out") return t.out;
  if (name == "ffn_ln") return t.ffn_ln;
  if (name == "ffn_out") return t.ffn_out;
  if (name == "ffn_residual") return t.ffn_residual;
  REQUIRE(name == "block_out");
  return t.block_out;
}

// Two float32 results' spreads agree within the roundoff of the tensor's elements
// (`scale`): a normalised row's mean, ~0, carries theirs.
void CheckSpread(const std::string& what, const std::vector<double>& got, const std::vector<double>& want, double terms,
                 double scale) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  const double tol = 32 * testutil::kEps32 * std::max(scale, 1e-30) * std::sqrt(terms);
  INFO(what << ": max |diff| " << worst << ", tolerance " << tol);
  REQUIRE(got.size() == want.size());
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("both arrangements: every step is the standard pass's tensor, every head its weights", "[teach][norms]") {
  std::mt19937 rng(11);
  for (const bool causal : {false, true}) {
    mha::Config cfg = fixtures::Shape(64, 4, 2);
    cfg.block = mha::Block::Encoder;
    cfg.mask = causal ? mha::Mask::Causal : mha::Mask::None;
    cfg.seed = 5;
    const auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
    const mha::Inputs in = fixtures::RandomInputs(rng, 7, 7, 64, false);
    for (const mha::Norm norm : {mha::Norm::Post, mha::Norm::Pre}) {
      INFO((norm == mha::Norm::Post ? "post" : "pre") << (causal ? ", causal" : ""));
      const mha::ArrangementRun run = mha::RunArrangement(cfg, w, in, norm);
      mha::Config std_cfg = cfg;
      std_cfg.norm = norm;
      const mha::Trace t = mha::Forward(std_cfg, w, in);
      REQUIRE(run.stages.size() == 7);
      for (const mha::StageRows& st : run.stages) {
        const mha::Mat& m = Named(t, st.tensor);
        const mha::RowSpread want = mha::RowSpreadOf(m);
        const double scale = m.cwiseAbs().maxCoeff();
        CheckSpread(st.tensor + " std", st.rows.std, want.std, 64 + 256, scale);
        CheckSpread(st.tensor + " mean", st.rows.mean, want.mean, 64 + 256, scale);
        CheckSpread(st.tensor + " l2", st.rows.l2, want.l2, 64 + 256,
                    *std::max_element(want.l2.begin(), want.l2.end()));
      }
      for (int h = 0; h < 4; ++h) {
        const mha::HeadAttention a = mha::ComputeHeadAttention(run.lean, h, cfg.scale, cfg.temperature);
        const mha::Mat want = t.AttnHead(h);
        CHECK_F32_CLOSE_ULPS("head weights", a.weights.data(),
                             std::vector<double>(want.data(), want.data() + want.size()), 64, 32);
      }
      // Post-LN ends its sublayers in LN1 and LN2 (gamma 1, beta 0): mean 0, std 1.
      for (const mha::StageRows& st : run.stages) {
        const bool normalised = st.stage == mha::BlockStage::Norm1 || st.stage == mha::BlockStage::Norm2;
        if (!normalised) continue;
        for (std::size_t i = 0; i < st.rows.std.size(); ++i) {
          CHECK(std::abs(st.rows.std[i] - 1.0) < 1e-3);
          CHECK(std::abs(st.rows.mean[i]) < 1e-5);
        }
      }
    }
  }
}

TEST_CASE("the steps in each arrangement's order, with the residuals they add back", "[teach][norms]") {
  std::mt19937 rng(3);
  mha::Config cfg = fixtures::Shape(32, 2);
  const auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  const mha::Inputs in = fixtures::RandomInputs(rng, 3, 3, 32, false);
  const auto names = [](const mha::ArrangementRun& r) {
    std::string s;
    for (const auto& st : r.stages)
      s += std::string(mha::ToString(st.stage)) + (st.adds >= 0 ? "<" + std::to_string(st.adds) : "") + " ";
    return s;
  };
  CHECK(names(mha::RunArrangement(cfg, w, in, mha::Norm::Post)) == "input attention add1<0 ln1 ");
  CHECK(names(mha::RunArrangement(cfg, w, in, mha::Norm::Pre)) == "input ln1 attention add1<0 ");
  cfg.block = mha::Block::Encoder;
  const auto we = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  CHECK(names(mha::RunArrangement(cfg, we, in, mha::Norm::Post)) == "input attention add1<0 ln1 ffn add2<3 ln2 ");
  CHECK(names(mha::RunArrangement(cfg, we, in, mha::Norm::Pre)) == "input ln1 attention add1<0 ln2 ffn add2<3 ");
  CHECK_THROWS_AS(mha::RunArrangement(cfg, we, in, mha::Norm::None), mha::Error);
}
