// TrainingRun's options for `mhaviz train`: a batch file instead of a task, a given
// held-out set, a caller-fixed model configuration, snapshots without weights, and a
// callback after every step of RunHere. The oracle is the plain loop mhaviz train ran
// before it used TrainingRun: Trainer::Gradients, then AdamW::Step, on the same batch.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include "mha/training_run.hpp"

using namespace mha;

namespace {

ModelConfig SmallModel(const TaskSpec& t) {
  ModelConfig m;
  m.layer.d_model = 8;
  m.layer.num_heads = 2;
  m.layer.norm = Norm::Pre;
  m.layer.block = Block::Attention;
  m.layer.mask = Mask::Causal;
  m.layer.seed = 3;
  m.num_layers = 1;
  m.positional = Positional::Learned;
  m.vocab = TaskVocab(t);
  m.num_targets = NumTargets(t);
  m.max_seq = t.seq;
  return m;
}

}  // namespace

TEST_CASE("a run on a batch file takes the same steps as the plain loop on that batch", "[train][run]") {
  TaskSpec t;
  t.seq = 6;
  t.vocab = 5;
  auto data = std::make_shared<Batch>();
  MakeBatch(t, 11, 0, 8, *data);
  TrainSetup s;
  s.model = SmallModel(t);
  s.model_given = true;
  s.data = data;
  s.steps = 12;
  s.threads = 1;
  s.optim.lr = 1e-2f;
  s.optim.total_steps = s.steps;
  TrainingRun run(s);
  int calls = 0;
  run.RunHere(nullptr, [&calls](const Progress&) { ++calls; });
  CHECK(calls == s.steps + 1);  // after every step, and once at the end
  const auto p = run.Latest();
  REQUIRE(p->finished);
  REQUIRE(p->curve.size() == 12u);

  Model m = InitModel(s.model);
  Model g = ZerosLike(m);
  Trainer trainer(1);
  AdamW opt(m, run.setup().optim);
  for (int step = 0; step < s.steps; ++step) {
    const StepStats st = trainer.Gradients(m, *data, g);
    const double norm = opt.Step(m, g);
    CHECK(p->curve[static_cast<std::size_t>(step)].loss == static_cast<float>(st.loss));
    CHECK(p->curve[static_cast<std::size_t>(step)].grad_norm == norm);
  }
  std::vector<ParamView> a = Parameters(m), b = Parameters(const_cast<Model&>(run.model()));
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    CHECK(std::memcmp(a[i].data, b[i].data, sizeof(float) * static_cast<std::size_t>(a[i].size())) == 0);
  // Evaluated on the data itself; the probe is its first sequence.
  const StepStats held = trainer.Evaluate(m, *data);
  CHECK(p->snapshots.back()->heldout.loss == held.loss);
  CHECK(p->snapshots.back()->probe.tokens == std::vector<int>(data->tokens.begin(), data->tokens.begin() + t.seq));
}

TEST_CASE("a given model keeps its configuration, and a given held-out set is the one evaluated", "[train][run]") {
  TaskSpec t;
  t.seq = 6;
  t.vocab = 5;
  TrainSetup s;
  s.task = t;
  s.model = SmallModel(t);
  s.model.layer.mask = Mask::None;  // offsets needs causal; the caller's choice stands
  s.model_given = true;
  auto heldout = std::make_shared<Batch>();
  MakeBatch(t, 99, 0, 12, *heldout);
  s.heldout = heldout;
  s.steps = 4;
  s.batch = 8;
  s.snapshot_weights = false;
  s.snapshot_every = 4;
  TrainingRun run(s);
  run.RunHere();
  const auto p = run.Latest();
  CHECK(run.model().cfg.layer.mask == Mask::None);
  CHECK(run.setup().heldout_batch == 12);
  REQUIRE(p->snapshots.size() == 2u);  // steps 0 and 4
  for (const auto& snap : p->snapshots) {
    CHECK(snap->model == nullptr);  // no weights kept
    CHECK(snap->probe.layers.size() == 1u);
    CHECK(snap->heads.size() == 2u);
  }
  Trainer trainer(1);
  CHECK(p->snapshots.back()->heldout.loss == trainer.Evaluate(run.model(), *heldout).loss);

  TrainSetup derived = s;
  derived.model_given = false;
  Prepare(derived);
  CHECK(derived.model.layer.mask == Mask::Causal);  // without model_given the task decides
}

TEST_CASE("a batch file that does not fit the given model is refused before training", "[train][run]") {
  TaskSpec t;
  t.seq = 6;
  t.vocab = 5;
  auto data = std::make_shared<Batch>();
  MakeBatch(t, 1, 0, 2, *data);
  TrainSetup s;
  s.model = SmallModel(t);
  s.model.vocab.resize(3);  // the batch has ids up to 4
  s.model_given = true;
  s.data = data;
  CHECK_THROWS_WITH(TrainingRun(s), Catch::Contains("vocabulary"));
}

TEST_CASE("the setup's messages name the caller's controls: flags for mhaviz train, the app's own", "[train][run]") {
  TaskSpec t;
  t.seq = 6;
  t.vocab = 5;
  TrainSetup s = DefaultSetup(t);
  s.max_activation_bytes = 1.0;  // every run is over it
  auto why = [](TrainSetup u) {
    try {
      Prepare(u);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(why(s), Catch::Contains("Use a smaller --batch, --seq or d_model."));
  s.names.smaller = "a smaller d_model (Configuration)";
  const std::string app = why(s);
  CHECK_THAT(app, Catch::Contains("Use a smaller d_model (Configuration)."));
  CHECK_THAT(app, !Catch::Contains("--"));
  s.max_activation_bytes = 1e9;
  s.steps = -1;
  s.names.steps = "steps (Train settings)";
  CHECK_THAT(why(s), Catch::StartsWith("steps (Train settings) must be 0 to 1000000"));
}

TEST_CASE("a task run evaluates on HeldOutBatch, the held-out examples trace --model --example shows", "[train][run]") {
  TaskSpec t;
  t.seq = 6;
  t.vocab = 5;
  TrainSetup s = DefaultSetup(t);
  s.model = SmallModel(t);
  s.model_given = true;
  s.data_seed = 21;
  s.heldout_batch = 16;
  s.probe_index = 3;
  s.steps = 2;
  s.batch = 8;
  s.snapshot_every = 2;
  TrainingRun run(s);
  run.RunHere();
  Batch heldout;
  HeldOutBatch(t, s.data_seed, 0, s.heldout_batch, heldout);
  const auto p = run.Latest();
  const ModelTrace& probe = p->snapshots.back()->probe;
  REQUIRE(probe.tokens.size() == static_cast<std::size_t>(t.seq));
  for (int i = 0; i < t.seq; ++i) CHECK(probe.tokens[static_cast<std::size_t>(i)] == heldout.token(s.probe_index, i));
  Trainer trainer(1);
  CHECK(p->snapshots.back()->heldout.loss == trainer.Evaluate(run.model(), heldout).loss);
  // Never a training batch: those are MakeBatch(task, data_seed, step, ...).
  Batch first;
  MakeBatch(t, s.data_seed, 0, s.heldout_batch, first);
  CHECK(first.tokens != heldout.tokens);
}
