// "No heap allocation per recompute when the shapes have not changed": this test
// binary replaces malloc and friends (operator new, Eigen and the OpenMP runtime all
// end up there) with counting versions, then runs Forward again on a warm Trace.
// Its own executable, so the replacement touches no other test.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "mha/mha.hpp"
#include "fixtures.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
inline void Count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(std::size_t n) {
  Count();
  return __libc_malloc(n);
}
void* calloc(std::size_t a, std::size_t b) {
  Count();
  return __libc_calloc(a, b);
}
void* realloc(void* p, std::size_t n) {
  Count();
  return __libc_realloc(p, n);
}
void* memalign(std::size_t a, std::size_t n) {
  Count();
  return __libc_memalign(a, n);
}
void* aligned_alloc(std::size_t a, std::size_t n) {
  Count();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, std::size_t a, std::size_t n) {
  Count();
  *p = __libc_memalign(a, n);
  return *p ? 0 : ENOMEM;
}
void free(void* p) { __libc_free(p); }
}

namespace {

// Allocations made while `body` runs, on any thread.
template <class F>
long AllocationsDuring(F&& body) {
  g_allocations = 0;
  g_counting = true;
  body();
  g_counting = false;
  return g_allocations.load();
}

using fixtures::RandomInputs;

}  // namespace

TEST_CASE("the counter sees allocations (so the tests below can fail)", "[alloc]") {
  CHECK(AllocationsDuring([] {
          std::vector<int> v(1000);
          REQUIRE(v.size() == 1000);
        }) > 0);
  CHECK(AllocationsDuring([] {
          mha::Mat m(10, 10);
          REQUIRE(m.size() == 100);
        }) > 0);
  // A forward pass on a new Trace allocates its buffers: counted too.
  mha::Config cfg;
  cfg.d_model = 64;
  cfg.num_heads = 4;
  std::mt19937 rng(1);
  const mha::Inputs in = RandomInputs(rng, 10, 10, 64, false);
  auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
  CHECK(AllocationsDuring([&] { mha::Trace t = mha::Forward(cfg, w, in); }) > 0);
}

TEST_CASE("a repeated same-shape forward pass allocates nothing", "[alloc]") {
  struct Case {
    int seq, seq_kv, d, heads, kv_heads, threads;
    bool cross;
    mha::Mask mask;
    mha::Norm norm;
    mha::Block block = mha::Block::Attention;
  };
  const Case cases[] = {
      {32, 32, 512, 8, 8, 1, false, mha::Mask::None, mha::Norm::Post},                       // the lesson's size
      {32, 32, 512, 8, 8, 2, false, mha::Mask::None, mha::Norm::Post},                       // two threads
      {20, 20, 96, 6, 2, 2, false, mha::Mask::Causal, mha::Norm::Pre},                       // GQA, pre-LN
      {12, 30, 64, 4, 4, 1, true, mha::Mask::None, mha::Norm::None},                         // cross-attention
      {300, 300, 64, 16, 16, 2, false, mha::Mask::None, mha::Norm::Post},                    // long: streamed trace
      {32, 32, 512, 8, 8, 2, false, mha::Mask::None, mha::Norm::Post, mha::Block::Encoder},  // + FFN
      {20, 20, 64, 4, 4, 1, false, mha::Mask::Causal, mha::Norm::Pre, mha::Block::Encoder},
  };
  std::mt19937 rng(2);
  for (const Case& c : cases) {
    mha::Config cfg = fixtures::Layer(c.d, c.heads, c.kv_heads, c.mask, c.norm, c.block);
    cfg.threads = c.threads;
    auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
    const mha::Inputs first = RandomInputs(rng, c.seq, c.seq_kv, c.d, c.cross);
    const mha::Inputs second = RandomInputs(rng, c.seq, c.seq_kv, c.d, c.cross);
    mha::Trace t;
    mha::Forward(cfg, w, first, t);  // allocates the buffers (and starts the threads)
    INFO("seq " << c.seq << " d_model " << c.d << " heads " << c.heads << " threads " << c.threads);
    // Same shapes, new values, a slider moved: nothing to allocate.
    CHECK(AllocationsDuring([&] { mha::Forward(cfg, w, second, t); }) == 0);
    cfg.temperature = 0.5f;
    CHECK(AllocationsDuring([&] { mha::Forward(cfg, w, first, t); }) == 0);
    // Typing: scattered rows change (more runs of rows than before), then none.
    mha::Inputs typed = first;  // the input of the last pass, with every other row edited
    for (int i = 0; i < c.seq; i += 2) typed.x(i, 0) += 1.0f;
    CHECK(AllocationsDuring([&] { mha::Forward(cfg, w, typed, t); }) == 0);
    CHECK(AllocationsDuring([&] { mha::Forward(cfg, w, typed, t); }) == 0);
    cfg.mask = c.cross ? mha::Mask::None : mha::Mask::Causal;  // another slider
    cfg.scale = false;
    CHECK(AllocationsDuring([&] { mha::Forward(cfg, w, second, t); }) == 0);
    // The sublayer alone (what `mhaviz bench` times), on its own warm trace.
    mha::Trace sub;
    mha::ForwardAttention(cfg, w, first, sub);
    CHECK(AllocationsDuring([&] { mha::ForwardAttention(cfg, w, second, sub); }) == 0);
  }
}

TEST_CASE("a repeated same-shape Flash attention pass allocates nothing", "[alloc][flash]") {
  std::mt19937 rng(4);
  for (int threads : {1, 2}) {
    mha::Config cfg = fixtures::Layer(96, 6, 2, mha::Mask::Causal, mha::Norm::Pre);
    cfg.attention = mha::Attention::Flash;
    cfg.flash_br = 16, cfg.flash_bc = 40;  // tiles that do not divide the 150 tokens
    cfg.threads = threads;
    auto w = std::make_shared<const mha::Weights>(mha::InitWeights(cfg));
    const mha::Inputs first = RandomInputs(rng, 150, 150, 96, false);
    const mha::Inputs second = RandomInputs(rng, 150, 150, 96, false);
    mha::Trace t;
    mha::Forward(cfg, w, first, t);
    INFO("threads " << threads);
    CHECK(AllocationsDuring([&] { mha::Forward(cfg, w, second, t); }) == 0);
    mha::Trace sub;
    mha::ForwardAttention(cfg, w, first, sub);
    CHECK(AllocationsDuring([&] { mha::ForwardAttention(cfg, w, second, sub); }) == 0);
  }
}

TEST_CASE("the app's live recompute allocates nothing when no shape changes", "[alloc][live]") {
  // mha::Live, as the desktop app drives it: once each setting has been seen,
  // recomputing an unchanged choice or moving the temperature, the mask or the
  // sqrt(d_k) switch allocates nothing. (num_heads and the norm change tensor shapes,
  // the sentence goes through the tokenizer: those may allocate.)
  mha::Config cfg;
  cfg.d_model = 512;
  cfg.num_heads = 8;
  for (int threads : {1, 2}) {
    cfg.threads = threads;
    mha::Live live;
    mha::Trace t;
    mha::Mat mean;
    const std::string sentence = "the cat sat on the mat while the dog ran across the green field";
    auto run = [&](const mha::Config& c) {
      mha::LiveChoice ch;
      ch.cfg = c;
      ch.sentence = sentence;
      live.Recompute(ch, t, &mean);
    };
    std::vector<mha::Config> moves;
    mha::Config c = cfg;
    moves.push_back(c);
    c.temperature = 0.5f;
    moves.push_back(c);
    c.mask = mha::Mask::Causal;
    moves.push_back(c);
    c.scale = false;
    moves.push_back(c);
    c.num_heads = 16;  // allocates once (new shapes), then the same moves again
    moves.push_back(c);
    c.temperature = 2.0f;
    moves.push_back(c);
    c.mask = mha::Mask::None;
    moves.push_back(c);
    for (const auto& m : moves) run(m);  // warm-up
    run(moves[0]);
    INFO("threads " << threads);
    for (std::size_t i = 1; i < moves.size(); ++i) {
      if (moves[i].num_heads != moves[i - 1].num_heads) {
        run(moves[i]);
        continue;
      }
      INFO("move " << i << ": heads " << moves[i].num_heads << ", temperature " << moves[i].temperature);
      CHECK(AllocationsDuring([&] { run(moves[i]); }) == 0);
      CHECK(AllocationsDuring([&] { run(moves[i]); }) == 0);  // unchanged
    }
  }
}

TEST_CASE("a training step (forward, backward, AdamW) allocates nothing once the shapes are fixed", "[alloc][train]") {
  // The offsets demo's size runs on one thread, d_model 64 on both (Trainer::threads);
  // 300 tokens (a --data batch; tasks stop at 256) is past the length where Eigen's
  // own products would allocate.
  struct Size {
    mha::Block block;
    int d_model, threads, seq, batch;
  };
  for (const Size& size : {Size{mha::Block::Attention, 16, 1, 16, 96}, Size{mha::Block::Encoder, 16, 0, 16, 96},
                           Size{mha::Block::Attention, 64, 2, 16, 96}, Size{mha::Block::Encoder, 64, 2, 16, 96},
                           Size{mha::Block::Encoder, 16, 0, 300, 3}}) {
    const mha::Block block = size.block;
    const int d_model = size.d_model;
    mha::TaskSpec task;  // offsets, K = 2
    mha::ModelConfig mc;
    mc.layer.d_model = d_model;
    mc.layer.num_heads = 2;
    mc.layer.mask = mha::Mask::Causal;
    mc.layer.norm = mha::Norm::Pre;
    mc.layer.block = block;
    mc.layer.activation = mha::Activation::Gelu;
    mc.num_layers = 2;
    mc.positional = mha::Positional::Learned;
    mc.max_seq = size.seq;
    mc.vocab = mha::TaskVocab(task);
    mc.num_targets = mha::NumTargets(task);
    mha::Model m = mha::InitModel(mc);
    mha::Model g = mha::ZerosLike(m);
    mha::AdamW opt(m, mha::OptimConfig{});
    mha::Trainer trainer(2);
    mha::Batch b0, b1;
    auto make = [&](int seed, mha::Batch& b) {
      if (size.seq == task.seq) return mha::MakeBatch(task, 1, seed, size.batch, b);
      b.batch = size.batch;  // a long batch by hand: any tokens, targets on every other position
      b.seq = size.seq;
      b.num_targets = mc.num_targets;
      for (int i = 0; i < b.batch * b.seq; ++i) b.tokens.push_back((i * 7 + seed) % mc.vocab_size());
      for (int i = 0; i < b.batch * b.seq * b.num_targets; ++i)
        b.targets.push_back(i % 2 ? -1 : (i * 3 + seed) % mc.vocab_size());
    };
    make(0, b0);
    make(1, b1);
    for (int i = 0; i < 2; ++i) {  // warm up: buffers and worker threads
      trainer.Gradients(m, b0, g);
      trainer.Update(opt, m, g);  // the optimizer as training runs it
    }
    g_allocations = 0;
    g_counting = true;
    trainer.Gradients(m, b1, g);
    trainer.Update(opt, m, g);
    g_counting = false;
    INFO("block " << mha::ToString(block) << ", d_model " << d_model << ", seq " << size.seq);
    if (size.threads > 0) CHECK(trainer.threads() == size.threads);
    CHECK(g_allocations.load() == 0);
  }
}
