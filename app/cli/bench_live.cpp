// `mhaviz bench --live`: what one change in the desktop app costs. Each action flips
// one setting back and forth (a word of the sentence, num_heads, the temperature, ...)
// and times the recompute that follows, through mha::Live, the same class the app
// recomputes with: embeddings, weights, the full layer (residual + LayerNorm), the
// shape-flow table and the mean attention map the heatmaps draw.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "bench_live.hpp"
#include "options/run_options.hpp"
#include "options/timing.hpp"
#include "mha/mha.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

const char* const kWords[] = {"the",   "cat",    "sat",      "on",     "a",     "mat",    "while", "dogs",
                              "ran",   "across", "green",    "fields", "and",   "birds",  "sang",  "songs",
                              "about", "old",    "trees",    "near",   "quiet", "rivers", "under", "bright",
                              "skies", "as",     "children", "played", "with",  "kites",  "in",    "wind"};
constexpr int kNumWords = sizeof kWords / sizeof kWords[0];

std::string Sentence(int seq, const char* middle) {
  std::string s;
  for (int i = 0; i < seq; ++i) {
    if (i) s += ' ';
    s += i == seq / 2 ? middle : kWords[(i * 7) % kNumWords];
  }
  return s;
}

struct State {
  Config cfg;
  std::string sentence;
};

struct Action {
  const char* name;
  const char* what;
  std::function<void(State&, bool)> set;  // flip = false: state A, true: state B
};

// FNV-1a over every tensor of the trace (names, shapes and each float's bits) and the
// mean map: what the timed recomputes left is compared with a fresh computation by this
// sum, so the fresh trace never sits in memory beside the live one.
std::uint64_t Checksum(const Trace& t, const Mat& mean) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  const auto floats = [&mix](const float* p, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, p + i, sizeof bits);
      mix(bits);
    }
  };
  for (const TensorView& v : Tensors(t)) {
    for (char c : v.name) mix(static_cast<unsigned char>(c));
    for (std::int64_t d : v.shape) mix(static_cast<std::uint64_t>(d));
    floats(v.data, v.size());
  }
  mix(t.flow.size());
  floats(mean.data(), mean.size());
  return h;
}

// The d_model slider's next valid step, or the one before it at the cap.
int OtherDModel(int d, int H) {
  const int up = NearestValidDModel(d + 1, H).second;
  if (up <= Limits::kMaxDModel) return up;
  const int down = NearestValidDModel(d - 1, H).first;
  return down >= 1 && down != d ? down : d;
}

}  // namespace

int BenchLive(Config base, int seq, int repeat) {
  base.norm = Norm::Post;  // the app's default layer
  const int H = base.num_heads, d = base.d_model;
  // num_heads: the next head count that divides d_model (else the one before).
  int other_heads = 0;
  for (int h : ValidHeadCounts(d))
    if (h > H && !other_heads) other_heads = h;
  if (!other_heads)
    for (int h : ValidHeadCounts(d))
      if (h < H) other_heads = h;
  const int d_hi = OtherDModel(d, H);
  const int kv_half = H % 2 == 0 ? H / 2 : 1;

  const std::string a_word = Sentence(seq, "cat"), b_word = Sentence(seq, "dog");
  std::vector<Action> actions = {
      {"idle", "nothing changed (a redraw that recomputes)", [](State&, bool) {}},
      {"word", "one word of the sentence replaced", [&](State& s, bool f) { s.sentence = f ? b_word : a_word; }},
      {"temperature", "softmax temperature 1.0 <-> 0.8", [](State& s, bool f) { s.cfg.temperature = f ? 0.8f : 1.0f; }},
      {"scale", "divide by sqrt(d_k) on <-> off", [](State& s, bool f) { s.cfg.scale = !f; }},
      {"mask", "mask none <-> causal", [](State& s, bool f) { s.cfg.mask = f ? Mask::Causal : Mask::None; }},
      {"norm", "post-LN <-> pre-LN", [](State& s, bool f) { s.cfg.norm = f ? Norm::Pre : Norm::Post; }},
      {"heads", "num_heads slider step (same weights)",
       [&](State& s, bool f) { s.cfg.num_heads = f ? other_heads : H; }},
      {"kv_heads", "num_kv_heads = num_heads <-> half (GQA)",
       [&](State& s, bool f) { s.cfg.num_kv_heads = f ? kv_half : 0; }},
      {"d_model", "d_model slider step (new weights and embeddings)",
       [&](State& s, bool f) { s.cfg.d_model = f ? d_hi : d; }},
      {"seed", "seed + 1 (new weights and embeddings)",
       [](State& s, bool f) { s.cfg.seed = f ? s.cfg.seed | 1 : s.cfg.seed & ~std::uint64_t(1); }},
  };

  // Every configuration the actions visit, checked before the first runs (a d_model
  // step past the cap once failed minutes in), and the whole run bounded in FLOPs.
  double max_secs = 0;
  for (const Action& act : actions)
    for (bool flip : {false, true}) {
      State st{base, a_word};
      act.set(st, flip);
      try {
        Validate(st.cfg, seq, seq);
      } catch (const Error& e) {
        throw UsageError(std::string("bench --live's '") + act.name + "' action (" + act.what +
                         ") would run a configuration that cannot work: " + e.what());
      }
      max_secs = std::max(max_secs, PassSeconds(st.cfg, seq));
    }
  const double n_actions = static_cast<double>(actions.size());
  constexpr int kOverhead = 5;  // 4 warm-up recomputes and the fresh check, per action
  const long long per_action = static_cast<long long>(kBenchMaxSeconds / (n_actions * max_secs));
  const std::string cap = "bench's time cap of " + SecondsText(kBenchMaxSeconds) + " (estimated; up to " +
                          SecondsText(max_secs) + " per recompute here)";
  if (repeat > 0 && repeat + kOverhead > per_action)
    throw UsageError("--repeat " + std::to_string(repeat) + " for each of bench --live's " +
                     std::to_string(actions.size()) + " actions would take longer than " + cap + "." +
                     (per_action > kOverhead ? " At this size use at most --repeat " +
                                                   std::to_string(per_action - kOverhead) + ", or leave it out."
                                             : " Use fewer tokens (--seq), heads or a smaller d_model."));
  if (per_action <= kOverhead)
    throw UsageError("bench --live runs " + std::to_string(actions.size()) + " actions of at least " +
                     std::to_string(kOverhead + 1) + " recomputes each: that takes longer than " + cap +
                     ". Use fewer tokens (--seq), heads or a smaller d_model.");
  const long long max_timed = per_action - kOverhead;
  const long long min_timed = std::min<long long>(10, max_timed);

  std::cout << "mhaviz bench --live: seq " << seq << ", d_model " << d << ", heads " << H << " (<-> " << other_heads
            << "), threads " << base.threads
            << "; each action flips one setting and times the app's recompute (mha::Live)\n"
            << KernelIsaLine() << "\n";
  std::string json = "{\"isa\": \"" + std::string(BuildKernelIsa().name) + "\", \"seq\": " + std::to_string(seq) +
                     ", \"d_model\": " + std::to_string(d) + ", \"heads\": " + std::to_string(H) +
                     ", \"threads\": " + std::to_string(base.threads) + ", \"actions\": {";
  char line[512];
  bool first = true;
  for (const Action& act : actions) {
    Live live;
    Trace t;
    Mat mean;
    State st{base, a_word};
    st.cfg.seed = base.seed & ~std::uint64_t(1);
    auto run = [&](bool flip) {
      act.set(st, flip);
      LiveChoice c;
      c.cfg = st.cfg;
      c.sentence = st.sentence;
      live.Recompute(c, t, &mean);
    };
    for (int i = 0; i < 4; ++i) run(i % 2 == 1);  // warm-up: both states once, threads started
    std::vector<double> ms, cpu;
    bool flip = true;  // the warm-up ended in state B: the first timed run goes to A
    const auto start = BenchClock::now();
    while (true) {
      flip = !flip;
      const double c0 = ThreadCpuMs();
      const auto t0 = BenchClock::now();
      run(flip);
      ms.push_back(Ms(BenchClock::now() - t0));
      cpu.push_back(ThreadCpuMs() - c0);
      const int n = static_cast<int>(ms.size());
      if (repeat > 0 ? n >= repeat
                     : (n >= 4000 || n >= max_timed || (n >= min_timed && Ms(BenchClock::now() - start) >= 400.0)))
        break;
    }
    // What the timed recomputes left must equal the plain pipeline from scratch.
    const std::uint64_t timed = Checksum(t, mean);
    t = Trace();
    live = Live();
    Trace fresh;
    Forward(st.cfg, std::make_shared<const Weights>(InitWeights(st.cfg)),
            MakeInputs(st.sentence, std::string(), st.cfg), fresh);
    Mat fresh_mean;
    MeanAttention(fresh, fresh_mean);
    if (Checksum(fresh, fresh_mean) != timed)
      throw Error(std::string("internal error: after the '") + act.name +
                  "' action the live trace differs from a fresh computation.");
    const double median = Median(ms), min_ms = *std::min_element(ms.begin(), ms.end());
    std::snprintf(line, sizeof line, "  %-12s median %8.4f ms  min %8.4f ms  CPU %8.4f ms  (%zu runs; %s)\n", act.name,
                  median, min_ms, Median(cpu), ms.size(), act.what);
    std::cout << line;
    std::snprintf(line, sizeof line, "%s\"%s\": {\"median_ms\": %.6f, \"min_ms\": %.6f, \"cpu_median_ms\": %.6f}",
                  first ? "" : ", ", act.name, median, min_ms, Median(cpu));
    json += line;
    first = false;
  }
  json += "}}";
  std::cout << json << "\n";
  return 0;
}

std::string KernelIsaLine() {
  const KernelIsa isa = BuildKernelIsa();
  std::string line = std::string("kernels: ") + isa.description + " (" + std::to_string(isa.tile_rows) + " x " +
                     std::to_string(isa.tile_cols) + " register tile), chosen when mhaviz was built";
  if (std::string(isa.name) != "avx512" && CpuHasAvx512())
    line += "; this CPU has AVX-512, which a build for it (-march=native here, or x86-64-v4) would use";
  return line;
}

double PassSeconds(const Config& cfg, int seq) {
  double flops = 0;
  for (const FlowRow& r : ShapeFlow(cfg, seq, seq)) flops += static_cast<double>(r.flops);
  const double weights = static_cast<double>(cfg.num_heads) * seq * seq;
  // Flash stores no weight: its softmax costs the exponentials alone (~1 ns each here).
  return flops / kEstimateFlops + (cfg.attention == Attention::Flash ? 1e-9 : 3e-9) * weights;
}

std::string SecondsText(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, s >= 10 ? "%.0f s" : s >= 0.1 ? "%.1f s" : "%.3f s", s);
  return buf;
}

}  // namespace mha::cli
