// What every view's cache goes through: the key of the trace shown (GenKey), Refresh,
// whether there is a trace to show at all, the selection kept inside it, and the
// results several views share (each head's summary, where queries, keys and values
// come from), kept in the Result. A view's own caches live in its own state, in its
// own file (view_store.hpp); what a view writes to --dump-state is its Dump function's.
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
// errors land in c.error. Every view's cache goes through it.
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

// `c` made ready with `value` for `key` (what a prime hook computed beside the trace).
template <class T>
void Fill(Cached<T>& c, const std::string& key, T&& value) {
  c.key = key;
  c.ok = true;
  c.stale = false;
  c.error.clear();
  c.value = std::move(value);
}

// A cache with no trace to compute from: its error says why (the core's message).
template <class T>
const Cached<T>& NoTrace(Cached<T>& c, const AppState& s) {
  c.key.clear();  // recompute as soon as there is a trace again
  c.ok = false;
  c.error = s.result.error.empty() ? "Nothing computed yet." : s.result.error;
  return c;
}

// Whether the views have a trace to show: the current one, or, while the
// configuration cannot run, the last valid one. A typed invalid value never blanks a
// view: it keeps that trace, dimmed, under the error and its fixes.
bool HasResults(const AppState& s);
// The trace shown is the last valid configuration's, not the current choice's.
bool ShowingLastValid(const AppState& s);

// Keeps the selected head and query token inside the trace shown.
void ClampSelection(AppState& s);

// The results several views share (Result::summaries, Result::sources), computed on
// first use for the trace shown: with none, `ok` is false and `error` says why.
const Cached<std::vector<HeadSummary>>& SummariesCache(AppState& s);
const Cached<AttentionSources>& SourcesCache(AppState& s);

// The configuration the Counts and GQA views describe: a trained model's own while one
// is shown (not the Configuration panel's, which it does not use); with `must_run`, the
// last valid one while the typed configuration cannot run; else the Configuration
// panel's.
const Config& DescribedConfig(const AppState& s, bool must_run);

// Token counts of the current input (the result's tokens, valid or not).
int CurrentSeq(const AppState& s);
int CurrentSeqKv(const AppState& s);

// Row/column labels of a tensor picture: tokens where the axis is tokens.
const std::vector<std::string>& QueryTokens(const Trace& t);
const std::vector<std::string>& KeyTokens(const Trace& t);

// Inspect `row`'s tensor as the shape-flow row shows it (a head of a per-head tensor,
// or its heads merged), and switch to the Inspect view.
void InspectFlowRow(AppState& s, const FlowRow& row);

}  // namespace mha::gui
