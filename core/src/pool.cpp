#include "pool.hpp"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <signal.h>
#define MHA_POSIX_SIGNALS 1
#endif

namespace mha::detail {
namespace {

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Waits until `done()`: spins briefly (the usual wait is microseconds), then yields
// the CPU, so a thread that was descheduled mid-task can get it back.
template <class Done>
void WaitUntil(Done done) {
  for (int i = 0; !done(); ++i) {
    if (i < 4096)
      Pause();
    else
      std::this_thread::yield();
  }
}

// Worker threads are the library's own: they must never receive the application's
// signals. A process-directed SIGINT/SIGTERM goes to any thread that does not block
// it, and if a worker took it, the app's handling (e.g. deferring Ctrl-C until an
// atomic file write is done, app/io/atomic_file.cpp) would be bypassed. So workers
// start with every asynchronous signal blocked (they inherit the creator's mask, set
// around their creation, so there is no window).
class BlockSignalsWhileCreating {
 public:
  BlockSignalsWhileCreating() {
#ifdef MHA_POSIX_SIGNALS
    sigset_t all;
    sigfillset(&all);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP}) sigdelset(&all, sig);  // synchronous
    pthread_sigmask(SIG_BLOCK, &all, &old_);
#endif
  }
  ~BlockSignalsWhileCreating() {
#ifdef MHA_POSIX_SIGNALS
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
#endif
  }
  BlockSignalsWhileCreating(const BlockSignalsWhileCreating&) = delete;
  BlockSignalsWhileCreating& operator=(const BlockSignalsWhileCreating&) = delete;

 private:
#ifdef MHA_POSIX_SIGNALS
  sigset_t old_;
#endif
};

// How long an idle worker spins for the next job before it sleeps: long enough to
// stay awake between back-to-back forward passes, short enough not to burn a core
// between frames of the app.
constexpr auto kIdleSpin = std::chrono::microseconds(200);

}  // namespace

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  next_.store(((epoch_ + 1) & 0xFFFFFFFFu) << 32, std::memory_order_release);  // wakes spinners
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void Pool::Run(int threads, const int* tasks_per_phase, int phases, TaskFn fn, void* ctx) {
  if (phases > kMaxPhases) phases = kMaxPhases;  // callers use a handful
  if (threads <= 1) {
    // Alone: the tasks in order, without claiming each through the shared counter (a
    // training step at teaching size runs some 10^4 tasks of a few hundred ns each).
    // The job description is left alone, so a worker still finishing the last job's
    // claim loop sees that job's counter and leaves.
    for (int k = 0; k < phases; ++k)
      for (int task = 0; task < tasks_per_phase[k]; ++task) fn(ctx, k, task, 0);
    return;
  }
  if (threads > 1 && static_cast<int>(workers_.size()) < threads - 1) {
    const BlockSignalsWhileCreating quiet;
    for (int id = static_cast<int>(workers_.size()) + 1; id < threads; ++id)
      workers_.emplace_back([this, id] { Worker(id); });
  }
  // Close the last job's counter first: a worker that loaded it before this store
  // now fails its claim, and one that loads it after sees no task left. Only then is
  // the description rewritten. (Rewriting it while the old counter still accepted a
  // claim let a late worker read the new description, claim a task under the old
  // epoch and run it before the job was published.)
  next_.store((epoch_ << 32) | 0xFFFFFFFFu, std::memory_order_relaxed);
  // Describe the job, then publish it with a new epoch (release: a thread that sees
  // the epoch sees the description). The stores a worker reads before claiming are
  // releases too, so a worker whose (acquire) read sees one of them also sees the close.
  job_.fn.store(fn, std::memory_order_relaxed);
  job_.ctx.store(ctx, std::memory_order_relaxed);
  job_.phases.store(phases, std::memory_order_release);
  job_.participants.store(threads, std::memory_order_release);
  int total = 0;
  for (int k = 0; k < phases; ++k) {
    total += tasks_per_phase[k];
    job_.end[k].store(total, std::memory_order_release);
    job_.done[k].store(0, std::memory_order_relaxed);
  }
  epoch_ = (epoch_ + 1) & 0xFFFFFFFFu;  // the epoch lives in the counter's top 32 bits
  if (epoch_ == 0) epoch_ = 1;          // 0 is "no job yet"
  next_.store(epoch_ << 32, std::memory_order_release);
  if (threads > 1) {
    std::lock_guard<std::mutex> lk(mu_);
    if (sleepers_ > 0) cv_.notify_all();
  }
  Work(epoch_, 0);
  // Done when every task is: never waits for a worker that claimed nothing.
  for (int k = 0; k < phases; ++k) {
    const int count = tasks_per_phase[k];
    WaitUntil([&] { return job_.done[k].load(std::memory_order_acquire) >= count; });
  }
}

void Pool::Work(std::uint64_t epoch, int id) {
  int phase = 0;
  while (true) {
    std::uint64_t v = next_.load(std::memory_order_acquire);
    if ((v >> 32) != epoch) return;  // a newer job (or shutdown): not ours to touch
    // Reading the description before claiming is safe: a successful claim below
    // proves the counter still held `v`, and Run closes the counter before it
    // replaces the description, so the description read here was this job's.
    if (id >= job_.participants.load(std::memory_order_acquire)) return;
    const int phases = job_.phases.load(std::memory_order_acquire);
    const std::uint32_t index = static_cast<std::uint32_t>(v);
    if (phases <= 0 || index >= static_cast<std::uint32_t>(job_.end[phases - 1].load(std::memory_order_acquire)))
      return;  // every task is claimed
    if (!next_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    const int task = static_cast<int>(index);
    while (task >= job_.end[phase].load(std::memory_order_relaxed)) ++phase;
    // A task starts when every task of the phases before it is done.
    for (int k = 0; k < phase; ++k) {
      const int count =
          job_.end[k].load(std::memory_order_relaxed) - (k ? job_.end[k - 1].load(std::memory_order_relaxed) : 0);
      WaitUntil([&] { return job_.done[k].load(std::memory_order_acquire) >= count; });
    }
    const int first = phase ? job_.end[phase - 1].load(std::memory_order_relaxed) : 0;
    job_.fn.load(std::memory_order_relaxed)(job_.ctx.load(std::memory_order_relaxed), phase, task - first, id);
    job_.done[phase].fetch_add(1, std::memory_order_release);
  }
}

void Pool::Worker(int id) {
  std::uint64_t seen = 0;
  while (true) {
    std::uint64_t epoch = next_.load(std::memory_order_acquire) >> 32;
    if (epoch == seen) {
      const auto until = std::chrono::steady_clock::now() + kIdleSpin;
      for (int i = 0; epoch == seen; ++i) {
        Pause();
        epoch = next_.load(std::memory_order_acquire) >> 32;
        if (epoch == seen && (i & 63) == 63 && std::chrono::steady_clock::now() > until) {
          std::unique_lock<std::mutex> lk(mu_);
          while (!stop_ && (next_.load(std::memory_order_acquire) >> 32) == seen) {
            ++sleepers_;
            cv_.wait(lk);
            --sleepers_;
          }
          if (stop_) return;
          epoch = next_.load(std::memory_order_acquire) >> 32;
        }
      }
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (stop_) return;
    }
    seen = epoch;
    Work(epoch, id);
  }
}

}  // namespace mha::detail
