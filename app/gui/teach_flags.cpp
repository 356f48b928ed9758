// The teaching views' names, their command-line flags, and the JSON of what each
// view shows (--dump-state), written from the same caches the views draw.
#include <cmath>

#include <nlohmann/json.hpp>

#include "gui/teach_views.hpp"

namespace mha::gui {
namespace {

using nlohmann::json;

struct ViewInfo {
  const char* name;
  const char* tab;
  const char* menu;
};
constexpr ViewInfo kViews[kViewCount] = {
    {"heatmaps", "Heatmaps", "Attention heatmaps (all heads)"},
    {"query", "One query", "One query, step by step"},
    {"scaling", "Softmax & \xE2\x88\x9A" "d_k", "Scores, softmax and the \xE2\x88\x9A" "d_k scaling"},
    {"heads", "Head metrics", "Head metrics and similarity"},
    {"head-count", "Head count", "Head count vs parameters"},
    {"gqa", "GQA/MQA", "Grouped-query and multi-query attention"},
    {"cross", "Cross-attn", "Cross-attention vs self-attention"},
    {"lesson", "Lesson", "Lesson example, weight editor and .npz files"},
    {"inspector", "Inspector", "Tensor inspector"},
};

// JSON has no infinity: a masked score (-inf) is written as null.
json Num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json Vec(const Eigen::Ref<const RowVec>& v) {
  json a = json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(Num(v[i]));
  return a;
}

template <class M>
json Matrix(const M& m) {
  json a = json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    json r = json::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j) r.push_back(Num(m(i, j)));
    a.push_back(std::move(r));
  }
  return a;
}

// Big matrices are left out of the dump (their statistics stay).
constexpr Eigen::Index kMaxDumpValues = 65536;

json Error(const std::string& e) { return json{{"error", e}}; }

json RowStatsJson(const RowStats& st) {
  return json{{"entropy", st.entropy},           {"max_entropy", st.max_entropy}, {"max_weight", st.max_weight},
              {"mean_entropy", st.mean_entropy}, {"mean_max_weight", st.mean_max_weight}};
}

json HeadAttentionJson(const HeadAttention& a) {
  json j{{"scaled", a.scaled},     {"temperature", a.temperature}, {"multiplier", a.multiplier},
         {"score_std", a.score_std}, {"stats", RowStatsJson(a.stats)}};
  if (a.scores.size() <= kMaxDumpValues) {
    j["scores"] = Matrix(a.scores);
    j["masked_scores"] = Matrix(a.masked_scores);
    j["weights"] = Matrix(a.weights);
  }
  return j;
}

}  // namespace

const char* ViewName(View v) { return kViews[static_cast<int>(v)].name; }
const char* ViewTitle(View v) { return kViews[static_cast<int>(v)].tab; }
const char* ViewMenuTitle(View v) { return kViews[static_cast<int>(v)].menu; }

const char* const kTeachFlagsHelp =
    "\n"
    "Teaching views:\n"
    "  --view NAME         start on a view: heatmaps, query, scaling, heads, head-count, gqa, cross,\n"
    "                      lesson, inspector\n"
    "  --view-head H       the head the query, scaling and inspector views show (default 0)\n"
    "  --view-query I      the query token of the step-by-step view (default 0)\n"
    "  --inspect TENSOR    the tensor inspector shows TENSOR (an .npz key: x, W_q, q, scores, concat, ...)\n"
    "  --preset lesson     start on the lesson's worked example (X = [[1,2,3,4],[5,6,7,8],[9,10,11,12]],\n"
    "                      d_model 4, 2 heads, identity weights); replaces the sentence and configuration\n"
    "  --preset heads      four hand-built positional heads (previous, self, first, next word) on the\n"
    "                      sentence's tokens: x = positional encoding only, d_model 64, 4 heads\n";

bool TeachFlagTakesValue(const std::string& f) {
  return f == "--view" || f == "--view-head" || f == "--view-query" || f == "--inspect" || f == "--preset";
}

bool ParseTeachFlag(cli::Args& a, const std::string& f, TeachFlags& out) {
  if (f == "--view") {
    const std::string v = a.Value(f);
    std::string names;
    for (int i = 0; i < kViewCount; ++i) {
      if (v == kViews[i].name) {
        out.view = i;
        return true;
      }
      names += (i ? ", " : "") + std::string(kViews[i].name);
    }
    throw cli::UsageError("--view must be one of " + names + "; got '" + v + "'.");
  }
  if (f == "--view-head") {
    out.head = a.Int(f, 0, Limits::kMaxHeads - 1);
    return true;
  }
  if (f == "--view-query") {
    out.query = a.Int(f, 0, Limits::kMaxTokens - 1);
    return true;
  }
  if (f == "--inspect") {
    out.inspect = a.Value(f);
    return true;
  }
  if (f == "--preset") {
    const std::string v = a.Value(f);
    if (v != "lesson" && v != "heads")
      throw cli::UsageError("--preset must be 'lesson' (the lesson's worked example) or 'heads' (four hand-built "
                            "positional heads on the sentence); got '" + v + "'.");
    (v == "lesson" ? out.lesson : out.heads) = true;
    return true;
  }
  return false;
}

void ApplyTeachFlags(const TeachFlags& f, AppState& s) {
  if (f.lesson) LoadLessonExample(s);
  if (f.heads) LoadPositionalHeadsExample(s);
  if (f.view >= 0) {
    s.teach.view = static_cast<View>(f.view);
    s.teach.select_view = true;
  }
  if (f.head >= 0) s.teach.head = f.head;
  if (f.query >= 0) s.teach.query = f.query;
  if (!f.inspect.empty()) {
    s.teach.inspect.tensor = f.inspect;
    s.teach.inspect.step.clear();
    const bool per_head = f.inspect == "q" || f.inspect == "k" || f.inspect == "v" || f.inspect == "scores" ||
                          f.inspect == "attn" || f.inspect == "context";
    s.teach.inspect.mode = per_head ? InspectSelection::Mode::Head : InspectSelection::Mode::Whole;
    if (f.view < 0) {
      s.teach.view = View::Inspector;
      s.teach.select_view = true;
    }
  }
}

std::string TeachViewsJson(AppState& s) {
  json j;
  j["view"] = ViewName(s.teach.view);
  ClampTeachSelection(s);
  j["head"] = s.teach.head;
  j["query"] = s.teach.query;

  // 1. One query, step by step.
  {
    const auto& c = QueryCache(s);
    if (!c.ok) {
      j["query_view"] = Error(c.error);
    } else {
      const QueryExplanation& e = c.value;
      json keys = json::array();
      for (const KeyStep& k : e.keys)
        keys.push_back({{"index", k.index},
                        {"token", k.token},
                        {"k", Vec(k.k)},
                        {"v", Vec(k.v)},
                        {"dot", Num(k.dot)},
                        {"scaled", Num(k.scaled)},
                        {"masked", k.masked},
                        {"exp_shifted", Num(k.exp_shifted)},
                        {"weight", Num(k.weight)},
                        {"weighted_v", Vec(k.weighted_v)}});
      j["query_view"] = {{"head", e.head},
                         {"query", e.query},
                         {"kv_head", e.kv_head},
                         {"head_dim", e.head_dim},
                         {"query_token", e.query_token},
                         {"q", Vec(e.q)},
                         {"scaled", e.scaled},
                         {"sqrt_dk", e.sqrt_dk},
                         {"temperature", e.temperature},
                         {"divisor", e.divisor},
                         {"max_scaled", Num(e.max_scaled)},
                         {"exp_sum", e.exp_sum},
                         {"keys", keys},
                         {"context", Vec(e.context)},
                         {"trace_context", Vec(e.trace_context)},
                         {"max_abs_diff", e.max_abs_diff}};
    }
  }
  // 2. Scores, masked scores, weights; with and without sqrt(d_k).
  {
    const auto& c = ScalingCache(s);
    if (!c.ok)
      j["scaling_view"] = Error(c.error);
    else
      j["scaling_view"] = {{"head", c.value.with_scaling.head},
                           {"with_scaling", HeadAttentionJson(c.value.with_scaling)},
                           {"without_scaling", HeadAttentionJson(c.value.without_scaling)}};
  }
  // 3. Head metrics.
  {
    const auto& c = SummariesCache(s);
    const auto& d = DivergenceCache(s);
    json heads = json::object();
    if (!c.ok) {
      heads = Error(c.error);
    } else {
      json list = json::array();
      for (const HeadSummary& h : c.value)
        list.push_back({{"head", h.head},
                        {"mean_entropy", h.mean_entropy},
                        {"mean_max_weight", h.mean_max_weight},
                        {"self", h.self},
                        {"previous", h.previous},
                        {"next", h.next},
                        {"first", h.first},
                        {"pattern", ToString(h.pattern)}});
      heads["summaries"] = list;
      if (d.ok) heads["divergence"] = Matrix(d.value);
      else heads["divergence_error"] = d.error;
    }
    j["heads_view"] = heads;
  }
  // 4. Head count vs parameters.
  {
    const auto& c = HeadCountCache(s);
    if (!c.ok) {
      j["head_count_view"] = Error(c.error);
    } else {
      json rows = json::array();
      for (const HeadCountRow& r : c.value) {
        json row{{"num_heads", r.num_heads}, {"head_dim", r.head_dim}, {"current", r.current},
                 {"params", r.params},       {"flops", r.flops},       {"kv_cache_bytes", r.kv_cache_bytes}};
        if (r.has_gqa)
          row["gqa"] = {{"num_kv_heads", r.num_kv_heads},
                        {"params", r.gqa_params},
                        {"flops", r.gqa_flops},
                        {"kv_cache_bytes", r.gqa_kv_cache_bytes}};
        rows.push_back(row);
      }
      j["head_count_view"] = {{"d_model", s.choice.cfg.d_model}, {"rows", rows}};
    }
  }
  // 7. GQA / MQA.
  {
    const auto& c = GqaCache(s);
    if (!c.ok) {
      j["gqa_view"] = Error(c.error);
    } else {
      const GqaFacts& f = c.value;
      j["gqa_view"] = {{"kind", f.kind},
                       {"num_heads", f.num_heads},
                       {"num_kv_heads", f.num_kv_heads},
                       {"group_size", f.group_size},
                       {"head_dim", f.head_dim},
                       {"kv_head_of", f.kv_head_of},
                       {"query_heads_of", f.query_heads_of},
                       {"kv_params", f.kv_params},
                       {"mha_kv_params", f.mha_kv_params},
                       {"kv_cache_bytes", f.kv_cache_bytes},
                       {"mha_kv_cache_bytes", f.mha_kv_cache_bytes},
                       {"params_saved", f.params_saved},
                       {"cache_bytes_saved", f.cache_bytes_saved}};
    }
  }
  // 6. Cross-attention.
  {
    const auto& c = SourcesCache(s);
    if (!c.ok) {
      j["cross_view"] = Error(c.error);
    } else {
      const AttentionSources& src = c.value;
      json cv{{"cross", src.cross},
              {"kind", src.kind},
              {"explanation", src.explanation},
              {"seq", src.seq},
              {"seq_kv", src.seq_kv},
              {"query_tokens", src.query_tokens},
              {"key_tokens", src.key_tokens}};
      if (src.cross) {
        const auto& st = SelfTraceCache(s);
        if (st.ok && st.value.seq * st.value.seq <= kMaxDumpValues)
          cv["self_attention_head"] = Matrix(st.value.AttnHead(s.teach.head));
        else if (!st.ok)
          cv["self_attention_error"] = st.error;
      }
      j["cross_view"] = cv;
    }
  }
  // 5. Lesson & weights.
  {
    json l{{"input_source", s.files.input_path.empty() ? "sentence" : s.files.input_path},
           {"weights_source", s.files.weights_path.empty() ? "seeded" : s.files.weights_path},
           {"weights_edited", s.teach.weights_edited},
           {"file_message", s.teach.file_message},
           {"file_message_ok", s.teach.file_message_ok}};
    if (s.result.ok && s.result.trace.cfg.d_model <= 8 && s.result.trace.weights) {
      const Weights& w = *s.result.trace.weights;
      json& wj = l["weights"];
      ForEachWeight(w, s.result.trace.cfg,
                    [&](const WeightSpec& spec, const auto& m) { wj[spec.name] = spec.vector ? Vec(m) : Matrix(m); });
    }
    j["lesson_view"] = l;
  }
  // 9. Tensor inspector.
  {
    const auto& c = InspectCache(s);
    json iv{{"tensor", s.teach.inspect.tensor},
            {"mode", s.teach.inspect.mode == InspectSelection::Mode::Head     ? "head"
                     : s.teach.inspect.mode == InspectSelection::Mode::Merged ? "merged"
                                                                              : "whole"},
            {"step", s.teach.inspect.step}};
    if (!c.ok) {
      iv["error"] = c.error;
    } else {
      const InspectedTensor& t = c.value;
      iv["title"] = t.title;
      iv["shape"] = t.shape;
      iv["full_shape"] = t.full_shape;
      iv["rows"] = t.values.rows();
      iv["cols"] = t.values.cols();
      iv["min"] = t.min;
      iv["max"] = t.max;
      iv["neg_inf"] = t.neg_inf;
      if (t.values.size() <= kMaxDumpValues) iv["values"] = Matrix(t.values);
    }
    j["inspector_view"] = iv;
  }
  return j.dump(1, ' ', false, json::error_handler_t::replace);
}

}  // namespace mha::gui
