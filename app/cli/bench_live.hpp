#pragma once

#include <string>

#include "mha/config.hpp"

namespace mha::cli {

// `mhaviz bench --live`: times the app's recompute after each kind of change
// (bench_live.cpp). `base.threads` threads; repeat 0 = about 0.4 s per action.
// Every configuration it will visit is checked, and its work bounded, before the first.
int BenchLive(Config base, int seq, int repeat);

// Every bench mode is bounded in time: the passes it will run (warm-up, timed, the
// final check) are counted in FLOPs before the first, and refused above this cap. At
// the ~150 GFLOP/s one core reaches on the largest layer that is ~10 s, so a run stays
// under 30 s on a loaded 2-core machine too.
inline constexpr double kBenchMaxFlops = 1.5e12;

// FLOPs of one pass through the layer `cfg` describes on seq tokens (the shape flow's
// own count).
double LayerFlops(const Config& cfg, int seq);
// "1.5 TFLOP" style text for messages.
std::string FlopText(double flops);

}  // namespace mha::cli
