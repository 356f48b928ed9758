// The kernels' own forms against the plainest form of the same operations, bit for
// bit: a weight gradient packed a depth block at a time against one pass of the GEMM
// kernel over the whole batch, K^T packed by register transposes against a copy
// element by element, the optimizer's vector lanes against its scalar tail, the ReLU
// derivative's vector step against its scalar compare. Each
// holds on every build (AVX-512, AVX2, portable), whichever form that build uses.
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_ps()
// (GCC bug 105593, fixed in 13); it must be silenced before they are first included.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "mha/mha.hpp"
#include "mha/train.hpp"
#include "../../core/src/batch_gemm.hpp"
#include "../../core/src/gemm.hpp"
#include "../../core/src/simd.hpp"

namespace {

using fixtures::RandomMat;
using mha::detail::kNR;

bool SameBits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, sizeof(float) * n) == 0; }

// grad = a^T d the plainest way the kernel runs it: every panel of d packed whole,
// then one PanelAT over all of the batch's rows (one chain per element, no blocks).
mha::Mat OnePassWeightGrad(const mha::Mat& a, const mha::Mat& d) {
  const int rows = static_cast<int>(a.rows()), in = static_cast<int>(a.cols()), out = static_cast<int>(d.cols());
  mha::Mat g(in, out);
  std::vector<float> panel(mha::detail::PanelFloats(rows));
  for (int j0 = 0; j0 < out; j0 += kNR) {
    const int nc = std::min(kNR, out - j0);
    mha::detail::PackB(d.data() + j0, out, rows, nc, panel.data());
    mha::detail::PanelAT(in, rows, a.data(), in, panel.data(), kNR, g.data() + j0, out, nc, nullptr, 1.0f);
  }
  return g;
}

}  // namespace

TEST_CASE("a weight gradient in depth blocks has the bits of one pass of the kernel", "[train][gemm]") {
  // Shapes for every form: B packed (rows a multiple of 256 bytes apart, or a last
  // partial panel) and read in place (4112 columns), depth blocks and a partial one,
  // several blocks of rows of the gradient with strips of 5 and 6 rows, 1 to 3 threads.
  std::mt19937 rng(41);
  mha::detail::Pool pool;
  mha::detail::GemmScratch scratch;
  struct Shape {
    int rows, in, out;
  };
  for (const Shape sh :
       {Shape{600, 64, 64}, Shape{300, 130, 256}, Shape{257, 70, 11}, Shape{520, 20, 4112}, Shape{5, 3, 33}})
    for (int threads : {1, 2, 3}) {
      const mha::Mat a = RandomMat(rng, sh.rows, sh.in), d = RandomMat(rng, sh.rows, sh.out);
      mha::Mat g(sh.in, sh.out);
      mha::detail::WeightGrad(pool, threads, a, d, g, scratch);
      const mha::Mat want = OnePassWeightGrad(a, d);
      INFO("rows " << sh.rows << ", in " << sh.in << ", out " << sh.out << ", threads " << threads);
      CHECK(SameBits(g.data(), want.data(), static_cast<std::size_t>(g.size())));
    }
}

TEST_CASE("K^T packed as panels is the transpose, zeros past the last column", "[gemm]") {
  std::mt19937 rng(42);
  for (int k : {3, 8, 16, 21, 64, 67})
    for (int nc : {1, 7, 8, 9, 16, kNR}) {
      if (nc > kNR) continue;
      const int ld = k + 5;  // rows of B^T further apart than k
      const mha::Mat bt = RandomMat(rng, nc, ld);
      std::vector<float> panel(mha::detail::PanelFloats(k), -1.0f), want(panel.size());
      for (int p = 0; p < k; ++p)
        for (int j = 0; j < kNR; ++j) want[static_cast<std::size_t>(p) * kNR + j] = j < nc ? bt(j, p) : 0.0f;
      mha::detail::PackBT(bt.data(), ld, k, nc, panel.data());
      INFO("k " << k << ", nc " << nc);
      CHECK(SameBits(panel.data(), want.data(), want.size()));
    }
}

TEST_CASE("AdamW's vector lanes round every element as its scalar tail does", "[train][adamw]") {
  // Every element of a tensor starts equal and gets the same gradient, so every
  // element must stay equal; tensors whose sizes are not a multiple of 16 put some
  // elements in the vector loop and some in the scalar tail.
  mha::ModelConfig mc;
  mc.layer.d_model = 12;
  mc.layer.num_heads = 2;
  mc.num_layers = 1;
  mc.positional = mha::Positional::Learned;
  mc.max_seq = 3;
  for (int i = 0; i < 19; ++i) mc.vocab.push_back("t" + std::to_string(i));
  mha::Model m = mha::InitModel(mc), g = mha::ZerosLike(m);
  mha::ForEachTensor(m, [](const char*, int, auto& t) { t.setConstant(0.37f); });
  mha::OptimConfig oc;
  oc.clip = 0;  // the clipping's coefficient is one number for all: left out of the check
  mha::AdamW opt(m, oc);
  // Gradients of many magnitudes and both signs, so that some step rounds a fused and
  // an unfused multiply-add differently (a vector path that unfused one fails).
  const float grads[] = {0.23f, -0.011f, 1.7f, 3.1e-3f, -0.57f, 0.093f, -2.9f, 0.41f};
  int tensors = 0;
  for (float gv : grads) {
    mha::ForEachTensor(g, [&](const char*, int, auto& t) { t.setConstant(gv); });
    opt.Step(m, g);
    tensors = 0;
    mha::ForEachTensor(m, [&](const char* name, int, auto& t) {
      INFO(name << ", " << t.size() << " elements, gradient " << gv);
      for (Eigen::Index i = 1; i < t.size(); ++i)
        if (std::memcmp(t.data(), t.data() + i, sizeof(float)) != 0) {
          FAIL_CHECK("element " << i << " is " << t.data()[i] << ", element 0 is " << t.data()[0]);
          break;
        }
      ++tensors;
    });
  }
  CHECK(tensors > 4);
}

TEST_CASE("the ReLU derivative's vector step is x > 0 ? 1 : 0, bit for bit", "[train][simd]") {
  using mha::simd::kWidth;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 1e-45f, -1e-45f, 1e-38f, inf, -inf, nan, -nan, 3.4e38f};
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  while (x.size() % kWidth != 0 || x.size() < 256) x.push_back(normal(rng));
  std::vector<float> got(x.size());
  for (std::size_t i = 0; i < x.size(); i += kWidth)
    mha::simd::Store(got.data() + i, mha::simd::Step(mha::simd::Load(x.data() + i)));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = x[i] > 0.0f ? 1.0f : 0.0f;
    INFO("x = " << x[i]);
    CHECK(SameBits(&got[i], &want, 1));
  }
}
