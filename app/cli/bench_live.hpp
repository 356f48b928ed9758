#pragma once

#include "mha/config.hpp"

namespace mha::cli {

// `mhaviz bench --live`: times the app's recompute after each kind of change
// (bench_live.cpp). `base.threads` threads; repeat 0 = about 0.4 s per action.
int BenchLive(Config base, int seq, int repeat);

}  // namespace mha::cli
