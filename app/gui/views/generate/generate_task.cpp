// The Generate view's task (generate_task.hpp).
#include "gui/views/generate/generate_task.hpp"

#include <algorithm>
#include <utility>

namespace mha::gui {
namespace {

// A learner watches the pieces arrive: a pause between the pieces of one Generate (not
// counted in any step's time).
constexpr int kPaceMs = 120;

GenSnapshot SnapshotOf(const lm::LanguageModel& lm, const lm::Generation& g, bool stop_at_s) {
  GenSnapshot snap;
  const ModelConfig& cfg = lm.model.cfg;
  const KvCache& c = g.decoder().cache();
  snap.ids = g.ids();
  snap.prompt_size = g.prompt_size();
  snap.pieces = lm.tokenizer.Pieces(snap.ids);
  snap.text = lm.tokenizer.Decode(snap.ids);
  snap.steps = g.steps();
  snap.layers = cfg.num_layers;
  snap.kv_heads = cfg.LayerConfig().kv_heads();
  snap.num_heads = cfg.LayerConfig().num_heads;
  snap.head_dim = cfg.LayerConfig().head_dim();
  snap.n = c.n;
  snap.bytes = c.Bytes();
  if (c.n > 0)
    for (int l = 0; l < c.num_layers; ++l)
      for (int h = 0; h < c.kv_heads; ++h) {
        snap.k.push_back(c.K(l, h));
        snap.v.push_back(c.V(l, h));
      }
  if (!g.steps().empty()) snap.attn = g.decoder().last().attn;
  for (const auto& st : g.steps()) snap.max_logit_diff = std::max(snap.max_logit_diff, st.logit_diff);
  snap.at_context = g.AtContext();
  snap.stopped_at_s = stop_at_s && g.EndedText();
  return snap;
}

}  // namespace

GenSnapshot Generate(std::shared_ptr<const lm::LanguageModel> lm, const std::vector<int>& prompt,
                     const Sampling& sampling, bool stop_at_s, TaskContext<GenSnapshot>& ctx) {
  // The task's own copy of the model, on one thread: each step's CPU time, with the
  // cache and without, is then all of its work (a pass on two threads would hide half
  // of it), as `mhaviz generate --threads 1` measures; and the other cores stay with
  // the window. The numbers do not depend on the thread count.
  lm::LanguageModel own = *lm;
  own.model.cfg.layer.threads = 1;
  lm::Generation g(own, prompt, sampling, /*use_cache=*/true);
  ctx.Publish(SnapshotOf(own, g, stop_at_s));
  int done = 0;
  const auto ended = [&] { return g.AtContext() || (stop_at_s && g.EndedText()); };
  while (ctx.WaitForDemand(done)) {
    if (!ended()) g.Next();
    ctx.Publish(SnapshotOf(own, g, stop_at_s));
    ++done;
    // Nothing more fits at the context, or the text ended at <s>: the rest asked for is
    // refused.
    if (ended()) done = std::max(done, ctx.asked());
    ctx.Progress(done, ctx.asked());
    if (done < ctx.asked() && !ctx.Pause(kPaceMs)) break;
  }
  throw TaskCancelled{};
}

}  // namespace mha::gui
