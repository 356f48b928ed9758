// The teaching views' cached results: each is one call of the core's teaching
// functions (mha/teach.hpp) on the current trace, redone only when the trace's
// generation or the view's selection changes.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <new>

#include "gui/state/view_caches.hpp"
#include "mha/heads.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

std::string GenKey(const AppState& s) { return "g" + std::to_string(s.result.generation); }

namespace {

template <class T>
const Cached<T>& NoTrace(Cached<T>& c, const AppState& s) {
  c.key.clear();  // recompute as soon as there is a trace again
  c.ok = false;
  c.error = s.result.error.empty() ? "Nothing computed yet." : s.result.error;
  return c;
}

void FillStats(InspectedTensor& it) {
  it.min = std::numeric_limits<float>::infinity();
  it.max = -std::numeric_limits<float>::infinity();
  it.neg_inf = 0;
  for (Eigen::Index k = 0; k < it.values.size(); ++k) {
    const float v = it.values.data()[k];
    if (std::isinf(v) && v < 0) {
      ++it.neg_inf;
      continue;
    }
    if (!std::isfinite(v)) continue;
    it.min = std::min(it.min, v);
    it.max = std::max(it.max, v);
  }
  if (it.min > it.max) it.min = it.max = 0.0f;
  it.abs_max = std::max(std::abs(it.min), std::abs(it.max));
}

// What a tensor is, in the lesson's words.
std::string Describe(const std::string& name) {
  static const std::pair<const char*, const char*> kNotes[] = {
      {"x", N_("the input: one row per token (embedding + positional encoding)")},
      {"memory", N_("the memory sentence that keys and values are read from (cross-attention)")},
      {"W_q", N_("W_Q, the query projection: Q = x W_Q + b_Q")},
      {"b_q", N_("b_Q, the query bias")},
      {"W_k", N_("W_K, the key projection: K = x W_K + b_K (cross-attention: m W_K, m = the memory)")},
      {"b_k", N_("b_K, the key bias")},
      {"W_v", N_("W_V, the value projection: V = x W_V + b_V (cross-attention: m W_V, m = the memory)")},
      {"b_v", N_("b_V, the value bias")},
      {"W_o", N_("W_O, the output projection: attn_out = concat W_O + b_O")},
      {"b_o", N_("b_O, the output bias")},
      {"ln_gamma", N_("LayerNorm scale (gamma)")},
      {"ln_beta", N_("LayerNorm shift (beta)")},
      {"ln_eps", N_("LayerNorm epsilon")},
      {"x_ln", N_("LN(x): the sublayer's input in the pre-LN arrangement")},
      {"q", N_("the queries: what each token is looking for")},
      {"k", N_("the keys: what each token offers to be found by")},
      {"v", N_("the values: what each token passes on when attended to")},
      {"scores", N_("q k^T / sqrt(d_k) (masked entries are -inf): before the softmax")},
      {"attn", N_("the softmax weights: each row sums to 1")},
      {"context", N_("attn V: each query's weighted sum of the values")},
      {"concat", N_("the heads' context side by side again: (seq, num_heads x head_dim)")},
      {"attn_out", N_("concat W_O + b_O: the heads mixed back together")},
      {"residual", N_("x + attn_out: the residual connection")},
      {"out", N_("the attention sublayer's output")},
      {"ffn_W1", N_("W1 of the feed-forward network: d_model -> d_ff")},
      {"ffn_b1", N_("b1 of the feed-forward network")},
      {"ffn_W2", N_("W2 of the feed-forward network: d_ff -> d_model")},
      {"ffn_b2", N_("b2 of the feed-forward network")},
      {"ln2_gamma", N_("second LayerNorm scale (gamma)")},
      {"ln2_beta", N_("second LayerNorm shift (beta)")},
      {"ffn_ln", N_("LN2(out): the FFN's input in the pre-LN arrangement")},
      {"ffn_hidden", N_("act(x W1 + b1): the FFN's wide hidden layer, one row per token")},
      {"ffn_out", N_("ffn_hidden W2 + b2: back to d_model")},
      {"ffn_residual", N_("out + ffn_out: the FFN's residual connection")},
      {"block_out", N_("the encoder block's output")},
  };
  for (const auto& [n, d] : kNotes)
    if (name == n) return _(d);
  return "";
}

// Largest tensor picture drawn (and kept): bigger tensors are shown every k-th row/column.
constexpr std::int64_t kMaxInspectValues = std::int64_t(1) << 22;

void BuildInspected(const Trace& t, const InspectSelection& sel, int head, InspectedTensor& it) {
  const auto tensors = Tensors(t);
  const TensorView* tv = FindTensor(tensors, sel.tensor);
  if (!tv) throw Error("This trace has no tensor '" + sel.tensor + "' (it exists only in other configurations).");
  it = InspectedTensor{};
  it.full_shape = tv->shape;
  it.note = Describe(sel.tensor);
  const auto& qtok = QueryTokens(t);
  const auto& ktok = KeyTokens(t);
  const bool per_head = tv->shape.size() == 4;
  const bool kv = sel.tensor == "k" || sel.tensor == "v";
  Mat m;
  if (per_head && sel.mode == InspectSelection::Mode::Merged) {
    m = MergeHeads(*tv);
    it.title = i18n::Format(_("%s (all heads side by side)"), sel.tensor.c_str());
    it.shape = {1, tv->shape[2], tv->shape[1] * tv->shape[3]};
    it.row_labels = kv ? ktok : qtok;
  } else if (per_head) {
    const int h = kv ? t.KvHeadOf(head) : head;
    const TensorView hv = HeadSlice(*tv, h);
    m = Eigen::Map<const Mat>(hv.data, hv.shape[0], hv.shape[1]);
    it.title = hv.name;
    if (kv && t.cfg.kv_heads() != t.cfg.num_heads) it.title += i18n::Format(_(" (read by query head %d)"), head);
    it.shape = {1, 1, hv.shape[0], hv.shape[1]};
    it.row_labels = kv ? ktok : qtok;
    if (sel.tensor == "scores" || sel.tensor == "attn") it.col_labels = ktok;
  } else if (tv->shape.size() == 3) {
    m = Eigen::Map<const Mat>(tv->data, tv->shape[1], tv->shape[2]);
    it.title = sel.tensor;
    it.shape = tv->shape;
    it.row_labels = sel.tensor == "memory" ? ktok : qtok;
  } else if (tv->shape.size() == 2) {
    m = Eigen::Map<const Mat>(tv->data, tv->shape[0], tv->shape[1]);
    it.title = sel.tensor;
    it.shape = tv->shape;
  } else if (tv->shape.size() == 1) {
    m = Eigen::Map<const Mat>(tv->data, 1, tv->shape[0]);
    it.title = sel.tensor;
    it.shape = tv->shape;
  } else {  // a scalar (ln_eps)
    m = Mat::Constant(1, 1, *tv->data);
    it.title = sel.tensor;
    it.shape = tv->shape;
  }
  // Very large tensors: every k-th row and column, so the texture stays bounded.
  const std::int64_t n = static_cast<std::int64_t>(m.rows()) * m.cols();
  if (n > kMaxInspectValues) {
    const int k = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n) / kMaxInspectValues)));
    Mat sub((m.rows() + k - 1) / k, (m.cols() + k - 1) / k);
    for (Eigen::Index i = 0; i < sub.rows(); ++i)
      for (Eigen::Index j = 0; j < sub.cols(); ++j) sub(i, j) = m(i * k, j * k);
    m.swap(sub);
    it.row_labels.clear();
    it.col_labels.clear();
    it.note +=
        (it.note.empty() ? "" : ". ") + i18n::Format(_("Too big to draw whole: every %dth row and column shown"), k);
  }
  // Columns that are heads side by side: concat, merged q/k/v/context, W_q/W_k/W_v and their biases.
  const int hd = t.cfg.head_dim();
  const bool merged = per_head && sel.mode == InspectSelection::Mode::Merged;
  if (it.col_labels.empty() && n <= kMaxInspectValues && hd > 0 && hd < m.cols() &&
      (merged || sel.tensor == "concat" || sel.tensor == "W_q" || sel.tensor == "b_q" || sel.tensor == "W_k" ||
       sel.tensor == "b_k" || sel.tensor == "W_v" || sel.tensor == "b_v")) {
    it.col_group = hd;
    const bool kv_side = sel.tensor == "k" || sel.tensor == "v" || sel.tensor == "W_k" || sel.tensor == "b_k" ||
                         sel.tensor == "W_v" || sel.tensor == "b_v";
    it.col_group_label = kv_side && t.cfg.kv_heads() != t.cfg.num_heads ? _("K/V head") : _("head");
  }
  it.values = std::move(m);
  FillStats(it);
}

}  // namespace

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

// While the worker recomputes, it has the trace: there is none to show or read.
bool HasResults(const AppState& s) { return !s.worker.holds_trace() && (s.result.ok || s.result.generation > 0); }
bool ShowingLastValid(const AppState& s) { return !s.worker.holds_trace() && !s.result.ok && s.result.generation > 0; }

void ClampTeachSelection(AppState& s) {
  if (!HasResults(s)) return;
  const Trace& t = s.result.trace;
  s.teach.head = std::clamp(s.teach.head, 0, std::max(0, t.cfg.num_heads - 1));
  s.teach.query = std::clamp(s.teach.query, 0, std::max(0, t.seq - 1));
}

const Cached<QueryExplanation>& QueryCache(AppState& s) {
  auto& c = s.teach.query_cache;
  if (!HasResults(s)) return NoTrace(c, s);
  ClampTeachSelection(s);
  const std::string key = GenKey(s) + " h" + std::to_string(s.teach.head) + " q" + std::to_string(s.teach.query);
  return Refresh(c, key, [&](QueryExplanation& v) { v = ExplainQuery(s.result.trace, s.teach.head, s.teach.query); });
}

const Cached<ScalingComparison>& ScalingCache(AppState& s) {
  auto& c = s.teach.scaling_cache;
  if (!HasResults(s)) return NoTrace(c, s);
  ClampTeachSelection(s);
  const std::string key = GenKey(s) + " h" + std::to_string(s.teach.head);
  return Refresh(c, key, [&](ScalingComparison& v) {
    v = CompareScaling(s.result.trace, s.teach.head, s.result.trace.cfg.temperature);
  });
}

std::vector<HeadProfile> ProfileOnSentence(const std::vector<const Trace*>& layers, const std::vector<int>& ids) {
  std::vector<HeadProfile> heads;
  std::vector<std::vector<double>> counts;
  for (std::size_t l = 0; l < layers.size(); ++l)
    if (static_cast<int>(ids.size()) == layers[l]->seq)
      AddToProfile(*layers[l], ids, static_cast<int>(l), heads, counts);
  FinishProfile(heads, counts);
  return heads;
}

std::vector<int> NumberWords(const std::vector<std::string>& tokens) {
  std::map<std::string, int> seen;
  std::vector<int> ids;
  for (const std::string& t : tokens) ids.push_back(seen.emplace(t, static_cast<int>(seen.size())).first->second);
  return ids;
}

void PrimeCaches(AppState& s, PrimedViews&& v) {
  if (!HasResults(s) || !s.result.ok) return;
  if (v.profiled) {
    s.teach.profile = std::move(v.profile);
    s.teach.profile_of = s.result.generation;
  }
  auto& c = s.teach.summaries_cache;
  c.key = GenKey(s);
  c.ok = true;
  c.error.clear();
  c.value = std::move(v.summaries);
  s.teach.divergence_maps = std::move(v.divergence_maps);
  s.teach.divergence_maps_key = GenKey(s);
  ClampTeachSelection(s);
  if (s.teach.head != v.head) return;
  auto& sc = s.teach.scaling_cache;
  sc.key = GenKey(s) + " h" + std::to_string(v.head);
  sc.ok = true;
  sc.error.clear();
  sc.value = std::move(v.scaling);
}

const Cached<std::vector<HeadSummary>>& SummariesCache(AppState& s) {
  auto& c = s.teach.summaries_cache;
  if (!HasResults(s)) return NoTrace(c, s);
  return Refresh(c, GenKey(s), [&](std::vector<HeadSummary>& v) { v = SummarizeHeads(s.result.trace); });
}

DivergenceJob::Maps DivergenceJob::CopyMaps(const Trace& t) {
  auto maps = std::make_shared<std::vector<Mat>>();
  for (int h = 0; h < std::min(t.cfg.num_heads, kMaxDivergenceHeads); ++h) maps->push_back(t.AttnHead(h));
  return maps;
}

namespace {

// The mean JS divergence of every pair of `maps`, stopping early (a partial, unused
// result) once `cancel` is set.
Eigen::MatrixXd DivergenceOf(const std::vector<Mat>& maps, const std::atomic<bool>& cancel) {
  const int n = static_cast<int>(maps.size());
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(n, n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      if (cancel) return d;
      d(a, b) = d(b, a) = MeanJensenShannon(maps[a], maps[b]);
    }
  return d;
}

// `maps`: the copy the recompute's worker made for this trace, or null (copied here).
void StartDivergenceJob(const Trace& t, const std::string& key, DivergenceJob::Maps maps, DivergenceJob& job) {
  if (job.cancel) *job.cancel = true;  // a superseded job stops at its next pair
  job.key = key;
  if (!maps) maps = DivergenceJob::CopyMaps(t);
  job.heads = static_cast<int>(maps->size());
  job.cancel = std::make_shared<std::atomic<bool>>(false);
  job.result = std::async(std::launch::async, [maps, cancel = job.cancel] { return DivergenceOf(*maps, *cancel); });
}

}  // namespace

const Cached<Eigen::MatrixXd>& DivergenceCache(AppState& s, bool wait) {
  auto& c = s.teach.divergence_cache;
  auto& job = s.teach.divergence_job;
  if (!HasResults(s)) return NoTrace(c, s);
  const Trace& t = s.result.trace;
  const std::string key = GenKey(s);
  if (c.key == key) return c;
  if (job.key != key || !job.result.valid()) {
    try {
      DivergenceJob::Maps maps;
      if (s.teach.divergence_maps_key == key) maps = s.teach.divergence_maps;
      s.teach.divergence_maps.reset();  // the job holds it now (or it was another trace's)
      StartDivergenceJob(t, key, std::move(maps), job);
    } catch (const std::exception& e) {  // no thread or no memory for the copy
      c.key = key;
      c.ok = false;
      c.error = std::string(_("Could not compute the divergence: ")) + e.what();
      return c;
    }
  }
  if (!wait && job.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    // Keep showing the last result while it fits this trace's heads; else "computing".
    const bool fits = c.ok && c.value.rows() == job.heads && s.teach.divergence_of == t.cfg.num_heads;
    c.stale = fits;
    if (!fits) {
      c.ok = false;
      c.error.clear();
    }
    return c;
  }
  c.value = job.result.get();
  c.key = key;
  c.ok = true;
  c.stale = false;
  c.error.clear();
  s.teach.divergence_of = t.cfg.num_heads;
  return c;
}

const Cached<AttentionSources>& SourcesCache(AppState& s) {
  auto& c = s.teach.sources_cache;
  if (!HasResults(s)) return NoTrace(c, s);
  return Refresh(c, GenKey(s), [&](AttentionSources& v) { v = DescribeSources(s.result.trace); });
}

const Cached<InspectedTensor>& InspectCache(AppState& s) {
  auto& c = s.teach.inspect_cache;
  if (!HasResults(s)) return NoTrace(c, s);
  ClampTeachSelection(s);
  const InspectSelection& sel = s.teach.inspect;
  const std::string key = GenKey(s) + " " + sel.tensor + " m" + std::to_string(static_cast<int>(sel.mode)) + " h" +
                          std::to_string(s.teach.head);
  return Refresh(c, key, [&](InspectedTensor& v) { BuildInspected(s.result.trace, sel, s.teach.head, v); });
}

const Cached<Trace>& SelfTraceCache(AppState& s) {
  auto& c = s.teach.self_trace_cache;
  if (!HasResults(s)) return NoTrace(c, s);
  const Trace& t = s.result.trace;
  if (!t.in.cross()) {
    c.key.clear();
    c.ok = false;
    c.value = Trace();
    c.error = _("Self-attention already: there is no memory sentence.");
    return c;
  }
  return Refresh(c, GenKey(s), [&](Trace& v) {
    // A second trace beside the first: bounded, so the two stay within the memory budget.
    constexpr std::size_t kMaxContrastBytes = std::size_t(256) << 20;
    const std::size_t bytes = EstimateTraceBytes(t.cfg, t.seq, t.seq);
    if (bytes > kMaxContrastBytes)
      throw Error("The self-attention contrast would need a second trace of about " + std::to_string(bytes >> 20) +
                  " MiB beside this one (the cap for it is " + std::to_string(kMaxContrastBytes >> 20) +
                  " MiB); use fewer tokens or heads to see it.");
    Inputs self;
    self.tokens = t.in.tokens;
    self.x = t.in.x;
    Forward(t.cfg, t.weights, self, v);
  });
}

const Config& DescribedConfig(const AppState& s, bool must_run) {
  if (HasResults(s) && (UsingTrainedModel(s) || (must_run && !s.result.ok))) return s.result.trace.cfg;
  return s.choice.cfg;
}

void InspectFlowRow(AppState& s, const FlowRow& row) {
  InspectSelection& sel = s.teach.inspect;
  sel.tensor = row.tensor;
  sel.step = row.step;
  const bool per_head_tensor = row.tensor == "q" || row.tensor == "k" || row.tensor == "v" || row.tensor == "scores" ||
                               row.tensor == "attn" || row.tensor == "context";
  if (per_head_tensor)
    sel.mode = row.shape.size() == 4 ? InspectSelection::Mode::Head : InspectSelection::Mode::Merged;
  else
    sel.mode = InspectSelection::Mode::Whole;
  ShowView(s.teach, "inspector");
}

}  // namespace mha::gui
