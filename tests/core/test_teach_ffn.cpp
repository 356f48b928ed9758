// The encoder block (attention, then FFN with its own residual + LayerNorm) against
// the naive oracle, and its place in the trace, the shape-flow table and the export.
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "close.hpp"
#include "mha/mha.hpp"
#include "oracle.hpp"
#include "fixtures.hpp"

namespace {

using fixtures::RandomInputs;
using fixtures::RandomMat;

mha::RowVec RandomVec(std::mt19937& rng, int n, float mean, float scale) {
  std::normal_distribution<float> d(mean, scale);
  mha::RowVec v(n);
  for (int i = 0; i < n; ++i) v[i] = d(rng);
  return v;
}

mha::Config SmallEncoder(mha::Norm norm, mha::Activation act) {
  mha::Config c;
  c.d_model = 12;
  c.num_heads = 3;
  c.norm = norm;
  c.block = mha::Block::Encoder;
  c.activation = act;
  c.positional_encoding = false;
  return c;
}

std::map<std::string, mha::TensorView> ByName(const mha::Trace& t) {
  std::map<std::string, mha::TensorView> m;
  for (const auto& v : mha::Tensors(t)) m[v.name] = v;
  return m;
}

}  // namespace

TEST_CASE("GELU is the exact erf form (torch.nn.GELU default), ReLU is max(0, x)", "[ffn]") {
  // Phi(1) = 0.8413447460685429..., so GELU(1) = 0.84134475; the tanh approximation
  // gives 0.84119199, 1.5e-4 away, so this tells the two forms apart.
  CHECK(mha::Activate(mha::Activation::Gelu, 1.0f) == Approx(0.8413447460685429).epsilon(1e-6));
  CHECK(mha::Activate(mha::Activation::Gelu, -1.0f) == Approx(-0.15865525393145707).epsilon(1e-6));
  CHECK(mha::Activate(mha::Activation::Gelu, 0.0f) == 0.0f);
  CHECK(mha::Activate(mha::Activation::Gelu, 2.5f) == Approx(2.5 * 0.9937903346742238).epsilon(1e-6));
  CHECK(mha::Activate(mha::Activation::Relu, -2.0f) == 0.0f);
  CHECK(mha::Activate(mha::Activation::Relu, 3.0f) == 3.0f);
}

TEST_CASE("encoder block matches the naive oracle over random configurations, both norms, both activations",
          "[ffn][oracle]") {
  std::mt19937 rng(4242);
  int ran = 0;
  for (auto norm : {mha::Norm::Post, mha::Norm::Pre, mha::Norm::None}) {
    for (auto act : {mha::Activation::Relu, mha::Activation::Gelu}) {
      for (int rep = 0; rep < 10; ++rep) {
        mha::Config c;
        c.block = mha::Block::Encoder;
        c.norm = norm;
        c.activation = act;
        c.num_heads = 1 + static_cast<int>(rng() % 8);
        c.d_model = c.num_heads * (1 + static_cast<int>(rng() % 8));
        std::vector<int> kv;
        for (int g = 1; g <= c.num_heads; ++g)
          if (c.num_heads % g == 0) kv.push_back(g);
        c.num_kv_heads = kv[rng() % kv.size()];
        c.d_ff = rng() % 3 == 0 ? 0 : 1 + static_cast<int>(rng() % 40);  // 0: the default 4 * d_model
        c.seed = rng();
        c.scale = rng() % 4 != 0;
        const bool cross = rng() % 3 == 0;
        c.mask = (!cross && rng() % 2) ? mha::Mask::Causal : mha::Mask::None;
        const int seq = 1 + static_cast<int>(rng() % 10);
        const int seq_kv = cross ? 1 + static_cast<int>(rng() % 10) : seq;
        const mha::Inputs in = RandomInputs(rng, seq, seq_kv, c.d_model, cross);
        auto w = std::make_shared<mha::Weights>(mha::InitWeights(c));
        // Non-trivial LayerNorm parameters on both norms, so gamma2/beta2 are exercised.
        w->ln_gamma = RandomVec(rng, c.d_model, 1.0f, 0.3f);
        w->ln_beta = RandomVec(rng, c.d_model, 0.0f, 0.3f);
        w->ln2_gamma = RandomVec(rng, c.d_model, 1.0f, 0.3f);
        w->ln2_beta = RandomVec(rng, c.d_model, 0.0f, 0.3f);
        const mha::Trace t = mha::Forward(c, w, in);
        const oracle::Result o = oracle::Mha(c, *w, in);
        INFO("d_model " << c.d_model << " heads " << c.num_heads << " kv " << c.kv_heads() << " d_ff " << c.ffn_dim()
                        << " norm " << mha::ToString(c.norm) << " act " << mha::ToString(c.activation) << " seq " << seq
                        << " cross " << cross);
        REQUIRE(t.ffn_hidden.rows() == seq);
        REQUIRE(t.ffn_hidden.cols() == c.ffn_dim());
        REQUIRE(t.block_out.rows() == seq);
        REQUIRE(t.block_out.cols() == c.d_model);
        CHECK(c.ffn_dim() == (c.d_ff == 0 ? 4 * c.d_model : c.d_ff));
        using testutil::Flatten;
        // Relative to each tensor's scale (testutil::Float32Tol): the attention's d_model
        // and the FFN's d_ff terms are the sums on the way.
        const double n = c.d_model + c.ffn_dim();
        CHECK_F32_CLOSE("out", t.out.data(), Flatten(o.out), n);
        if (norm == mha::Norm::Pre) {
          REQUIRE(t.ffn_ln.rows() == seq);
          CHECK_F32_CLOSE("ffn_ln", t.ffn_ln.data(), Flatten(o.ffn_ln), n);
        } else {
          CHECK(t.ffn_ln.size() == 0);
        }
        CHECK_F32_CLOSE("ffn_hidden", t.ffn_hidden.data(), Flatten(o.ffn_hidden), n);
        CHECK_F32_CLOSE("ffn_out", t.ffn_out.data(), Flatten(o.ffn_out), n);
        CHECK_F32_CLOSE("block_out", t.block_out.data(), Flatten(o.block_out), n);
        ++ran;
      }
    }
  }
  CHECK(ran == 60);
}

TEST_CASE("the oracle comparison can fail: a wrong activation is caught", "[ffn][oracle]") {
  std::mt19937 rng(9);
  mha::Config c = SmallEncoder(mha::Norm::Post, mha::Activation::Gelu);
  const mha::Inputs in = RandomInputs(rng, 5, 5, c.d_model, false);
  auto w = std::make_shared<mha::Weights>(mha::InitWeights(c));
  const mha::Trace t = mha::Forward(c, w, in);
  mha::Config relu = c;
  relu.activation = mha::Activation::Relu;
  const oracle::Result o = oracle::Mha(relu, *w, in);
  const auto want = testutil::Flatten(o.ffn_hidden);
  const double tol = testutil::Float32Tol(want, c.d_model + c.ffn_dim());
  const auto d = testutil::Compare("ffn_hidden", t.ffn_hidden.data(), want, tol, 0);
  CHECK_FALSE(d.ok);
}

TEST_CASE("the attention sublayer is the same with and without the encoder block", "[ffn]") {
  std::mt19937 rng(3);
  for (auto norm : {mha::Norm::Post, mha::Norm::Pre, mha::Norm::None}) {
    mha::Config enc = SmallEncoder(norm, mha::Activation::Relu);
    mha::Config att = enc;
    att.block = mha::Block::Attention;
    const mha::Inputs in = RandomInputs(rng, 4, 4, enc.d_model, false);
    auto we = std::make_shared<mha::Weights>(mha::InitWeights(enc));
    auto wa = std::make_shared<mha::Weights>(mha::InitWeights(att));
    // The FFN weights come from their own streams: the attention weights do not move.
    CHECK(we->W_q == wa->W_q);
    CHECK(we->W_o == wa->W_o);
    CHECK(wa->ffn_W1.size() == 0);
    const mha::Trace te = mha::Forward(enc, we, in), ta = mha::Forward(att, wa, in);
    CHECK(te.out == ta.out);
    CHECK(ta.block_out.size() == 0);
    CHECK(ta.ffn_hidden.size() == 0);
  }
}

TEST_CASE("toggling the block on a reused trace fills and then empties the FFN tensors", "[ffn]") {
  std::mt19937 rng(5);
  mha::Config enc = SmallEncoder(mha::Norm::Pre, mha::Activation::Gelu);
  const mha::Inputs in = RandomInputs(rng, 3, 3, enc.d_model, false);
  auto w = std::make_shared<mha::Weights>(mha::InitWeights(enc));
  mha::Trace t;
  mha::Forward(enc, w, in, t);
  CHECK(t.block_out.rows() == 3);
  CHECK(t.ffn_ln.rows() == 3);
  mha::Config att = enc;
  att.block = mha::Block::Attention;
  mha::Forward(att, w, in, t);
  CHECK(t.block_out.size() == 0);
  CHECK(t.ffn_ln.size() == 0);
  CHECK(ByName(t).count("block_out") == 0);
  mha::Forward(enc, w, in, t);
  CHECK(t.block_out.rows() == 3);
}

TEST_CASE("the encoder block with attention-only weights is a teaching error, not a crash", "[ffn]") {
  std::mt19937 rng(6);
  mha::Config att = SmallEncoder(mha::Norm::Post, mha::Activation::Relu);
  att.block = mha::Block::Attention;
  const mha::Inputs in = RandomInputs(rng, 3, 3, att.d_model, false);
  auto w = std::make_shared<const mha::Weights>(mha::InitWeights(att));
  mha::Trace t;
  mha::Forward(att, w, in, t);
  mha::Config enc = att;
  enc.block = mha::Block::Encoder;
  // Same weights object: Forward skips CheckWeights, the FFN must still refuse.
  CHECK_THROWS_WITH(mha::Forward(enc, w, in, t), Catch::Contains("ffn_W1") && Catch::Contains("attention-only"));
  CHECK_THROWS_AS(mha::Forward(enc, w, in), mha::Error);

  // Wrong d_ff for the weights.
  auto we = std::make_shared<const mha::Weights>(mha::InitWeights(enc));
  mha::Config wider = enc;
  wider.d_ff = 4 * enc.d_model + 1;
  CHECK_THROWS_WITH(mha::Forward(wider, we, in), Catch::Contains("ffn_W1") && Catch::Contains("d_ff"));

  // Non-finite FFN weights.
  auto bad = std::make_shared<mha::Weights>(mha::InitWeights(enc));
  bad->ffn_W2(1, 2) = std::nanf("");
  CHECK_THROWS_WITH(mha::CheckWeights(*bad, enc), Catch::Contains("ffn_W2") && Catch::Contains("NaN"));
}

TEST_CASE("d_ff is validated with a message that gives the usual choice", "[ffn]") {
  mha::Config c = SmallEncoder(mha::Norm::Post, mha::Activation::Relu);
  c.d_ff = mha::Limits::kMaxDFf + 1;
  CHECK_THROWS_WITH(mha::Validate(c, 3, 3), Catch::Contains("d_ff") && Catch::Contains("4 x d_model = 48"));
  c.d_ff = -1;
  CHECK_THROWS_AS(mha::Validate(c, 3, 3), mha::Error);
  c.block = mha::Block::Attention;  // d_ff does not matter for attention only
  CHECK_NOTHROW(mha::Validate(c, 3, 3));
  c.block = mha::Block::Encoder;
  c.d_ff = 0;
  CHECK(c.ffn_dim() == 48);
  CHECK_NOTHROW(mha::Validate(c, 3, 3));
  // The memory estimate grows with the FFN (it guards the cap before allocating).
  mha::Config a = c;
  a.block = mha::Block::Attention;
  CHECK(mha::EstimateTraceBytes(c, 3, 3) > mha::EstimateTraceBytes(a, 3, 3));
}

TEST_CASE("export: encoder tensors are present with their shapes, and the flow's parameters add up to them",
          "[ffn][flow]") {
  std::mt19937 rng(8);
  for (auto block : {mha::Block::Attention, mha::Block::Encoder}) {
    for (auto norm : {mha::Norm::Post, mha::Norm::Pre, mha::Norm::None}) {
      mha::Config c = SmallEncoder(norm, mha::Activation::Gelu);
      c.block = block;
      c.d_ff = 20;
      c.num_kv_heads = 1;
      const mha::Inputs in = RandomInputs(rng, 5, 5, c.d_model, false);
      auto w = std::make_shared<const mha::Weights>(mha::InitWeights(c));
      const mha::Trace t = mha::Forward(c, w, in);
      const auto m = ByName(t);
      INFO("block " << mha::ToString(block) << " norm " << mha::ToString(norm));
      const bool enc = block == mha::Block::Encoder;
      for (const char* k : {"ffn_W1", "ffn_b1", "ffn_W2", "ffn_b2", "ln2_gamma", "ln2_beta", "ffn_hidden", "ffn_out",
                            "ffn_residual", "block_out"})
        CHECK(m.count(k) == (enc ? 1u : 0u));
      CHECK(m.count("ffn_ln") == (enc && norm == mha::Norm::Pre ? 1u : 0u));
      if (enc) {
        using S = std::vector<std::int64_t>;
        CHECK(m.at("ffn_W1").shape == S{12, 20});
        CHECK(m.at("ffn_b1").shape == S{20});
        CHECK(m.at("ffn_W2").shape == S{20, 12});
        CHECK(m.at("ffn_b2").shape == S{12});
        CHECK(m.at("ffn_hidden").shape == S{1, 5, 20});
        CHECK(m.at("block_out").shape == S{1, 5, 12});
        CHECK(m.at("block_out").data == t.block_out.data());
        CHECK(m.at("ffn_W1").data == w->ffn_W1.data());
        // Each exported tensor's data holds exactly size() floats of its matrix.
        CHECK(m.at("ffn_hidden").size() == t.ffn_hidden.size());
      }
      // Learned numbers: every exported weight tensor, counted by element, must equal
      // the shape-flow table's total (LayerNorm parameters only count when used).
      std::int64_t exported = 0;
      static const std::set<std::string> kAlways = {"W_q", "b_q", "W_k",    "b_k",    "W_v",    "b_v",
                                                    "W_o", "b_o", "ffn_W1", "ffn_b1", "ffn_W2", "ffn_b2"};
      for (const auto& [name, v] : m) {
        const bool ln = name == "ln_gamma" || name == "ln_beta" || name == "ln2_gamma" || name == "ln2_beta";
        if (kAlways.count(name) || (ln && norm != mha::Norm::None)) exported += v.size();
      }
      std::int64_t flow_params = 0;
      for (const auto& r : t.flow) flow_params += r.param_count;
      CHECK(flow_params == exported);
      // The last row produces the block's final tensor.
      CHECK(t.flow.back().tensor == (enc ? "block_out" : "out"));
    }
  }
}

TEST_CASE("shape flow: FFN rows carry d_ff and the FLOPs of two matrix products", "[ffn][flow]") {
  mha::Config c = SmallEncoder(mha::Norm::Post, mha::Activation::Relu);
  c.d_ff = 32;
  const auto flow = mha::ShapeFlow(c, 7, 7);
  const mha::FlowRow* up = nullptr;
  const mha::FlowRow* down = nullptr;
  for (const auto& r : flow) {
    if (r.tensor == "ffn_hidden") up = &r;
    if (r.tensor == "ffn_out") down = &r;
  }
  REQUIRE(up);
  REQUIRE(down);
  CHECK(up->shape == std::vector<std::int64_t>{1, 7, 32});
  CHECK(up->param_count == 12 * 32 + 32);
  CHECK(down->param_count == 32 * 12 + 12);
  // A (7 x 12)(12 x 32) product is 7 * 32 dot products of length 12: 2 * 12 FLOPs each.
  CHECK(up->flops >= 2 * 7 * 12 * 32);
  CHECK(up->flops < 2 * 7 * 12 * 32 + 7 * 32 * 10);
  CHECK(down->flops == 2 * 7 * 32 * 12 + 7 * 12);
  c.block = mha::Block::Attention;
  for (const auto& r : mha::ShapeFlow(c, 7, 7)) CHECK(r.tensor.rfind("ffn", 0) != 0);
}
