// Numerical properties of the forward pass over many random configurations (seeded),
// and the numerical edge cases: fully masked rows, huge logits, the largest values and
// sizes the validation lets through.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "mha/mha.hpp"
#include "fixtures.hpp"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::int64_t Product(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

using fixtures::RandomMat;

struct RandomCase {
  mha::Config cfg;
  mha::Inputs in;
  std::shared_ptr<const mha::Weights> w;
};

// A random valid configuration with random inputs, at scales from tiny to large.
RandomCase MakeCase(std::mt19937& rng) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomCase c;
  mha::Config& cfg = c.cfg;
  cfg.num_heads = uni(1, 16);
  cfg.d_model = cfg.num_heads * uni(1, 12);
  std::vector<int> kv;
  for (int g = 1; g <= cfg.num_heads; ++g)
    if (cfg.num_heads % g == 0) kv.push_back(g);
  cfg.num_kv_heads = uni(0, 2) == 0 ? 0 : kv[uni(0, static_cast<int>(kv.size()) - 1)];
  cfg.seed = static_cast<std::uint64_t>(uni(0, 1 << 30));
  cfg.norm = static_cast<mha::Norm>(uni(0, 2));
  cfg.scale = uni(0, 3) != 0;
  cfg.positional_encoding = uni(0, 1) == 1;
  cfg.temperature = std::pow(2.0f, static_cast<float>(uni(-3, 3)));
  const bool cross = uni(0, 3) == 0;
  cfg.mask = !cross && uni(0, 1) ? mha::Mask::Causal : mha::Mask::None;
  const int seq = uni(1, 12), seq_kv = cross ? uni(1, 12) : seq;
  const float scale = std::pow(10.0f, std::uniform_real_distribution<float>(-3.0f, 2.0f)(rng));
  c.in.x = RandomMat(rng, seq, cfg.d_model, scale);
  c.in.tokens.assign(seq, "t");
  if (cross) {
    c.in.memory = RandomMat(rng, seq_kv, cfg.d_model, scale);
    c.in.memory_tokens.assign(seq_kv, "m");
  }
  auto w = std::make_shared<mha::Weights>(mha::InitWeights(cfg));
  if (uni(0, 2) == 0) {  // non-trivial LayerNorm parameters now and then
    w->ln_gamma = mha::RowVec::Random(cfg.d_model).array() + 1.5f;
    w->ln_beta = mha::RowVec::Random(cfg.d_model);
  }
  c.w = w;
  return c;
}

void CheckTrace(const RandomCase& c, const mha::Trace& t) {
  const mha::Config& cfg = c.cfg;
  const int H = cfg.num_heads, G = cfg.kv_heads(), hd = cfg.head_dim(), d = cfg.d_model;
  const int s = static_cast<int>(c.in.x.rows());
  const int skv = c.in.cross() ? static_cast<int>(c.in.memory.rows()) : s;
  INFO("d_model " << d << " heads " << H << " kv " << G << " seq " << s << " seq_kv " << skv << " mask "
                  << mha::ToString(cfg.mask) << " norm " << mha::ToString(cfg.norm) << " scale " << cfg.scale << " T "
                  << cfg.temperature << " |x| " << c.in.x.cwiseAbs().maxCoeff());
  REQUIRE(t.seq == s);
  REQUIRE(t.seq_kv == skv);
  // Shapes of the stored matrices: (1, H, S, D) tensors are (H*S, D).
  CHECK((t.q.rows() == H * s && t.q.cols() == hd));
  CHECK((t.k.rows() == G * skv && t.k.cols() == hd));
  CHECK((t.v.rows() == G * skv && t.v.cols() == hd));
  CHECK((t.scores.rows() == H * s && t.scores.cols() == skv));
  CHECK((t.attn.rows() == H * s && t.attn.cols() == skv));
  CHECK((t.context.rows() == H * s && t.context.cols() == hd));
  for (const mha::Mat* m : {&t.concat, &t.attn_out, &t.residual, &t.out}) CHECK((m->rows() == s && m->cols() == d));
  // Every named tensor's shape covers exactly its data; each shape-flow row's shape
  // holds as many numbers as the tensor it names.
  const auto views = mha::Tensors(t);
  for (const auto& v : views) {
    INFO("tensor " << v.name << " " << mha::ShapeString(v.shape));
    CHECK(v.data != nullptr);
  }
  auto find = [&](const std::string& name) -> const mha::TensorView* {
    for (const auto& v : views)
      if (v.name == name) return &v;
    return nullptr;
  };
  CHECK(Product(find("attn")->shape) == t.attn.size());
  CHECK(Product(find("q")->shape) == t.q.size());
  CHECK(Product(find("k")->shape) == t.k.size());
  CHECK(Product(find("out")->shape) == t.out.size());
  for (const auto& row : t.flow) {
    const mha::TensorView* v = find(row.tensor);
    INFO("flow row " << row.step << " names tensor " << row.tensor);
    REQUIRE(v != nullptr);
    CHECK(Product(row.shape) == Product(v->shape));
    CHECK(row.shape.front() == 1);
  }
  // Finite everywhere; attention weights are a probability distribution per row.
  CHECK(t.q.allFinite());
  CHECK(t.attn.allFinite());
  CHECK(t.context.allFinite());
  CHECK(t.out.allFinite());
  CHECK(t.attn.minCoeff() >= 0.0f);
  CHECK(t.attn.maxCoeff() <= 1.0f);
  double worst = 0;
  for (Eigen::Index r = 0; r < t.attn.rows(); ++r)
    worst = std::max(worst, std::abs(t.attn.row(r).cast<double>().sum() - 1.0));
  CHECK(worst < 1e-5);
  if (cfg.mask == mha::Mask::Causal) {
    for (int h = 0; h < H; ++h) {
      const auto a = t.AttnHead(h);
      for (int i = 0; i < s; ++i)
        for (int j = i + 1; j < skv; ++j) {
          INFO("head " << h << " query " << i << " key " << j);
          CHECK(a(i, j) == 0.0f);
        }
    }
  }
  // Post-LN with gamma = 1, beta = 0: every output row has mean 0 and variance ~1.
  if (cfg.norm == mha::Norm::Post && (c.w->ln_gamma.array() == 1.0f).all() && (c.w->ln_beta.array() == 0.0f).all()) {
    for (int r = 0; r < s; ++r) {
      const Eigen::RowVectorXd o = t.out.row(r).cast<double>();
      const double mean = o.mean();
      const double var = (o.array() - mean).square().mean();
      const Eigen::RowVectorXd res = t.residual.row(r).cast<double>();
      const double rvar = (res.array() - res.mean()).square().mean();
      CHECK(std::abs(mean) < 1e-4);
      if (rvar > 1e-2 && d > 1) CHECK(std::abs(var - rvar / (rvar + cfg.ln_eps)) < 1e-3);
    }
  }
}

// Softmax in double of one row, as a reference.
std::vector<double> SoftmaxRef(const float* row, int n) {
  double m = -INFINITY;
  for (int j = 0; j < n; ++j) m = std::max(m, double(row[j]));
  std::vector<double> out(n, 0.0);
  if (m == -INFINITY) return out;
  double sum = 0;
  for (int j = 0; j < n; ++j) sum += out[j] = std::exp(double(row[j]) - m);
  for (auto& v : out) v /= sum;
  return out;
}

}  // namespace

TEST_CASE("random configurations: shapes, finiteness, rows summing to 1", "[properties]") {
  std::mt19937 rng(0x6d686176);  // fixed: a failure reproduces; INFO names the case
  constexpr int kCases = 400;
  for (int i = 0; i < kCases; ++i) {
    const RandomCase c = MakeCase(rng);
    INFO("case " << i);
    const mha::Trace t = mha::Forward(c.cfg, c.w, c.in);
    CheckTrace(c, t);
  }
}

TEST_CASE("random sentences through the tokenizer and embedding", "[properties]") {
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"the", "cat", "sat",  "고양이가", "쥐를",     "잡았다", ",",
                                          "!",   "…",   "\xff", "mat.",     "「안녕」", "😀",      "a\xe3\x81"};
  for (int i = 0; i < 100; ++i) {
    std::string sentence;
    const int n = std::uniform_int_distribution<int>(1, 20)(rng);
    for (int k = 0; k < n; ++k) sentence += words[rng() % words.size()] + (rng() % 4 ? " " : "");
    RandomCase c = MakeCase(rng);
    c.in = mha::MakeInputs(sentence, rng() % 3 ? "" : "a memory sentence", c.cfg);
    if (c.in.cross()) c.cfg.mask = mha::Mask::None;
    INFO("sentence '" << sentence << "'");
    CHECK(c.in.x.allFinite());
    CHECK(c.in.x.rows() == static_cast<Eigen::Index>(c.in.tokens.size()));
    const mha::Trace t = mha::Forward(c.cfg, c.w, c.in);
    CheckTrace(c, t);
  }
}

TEST_CASE("SoftmaxRow: a fully masked row gives zeros, not NaN", "[properties][softmax]") {
  for (int n : {1, 2, 7, 64}) {
    std::vector<float> row(n, -kInf);
    mha::SoftmaxRow(row.data(), n);
    for (float v : row) CHECK(v == 0.0f);
  }
  mha::SoftmaxRow(nullptr, 0);  // an empty row is a no-op, not a crash
}

TEST_CASE("SoftmaxRow: partially masked rows, huge and tiny logits", "[properties][softmax]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float magnitude : {1.0f, 1e2f, 1e4f, 1e8f, 1e30f, 3e38f}) {
    for (int trial = 0; trial < 50; ++trial) {
      const int n = 1 + static_cast<int>(rng() % 40);
      std::vector<float> row(n);
      for (auto& v : row) v = u(rng) * magnitude;
      for (int j = 0; j < n; ++j)
        if (rng() % 4 == 0) row[j] = -kInf;  // masked
      const bool all_masked = std::all_of(row.begin(), row.end(), [](float v) { return v == -kInf; });
      const std::vector<double> ref = SoftmaxRef(row.data(), n);
      std::vector<float> got = row;
      mha::SoftmaxRow(got.data(), n);
      INFO("magnitude " << magnitude << " n " << n);
      double sum = 0;
      for (int j = 0; j < n; ++j) {
        REQUIRE(std::isfinite(got[j]));
        CHECK(got[j] >= 0.0f);
        CHECK(std::abs(got[j] - ref[j]) < 1e-6);
        if (row[j] == -kInf) CHECK(got[j] == 0.0f);
        sum += got[j];
      }
      if (!all_masked) CHECK(std::abs(sum - 1.0) < 1e-5);
    }
  }
}

TEST_CASE("huge logits (scores ~1e4) give finite, one-hot-like attention", "[properties][softmax]") {
  std::mt19937 rng(5);
  mha::Config cfg;
  cfg.d_model = 64;
  cfg.num_heads = 4;
  for (mha::Mask mask : {mha::Mask::None, mha::Mask::Causal}) {
    cfg.mask = mask;
    mha::Inputs in;
    in.x = RandomMat(rng, 9, cfg.d_model, 1.0f);
    in.tokens.assign(9, "t");
    auto w = std::make_shared<mha::Weights>(mha::InitWeights(cfg));
    // Scale W_q and W_k until the largest score is about 1e4.
    const float probe = mha::Forward(cfg, w, in).scores.cwiseAbs().redux([](float a, float b) {
      return std::isinf(a) ? b : std::isinf(b) ? a : std::max(a, b);
    });
    const float k = std::sqrt(1e4f / probe);
    w->W_q *= k;
    w->W_k *= k;
    w->b_q *= k;
    w->b_k *= k;
    const mha::Trace t = mha::Forward(cfg, w, in);
    float max_score = 0;
    for (Eigen::Index i = 0; i < t.scores.size(); ++i)
      if (std::isfinite(t.scores.data()[i])) max_score = std::max(max_score, std::abs(t.scores.data()[i]));
    INFO("mask " << mha::ToString(mask) << " max |score| " << max_score);
    CHECK(max_score > 5e3f);
    CHECK(t.attn.allFinite());
    CHECK(t.out.allFinite());
    for (Eigen::Index r = 0; r < t.attn.rows(); ++r) {
      const std::vector<double> ref = SoftmaxRef(&t.scores(r, 0), static_cast<int>(t.scores.cols()));
      for (Eigen::Index j = 0; j < t.attn.cols(); ++j) CHECK(std::abs(t.attn(r, j) - ref[j]) < 1e-6);
      CHECK(std::abs(t.attn.row(r).sum() - 1.0f) < 1e-5f);
    }
  }
}

TEST_CASE("the largest values validation lets through cannot overflow", "[properties][limits]") {
  // Worst case for float32: d_model at the cap, one head (head_dim 4096), no scaling,
  // the smallest temperature, pre-LN with gamma = beta = the cap, and inputs/weights of
  // magnitude kMaxAbsValue. Every number must stay finite.
  mha::Config cfg;
  cfg.d_model = mha::Limits::kMaxDModel;
  cfg.num_heads = 1;
  cfg.scale = false;
  cfg.temperature = mha::Limits::kMinTemperature;
  const float c = mha::Limits::kMaxAbsValue;
  const int d = cfg.d_model;
  for (mha::Norm norm : {mha::Norm::Pre, mha::Norm::Post, mha::Norm::None}) {
    cfg.norm = norm;
    mha::Inputs in;
    in.x = mha::Mat::Constant(3, d, -c);
    in.x(0, 0) = c;  // one outlier maximises LN(x) for pre-LN
    in.x(2, 5) = c;
    in.tokens.assign(3, "t");
    auto w = std::make_shared<mha::Weights>();
    w->W_q = w->W_k = w->W_v = w->W_o = mha::Mat::Constant(d, d, c);
    w->b_q = w->b_k = w->b_v = w->b_o = mha::RowVec::Constant(d, c);
    w->ln_gamma = w->ln_beta = mha::RowVec::Constant(d, c);
    const mha::Trace t = mha::Forward(cfg, w, in);
    INFO("norm " << mha::ToString(norm) << " max |score| " << t.scores.cwiseAbs().maxCoeff());
    CHECK(t.scores.allFinite());
    CHECK(t.attn.allFinite());
    CHECK(t.attn_out.allFinite());
    CHECK(t.out.allFinite());
  }
}

TEST_CASE("the encoder block's FFN at the value limits cannot overflow", "[properties][limits]") {
  // The FFN sums d_ff = kMaxDFf products per output; with every weight at kMaxAbsValue
  // and a pre-LN residual stream already large, the block output must stay finite.
  mha::Config cfg;
  cfg.d_model = 1024;
  cfg.num_heads = 1;
  cfg.block = mha::Block::Encoder;
  cfg.d_ff = mha::Limits::kMaxDFf;
  cfg.temperature = mha::Limits::kMinTemperature;
  const float c = mha::Limits::kMaxAbsValue;
  for (mha::Norm norm : {mha::Norm::Pre, mha::Norm::Post}) {
    for (mha::Activation act : {mha::Activation::Relu, mha::Activation::Gelu}) {
      cfg.norm = norm;
      cfg.activation = act;
      mha::Inputs in;
      in.x = mha::Mat::Constant(2, cfg.d_model, c);
      in.x(0, 3) = -c;
      in.tokens.assign(2, "t");
      auto w = std::make_shared<mha::Weights>();
      w->W_q = w->W_k = w->W_v = w->W_o = mha::Mat::Constant(cfg.d_model, cfg.d_model, c);
      w->b_q = w->b_k = w->b_v = w->b_o = mha::RowVec::Constant(cfg.d_model, c);
      w->ln_gamma = w->ln_beta = mha::RowVec::Constant(cfg.d_model, c);
      w->ffn_W1 = mha::Mat::Constant(cfg.d_model, cfg.d_ff, c);
      w->ffn_W2 = mha::Mat::Constant(cfg.d_ff, cfg.d_model, c);
      w->ffn_b1 = mha::RowVec::Constant(cfg.d_ff, c);
      w->ffn_b2 = w->ln2_gamma = w->ln2_beta = mha::RowVec::Constant(cfg.d_model, c);
      const mha::Trace t = mha::Forward(cfg, w, in);
      INFO("norm " << mha::ToString(norm) << " activation " << mha::ToString(act));
      CHECK(t.attn.allFinite());
      CHECK(t.ffn_hidden.allFinite());
      CHECK(t.block_out.allFinite());
    }
  }
}

TEST_CASE("d_model at the cap runs without NaN", "[properties][limits]") {
  for (int heads : {8, 256}) {
    mha::Config cfg;
    cfg.d_model = mha::Limits::kMaxDModel;
    cfg.num_heads = heads;
    cfg.num_kv_heads = heads / 4;
    cfg.mask = mha::Mask::Causal;
    cfg.norm = heads == 8 ? mha::Norm::Pre : mha::Norm::Post;
    const mha::Inputs in = mha::MakeInputs("고양이가 쥐를 잡았다 and the cat sat on the mat", "", cfg);
    const mha::Trace t = mha::Forward(cfg, std::make_shared<const mha::Weights>(mha::InitWeights(cfg)), in);
    INFO("heads " << heads);
    CHECK(t.attn.allFinite());
    CHECK(t.out.allFinite());
    for (Eigen::Index r = 0; r < t.attn.rows(); ++r) CHECK(std::abs(t.attn.row(r).sum() - 1.0f) < 1e-5f);
  }
}

TEST_CASE("Validate accepts exactly the configurations that can run", "[properties][validate]") {
  std::mt19937 rng(3);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int accepted = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    mha::Config cfg;
    if (uni(0, 1)) {  // mostly plausible: d_model a multiple of num_heads
      cfg.num_heads = uni(1, 300);
      cfg.d_model = cfg.num_heads * uni(1, 40) + (uni(0, 5) == 0 ? uni(-3, 3) : 0);
      cfg.num_kv_heads = uni(0, 1) ? cfg.num_heads / uni(1, 8) : uni(-1, 20);
    } else {
      cfg.d_model = uni(-4, 5000);
      cfg.num_heads = uni(-2, 300);
      cfg.num_kv_heads = uni(-1, 20);
    }
    const int seq = uni(-1, 1100), seq_kv = uni(0, 2) ? seq : uni(-1, 1100);
    // An independent statement of the rules.
    const int g = cfg.num_kv_heads > 0 ? cfg.num_kv_heads : cfg.num_heads;
    bool ok = cfg.d_model > 0 && cfg.d_model <= mha::Limits::kMaxDModel && cfg.num_heads > 0 &&
              cfg.num_heads <= mha::Limits::kMaxHeads && cfg.num_heads <= cfg.d_model &&
              cfg.d_model % cfg.num_heads == 0 && cfg.num_kv_heads >= 0 && g <= cfg.num_heads &&
              cfg.num_heads % g == 0 && seq > 0 && seq_kv > 0 && seq <= mha::Limits::kMaxTokens &&
              seq_kv <= mha::Limits::kMaxTokens;
    if (ok) ok = mha::EstimateTraceBytes(cfg, seq, seq_kv) <= mha::Limits::kMaxTraceBytes;
    INFO("d_model " << cfg.d_model << " heads " << cfg.num_heads << " kv " << cfg.num_kv_heads << " seq " << seq
                    << " seq_kv " << seq_kv);
    if (ok) {
      CHECK_NOTHROW(mha::Validate(cfg, seq, seq_kv));
      ++accepted;
    } else {
      try {
        mha::Validate(cfg, seq, seq_kv);
        FAIL("accepted an invalid configuration");
      } catch (const mha::Error& e) {
        const std::string msg = e.what();
        CHECK(msg.size() > 30);  // a sentence, not a code
      }
      ++refused;
    }
  }
  CHECK(accepted > 100);
  CHECK(refused > 100);
}
