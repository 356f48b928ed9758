// The training engine: gradients against finite differences of a double-precision
// oracle that shares no code with core/src, determinism across thread counts, the
// optimiser's schedule, bad input, and heads that specialise on the synthetic tasks.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <chrono>

#include "mha/mha.hpp"
#include "model_oracle.hpp"
#include "../../core/src/batch_gemm.hpp"

namespace {

using namespace mha;

struct Case {
  const char* name;
  int layers, d_model, heads, kv_heads;
  Norm norm;
  Block block;
  Activation act;
  Mask mask;
  Positional pos;
  int targets;
};

// A tiny model whose every parameter matters: LayerNorm gains and biases moved off
// their initial 1 and 0, so their gradients are not special cases.
Model TinyModel(const Case& c, std::uint64_t seed, int max_seq = 6, int d_ff = 12) {
  ModelConfig mc;
  mc.layer.d_model = c.d_model;
  mc.layer.num_heads = c.heads;
  mc.layer.num_kv_heads = c.kv_heads;
  mc.layer.norm = c.norm;
  mc.layer.block = c.block;
  mc.layer.d_ff = d_ff;
  mc.layer.activation = c.act;
  mc.layer.mask = c.mask;
  mc.layer.temperature = 1.3f;
  mc.layer.seed = seed;
  mc.num_layers = c.layers;
  mc.positional = c.pos;
  mc.max_seq = max_seq;
  mc.vocab = {"a", "b", "c", "d", "e"};
  mc.num_targets = c.targets;
  Model m = InitModel(mc);
  std::uint64_t state = seed * 7919 + 1;
  auto jitter = [&]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((state >> 40) % 1000) / 1000.0f - 0.5f;
  };
  ForEachTensor(m, [&](const char* name, int, auto& t) {
    const std::string n = name;
    if (n.find("gamma") != std::string::npos || n.find("beta") != std::string::npos || n.rfind("b_", 0) == 0 ||
        n == "ffn_b1" || n == "ffn_b2")
      for (Eigen::Index i = 0; i < t.size(); ++i) t.data()[i] += 0.6f * jitter();
  });
  return m;
}

Batch TinyBatch(const ModelConfig& mc, int batch, int seq, std::uint64_t seed) {
  Batch b;
  b.batch = batch;
  b.seq = seq;
  b.num_targets = mc.num_targets;
  std::uint64_t state = seed + 17;
  auto next = [&](int n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  for (int i = 0; i < batch * seq; ++i) b.tokens.push_back(next(mc.vocab_size()));
  for (int i = 0; i < batch * seq * mc.num_targets; ++i)
    b.targets.push_back(i % 4 == 3 ? -1 : next(mc.vocab_size()));  // some positions predict nothing
  return b;
}

const Case kCases[] = {
    {"post-LN attention, 1 layer", 1, 8, 2, 0, Norm::Post, Block::Attention, Activation::Relu, Mask::None,
     Positional::Sinusoidal, 1},
    {"pre-LN, causal, learned PE, 2 targets", 2, 8, 2, 0, Norm::Pre, Block::Attention, Activation::Relu, Mask::Causal,
     Positional::Learned, 2},
    {"no norm, GQA 4 heads on 2 K/V heads", 1, 8, 4, 2, Norm::None, Block::Attention, Activation::Relu, Mask::Causal,
     Positional::None, 1},
    {"post-LN encoder block, ReLU, MQA", 2, 8, 2, 1, Norm::Post, Block::Encoder, Activation::Relu, Mask::None,
     Positional::Sinusoidal, 1},
    {"pre-LN encoder block, GELU", 2, 8, 4, 0, Norm::Pre, Block::Encoder, Activation::Gelu, Mask::Causal,
     Positional::Learned, 2},
    {"no norm encoder block, GELU, 3 layers", 3, 4, 1, 0, Norm::None, Block::Encoder, Activation::Gelu, Mask::None,
     Positional::Sinusoidal, 1},
};

}  // namespace

TEST_CASE("the loss equals a double-precision oracle's, and every gradient its finite difference", "[train]") {
  for (const Case& c : kCases) {
    INFO(c.name);
    Model m = TinyModel(c, 3);
    const Batch b = TinyBatch(m.cfg, 3, 5, 11);
    Model g = ZerosLike(m);
    Trainer trainer(1);
    const double loss = trainer.Gradients(m, b, g).loss;
    const double want = oracle::ModelLoss(m, b);
    CHECK(std::abs(loss - want) <= 1e-5 * std::abs(want));

    // Central differences on the oracle: the float parameter moves by +-h (rounded to
    // float), and the difference quotient divides by the change actually made.
    std::vector<ParamView> params = Parameters(m), grads = Parameters(g);
    for (std::size_t p = 0; p < params.size(); ++p) {
      double num = 0, den = 0, worst = 0;
      for (std::int64_t i = 0; i < params[p].size(); ++i) {
        float& w = params[p].data[i];
        const float w0 = w, h = 1e-4f;  // small: a ReLU kink rarely lies within +-h
        w = w0 + h;
        const double up = oracle::ModelLoss(m, b), wu = w;
        w = w0 - h;
        const double down = oracle::ModelLoss(m, b), wd = w;
        w = w0;
        const double fd = (up - down) / (wu - wd);
        const double e = grads[p].data[i] - fd;
        num += e * e;
        den += fd * fd;
        worst = std::max(worst, std::abs(e));
      }
      INFO(params[p].name << ": |grad - fd| = " << std::sqrt(num) << " vs |fd| = " << std::sqrt(den)
                          << ", worst element " << worst);
      CHECK(std::sqrt(num) <= 2e-3 * std::sqrt(den) + 2e-6);
    }
  }
}

TEST_CASE("a training step is bit-identical on 1, 2, 3 and 6 threads", "[train][threads]") {
  // A model with enough work that the Trainer runs it on all the threads it is given,
  // and every kind of sum over the batch (GQA's shared heads, both LayerNorms, the
  // FFN, the biases, the embeddings, 2 targets); 72 sequences of 16: 1152 rows, several
  // row blocks of every batched GEMM. 3 and 6 threads cut the column sums into other
  // stripes than 1 and 2 do (d_model 64 is four vectors or fewer, d_ff 96 six or fewer).
  const Case c{"pre-LN encoder block, GELU, GQA",
               2,
               64,
               4,
               2,
               Norm::Pre,
               Block::Encoder,
               Activation::Gelu,
               Mask::Causal,
               Positional::Learned,
               2};
  Model m1 = TinyModel(c, 5, 16, 96);
  const Batch b = TinyBatch(m1.cfg, 72, 16, 2);
  Model g1 = ZerosLike(m1);
  Trainer t1(1);
  AdamW o1(m1, OptimConfig{});
  std::vector<double> l1;
  for (int step = 0; step < 3; ++step) {
    l1.push_back(t1.Gradients(m1, b, g1).loss);
    REQUIRE(t1.threads() == 1);
    o1.Step(m1, g1);
  }
  for (int threads : {2, 3, 6}) {
    INFO(threads << " threads");
    Model m2 = TinyModel(c, 5, 16, 96);
    Model g2 = ZerosLike(m2);
    Trainer t2(threads);
    AdamW o2(m2, OptimConfig{});
    for (int step = 0; step < 3; ++step) {
      const double l2 = t2.Gradients(m2, b, g2).loss;
      REQUIRE(t2.threads() == threads);
      CHECK(l1[step] == l2);
      o2.Step(m2, g2);
    }
    std::vector<ParamView> p1 = Parameters(m1), p2 = Parameters(m2);
    for (std::size_t i = 0; i < p1.size(); ++i) {
      INFO(p1[i].name);
      CHECK(std::memcmp(p1[i].data, p2[i].data, sizeof(float) * p1[i].size()) == 0);
    }
  }
}

TEST_CASE("the optimizer step on a Trainer's threads has the bits of AdamW::Step", "[train][threads]") {
  // Enough parameters for 2 and 3 threads (about 210K: 64K a thread), tensors longer
  // than one task's chunk (W1: 100 x 333, which also ends off the vector width), and
  // gradients large enough to be clipped, then with clipping off.
  ModelConfig mc;
  mc.layer.d_model = 100;
  mc.layer.num_heads = 4;
  mc.layer.block = Block::Encoder;
  mc.layer.d_ff = 333;
  mc.num_layers = 2;
  mc.positional = Positional::Learned;
  mc.max_seq = 16;
  mc.vocab = {"a", "b", "c", "d", "e", "f", "g"};
  for (float clip : {1.0f, 0.0f}) {
    for (int threads : {2, 3}) {
      INFO("clip " << clip << ", " << threads << " threads");
      Model m1 = InitModel(mc), m2 = InitModel(mc);
      Model g1 = ZerosLike(m1), g2 = ZerosLike(m2);
      OptimConfig oc;
      oc.clip = clip;
      AdamW o1(m1, oc), o2(m2, oc);
      Trainer t(threads);
      std::uint64_t state = 3;
      for (int step = 0; step < 3; ++step) {
        std::vector<ParamView> v1 = Parameters(g1), v2 = Parameters(g2);
        for (std::size_t i = 0; i < v1.size(); ++i)
          for (std::int64_t j = 0; j < static_cast<std::int64_t>(v1[i].size()); ++j) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            v1[i].data[j] = v2[i].data[j] =
                static_cast<float>(static_cast<std::int64_t>(state >> 41) - (1 << 22)) / static_cast<float>(1 << 22);
          }
        const double n1 = o1.Step(m1, g1);
        const double n2 = t.Update(o2, m2, g2);
        CHECK(n1 == n2);
      }
      std::vector<ParamView> p1 = Parameters(m1), p2 = Parameters(m2), q1 = Parameters(g1), q2 = Parameters(g2);
      for (std::size_t i = 0; i < p1.size(); ++i) {
        INFO(p1[i].name);
        CHECK(std::memcmp(p1[i].data, p2[i].data, sizeof(float) * p1[i].size()) == 0);
        CHECK(std::memcmp(q1[i].data, q2[i].data, sizeof(float) * q1[i].size()) == 0);  // clipped alike
      }
    }
  }
}

TEST_CASE("column sums cut into stripes on the pool add every column's rows in order", "[train][threads]") {
  // The bias gradients' sums: whatever the thread count, each column gets exactly the
  // chain grad + row 0 + row 1 + ... of one scalar loop (widths around a vector's 16
  // and 8 floats, and a 4000-token vocabulary's).
  detail::Pool pool;
  std::uint64_t state = 11;
  auto next = [&]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<std::int64_t>(state >> 40) - (1 << 23)) / 1024.0f;
  };
  for (int cols : {1, 7, 8, 9, 15, 16, 17, 33, 64, 100, 130, 4000}) {
    for (int rows : {1, 5, 300}) {
      Mat d(rows, cols);
      for (Eigen::Index i = 0; i < d.size(); ++i) d.data()[i] = next() * (i % 3 == 0 ? 1e-4f : 1.0f);
      RowVec start(cols);
      for (int j = 0; j < cols; ++j) start[j] = next();
      RowVec want = start;
      for (int r = 0; r < rows; ++r)
        for (int j = 0; j < cols; ++j) want[j] += d(r, j);
      for (int threads : {1, 2, 3, 16}) {
        INFO(rows << " x " << cols << ", " << threads << " threads");
        RowVec got = start;
        detail::AccumulateColumnSums(pool, threads, d, got);
        CHECK(std::memcmp(got.data(), want.data(), sizeof(float) * cols) == 0);
      }
    }
  }
}

TEST_CASE("a step's memory estimate covers what its traces keep, GELU's derivative included", "[train]") {
  // A wide FFN on narrow rows: GELU' (seq x d_ff per layer) outweighs what the lean
  // trace leaves out, so an estimate of the whole trace alone would fall short.
  for (Activation act : {Activation::Relu, Activation::Gelu}) {
    for (Norm norm : {Norm::Pre, Norm::Post}) {
      const Case c{"wide FFN", 2, 8, 2, 0, norm, Block::Encoder, act, Mask::Causal, Positional::Learned, 1};
      Model m = TinyModel(c, 3, 64, 512);
      const Batch b = TinyBatch(m.cfg, 3, 64, 1);
      Model g = ZerosLike(m);
      Trainer t(1);
      t.Gradients(m, b, g);
      std::size_t kept = 0;
      for (int l = 0; l < m.cfg.num_layers; ++l) {
        const mha::Trace& tr = t.LayerTrace(l);
        for (const mha::Mat* x : {&tr.in.x, &tr.x_ln, &tr.q, &tr.k, &tr.v, &tr.scores, &tr.attn, &tr.context,
                                  &tr.concat, &tr.attn_out, &tr.residual, &tr.out, &tr.ffn_ln, &tr.ffn_hidden,
                                  &tr.ffn_out, &tr.ffn_residual, &tr.block_out, &tr.ffn_act_grad})
          kept += static_cast<std::size_t>(x->size()) * sizeof(float);
        kept += static_cast<std::size_t>(tr.ln_stats.size() + tr.ln2_stats.size()) * sizeof(double);
      }
      INFO(mha::ToString(act) << ", " << mha::ToString(norm) << ": kept " << kept << " bytes");
      CHECK((act == Activation::Gelu) == (t.LayerTrace(0).ffn_act_grad.size() > 0));
      const std::size_t whole = mha::EstimateTraceBytes(m.cfg.LayerConfig(), b.seq, b.seq) * b.batch * m.cfg.num_layers;
      CHECK(kept <= mha::EstimateStepTraceBytes(m.cfg.LayerConfig(), b.seq) * b.batch * m.cfg.num_layers);
      if (act == Activation::Gelu) CHECK(kept > whole);  // the case this test is for
    }
  }
}

TEST_CASE("accuracy counts a target as predicted where it is the first largest logit", "[train]") {
  // A zero unembedding: every row's logits are the biases, whose maximum ties. Only the
  // first of the tied logits is the prediction, as std::max_element picks it.
  Model m = TinyModel(kCases[1], 5);
  for (int k = 0; k < m.cfg.num_targets; ++k) {
    m.unembed[k].setZero();
    m.unembed_b[k].setZero();
    m.unembed_b[k][1] = 1.0f;  // the row's maximum at tokens 1 and 3: the prediction is 1
    m.unembed_b[k][3] = 1.0f;
  }
  const Batch b = TinyBatch(m.cfg, 9, 6, 4);
  std::vector<std::int64_t> hits(m.cfg.num_targets, 0), counted(m.cfg.num_targets, 0);
  for (int s = 0; s < b.batch; ++s)
    for (int i = 0; i < b.seq; ++i)
      for (int k = 0; k < b.num_targets; ++k)
        if (b.target(s, i, k) >= 0) ++counted[k], hits[k] += b.target(s, i, k) == 1;
  Trainer t(1);
  const StepStats& st = t.Evaluate(m, b);
  for (int k = 0; k < m.cfg.num_targets; ++k) {
    REQUIRE(hits[k] > 0);
    CHECK(st.accuracy[k] == static_cast<double>(hits[k]) / static_cast<double>(counted[k]));
  }
}

TEST_CASE("a small model's step runs on one thread, whatever the Trainer may use", "[train]") {
  // Its phases are too short to share: a second thread only added waiting.
  Model m = TinyModel(kCases[4], 5);
  const Batch b = TinyBatch(m.cfg, 40, 6, 2);
  Model g = ZerosLike(m);
  Trainer t(2);
  t.Gradients(m, b, g);
  CHECK(t.threads() == 1);
}

TEST_CASE("the learning rate warms up linearly, then decays along a cosine to min_lr", "[train]") {
  OptimConfig o;
  o.lr = 1.0f;
  o.warmup = 10;
  o.total_steps = 110;
  o.min_lr_ratio = 0.1f;
  CHECK(LearningRate(o, 0) == Approx(0.1));
  CHECK(LearningRate(o, 9) == Approx(1.0));
  CHECK(LearningRate(o, 10) == Approx(1.0));
  CHECK(LearningRate(o, 60) == Approx(0.55));  // halfway down the cosine
  CHECK(LearningRate(o, 110) == Approx(0.1));
  CHECK(LearningRate(o, 500) == Approx(0.1));
}

TEST_CASE("bad models and batches get teaching errors", "[train]") {
  ModelConfig mc;
  mc.layer.d_model = 16;
  mc.layer.num_heads = 3;
  mc.vocab = {"a", "b"};
  CHECK_THROWS_WITH(InitModel(mc), Catch::Contains("not divisible") || Catch::Contains("divide"));
  mc.layer.num_heads = 2;
  mc.num_layers = 7;
  CHECK_THROWS_WITH(InitModel(mc), Catch::Contains("layers"));
  mc.num_layers = 1;
  const Model m = InitModel(mc);
  Batch b = TinyBatch(m.cfg, 2, 4, 1);
  b.tokens[3] = 2;
  CHECK_THROWS_WITH(CheckBatch(m.cfg, b), Catch::Contains("outside the vocabulary"));
  b = TinyBatch(m.cfg, 2, 4, 1);
  b.targets[1] = -2;
  CHECK_THROWS_WITH(CheckBatch(m.cfg, b), Catch::Contains("-1"));
  b = TinyBatch(m.cfg, 2, 65, 1);
  CHECK_THROWS_WITH(CheckBatch(m.cfg, b), Catch::Contains("max_seq"));
  CHECK_THROWS_WITH(ParseTask("copy"), Catch::Contains("offsets"));
}

namespace {

struct Run {
  StepStats heldout;
  std::vector<HeadProfile> heads;
};

Run TrainTask(const TaskSpec& task, int layers, int heads, int d_model, int steps, float lr) {
  ModelConfig mc;
  mc.layer.d_model = d_model;
  mc.layer.num_heads = heads;
  mc.layer.mask = TaskMask(task);
  mc.layer.norm = Norm::Pre;
  mc.layer.seed = 1;
  mc.num_layers = layers;
  mc.positional = Positional::Learned;
  mc.max_seq = task.seq;
  mc.vocab = TaskVocab(task);
  mc.num_targets = NumTargets(task);
  Model m = InitModel(mc);
  Model g = ZerosLike(m);
  OptimConfig oc;
  oc.lr = lr;
  oc.warmup = steps / 20;
  oc.total_steps = steps;
  AdamW opt(m, oc);
  Trainer trainer(0);
  Batch b;
  for (int s = 0; s < steps; ++s) {
    MakeBatch(task, 7, s, 128, b);
    trainer.Gradients(m, b, g);
    opt.Step(m, g);
  }
  MakeBatch(task, 8, 0, 256, b);  // held out: another seed
  Run r;
  r.heads = ProfileHeads(trainer, m, b);
  r.heldout = trainer.Evaluate(m, b);
  return r;
}

}  // namespace

TEST_CASE("offsets: with 2 heads each head takes one offset, with 1 head the second offset fails", "[train][slow]") {
  TaskSpec task;  // offsets K = 2, vocab 11, seq 16
  const Run two = TrainTask(task, 1, 2, 16, 800, 1e-2f);
  CHECK(two.heldout.accuracy[0] >= 0.99);
  CHECK(two.heldout.accuracy[1] >= 0.99);
  REQUIRE(two.heads.size() == 2);
  // Each head puts >= 0.9 of its weight on a different offset.
  const HeadProfile& a = two.heads[0];
  const HeadProfile& b = two.heads[1];
  INFO("head 0: " << a.label << " " << a.back[0] << "/" << a.back[1] << "; head 1: " << b.label << " " << b.back[0]
                  << "/" << b.back[1]);
  CHECK(std::max(a.back[0], a.back[1]) >= 0.9);
  CHECK(std::max(b.back[0], b.back[1]) >= 0.9);
  CHECK(a.label != b.label);
  CHECK((a.label == "previous-token" || a.label == "2-back"));
  CHECK((b.label == "previous-token" || b.label == "2-back"));

  const Run one = TrainTask(task, 1, 1, 16, 800, 1e-2f);
  INFO("1 head: accuracy " << one.heldout.accuracy[0] << " / " << one.heldout.accuracy[1]);
  CHECK(one.heldout.accuracy[1] < 0.5);
}

TEST_CASE("induction: two layers solve the repeat, one layer cannot", "[train][slow]") {
  TaskSpec task;
  task.kind = TaskKind::Induction;
  task.vocab = 16;
  task.seq = 16;
  const Run two = TrainTask(task, 2, 2, 32, 600, 3e-3f);
  const Run one = TrainTask(task, 1, 2, 32, 600, 3e-3f);
  INFO("2 layers " << two.heldout.accuracy[0] << ", 1 layer " << one.heldout.accuracy[0]);
  CHECK(two.heldout.accuracy[0] >= 0.95);
  CHECK(one.heldout.accuracy[0] <= 0.75);
  // Layer 0 holds a previous-token head, layer 1 an induction head.
  bool prev = false, induction = false;
  for (const HeadProfile& h : two.heads) {
    prev |= h.layer == 0 && h.label == "previous-token";
    induction |= h.layer == 1 && h.label == "induction";
  }
  CHECK(prev);
  CHECK(induction);
}

TEST_CASE("a training run on its worker thread publishes progress, pauses, and equals a run on the caller's thread",
          "[train][run]") {
  TaskSpec task;  // offsets
  TrainSetup s = DefaultSetup(task);
  s.steps = 60;
  s.snapshot_every = 20;
  s.heldout_batch = 16;
  TrainingRun worker(s), here(s);
  REQUIRE(worker.Latest());
  CHECK(worker.Latest()->snapshots.size() == 1);  // step 0, before training
  CHECK(worker.Latest()->step == 0);
  worker.Start();
  worker.Pause();
  // Paused: the step count stops moving.
  for (int i = 0; i < 200 && !worker.Latest()->paused; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int at = worker.Latest()->step;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(worker.Latest()->step == at);
  worker.Start();  // resume
  worker.Wait();
  here.RunHere();
  const auto a = worker.Latest(), b = here.Latest();
  CHECK(a->finished);
  CHECK(a->step == 60);
  CHECK(a->curve.size() == 60);
  REQUIRE(a->snapshots.size() == 4);  // steps 0, 20, 40, 60
  CHECK(a->snapshots.back()->step == 60);
  CHECK(a->snapshots.back()->probe.layers.size() == 1);
  // Pausing changes nothing: the same weights as the run without a worker.
  std::vector<ParamView> pa = Parameters(const_cast<Model&>(*a->snapshots.back()->model));
  std::vector<ParamView> pb = Parameters(const_cast<Model&>(*b->snapshots.back()->model));
  for (std::size_t i = 0; i < pa.size(); ++i)
    CHECK(std::memcmp(pa[i].data, pb[i].data, sizeof(float) * pa[i].size()) == 0);
  CHECK(a->curve.back().loss < a->curve.front().loss);
}

TEST_CASE("a diverging run stops with a message that says at which step and what to try", "[train][run]") {
  TaskSpec task;
  TrainSetup s = DefaultSetup(task);
  s.steps = 40;
  s.optim.lr = 1e6f;
  s.optim.clip = 0;
  s.heldout_batch = 8;
  TrainingRun run(s);
  run.RunHere();
  const auto p = run.Latest();
  CHECK(p->diverged);
  CHECK_FALSE(p->finished);
  CHECK_THAT(p->message, Catch::Contains("step") && Catch::Contains("--lr"));
}
