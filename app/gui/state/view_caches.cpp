// The caches every view's go through, and the results several views share.
#include "gui/state/view_caches.hpp"

#include <algorithm>

namespace mha::gui {

std::string GenKey(const AppState& s) { return "g" + std::to_string(s.result.generation); }

const std::vector<std::string>& QueryTokens(const Trace& t) { return t.in.tokens; }
const std::vector<std::string>& KeyTokens(const Trace& t) { return t.in.cross() ? t.in.memory_tokens : t.in.tokens; }

int CurrentSeq(const AppState& s) {
  return s.result.ok ? s.result.trace.seq : static_cast<int>(s.result.tokens.size());
}
int CurrentSeqKv(const AppState& s) {
  if (s.result.ok) return s.result.trace.seq_kv;
  const bool cross = !s.result.memory_tokens.empty();
  return static_cast<int>(cross ? s.result.memory_tokens.size() : s.result.tokens.size());
}

// While the recompute's task has the trace, there is none to show or read.
bool HasResults(const AppState& s) {
  return !s.recompute.worker.holds_trace() && (s.result.ok || s.result.generation > 0);
}
bool ShowingLastValid(const AppState& s) {
  return !s.recompute.worker.holds_trace() && !s.result.ok && s.result.generation > 0;
}

void ClampSelection(AppState& s) {
  if (!HasResults(s)) return;
  const Trace& t = s.result.trace;
  s.choice.head = std::clamp(s.choice.head, 0, std::max(0, t.cfg.num_heads - 1));
  s.choice.query = std::clamp(s.choice.query, 0, std::max(0, t.seq - 1));
}

const Cached<std::vector<HeadSummary>>& SummariesCache(AppState& s) {
  auto& c = s.result.summaries;
  if (!HasResults(s)) return NoTrace(c, s);
  return Refresh(c, GenKey(s), [&](std::vector<HeadSummary>& v) { v = SummarizeHeads(s.result.trace); });
}

const Cached<AttentionSources>& SourcesCache(AppState& s) {
  auto& c = s.result.sources;
  if (!HasResults(s)) return NoTrace(c, s);
  return Refresh(c, GenKey(s), [&](AttentionSources& v) { v = DescribeSources(s.result.trace); });
}

const Config& DescribedConfig(const AppState& s, bool must_run) {
  if (HasResults(s) && (UsingTrainedModel(s) || (must_run && !s.result.ok))) return s.result.trace.cfg;
  return s.choice.cfg;
}

void InspectFlowRow(AppState& s, const FlowRow& row) {
  InspectSelection& sel = s.choice.inspect;
  sel.tensor = row.tensor;
  sel.step = row.step;
  const bool per_head_tensor = row.tensor == "q" || row.tensor == "k" || row.tensor == "v" || row.tensor == "scores" ||
                               row.tensor == "attn" || row.tensor == "context";
  if (per_head_tensor)
    sel.mode = row.shape.size() == 4 ? InspectSelection::Mode::Head : InspectSelection::Mode::Merged;
  else
    sel.mode = InspectSelection::Mode::Whole;
  ShowView(s, "inspect");
}

}  // namespace mha::gui
