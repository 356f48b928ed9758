// State of the teaching views: which view is shown, what the learner
// selected in them, and the per-trace results they show, cached so that the heavy
// ones (ExplainQuery, HeadDivergence, ...) are computed when the trace or the
// selection changes, never every frame. Every number a view shows comes from one of
// these caches, and --dump-state writes the same caches (each view's Dump function in
// gui/views/), so what
// is shown is what is exported.
#pragma once

#include <array>
#include <atomic>
#include <future>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/state/textures.hpp"
#include "mha/mha.hpp"

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

// What the tensor inspector shows: one tensor of the trace, by its .npz name, either
// as stored, one head of it, or with its heads side by side again (the Q/K/V
// projection rows of the shape flow show q, k, v before the split).
struct InspectSelection {
  enum class Mode { Whole, Head, Merged };
  std::string tensor = "concat";
  Mode mode = Mode::Whole;
  std::string step;  // the shape-flow step it came from ("" if picked from the list)
};

// A (rows, cols) picture of a tensor, ready to draw and to dump.
struct InspectedTensor {
  std::string title;                                // "q[head 1]", "q (heads merged)", "W_q"
  std::vector<std::int64_t> shape;                  // the shape shown, with the batch axis where it has one
  std::vector<std::int64_t> full_shape;             // the stored tensor's shape
  Mat values;                                       // rows x cols as drawn (a 1-D tensor is one row)
  std::vector<std::string> row_labels, col_labels;  // "" = numbered
  float min = 0, max = 0, abs_max = 0;              // over the finite values
  int neg_inf = 0;                                  // masked scores
  std::string note;                                 // what this tensor is, one line
  int col_group = 0;                                // > 0: columns come in heads of this many (concat, W_q, ...)
  std::string col_group_label;                      // "head", "K/V head"
};

// The head x head divergence, computed on a worker thread: it costs num_heads^2 / 2 *
// seq * seq_kv logarithms (55 s on the UI thread at 64 heads x 1024 tokens), so the
// window keeps drawing meanwhile. It covers the first kMaxDivergenceHeads heads only
// (the view says so), which bounds both its time and the copy of their maps it works on.
struct DivergenceJob {
  // The maps it works on: copies of the first heads' attention (the trace may change
  // while it runs).
  using Maps = std::shared_ptr<const std::vector<Mat>>;
  static Maps CopyMaps(const Trace& t);
  static constexpr int kMaxDivergenceHeads = 16;
  std::string key;  // what the running job computes (trace generation)
  std::future<Eigen::MatrixXd> result;
  std::shared_ptr<std::atomic<bool>> cancel;  // set when superseded or at exit: the job stops early
  int heads = 0;                              // heads it covers
  DivergenceJob() = default;
  DivergenceJob(const DivergenceJob&) = delete;
  DivergenceJob& operator=(const DivergenceJob&) = delete;
  ~DivergenceJob() {
    if (cancel) *cancel = true;  // the future's destructor then waits one pair at most
  }
};

// What the views would compute in the window's first frames after a big recompute,
// computed beside the trace on the recompute's worker (view_caches.hpp: PrimeCaches).
struct PrimedViews {
  std::vector<HeadSummary> summaries;
  int head = 0;  // the selected head at the start (the softmax comparison's)
  ScalingComparison scaling;
  DivergenceJob::Maps divergence_maps;  // the divergence job's copy (64 MB at 16 heads x 1024 tokens)
  // The Model view's labels on the sentence (a seeded layer's: a trained model's
  // layers are profiled by the view), and whether they were made.
  bool profiled = false;
  std::vector<HeadProfile> profile;
};

struct TeachUi {
  std::string view = "heatmaps";  // the view shown, by its --view name (views/registry.hpp)
  bool select_view = false;       // make the tab bar switch to `view` this frame
  int head = 0;                   // the head the query, scaling and inspector views show
  int query = 0;                  // the query token of the step-by-step view
  InspectSelection inspect;
  bool flow_clicked = false;  // set by the shape flow: switch to the inspector

  // Lesson & weights view.
  std::array<char, 1024> input_path{};
  std::array<char, 1024> weights_path{};
  std::string file_message;
  bool file_message_ok = true;
  // Weights edited in the weight editor: a copy of what was computed with, so the
  // trace keeps its own (immutable) weights until the recompute.
  bool weights_edited = false;

  // Per-trace results, keyed by trace generation + selection.
  Cached<QueryExplanation> query_cache;
  Cached<ScalingComparison> scaling_cache;
  Cached<std::vector<HeadSummary>> summaries_cache;
  Cached<Eigen::MatrixXd> divergence_cache;
  int divergence_of = 0;  // num_heads of the trace divergence_cache covers (its first rows() heads)
  DivergenceJob divergence_job;
  // A copy of the maps for the divergence of trace generation `divergence_maps_key`,
  // made on the recompute's worker; the job takes it when it starts.
  DivergenceJob::Maps divergence_maps;
  std::string divergence_maps_key;
  // The Model view's head labels on the sentence, for trace generation `profile_of`.
  std::vector<HeadProfile> profile;
  std::uint64_t profile_of = ~0ull;
  Cached<AttentionSources> sources_cache;
  Cached<InspectedTensor> inspect_cache;
  // Cross-attention contrast: the sentence's self-attention with the same weights.
  Cached<Trace> self_trace_cache;

  MatrixTextures textures;
};

// Switches the results area to the view called `name` (its --view name) next frame.
inline void ShowView(TeachUi& t, const char* name) {
  t.view = name;
  t.select_view = true;
}

}  // namespace mha::gui
