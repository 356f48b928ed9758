// `mhaviz bench`: times the attention sublayer on random input, the same work as
// torch.nn.MultiheadAttention's forward with need_weights=True,
// average_attn_weights=False (scripts/compare_torch.py runs both side by side).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

#include <sys/resource.h>

#include "bench_live.hpp"
#include "mha/flash.hpp"
#include "mha/isa.hpp"
#include "options/timing.hpp"
#include "options/shared_flags.hpp"
#include "commands.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

const char* kBenchAbout =
    "Times one multi-head attention sublayer on random input, after a warm-up: the Q/K/V\n"
    "projections, every head's scores and softmax weights (kept, like need_weights=True,\n"
    "average_attn_weights=False in PyTorch), attn V, concat and W_O. No residual, no norm:\n"
    "the same work as torch.nn.MultiheadAttention's forward. Compare with\n"
    "scripts/compare_torch.py.\n"
    "With --attention flash the attention core runs tile by tile with an online softmax\n"
    "(Flash attention): the same context and attn_out, no seq x seq scores or weights kept,\n"
    "memory linear in seq, up to 32768 tokens. Compare both with scripts/flash_bench.py.";
const char* kBenchFooter =
    "Prints one line per setting, the kernels' instruction set (chosen when mhaviz was built), and\n"
    "last one JSON object: isa (avx512, avx2, portable or scalar), seq, d_model, heads, kv_heads,\n"
    "threads, repeat, median_ms, min_ms (wall clock), gflops (FLOPs of the median run,\n"
    "counted as 8*n*d^2 + 4*n^2*d for plain multi-head attention) and cpu_median_ms (the\n"
    "calling thread's CPU time: on a busy machine, what the run cost without the waits),\n"
    "attention (standard or flash), tile (Br x Bc, flash only) and peak_rss_mb (the process's\n"
    "peak resident memory, MB of 10^6 bytes, inputs and weights included). A pass estimated\n"
    "over a few seconds (long flash sequences) runs once, with no warm-up.";

constexpr long long kBig = 1LL << 30;

struct BenchArgs {
  RunOptions run;  // --heads, --d-model, --kv-heads, --seed
  int seq = 128, repeat = 0;
  bool live = false, seq_given = false, attention_given = false;
  bool help = false;
  std::string help_text;
  BenchArgs() {
    run.cfg.norm = Norm::None;  // the attention sublayer alone, as torch's MultiheadAttention
    run.cfg.threads = 1;
  }
};

void DeclareBenchFlags(CLI::App& app, BenchArgs& b) {
  const std::string g = "Timing";
  IntFlag(
      app, "--seq", -kBig, kBig,
      [&b](int v) {
        b.seq = v;
        b.seq_given = true;
      },
      "tokens (default 128; standard attention up to 1024, flash up to 32768)",
      [](long long n) {
        return n >= 1 && n <= Limits::kMaxFlashTokens
                   ? std::string()
                   : "--seq = " + std::to_string(n) + " must be between 1 and " +
                         std::to_string(Limits::kMaxFlashTokens) + " tokens (" + std::to_string(Limits::kMaxTokens) +
                         " with standard attention). Try 128.";
      })
      ->group(g);
  AttentionFlag(app, [&b](Attention a) {
    b.run.cfg.attention = a;
    b.attention_given = true;
  })->group(g);
  AddModelSizeFlags(app, b.run);
  ThreadsFlag(
      app, [&b](int v) { b.run.cfg.threads = v; },
      "CPU threads (default 1; a pass under ~2 MFLOP per thread uses fewer)",
      /*every_core_at_zero=*/false)
      ->type_name("T")
      ->group(g);
  IntFlag(
      app, "--repeat", -kBig, kBig, [&b](int v) { b.repeat = v; },
      "timed runs (default: as many as fit in about a second, 5 to 2000)",
      [](long long n) {
        return n >= 1 && n <= 1000000 ? std::string()
                                      : "--repeat = " + std::to_string(n) +
                                            " must be between 1 and 1000000 timed runs. Try 20; leave it out to "
                                            "run for about a second.";
      })
      ->type_name("R")
      ->group(g);
  bool train = false;  // handled before parsing (BenchCommand): declared for --help
  app.add_flag("--train", train,
               "time one training step instead (forward, loss, backward, AdamW), with mhaviz train's\n"
               "model flags: see 'mhaviz bench --train --help'")
      ->group(g);
  app.add_flag("--live", b.live,
               "time the desktop app's recompute instead, after each kind of change\n"
               "(one word, num_heads, temperature, mask, norm, d_model, seed, ...),\n"
               "on a sentence of --seq words (default 32) through the full layer")
      ->group(g);
}

// FNV-1a, a 32-bit float's bits at a time, over q, attn (empty with flash), context and
// attn_out: equal traces give equal sums, and a stale value changes it.
std::uint64_t Checksum(const Trace& t) {
  std::uint64_t h = 1469598103934665603ull;
  for (const Mat* m : {&t.q, &t.attn, &t.context, &t.attn_out}) {
    for (Eigen::Index i = 0; i < m->size(); ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, m->data() + i, sizeof bits);
      h = (h ^ bits) * 1099511628211ull;
    }
  }
  return h;
}

// The process's peak resident set so far, in MB (10^6 bytes); Linux reports KiB.
double PeakRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0 / 1e6;
}

std::string Bytes(double b) {
  char buf[64];
  if (b >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", b / (1024.0 * 1024));
  return buf;
}

// Standard attention keeps every head's seq x seq scores and weights; past the token
// cap they would break the memory budget (the trace's cap keeps what the views draw
// within it). Said with the bytes, and the way around it.
void CheckStandardLength(const Config& cfg, int seq) {
  if (cfg.attention != Attention::Standard || seq <= Limits::kMaxTokens) return;
  const double nn = static_cast<double>(StandardAttentionBytes(cfg, seq, seq));
  Config flash = cfg;
  flash.attention = Attention::Flash;
  const double budget = 1.5e9;
  std::ostringstream e;
  e << "--attention standard keeps every head's seq x seq scores and attention weights: at --seq " << seq << " with "
    << cfg.num_heads << " heads that is 2 x " << cfg.num_heads << " x " << seq << " x " << seq
    << " x 4 bytes = " << static_cast<long long>(nn) << " bytes (" << Bytes(nn) << ")"
    << (nn > budget ? ", over mhaviz's 1.5 GB memory budget on its own" : "") << ". The standard path stops at "
    << Limits::kMaxTokens << " tokens ("
    << Bytes(static_cast<double>(StandardAttentionBytes(cfg, Limits::kMaxTokens, Limits::kMaxTokens)))
    << " of them), which keeps what it holds, and what the views draw from it, within the 1.5 GB budget. "
       "Flash attention computes the same context "
       "tile by tile with an online softmax and keeps nothing seq x seq (one "
    << FlashBr(flash) << " x " << FlashBc(flash) << " tile of scores per thread; its whole trace here is about "
    << Bytes(static_cast<double>(EstimateTraceBytes(flash, seq, seq))) << "): use --attention flash.";
  throw UsageError(e.str());
}

BenchArgs ParseBenchArgs(const std::vector<std::string>& argv) {
  return ParseCommandArgs("bench", kBenchAbout, kBenchFooter, DeclareBenchFlags, argv, [](const std::string& w) {
    return "unexpected argument '" + w +
           "': mhaviz bench runs on random input and takes only flags, e.g. --seq 128 "
           "--d-model 512 --heads 8. See 'mhaviz bench --help'.";
  });
}

}  // namespace

int BenchCommand(const std::vector<std::string>& argv) {
  // --train times a training step instead, with `mhaviz train`'s model flags.
  if (std::find(argv.begin(), argv.end(), "--train") != argv.end()) return BenchTrainCommand(argv);
  return Guard("bench", [&] {
    const BenchArgs b = ParseBenchArgs(argv);
    if (b.help) {
      std::cout << b.help_text;
      return 0;
    }
    Config cfg = b.run.cfg;
    int seq = b.seq;
    const int repeat = b.repeat;
    const bool live = b.live;
    if (live && !b.seq_given) seq = 32;
    if (live && b.attention_given)
      throw UsageError(
          "--live times the desktop app's recompute, which always keeps the attention weights it "
          "draws: leave out --attention, or time one pass without --live.");
    CheckStandardLength(cfg, seq);
    try {
      Validate(cfg, seq, seq);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    if (live) return BenchLive(cfg, seq, repeat);

    // Bounded up front: warm-up, the timed runs and the final check, in estimated time.
    const double run_secs = PassSeconds(cfg, seq);
    const long long affordable = static_cast<long long>(kBenchMaxSeconds / run_secs);
    const std::string cap = "bench's time cap of " + SecondsText(kBenchMaxSeconds) + " (estimated; about " +
                            SecondsText(run_secs) + " per run of this layer)";
    // A pass too long to repeat (a long Flash sequence: its time grows as seq^2) runs
    // once, on a fresh trace: no warm-up, and nothing reused that could be stale.
    const bool once = affordable < 3 && run_secs <= kBenchMaxLongSeconds && repeat <= 1;
    if (!once && repeat > 0 && repeat + 2 > affordable)
      throw UsageError("--repeat " + std::to_string(repeat) + " runs would take longer than " + cap + "." +
                       (affordable >= 3 ? " At this size use at most --repeat " + std::to_string(affordable - 2) +
                                              ", or leave it out."
                                        : " Leave out --repeat to run it once, or use fewer tokens."));
    if (affordable < 3 && !once)
      throw UsageError("one run takes longer than bench's cap of " + SecondsText(kBenchMaxLongSeconds) +
                       " for a single pass (estimated " + SecondsText(run_secs) +
                       "). Use fewer tokens or a smaller d_model.");
    const int warm_min = once ? 0 : static_cast<int>(std::min<long long>(3, affordable - 2));
    const long long max_timed = once ? 1 : affordable - warm_min - 1;
    const int min_timed = once ? 1 : static_cast<int>(std::min<long long>(5, max_timed));

    // Random input, N(0, 1) like torch.randn, and the seeded Xavier weights. Two
    // different inputs take turns: a Trace re-projects only the rows whose input
    // changed, so timing one input over and over would skip the projections that
    // torch (rightly) does every time. With every row new, every run does all the work.
    // A single pass needs only one.
    Inputs in[2];
    std::mt19937 rng(static_cast<std::uint32_t>(cfg.seed));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int k = 0; k < (once ? 1 : 2); ++k) {
      Inputs& x = in[k];
      x.tokens.assign(seq, "");
      x.x.resize(seq, cfg.d_model);
      for (Eigen::Index i = 0; i < x.x.size(); ++i) x.x.data()[i] = normal(rng);
    }
    auto weights = std::make_shared<const Weights>(InitWeights(cfg));

    Trace t;
    using Clock = BenchClock;
    int turn = 0;
    auto next = [&]() -> const Inputs& { return once ? in[0] : in[turn ^= 1]; };
    // Warm-up: page in every buffer, start the threads, pack the weights, settle caches.
    const auto warm_start = Clock::now();
    for (int i = 0; !once && (i < warm_min || (i < 50 && i < max_timed && Ms(Clock::now() - warm_start) < 200.0)); ++i)
      ForwardAttention(cfg, weights, next(), t);

    std::vector<double> ms, cpu;
    const auto start = Clock::now();
    while (true) {
      const Inputs& x = next();
      const double c0 = ThreadCpuMs();
      const auto t0 = Clock::now();
      ForwardAttention(cfg, weights, x, t);
      ms.push_back(Ms(Clock::now() - t0));
      cpu.push_back(ThreadCpuMs() - c0);
      const int n = static_cast<int>(ms.size());
      if (once ||
          (repeat > 0 ? n >= repeat
                      : (n >= 2000 || n >= max_timed || (n >= min_timed && Ms(Clock::now() - start) >= 1000.0))))
        break;
    }
    // The timed passes must have computed what a fresh pass computes (nothing stale).
    // Compared by checksum, so the fresh pass does not need a second trace in memory.
    // (A single pass was a fresh pass.)
    if (!once) {
      const std::uint64_t timed = Checksum(t);
      t = Trace();
      Trace fresh;
      ForwardAttention(cfg, weights, in[turn], fresh);
      if (Checksum(fresh) != timed)
        throw Error("internal error: a timed pass differs from a fresh pass on the same input.");
    }
    const double peak_mb = PeakRssMb();
    const std::size_t n = ms.size();
    const double median = Median(ms);
    const double min_ms = *std::min_element(ms.begin(), ms.end());
    const double cpu_median = Median(cpu);

    const double s = seq, d = cfg.d_model, kvd = static_cast<double>(cfg.kv_heads()) * cfg.head_dim();
    // Q and W_O: 2*n*d*d each; K and V: 2*n*d*kvd each; scores and attn V: 2*n*n*d each.
    const double flops = 4 * s * d * d + 4 * s * d * kvd + 4 * s * s * d;
    const double gflops = flops / (median * 1e-3) / 1e9;
    const bool flash = cfg.attention == Attention::Flash;
    const int br = flash ? std::min(FlashBr(cfg), seq) : 0, bc = flash ? FlashBc(cfg) : 0;

    std::cout << "mhaviz bench: seq " << seq << ", d_model " << cfg.d_model << ", heads " << cfg.num_heads
              << ", kv_heads " << cfg.kv_heads() << ", threads " << cfg.threads << ", attention "
              << ToString(cfg.attention);
    if (flash) std::cout << " (tiles of " << br << " x " << bc << ")";
    std::cout << ", " << n << (once ? " timed run (a long pass: once, no warm-up)\n" : " timed runs\n");
    std::cout << KernelIsaLine() << "\n";
    char line[640];
    std::snprintf(line, sizeof line,
                  "median %.4f ms, min %.4f ms, %.2f GFLOP/s (%.1f MFLOP per run); calling thread's CPU "
                  "time median %.4f ms; peak memory %.1f MB\n",
                  median, min_ms, gflops, flops / 1e6, cpu_median, peak_mb);
    std::cout << line;
    std::snprintf(line, sizeof line,
                  "{\"isa\": \"%s\", \"seq\": %d, \"d_model\": %d, \"heads\": %d, \"kv_heads\": %d, \"threads\": %d, "
                  "\"repeat\": %zu, \"median_ms\": %.6f, \"min_ms\": %.6f, \"gflops\": %.3f, "
                  "\"cpu_median_ms\": %.6f, \"attention\": \"%s\", \"tile\": [%d, %d], \"warmup\": %s, "
                  "\"peak_rss_mb\": %.1f}\n",
                  BuildKernelIsa().name, seq, cfg.d_model, cfg.num_heads, cfg.kv_heads(), cfg.threads, n, median,
                  min_ms, gflops, cpu_median, ToString(cfg.attention), br, bc, once ? "false" : "true", peak_mb);
    std::cout << line;
    return 0;
  });
}

}  // namespace mha::cli
