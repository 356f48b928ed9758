// The Generate view's worker: one generation of one prompt on a thread of its own,
// with a KV cache (lm::Generation, what `mhaviz generate` runs). As the Train view's
// run does, the worker publishes an immutable snapshot after every piece with one
// atomic store; the UI thread reads the newest with one atomic load and never waits
// for a step. Cancel ends it after its current step (a few milliseconds); the view
// joins it once it has.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lm/generation.hpp"

namespace mha::gui {

// What the worker has generated so far: copied out of the Generation after each piece,
// never changed once published.
struct GenSnapshot {
  std::vector<int> ids;  // <s>, the prompt's pieces, then the new ones
  int prompt_size = 0;
  std::vector<std::string> pieces;  // each id's vocabulary spelling
  std::string text;                 // the decoded text
  std::vector<lm::GeneratedPiece> steps;
  int layers = 0, kv_heads = 0, num_heads = 0, head_dim = 0;
  int n = 0;  // cache rows: every piece read (all but the newest)
  std::int64_t bytes = 0;
  std::vector<Mat> k, v;      // [layer * kv_heads + g]: (n, head_dim)
  std::vector<Mat> attn;      // per layer: the newest query's weights, (num_heads, n)
  double max_logit_diff = 0;  // cached vs full recomputation, over every step
  bool at_context = false;    // the text fills the model's context
  std::string error;
};

// Ask() adds pieces to make; the thread makes them one at a time and publishes a
// snapshot after each.
class GenerateWorker {
 public:
  GenerateWorker(std::shared_ptr<const lm::LanguageModel> lm, std::vector<int> prompt, const Sampling& sampling);
  ~GenerateWorker();  // cancels, then joins: at most the step in progress
  GenerateWorker(const GenerateWorker&) = delete;
  GenerateWorker& operator=(const GenerateWorker&) = delete;

  // Never waits for a step: the lock guards only the count.
  void Ask(int pieces);
  void Cancel();
  std::shared_ptr<const GenSnapshot> Latest() const { return std::atomic_load(&latest_); }
  // Pieces asked for and not yet made (or refused at the context).
  bool Busy() const { return done_.load() < asked_seen_; }
  bool Ended() const { return ended_.load(); }
  int asked() const { return asked_seen_; }

 private:
  void Loop();
  void Publish(const lm::Generation& g);

  static constexpr int kPaceMs = 120;
  std::shared_ptr<const lm::LanguageModel> lm_;  // the worker's own (one thread) once it runs
  std::vector<int> prompt_;
  Sampling sampling_;
  std::mutex m_;
  std::condition_variable cv_;
  int asked_ = 0;        // guarded by m_
  bool cancel_ = false;  // guarded by m_
  int asked_seen_ = 0;   // the UI thread's own count of what it asked
  std::atomic<int> done_{0};
  std::atomic<bool> ended_{false};
  std::shared_ptr<const GenSnapshot> latest_;
  std::thread thread_;
};

}  // namespace mha::gui
