// The Eigen forward pass against the naive oracle, over many random configurations:
// heads 1..16, both masks, every norm, GQA, cross-attention, scaling on and off.
#include <random>

#include "close.hpp"
#include "mha/mha.hpp"
#include "oracle.hpp"
#include "fixtures.hpp"

namespace {

struct Case {
  mha::Config cfg;
  int seq, seq_kv;
  bool cross;
};

using fixtures::RandomMat;

void CheckAgainstOracle(const Case& c, std::mt19937& rng) {
  mha::Inputs in;
  in.x = RandomMat(rng, c.seq, c.cfg.d_model, 1.0f);
  in.tokens.assign(c.seq, "t");
  if (c.cross) {
    in.memory = RandomMat(rng, c.seq_kv, c.cfg.d_model, 1.0f);
    in.memory_tokens.assign(c.seq_kv, "m");
  }
  auto w = std::make_shared<mha::Weights>(mha::InitWeights(c.cfg));
  // Non-trivial LayerNorm parameters so gamma/beta are exercised too.
  w->ln_gamma = mha::RowVec::Random(c.cfg.d_model).array() + 1.0f;
  w->ln_beta = mha::RowVec::Random(c.cfg.d_model) * 0.5f;
  const mha::Trace t = mha::Forward(c.cfg, w, in);
  const oracle::Result o = oracle::Mha(c.cfg, *w, in);
  using testutil::Flatten;
  using testutil::Flatten3;
  INFO("d_model " << c.cfg.d_model << " heads " << c.cfg.num_heads << " kv " << c.cfg.kv_heads() << " seq " << c.seq
                  << " seq_kv " << t.seq_kv << " mask " << mha::ToString(c.cfg.mask) << " norm "
                  << mha::ToString(c.cfg.norm) << " scale " << c.cfg.scale << " cross " << c.cross);
  // Relative to each tensor's scale (testutil::Float32Tol); the projections' d_model
  // terms are the longest sums on the way to any of them.
  const double n = c.cfg.d_model;
  CHECK_F32_CLOSE("q", t.q.data(), Flatten3(o.q), n);
  CHECK_F32_CLOSE("k", t.k.data(), Flatten3(o.k), n);
  CHECK_F32_CLOSE("v", t.v.data(), Flatten3(o.v), n);
  CHECK_F32_CLOSE("scores", t.scores.data(), Flatten3(o.scores), n);
  CHECK_F32_CLOSE("attn", t.attn.data(), Flatten3(o.attn), n);
  CHECK_F32_CLOSE("context", t.context.data(), Flatten3(o.context), n);
  CHECK_F32_CLOSE("concat", t.concat.data(), Flatten(o.concat), n);
  CHECK_F32_CLOSE("attn_out", t.attn_out.data(), Flatten(o.attn_out), n);
  CHECK_F32_CLOSE("out", t.out.data(), Flatten(o.out), n);
}

}  // namespace

TEST_CASE("Eigen forward pass matches the naive oracle over random configurations", "[oracle]") {
  std::mt19937 rng(20261121);
  int ran = 0;
  for (int heads = 1; heads <= 16; ++heads) {
    for (int rep = 0; rep < 6; ++rep) {
      Case c;
      const int hd = 1 + static_cast<int>(rng() % 12);
      c.cfg.num_heads = heads;
      c.cfg.d_model = heads * hd;
      std::vector<int> kv;
      for (int g = 1; g <= heads; ++g)
        if (heads % g == 0) kv.push_back(g);
      c.cfg.num_kv_heads = kv[rng() % kv.size()];
      c.cfg.seed = rng();
      c.cfg.norm = static_cast<mha::Norm>(rng() % 3);
      c.cfg.scale = rng() % 4 != 0;
      c.cfg.temperature = rng() % 3 == 0 ? 0.5f + (rng() % 100) / 50.0f : 1.0f;
      c.cross = rng() % 3 == 0;
      c.cfg.mask = (!c.cross && rng() % 2) ? mha::Mask::Causal : mha::Mask::None;
      c.seq = 1 + static_cast<int>(rng() % 12);
      c.seq_kv = c.cross ? 1 + static_cast<int>(rng() % 12) : c.seq;
      CheckAgainstOracle(c, rng);
      ++ran;
    }
  }
  CHECK(ran == 96);
}

TEST_CASE("oracle agreement at lesson scale (d_model 512, 8 heads)", "[oracle]") {
  std::mt19937 rng(7);
  for (auto norm : {mha::Norm::Post, mha::Norm::Pre, mha::Norm::None}) {
    Case c;
    c.cfg.norm = norm;
    c.cfg.mask = norm == mha::Norm::Pre ? mha::Mask::Causal : mha::Mask::None;
    c.seq = c.seq_kv = 20;
    c.cross = false;
    CheckAgainstOracle(c, rng);
  }
}
