// Timing helpers shared by `mhaviz bench`, `mhaviz bench --live` and the GUI's --stats.
#pragma once

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

namespace mha::options {

using BenchClock = std::chrono::steady_clock;

inline double Ms(BenchClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time of the calling thread, in ms: on a busy machine it leaves out the time the
// thread waited for a CPU (with more threads it also leaves out the other threads).
inline double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace mha::options
