// The one background task type of the app. Every piece of work that can outlast a
// frame (the big recompute, the Importance view's measurements, generation, the
// head jobs and the validation labels, the Cost view's sweep, the Head view's search
// for lines, the divergence of the Metrics view, training and its exports) is a
// Task<T>:
//   - a snapshot in: the work is a closure that owns copies of what it reads (or reads
//     the app's trace in place as a TraceReader, below), made on the window's thread;
//   - a cancel: Start() of a newer one, Cancel() or the destructor sets it; the work
//     checks it (ctx.Check(), ctx.Stage()) between its steps and ends early;
//   - a generation: each Start() (or RunHere()) counts one, so a result always says
//     which start made it;
//   - a result: the work's return value; a long-lived task (generation, the sweep,
//     training) also publishes snapshots on the way (ctx.Publish) that the window's
//     thread reads with one atomic load, never waiting;
//   - progress for the probe: a step of a total and a stage (a msgid and one
//     argument, translated where it is shown).
// The window's thread never waits for a task, with one exception that is bounded: a
// TraceReader is stopped (cancelled, then waited for to its next check, a millisecond
// or so) before the recompute moves or rewrites the trace it reads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace mha::gui {

// Thrown by TaskContext::Check() and Stage() once the task is cancelled: the work's
// stack unwinds and the task ends without a result.
struct TaskCancelled {};

// What the window's thread and the task's thread share, whatever the result type.
struct TaskControl {
  std::atomic<bool> cancel{false}, ended{false};
  std::atomic<int> step{0}, total{0};
  std::mutex mutex;  // guards the rest
  std::condition_variable cv;
  int asked = 0;           // work asked of a long-lived task (the Generate view's pieces)
  const char* stage = "";  // a msgid with at most one %s (translated where shown)
  std::string stage_arg;
  std::string error;  // the work threw something else than TaskCancelled

  void End() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ended = true;
    }
    cv.notify_all();
  }
  // Cancels and waits until the work has ended (at its next check).
  void Stop() {
    std::unique_lock<std::mutex> lock(mutex);
    cancel = true;
    cv.notify_all();
    cv.wait(lock, [&] { return ended.load(); });
  }
};

// The work's side of a task: its cancel, its progress and what it publishes.
template <class T>
class TaskContext {
 public:
  explicit TaskContext(std::shared_ptr<TaskControl> c, std::shared_ptr<std::shared_ptr<const T>> latest)
      : c_(std::move(c)), latest_(std::move(latest)) {}
  bool cancelled() const { return c_->cancel.load(); }
  void Check() const {
    if (cancelled()) throw TaskCancelled{};
  }
  void Progress(int step, int total) {
    c_->total = total;
    c_->step = step;
  }
  void SetTotal(int total) { c_->total = total; }
  void Advance() { ++c_->step; }
  // What the work does now, as a msgid and one argument; also a cancel point.
  void Stage(const char* msgid, const std::string& arg = "") {
    Check();
    std::lock_guard<std::mutex> lock(c_->mutex);
    c_->stage = msgid;
    c_->stage_arg = arg;
  }
  // A snapshot of the work so far, for the window's thread (Task::Latest).
  void Publish(std::shared_ptr<const T> v) { std::atomic_store(latest_.get(), std::move(v)); }
  void Publish(T v) { Publish(std::make_shared<const T>(std::move(v))); }
  // A long-lived task: waits until more than `done` units of work are asked for
  // (Task::Ask); false once cancelled.
  bool WaitForDemand(int done) {
    std::unique_lock<std::mutex> lock(c_->mutex);
    c_->cv.wait(lock, [&] { return c_->cancel.load() || c_->asked > done; });
    return !c_->cancel.load();
  }
  int asked() {
    std::lock_guard<std::mutex> lock(c_->mutex);
    return c_->asked;
  }
  // Waits `ms` unless cancelled first (a pace a learner can follow); false once cancelled.
  bool Pause(int ms) {
    std::unique_lock<std::mutex> lock(c_->mutex);
    c_->cv.wait_for(lock, std::chrono::milliseconds(ms), [&] { return c_->cancel.load(); });
    return !c_->cancel.load();
  }

 private:
  std::shared_ptr<TaskControl> c_;
  std::shared_ptr<std::shared_ptr<const T>> latest_;
};

// Tasks that read the app's trace in place, without a copy (the Head view's search
// reads every weight: 400 MB at 100 heads x 1024 tokens, too much to copy). The
// recompute stops them before it moves or rewrites the trace (Result::readers).
class TraceReaders {
 public:
  void Add(std::weak_ptr<TaskControl> c) {
    Prune();
    list_.push_back(std::move(c));
  }
  // Cancels every reader still running and waits for each to reach its next check.
  void StopAll() {
    for (auto& w : list_)
      if (auto c = w.lock()) c->Stop();
    list_.clear();
  }

 private:
  void Prune() {
    std::vector<std::weak_ptr<TaskControl>> alive;
    for (auto& w : list_)
      if (auto c = w.lock(); c && !c->ended) alive.push_back(w);
    list_.swap(alive);
  }
  std::vector<std::weak_ptr<TaskControl>> list_;
};

// A task's stage (Task::stage) in the interface's language: "each head's mean context".
std::string TaskStageText(const std::pair<const char*, std::string>& stage);

template <class T>
class Task {
 public:
  using Work = std::function<T(TaskContext<T>&)>;

  Task() = default;
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  // Cancels every thread it started and joins them (each ends at its next check).
  ~Task() {
    Cancel();
    for (auto& r : retired_) r.thread.join();
  }

  // Runs `work` on a thread of its own; the task running before it is cancelled and
  // joined later, once it has ended (Poll), never waited for.
  void Start(Work work) { Begin(std::move(work), true); }
  // The same work on this thread, now: a small one, which a frame can afford.
  void RunHere(Work work) { Begin(std::move(work), false); }
  // Also registers it with `readers`, which stop it before the trace it reads changes.
  void StartReading(TraceReaders& readers, Work work) {
    Begin(std::move(work), true);
    readers.Add(control_);
  }
  void Cancel() {
    if (!control_) return;
    {
      std::lock_guard<std::mutex> lock(control_->mutex);
      control_->cancel = true;
    }
    control_->cv.notify_all();
    Retire();
  }
  // A long-lived task: `n` more units of work (TaskContext::WaitForDemand).
  void Ask(int n) {
    if (!control_) return;
    {
      std::lock_guard<std::mutex> lock(control_->mutex);
      control_->asked += n;
    }
    asked_ += n;
    control_->cv.notify_all();
  }

  // Once per frame on the window's thread: joins the cancelled threads that have
  // ended; true once when the current task has ended since the last Poll (its
  // result(), or error(), is then final).
  bool Poll() {
    for (auto it = retired_.begin(); it != retired_.end();) {
      if (it->control->ended) {
        it->thread.join();
        it = retired_.erase(it);
      } else {
        ++it;
      }
    }
    if (!control_ || !control_->ended || polled_) return false;
    if (thread_.joinable()) thread_.join();
    polled_ = true;
    return true;
  }

  // Waits for the current task to end: only at exit, where --dump-state reads its result.
  void Wait() {
    if (thread_.joinable()) thread_.join();
  }
  // Started and not yet ended.
  bool Running() const { return control_ && !control_->ended; }
  // Running, or a cancelled one still ending.
  bool Busy() const { return Running() || !retired_.empty(); }
  // Ended with a result or an error (not cancelled).
  bool Done() const { return control_ && control_->ended && !control_->cancel; }
  std::uint64_t generation() const { return generation_; }
  // The newest snapshot the current task published (its result once it has ended);
  // null before the first.
  std::shared_ptr<const T> Latest() const { return latest_ ? std::atomic_load(latest_.get()) : nullptr; }
  // The current task's result, once it has ended (else null).
  std::shared_ptr<const T> result() const { return Done() ? Latest() : nullptr; }
  // The result handed over for keeps (a trace is moved, never copied); null if none.
  std::shared_ptr<T> Take() {
    if (!Done() || !final_ || !*final_) return nullptr;
    std::atomic_store(latest_.get(), std::shared_ptr<const T>());
    return std::move(*final_);
  }
  std::string error() const {
    if (!control_) return std::string();
    std::lock_guard<std::mutex> lock(control_->mutex);
    return control_->error;
  }
  int step() const { return control_ ? control_->step.load() : 0; }
  int total() const { return control_ ? control_->total.load() : 0; }
  // What it does now: the stage's msgid and argument (TaskStageText translates them).
  std::pair<const char*, std::string> stage() const {
    if (!control_) return {"", ""};
    std::lock_guard<std::mutex> lock(control_->mutex);
    return {control_->stage, control_->stage_arg};
  }
  int asked() const { return control_ ? asked_ : 0; }
  int threads() const { return static_cast<int>(retired_.size()) + (thread_.joinable() ? 1 : 0); }

 private:
  struct Retired {
    std::thread thread;
    std::shared_ptr<TaskControl> control;
  };

  // A cancelled task's thread ends on its own (joined by Poll); what it had published
  // is no longer the task's (its own slots keep it alive while it writes).
  void Retire() {
    if (thread_.joinable()) retired_.push_back({std::move(thread_), control_});
    control_.reset();
    latest_.reset();
    final_.reset();
  }

  void Begin(Work work, bool thread) {
    Cancel();
    ++generation_;
    polled_ = false;
    asked_ = 0;
    control_ = std::make_shared<TaskControl>();
    latest_ = std::make_shared<std::shared_ptr<const T>>();
    final_ = std::make_shared<std::shared_ptr<T>>();
    auto run = [c = control_, latest = latest_, out = final_, work = std::move(work)]() mutable {
      TaskContext<T> ctx(c, latest);
      try {
        auto v = std::make_shared<T>(work(ctx));
        if (!c->cancel) {
          *out = v;
          std::atomic_store(latest.get(), std::shared_ptr<const T>(v));
        }
      } catch (const TaskCancelled&) {
      } catch (const std::bad_alloc&) {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->error = "Out of memory.";
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->error = e.what();
      }
      c->End();
    };
    if (thread)
      thread_ = std::thread(std::move(run));
    else
      run();
  }

  std::shared_ptr<TaskControl> control_;
  std::shared_ptr<std::shared_ptr<const T>> latest_;
  // Each start's own slots, so that a cancelled task still ending writes only its own.
  std::shared_ptr<std::shared_ptr<T>> final_;  // written by the task before it ends, read after
  std::thread thread_;
  std::vector<Retired> retired_;
  std::uint64_t generation_ = 0;
  bool polled_ = false;
  int asked_ = 0;
};

}  // namespace mha::gui
