// Task<T> (app/gui/state/task.hpp), the one background task type of the app: a result
// taken once the work ends, a cancel that ends the work at its next check and drops what
// it published, a generation per start, progress, snapshots and demand for a long-lived
// task, and trace readers stopped before the trace they read changes. Waits are on the
// tasks' state (Poll, Running), never on the clock.
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "gui/state/task.hpp"

using mha::gui::Task;
using mha::gui::TaskContext;
using mha::gui::TraceReaders;

namespace {

// Polls until the task has ended (it always does: every work here ends or checks).
template <class T>
void WaitEnded(Task<T>& t) {
  while (!t.Poll()) std::this_thread::yield();
}

}  // namespace

TEST_CASE("a task's result is taken once its work has ended") {
  Task<int> t;
  CHECK(t.generation() == 0);
  t.Start([](TaskContext<int>& ctx) {
    ctx.Progress(1, 2);
    return 42;
  });
  CHECK(t.generation() == 1);
  WaitEnded(t);
  CHECK(t.Done());
  REQUIRE(t.result());
  CHECK(*t.result() == 42);
  CHECK(t.step() == 1);
  CHECK(t.total() == 2);
  CHECK_FALSE(t.Poll());  // true once
  auto taken = t.Take();
  REQUIRE(taken);
  CHECK(*taken == 42);
}

TEST_CASE("RunHere does the same work on this thread, now") {
  Task<int> t;
  t.RunHere([](TaskContext<int>&) { return 7; });
  CHECK(t.Done());
  REQUIRE(t.result());
  CHECK(*t.result() == 7);
  CHECK(t.Poll());
  CHECK(t.threads() == 0);
}

TEST_CASE("a cancelled task ends at its next check, with no result, and drops what it published") {
  Task<int> t;
  std::atomic<bool> published{false};
  t.Start([&](TaskContext<int>& ctx) {
    ctx.Publish(1);
    published = true;
    for (;;) ctx.Check();  // ends only by its cancel
    return 0;
  });
  while (!published) std::this_thread::yield();
  CHECK(t.Latest());
  t.Cancel();
  CHECK_FALSE(t.Running());
  CHECK_FALSE(t.Latest());  // a cancelled task's snapshot is no longer the task's
  CHECK_FALSE(t.result());
  while (t.Busy()) t.Poll();  // its thread joined once it has ended
  CHECK(t.threads() == 0);
}

TEST_CASE("a new start cancels the one running, and only the newest result counts") {
  Task<int> t;
  t.Start([](TaskContext<int>& ctx) {
    for (;;) ctx.Check();
    return 1;
  });
  t.Start([](TaskContext<int>&) { return 2; });
  CHECK(t.generation() == 2);
  WaitEnded(t);
  REQUIRE(t.result());
  CHECK(*t.result() == 2);
  while (t.Busy()) t.Poll();
}

TEST_CASE("the work's exception is the task's error") {
  Task<int> t;
  t.Start([](TaskContext<int>&) -> int { throw std::runtime_error("no such file"); });
  WaitEnded(t);
  CHECK(t.Done());
  CHECK_FALSE(t.result());
  CHECK(t.error() == "no such file");
}

TEST_CASE("a long-lived task makes what is asked of it and publishes each step") {
  Task<int> t;
  t.Start([](TaskContext<int>& ctx) -> int {
    int done = 0;
    while (ctx.WaitForDemand(done)) {
      ++done;
      ctx.Publish(done);
      ctx.Progress(done, ctx.asked());
    }
    throw mha::gui::TaskCancelled{};
  });
  t.Ask(3);
  CHECK(t.asked() == 3);
  while (t.step() < 3) std::this_thread::yield();
  REQUIRE(t.Latest());
  CHECK(*t.Latest() == 3);
  t.Ask(2);
  while (t.step() < 5) std::this_thread::yield();
  CHECK(*t.Latest() == 5);
  t.Cancel();  // WaitForDemand returns false: the task ends
  CHECK(t.asked() == 0);
  while (t.Busy()) t.Poll();
}

TEST_CASE("trace readers are stopped, and waited for, before the trace changes") {
  TraceReaders readers;
  Task<int> t;
  std::atomic<bool> reading{false};
  t.StartReading(readers, [&](TaskContext<int>& ctx) {
    reading = true;
    for (;;) ctx.Check();
    return 0;
  });
  while (!reading) std::this_thread::yield();
  readers.StopAll();  // returns once the reader has ended
  CHECK_FALSE(t.Running());
  CHECK_FALSE(t.Done());  // stopped, not finished
  t.Poll();
  CHECK(t.threads() == 0);
}
