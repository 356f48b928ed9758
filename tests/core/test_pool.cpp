// The core's thread pool: every task of every job runs exactly once, and a job's
// phases run in order, however the threads are scheduled.
#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

#include "../../core/src/pool.hpp"

namespace {

struct Job {
  std::vector<std::atomic<int>>* runs;  // how often each task ran
  std::atomic<int>* finished_in_phase0;
  int phase0_tasks = 0;
  std::atomic<int> out_of_order{0};
};

void RunTask(void* ctx, int phase, int task, int /*thread*/) {
  Job& job = *static_cast<Job*>(ctx);
  if (phase == 0) {
    (*job.runs)[task].fetch_add(1);
    job.finished_in_phase0->fetch_add(1);
  } else {
    if (job.finished_in_phase0->load() != job.phase0_tasks) job.out_of_order.fetch_add(1);
    (*job.runs)[job.phase0_tasks + task].fetch_add(1);
  }
}

}  // namespace

TEST_CASE("pool: back-to-back jobs of changing sizes run each task once, phase after phase", "[pool]") {
  // Many short jobs in a row, with the task count changing every time, is where a
  // worker finishing one job meets the next job's description.
  mha::detail::Pool pool;
  int bad_counts = 0, out_of_order = 0;
  for (int threads : {2, 3, 4}) {
    for (int j = 0; j < 20000; ++j) {
      const int tasks[2] = {1 + (j * 7) % 13, 1 + (j * 5) % 11};
      std::vector<std::atomic<int>> runs(tasks[0] + tasks[1]);
      for (auto& r : runs) r.store(0);
      std::atomic<int> finished{0};
      Job job;
      job.runs = &runs;
      job.finished_in_phase0 = &finished;
      job.phase0_tasks = tasks[0];
      pool.Run(threads, tasks, 2, RunTask, &job);
      for (auto& r : runs) bad_counts += r.load() != 1;
      out_of_order += job.out_of_order.load();
    }
  }
  CHECK(bad_counts == 0);
  CHECK(out_of_order == 0);
}
