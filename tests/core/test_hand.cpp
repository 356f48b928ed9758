// The lesson's hand calculation, and the lesson's tiny worked example.
#include <catch2/catch.hpp>

#include "mha/mha.hpp"

TEST_CASE("hand calculation: x = [1, 2], two heads with d_k = 1, gives concat [1.5, 0.9]", "[hand]") {
  mha::Config cfg;
  cfg.d_model = 2;
  cfg.num_heads = 2;
  cfg.norm = mha::Norm::None;
  auto w = std::make_shared<mha::Weights>();
  // Head 1 projects with [0.5, 0.5]^T, head 2 with [0.3, 0.3]^T: columns of W.
  mha::Mat W(2, 2);
  W << 0.5f, 0.3f, 0.5f, 0.3f;
  w->W_q = w->W_k = w->W_v = W;
  w->W_o = mha::Mat::Identity(2, 2);
  w->b_q = w->b_k = w->b_v = w->b_o = mha::RowVec::Zero(2);
  w->ln_gamma = mha::RowVec::Ones(2);
  w->ln_beta = mha::RowVec::Zero(2);
  mha::Inputs in;
  in.tokens = {"x"};
  in.x = mha::Mat(1, 2);
  in.x << 1.0f, 2.0f;
  const mha::Trace t = mha::Forward(cfg, w, in);
  // One token attends only to itself: weight 1, so each head's context is its v.
  CHECK(t.attn(0, 0) == 1.0f);
  CHECK(t.attn(1, 0) == 1.0f);
  CHECK(t.q(0, 0) == Approx(1.5));  // 1*0.5 + 2*0.5
  CHECK(t.q(1, 0) == Approx(0.9));  // 1*0.3 + 2*0.3
  CHECK(t.concat(0, 0) == Approx(1.5));
  CHECK(t.concat(0, 1) == Approx(0.9));
  CHECK(t.attn_out(0, 0) == Approx(1.5));  // W_O = I
  CHECK(t.attn_out(0, 1) == Approx(0.9));
  // Score of head 1: q k / sqrt(1) = 1.5 * 1.5.
  CHECK(t.scores(0, 0) == Approx(2.25));
}
