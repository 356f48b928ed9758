// The Generate view's task: one generation of one prompt.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/state/task.hpp"
#include "lm/generation.hpp"

namespace mha::gui {

// What the task has generated so far: copied out of the Generation after each piece,
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
  bool stopped_at_s = false;  // stop at <s>: the newest piece is <s>, and no more come
};

// One generation of one prompt, with a KV cache (lm::Generation, what `mhaviz
// generate` runs), as a long-lived task: it makes pieces one at a time as they are
// asked for (Task::Ask) and publishes a snapshot after each, with one atomic store;
// the window's thread reads the newest with one atomic load and never waits for a
// step. Cancel ends it after its current step (a few milliseconds). With `stop_at_s`
// the text ends at the first <s> it writes (lm::Generation::EndedText), as `mhaviz
// generate --stop-at-s`: the rest asked for is refused.
GenSnapshot Generate(std::shared_ptr<const lm::LanguageModel> lm, const std::vector<int>& prompt,
                     const Sampling& sampling, bool stop_at_s, TaskContext<GenSnapshot>& ctx);

}  // namespace mha::gui
