// The forward pass's threads: a small pool owned by one Trace's workspace.
//
// A job is a list of phases, each a number of independent tasks; phase k+1 starts
// when every task of phase k is done. Threads *claim* tasks from one shared counter
// and the caller takes part, so the caller never waits for a thread that has not
// started yet: on a busy machine a worker that is not scheduled simply claims
// nothing, and the caller does the work (a team barrier, as in OpenMP, would wait a
// whole time slice for it). Which thread runs a task never changes what it
// computes, so results are bit-identical for any thread count.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace mha::detail {

class Pool {
 public:
  static constexpr int kMaxPhases = 12;
  using TaskFn = void (*)(void* ctx, int phase, int task, int thread);

  Pool() = default;
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Runs fn(ctx, phase, task, thread) for every task of every phase (phase by phase)
  // on up to `threads` threads, the caller being thread 0; `thread` indexes per-thread
  // scratch. Returns when every task is done. Allocates only when it first needs
  // more worker threads.
  void Run(int threads, const int* tasks_per_phase, int phases, TaskFn fn, void* ctx);

 private:
  struct Job {
    std::atomic<TaskFn> fn{nullptr};
    std::atomic<void*> ctx{nullptr};
    std::atomic<int> phases{0};
    std::atomic<int> participants{0};
    std::atomic<int> end[kMaxPhases];  // prefix sums of the task counts
    std::atomic<int> done[kMaxPhases];
  };

  void Worker(int id);
  // Claims and runs tasks of job `epoch` until none are left. Returns false if the
  // job was replaced meanwhile.
  void Work(std::uint64_t epoch, int id);

  Job job_;
  // (epoch << 32) | index of the next unclaimed task. A new job bumps the epoch, so a
  // late thread can never claim a task of a job it did not see start.
  std::atomic<std::uint64_t> next_{0};
  std::uint64_t epoch_ = 0;  // the caller's copy

  std::mutex mu_;
  std::condition_variable cv_;
  int sleepers_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace mha::detail
