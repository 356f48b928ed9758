// The Generate view's worker (generate_worker.hpp).
#include "gui/views/lm/generate_worker.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace mha::gui {

GenerateWorker::GenerateWorker(std::shared_ptr<const lm::LanguageModel> lm, std::vector<int> prompt,
                               const Sampling& sampling)
    : lm_(std::move(lm)), prompt_(std::move(prompt)), sampling_(sampling) {
  thread_ = std::thread([this] { Loop(); });
}

GenerateWorker::~GenerateWorker() {
  Cancel();
  thread_.join();  // after Cancel: at most the step in progress
}

void GenerateWorker::Ask(int pieces) {
  {
    std::lock_guard<std::mutex> lock(m_);
    asked_ += pieces;
  }
  asked_seen_ += pieces;
  cv_.notify_one();
}

void GenerateWorker::Cancel() {
  {
    std::lock_guard<std::mutex> lock(m_);
    cancel_ = true;
  }
  cv_.notify_one();
}

void GenerateWorker::Loop() {
  try {
    // The worker's own copy of the model, on one thread: each step's CPU time, with
    // the cache and without, is then all of its work (a pass on two threads would
    // hide half of it), as `mhaviz generate --threads 1` measures; and the other
    // cores stay with the window. The numbers do not depend on the thread count.
    lm::LanguageModel own = *lm_;
    own.model.cfg.layer.threads = 1;
    lm_ = std::make_shared<const lm::LanguageModel>(std::move(own));
    lm::Generation g(*lm_, prompt_, sampling_, /*use_cache=*/true);
    Publish(g);
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return cancel_ || asked_ > done_.load(); });
        if (cancel_) break;
      }
      if (!g.AtContext()) g.Next();
      Publish(g);
      done_.fetch_add(1);
      // A learner watches the pieces arrive: a pause between the pieces of one
      // Generate (not counted in any step's time). Cancel ends it at once.
      std::unique_lock<std::mutex> lock(m_);
      if (asked_ > done_.load() && !g.AtContext())
        cv_.wait_for(lock, std::chrono::milliseconds(kPaceMs), [&] { return cancel_; });
      if (g.AtContext()) done_.store(asked_);  // nothing more fits: the rest is refused
    }
  } catch (const std::exception& e) {
    auto snap = std::make_shared<GenSnapshot>();
    snap->error = e.what();
    std::atomic_store(&latest_, std::shared_ptr<const GenSnapshot>(std::move(snap)));
    done_.store(1 << 30);
  }
  ended_ = true;
}

void GenerateWorker::Publish(const lm::Generation& g) {
  auto snap = std::make_shared<GenSnapshot>();
  const ModelConfig& cfg = lm_->model.cfg;
  const KvCache& c = g.decoder().cache();
  snap->ids = g.ids();
  snap->prompt_size = g.prompt_size();
  snap->pieces = lm_->tokenizer.Pieces(snap->ids);
  snap->text = lm_->tokenizer.Decode(snap->ids);
  snap->steps = g.steps();
  snap->layers = cfg.num_layers;
  snap->kv_heads = cfg.LayerConfig().kv_heads();
  snap->num_heads = cfg.LayerConfig().num_heads;
  snap->head_dim = cfg.LayerConfig().head_dim();
  snap->n = c.n;
  snap->bytes = c.Bytes();
  if (c.n > 0)
    for (int l = 0; l < c.num_layers; ++l)
      for (int h = 0; h < c.kv_heads; ++h) {
        snap->k.push_back(c.K(l, h));
        snap->v.push_back(c.V(l, h));
      }
  if (!g.steps().empty()) snap->attn = g.decoder().last().attn;
  for (const auto& st : g.steps()) snap->max_logit_diff = std::max(snap->max_logit_diff, st.logit_diff);
  snap->at_context = g.AtContext();
  std::atomic_store(&latest_, std::shared_ptr<const GenSnapshot>(std::move(snap)));
}

}  // namespace mha::gui
