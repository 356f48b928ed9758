// What the core computed from the learner's Choice: the one recompute writes it
// (sources/recompute.hpp), every view reads it and none writes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/state/notice.hpp"
#include "gui/state/task.hpp"
#include "lm/head_jobs.hpp"
#include "lm/language_model.hpp"
#include "mha/ablation.hpp"
#include "mha/mha.hpp"
#include "mha/model.hpp"

namespace mha::gui {

// A cached value: `key` says what it was computed from (trace generation and the
// selection); `error` holds the core's message if the computation threw.
template <class T>
struct Cached {
  std::string key;
  bool ok = false;
  bool stale = false;  // an older result kept while a control is being dragged
  std::string error;
  T value{};
};

// What a language model's heads do, measured once per model off the window's thread
// (sources/model_measures.hpp): null while measuring, or when it cannot be measured.
template <class T>
struct Measured {
  std::shared_ptr<const T> value;
  bool measuring = false;
  std::string unavailable;  // why it cannot be measured ("" when it can)
  std::string file;         // what it was measured on
};

struct Result {
  bool ok = false;              // false: `error` says why, `trace` is stale
  std::string error;            // the core's teaching message
  std::vector<Notice> notices;  // the tokenizer's (truncation, replaced bytes), the composing, the model's context
  std::string reuse;            // what the last recompute redid (ReuseText), for the status bar
  std::string reuse_shown;      // the same in the interface's language at that recompute
  // The tokens of the current sentence(s), kept even when the configuration is
  // invalid so the learner still sees the tokenization.
  std::vector<std::string> tokens, memory_tokens;
  Trace trace;                   // the layer shown
  Mat mean_attn;                 // (seq, seq_kv): mean over heads of trace.attn
  std::uint64_t generation = 0;  // bumps on every successful recompute

  // A trained model: its pass on the current tokens, every layer.
  ModelTrace pass;
  // A language model: the likeliest next pieces per position, the characters spelled
  // as byte pieces; with heads knocked out, P(the sentence's next piece) at each
  // position from the whole model (before) and without them (after), and the whole
  // model's likeliest next pieces.
  std::vector<std::vector<lm::NextPiece>> next;
  std::vector<lm::ByteSpelling> byte_spelled;
  std::vector<double> p_before, p_after;
  std::vector<std::vector<lm::NextPiece>> next_before;
  std::string source_error;  // the last failed load of the shipped model
  // The knock-out this result applied (sources/knockout.hpp): the chosen heads the
  // model has, their context replaced by its mean (else zeroed).
  std::vector<HeadRef> knocked_out;
  bool knocked_mean = false;

  // Derived from the trace, shared by several views, computed on first use (or beside
  // a big trace on the recompute's worker): each head's summary (Metrics, Heatmaps),
  // where queries, keys and values come from (Cross, Heatmaps).
  Cached<std::vector<HeadSummary>> summaries;
  Cached<AttentionSources> sources;

  // A language model's head labels on its validation text, and its heads' jobs on the
  // minimal pairs (the Model view's), measured once per model.
  Measured<std::vector<HeadProfile>> validation_labels;
  Measured<std::vector<lm::HeadJob>> head_jobs;

  // Tasks reading `trace` in place: the recompute stops them before it moves it.
  TraceReaders readers;
};

}  // namespace mha::gui
