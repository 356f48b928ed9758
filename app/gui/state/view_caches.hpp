// The teaching views' data: the cached results of the core's teaching functions
// (mha/teach.hpp) for the current trace and selection, and the JSON that
// --dump-state writes of what each view shows. (Their flags: main/flags.hpp; the
// lesson preset and the Lesson view's files: sources/files.hpp.)
#pragma once

#include <exception>
#include <new>
#include <string>
#include <vector>

#include "gui/state/app_state.hpp"

namespace mha::gui {

// A cache key that changes with every new trace (its generation): a view's cache of
// something computed from the trace adds its selection to it.
std::string GenKey(const AppState& s);

// Runs `compute` into `c` if `key` changed (else keeps what `c` holds); the core's
// errors land in c.error. Every view's cache goes through it, the views' own too.
template <class T, class F>
const Cached<T>& Refresh(Cached<T>& c, const std::string& key, F&& compute) {
  if (c.key == key) return c;
  c.key = key;
  c.ok = false;
  c.error.clear();
  try {
    compute(c.value);
    c.ok = true;
  } catch (const Error& e) {
    c.error = e.what();
  } catch (const std::bad_alloc&) {
    c.error = "Out of memory for this view. Use fewer tokens or fewer heads.";
  } catch (const std::exception& e) {
    c.error = std::string("Unexpected error: ") + e.what();
  }
  if (!c.ok) c.value = T{};
  return c;
}

// Whether the views have a trace to show: the current one, or, while the
// configuration cannot run, the last valid one. A typed invalid value never blanks a
// view: it keeps that trace, dimmed, under the error and its fixes.
bool HasResults(const AppState& s);
// The trace shown is the last valid configuration's, not the current choice's.
bool ShowingLastValid(const AppState& s);

// The head summaries, the softmax comparison of the selected head and the divergence
// job's copy of the maps for the trace just shown, computed beside it on the
// recompute's worker (at 100 heads x 1024 tokens they took the window 0.1-0.5 s):
// the views find them cached.
void PrimeCaches(AppState& s, PrimedViews&& v);

// Each head's strongest pattern on the sentence, every layer in `layers` (the Model
// view's labels when no validation text is measured); `ids` the tokens' identities.
std::vector<HeadProfile> ProfileOnSentence(const std::vector<const Trace*>& layers, const std::vector<int>& ids);
// Words numbered by first appearance: the identities of a sentence without a vocabulary.
std::vector<int> NumberWords(const std::vector<std::string>& tokens);

// Keeps the selected head and query token inside the trace shown.
void ClampTeachSelection(AppState& s);

// Each returns the cached result for the current trace and selection, computing it
// only if the trace (its generation) or the selection changed. They read the trace
// shown (HasResults): with none, `ok` is false and `error` says why.
const Cached<QueryExplanation>& QueryCache(AppState& s);
const Cached<ScalingComparison>& ScalingCache(AppState& s);
const Cached<std::vector<HeadSummary>>& SummariesCache(AppState& s);
// The divergence of the first min(num_heads, DivergenceJob::kMaxDivergenceHeads)
// heads (teach.divergence_of says of how many). Computed on a worker thread (see
// DivergenceJob): with `wait` false, while the job runs the last result is kept and
// marked stale (or, with none of this size, ok is false and error is empty); the dump
// waits.
const Cached<Eigen::MatrixXd>& DivergenceCache(AppState& s, bool wait = true);
const Cached<AttentionSources>& SourcesCache(AppState& s);
const Cached<InspectedTensor>& InspectCache(AppState& s);
// The sentence's self-attention with the same weights (cross-attention contrast):
// the core's Forward on the same x without the memory. Only while cross-attention is on.
const Cached<Trace>& SelfTraceCache(AppState& s);
// The configuration the Head count and GQA views describe: a trained model's own
// while one is shown (not the Configuration panel's, which it does not use); with
// `must_run`, the last valid one while the typed configuration cannot run; else the
// Configuration panel's.
const Config& DescribedConfig(const AppState& s, bool must_run);

// Token counts of the current input (the result's tokens, valid or not).
int CurrentSeq(const AppState& s);
int CurrentSeqKv(const AppState& s);

// Row/column labels of a tensor picture: tokens where the axis is tokens.
const std::vector<std::string>& QueryTokens(const Trace& t);
const std::vector<std::string>& KeyTokens(const Trace& t);

// Inspect `tensor` as the shape-flow row `step` shows it (a head of a per-head
// tensor, or its heads merged), and switch to the inspector.
void InspectFlowRow(AppState& s, const FlowRow& row);

}  // namespace mha::gui
