// Checkpoints round-trip, and LoadForTrace runs a saved model on typed ids or on a
// held-out example of its task, refusing what it cannot use with a teaching message.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "lm/model_trace.hpp"
#include "io/checkpoint.hpp"

namespace {

using Catch::Matchers::Contains;

mha::ModelConfig SmallConfig(int layers) {
  mha::TaskSpec t;
  t.kind = mha::TaskKind::Offsets;
  t.offsets = 2;
  t.vocab = 7;
  t.seq = 8;
  mha::ModelConfig c;
  c.layer.d_model = 8;
  c.layer.num_heads = 2;
  c.layer.norm = mha::Norm::Pre;
  c.layer.mask = mha::TaskMask(t);
  c.num_layers = layers;
  c.positional = mha::Positional::Learned;
  c.vocab = mha::TaskVocab(t);
  c.num_targets = mha::NumTargets(t);
  c.max_seq = t.seq;
  c.task = mha::TaskJson(t);
  return c;
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name) : path(std::string(P_tmpdir) + "/mhaviz_test_" + name) {}
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("a checkpoint round-trips every parameter and the configuration") {
  mha::Model m = mha::InitModel(SmallConfig(2));
  const mha::Model back = mha::io::DecodeModel(mha::io::DecodeNpz(mha::io::EncodeModel(m), "memory"), "memory");
  CHECK(back.cfg.num_layers == 2);
  CHECK(back.cfg.vocab == m.cfg.vocab);
  const mha::TaskSpec t = mha::io::ParseTaskJson(back.cfg.task, "task");
  CHECK(t.kind == mha::TaskKind::Offsets);
  CHECK((t.offsets == 2 && t.vocab == 7 && t.seq == 8));
  CHECK(back.cfg.layer.norm == mha::Norm::Pre);
  mha::Model& b = const_cast<mha::Model&>(back);
  const auto p = mha::Parameters(m), q = mha::Parameters(b);
  REQUIRE(p.size() == q.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    CHECK(p[i].name == q[i].name);
    for (std::int64_t j = 0; j < p[i].size(); ++j) REQUIRE(p[i].data[j] == q[i].data[j]);
  }
}

TEST_CASE("LoadForTrace runs a checkpoint on typed token ids and picks the layer") {
  mha::Model m = mha::InitModel(SmallConfig(2));
  TempFile f("load_for_trace.npz");
  mha::io::WriteFileAtomic(f.path, mha::io::EncodeModel(m));
  const auto r = mha::lm::LoadForTrace(f.path, "3 1, 4 1 5", 0, 1);
  CHECK(r.layer == 1);
  CHECK(r.trace.tokens == std::vector<int>{3, 1, 4, 1, 5});
  REQUIRE(r.trace.layers.size() == 2);
  CHECK(r.Layer().seq == 5);
  CHECK(r.Layer().in.tokens == std::vector<std::string>{"3", "1", "4", "1", "5"});
  // layer 1 reads what layer 0 wrote
  CHECK(r.trace.layers[1].in.x.isApprox(r.trace.layers[0].out));
}

TEST_CASE("LoadForTrace takes a held-out example of the checkpoint's task") {
  mha::Model m = mha::InitModel(SmallConfig(1));
  TempFile f("load_for_trace_example.npz");
  mha::io::WriteFileAtomic(f.path, mha::io::EncodeModel(m));
  mha::Batch b;
  mha::HeldOutBatch(mha::io::ParseTaskJson(m.cfg.task, "task"), m.cfg.layer.seed, 3, 1, b);
  const auto r = mha::lm::LoadForTrace(f.path, "", 3, 0);
  CHECK(r.trace.tokens == std::vector<int>(b.tokens.begin(), b.tokens.end()));
  // a different example is a different sequence
  CHECK(mha::lm::LoadForTrace(f.path, "", 4, 0).trace.tokens != r.trace.tokens);
}

TEST_CASE("LoadForTrace refuses what it cannot run, with a teaching message") {
  mha::Model m = mha::InitModel(SmallConfig(1));
  TempFile f("load_for_trace_bad.npz");
  mha::io::WriteFileAtomic(f.path, mha::io::EncodeModel(m));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path, "1 two 3", 0, 0), Contains("'two' is not one"));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path, "1 2.5", 0, 0), Contains("'2.5'"));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path, " , ", 0, 0), Contains("empty"));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path, "1 7", 0, 0), Contains("outside the model's vocabulary"));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path, "1 2", 0, 1), Contains("the model has 1 layer"));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path, "0 1 2 3 4 5 6 0 1", 0, 0), Contains("max_seq"));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path, "", -1, 0), Contains("0 or more"));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(f.path + ".missing", "1", 0, 0), Contains(".missing"));

  mha::ModelConfig no_task = SmallConfig(1);
  no_task.task.clear();
  mha::Model n = mha::InitModel(no_task);
  TempFile g("load_for_trace_no_task.npz");
  mha::io::WriteFileAtomic(g.path, mha::io::EncodeModel(n));
  CHECK_THROWS_WITH(mha::lm::LoadForTrace(g.path, "", 0, 0), Contains("--tokens"));
}
