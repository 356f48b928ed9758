// `mhaviz bench --train`: times one training step (forward over a batch, the loss,
// backward, clipping and the AdamW update) of the model `mhaviz train`'s flags describe.
// scripts/compare_torch_train.py times the same step in PyTorch, interleaved.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bench_live.hpp"
#include "cli/text_train.hpp"
#include "cli/train_cmd.hpp"
#include "cli/train_options.hpp"
#include "mha/mha.hpp"
#include "options/flags.hpp"
#include "options/timing.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

int BenchTrainCommand(const std::vector<std::string>& argv) {
  return Guard("bench", [&] {
    TrainOptions o;
    int repeat = 20;
    bool train_flag = false;
    TextTrainArgs text_args;
    CLI::App app{
        "Times one training step (forward, cross-entropy, backward, clipping, AdamW) of the model that\n"
        "mhaviz train's flags describe, on a batch of its task, after two warm-up steps. Compare with\n"
        "scripts/compare_torch_train.py. --task text times the language model on windows of --corpus,\n"
        "its vocabulary the --tokenizer's pieces, e.g. the shipped model's shape:\n"
        "  mhaviz bench --train --task text --corpus assets/corpus --tokenizer assets/models/mhaviz-small.model\n"
        "    --layers 2 --heads 4 --d-model 128 --block encoder --activation gelu --norm pre --pos learned\n"
        "    --seq 64 --batch 64 --repeat 5",
        "mhaviz bench --train"};
    app.footer(
        "Prints the kernels' instruction set, one line per step, and last one JSON object: isa (avx512,\n"
        "avx2, portable or scalar), the model (with its vocab and activation),\n"
        "batch, seq, threads (asked for), threads_used (a small model's step runs on fewer), repeat,\n"
        "median_ms and min_ms (wall clock), cpu_median_ms (the calling thread's CPU time), and\n"
        "optimizer_median_ms (the clipping and AdamW update within the step, wall clock).");
    app.add_flag("--train", train_flag, "time a training step (this mode)");
    AddTrainOptions(app, o);
    // mhaviz train's text flags but --repeat, which here counts the timed steps.
    const std::string text_group = "Text (--task text)";
    app.add_option("--corpus", text_args.corpus, "the text (as mhaviz train --task text)")->group(text_group);
    app.add_option("--tokenizer", text_args.tokenizer, "the SentencePiece .model whose pieces are the vocabulary")
        ->group(text_group);
    IntFlag(
        app, "--repeat", 1, 100000, [&repeat](int v) { repeat = v; }, "timed steps (default 20)");
    // How long `mhaviz train` runs and its warm-up shape the learning-rate schedule, not
    // what one step costs: refused here (with what to use instead), not ignored.
    static const std::pair<const char*, const char*> kNotTimed[] = {
        {"--steps", "sets how many steps `mhaviz train` runs"},
        {"--warmup", "sets `mhaviz train`'s learning-rate warm-up"}};
    for (const auto& [flag, what] : kNotTimed) {
      app.remove_option(app.get_option(flag));
      for (const std::string& arg : argv)
        if (arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0)
          throw UsageError(std::string(flag) + " " + what +
                           "; `mhaviz bench --train` times --repeat N steps (default " + std::to_string(repeat) +
                           ") after two warm-up steps, and a step costs the same at any " +
                           "point of the schedule. Use --repeat N.");
    }
    if (ParseFlags(app, "bench", argv)) {
      std::cout << app.help();
      return 0;
    }
    if (o.task.empty()) o.task = "offsets";
    const bool text_task = o.task == kTextTaskFlag;
    if (!text_task && (!text_args.corpus.empty() || !text_args.tokenizer.empty()))
      throw UsageError("--corpus and --tokenizer are for --task text; the " + o.task + " task makes its own data.");
    TaskSpec task;
    ModelConfig mc;
    std::shared_ptr<TextTraining> text;
    int seq = o.seq;
    try {  // a model the flags cannot describe is a usage error, as in `mhaviz train`
      if (text_task) {
        // Unreadable or corrupt text is not a usage error: Load's other errors pass.
        try {
          text = TextTraining::Load(text_args, o);
        } catch (const TextTraining::UsageError& e) {
          throw UsageError(e.what());
        }
        mc = text->NewModel(o);
      } else {
        task = TaskFromOptions(o);
        mc = ModelFromOptions(o, &task, NumTargets(task), task.seq);
        seq = task.seq;
      }
      CheckStepMemory(mc, o.batch, seq);
    } catch (const Error& e) {
      if (text_task && !text) throw;  // the corpus or tokenizer could not be read
      throw UsageError(e.what());
    }
    // Bounded like every bench mode: the timed steps and the two warm-up steps, at about
    // 6 FLOPs per parameter and token (forward 2, backward 4).
    const double step_flops = 6.0 * static_cast<double>(ParameterCount(mc)) * o.batch * seq;
    const double step_secs = step_flops / kEstimateTrainFlops;
    const long long affordable = static_cast<long long>(kBenchMaxSeconds / step_secs);
    if (repeat + 2 > affordable)
      throw UsageError("--repeat " + std::to_string(repeat) +
                       " training steps of this model would take longer than "
                       "bench's time cap of " +
                       SecondsText(kBenchMaxSeconds) + " (estimated; about " + SecondsText(step_secs) + " per step)." +
                       (affordable >= 3 ? " At this size use at most --repeat " + std::to_string(affordable - 2) + "."
                                        : " Use a smaller --batch, --seq or model."));
    Model m = InitModel(mc);
    Model g = ZerosLike(m);
    AdamW opt(m, OptimFromOptions(o));
    Trainer trainer(o.threads);
    Batch b;
    if (text)
      text->MakeBatch(o.seed, 0, o.batch, b);
    else
      MakeBatch(task, o.seed, 0, o.batch, b);
    for (int i = 0; i < 2; ++i) {  // warm-up: buffers, threads, caches
      trainer.Gradients(m, b, g);
      trainer.Update(opt, m, g);
    }
    std::cout << KernelIsaLine() << "\n";
    std::vector<double> ms, cpu, opt_ms;
    for (int i = 0; i < repeat; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = ThreadCpuMs();
      trainer.Gradients(m, b, g);
      const auto t1 = std::chrono::steady_clock::now();
      trainer.Update(opt, m, g);
      cpu.push_back(ThreadCpuMs() - c0);
      const auto t2 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
      opt_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
      std::printf("step %d: %.3f ms\n", i + 1, ms.back());
    }
    nlohmann::json j{{"mode", "train"},
                     {"isa", BuildKernelIsa().name},
                     {"layers", mc.num_layers},
                     {"d_model", mc.layer.d_model},
                     {"heads", mc.layer.num_heads},
                     {"block", ToString(mc.layer.block)},
                     {"norm", ToString(mc.layer.norm)},
                     {"params", ParameterCount(mc)},
                     {"batch", o.batch},
                     {"seq", seq},
                     {"vocab", mc.vocab_size()},
                     {"activation", ToString(mc.layer.activation)},
                     {"threads", o.threads},
                     {"repeat", repeat},
                     {"median_ms", Median(ms)},
                     {"min_ms", *std::min_element(ms.begin(), ms.end())},
                     // the calling thread's CPU time: on a shared machine, the single-thread
                     // cost without the time spent waiting for a core
                     {"cpu_median_ms", Median(cpu)},
                     {"threads_used", trainer.threads()},
                     // the clipping and AdamW update's share (wall clock)
                     {"optimizer_median_ms", Median(opt_ms)}};
    std::cout << j.dump(-1, ' ', true) << "\n";
    return 0;
  });
}

}  // namespace mha::cli
