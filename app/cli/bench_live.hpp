#pragma once

#include <string>

#include "mha/config.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {

// `mhaviz bench --live`: times the app's recompute after each kind of change
// (bench_live.cpp). `base.threads` threads; repeat 0 = about 0.4 s per action.
// Every configuration it will visit is checked, and its work bounded, before the first.
int BenchLive(Config base, int seq, int repeat);

// Every bench mode is bounded in time: the passes it will run (warm-up, timed, the
// final check) are estimated before the first, and refused above kBenchMaxSeconds. The
// estimate is deliberately slow (kEstimateFlops FLOP/s for the matrix products, 3 ns per
// attention weight for the softmax and its stores; one core here reaches ~150 GFLOP/s
// on a large layer), so a run stays well under 30 s on a 2-core machine, loaded too.
inline constexpr double kBenchMaxSeconds = 20.0;
// One pass that alone is over a third of kBenchMaxSeconds runs once, without warm-up,
// if it fits this: a long Flash sequence (32768 tokens at d_model 512: about 2.3 TFLOP,
// estimated ~55 s). What n^2 costs is the point of running it.
inline constexpr double kBenchMaxLongSeconds = 150.0;
inline constexpr double kEstimateFlops = 50e9;
inline constexpr double kEstimateTrainFlops = 30e9;  // a training step's backward is slower

// Estimated seconds of one pass through the layer `cfg` describes on seq tokens (the
// shape flow's FLOPs, and the attention weights).
double PassSeconds(const Config& cfg, int seq);
// "0.25 s" style text for messages.
std::string SecondsText(double s);

// "kernels: AVX2 + FMA, 8 floats a vector (6 x 16 register tile), chosen when mhaviz
// was built", and what an AVX-512 CPU running a 256-bit build leaves unused: every
// bench mode prints it, so each number names the code path that made it.
std::string KernelIsaLine();

}  // namespace mha::cli
