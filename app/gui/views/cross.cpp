// Cross-attention vs self-attention: where Q, K and V come from (DescribeSources),
// and for one head the sentence's self-attention map (square) next to its
// cross-attention map over the memory (rectangular, the encoder-decoder case).
#include <algorithm>
#include <cstdio>
#include <string>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "gui/sources/file_sources.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;
using dump::Matrix;

namespace {

// Default memory sentence when the learner turns cross-attention on with none: the
// translation case, where the decoder (the sentence) reads the encoder's sentence.
const char* DefaultMemory(const std::string& sentence) {
  if (sentence == "The cat sat on the mat.") return "Le chat est assis sur le tapis.";
  if (sentence == "고양이가 쥐를 잡았다") return "The cat caught the mouse.";
  return "Le chat est assis sur le tapis.";
}

// The view's own state (AppState::views).
struct CrossState {
  Cached<Trace> self_trace;  // the sentence's self-attention with the same weights
};

// The contrast: the core's Forward on the same x without the memory. Only while
// cross-attention is on.
const Cached<Trace>& SelfTraceCache(AppState& s) {
  auto& c = s.views.Get<CrossState>().self_trace;
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

}  // namespace

namespace {

// Self-attention only: the head's square map, and what cross-attention would change.
void DrawSelfOnly(AppState& s, int h, ImVec2 avail, float legend_h) {
  const Trace& t = s.result.trace;
  const float fs = ImGui::GetFontSize();
  const auto cross_map = t.AttnHead(h);
  // Self-attention only: its square map, and what cross-attention would change.
  const Mat m = cross_map;
  ImGui::Text(_("head %d: %d x %d, square, because the rows and the columns are the same %d tokens"), h, t.seq, t.seq,
              t.seq);
  MatrixArgs a;
  a.id = "cross self only";
  a.key = "g" + std::to_string(s.result.generation) + " h" + std::to_string(h);
  a.data = m.data();
  a.rows = t.seq;
  a.cols = t.seq_kv;
  a.row_labels = &t.in.tokens;
  a.col_labels = &t.in.tokens;
  a.fixed_decimals = true;
  a.row_axis = _("query");
  a.col_axis = _("key");
  a.size =
      ImVec2(std::min(avail.x, fs * 30.0f),
             std::max(avail.y - legend_h - ImGui::GetTextLineHeightWithSpacing() * 3, t.seq * fs * 1.6f + fs * 6.5f));
  DrawMatrix(s, a);
  Probe(s, "cross_self_map");
  DrawScaleLegend(ColourScale::Sequential, 1.0f, std::min(avail.x, fs * 20.0f), _("weight"), false);
  Muted(
      _("Turn on cross-attention above: the keys and values then come from the memory sentence, and the map "
        "becomes seq x seq_kv, one column per memory token."));
}

// Cross-attention beside the same head's self-attention on the sentence.
void DrawContrast(AppState& s, int h, ImVec2 avail, float legend_h) {
  const Trace& t = s.result.trace;
  const float fs = ImGui::GetFontSize();
  const auto cross_map = t.AttnHead(h);
  // Side by side: the same head, the same weights; only where K and V come from differs.
  const auto& st = SelfTraceCache(s);
  const float gap = fs * 2.0f;
  const float half = (avail.x - gap) / 2.0f;
  // Cells big enough for the token labels; the view scrolls when the window is short.
  const float min_cell = std::max(t.seq, t.seq_kv) <= 24 ? fs * 1.6f : 4.0f;
  const float map_h =
      std::max(avail.y - legend_h - ImGui::GetTextLineHeightWithSpacing() * 3.0f, t.seq * min_cell + fs * 6.5f);
  char title[400];
  ImGui::BeginGroup();
  std::snprintf(title, sizeof title, _("self-attention: the sentence reads itself (%d x %d)"), t.seq, t.seq);
  ImGui::TextUnformatted(Ellipsize(title, half).c_str());
  Muted(_("the same W_Q, W_K, W_V; K, V from the sentence"));
  if (st.ok) {
    const Mat m = st.value.AttnHead(h);
    MatrixArgs a;
    a.id = "cross contrast self";
    a.key = st.key + " h" + std::to_string(h);
    a.data = m.data();
    a.rows = st.value.seq;
    a.cols = st.value.seq_kv;
    a.row_labels = &t.in.tokens;
    a.col_labels = &t.in.tokens;
    a.fixed_decimals = true;
    a.row_axis = _("query");
    a.col_axis = _("key (sentence)");
    a.size = ImVec2(half, map_h);
    DrawMatrix(s, a);
    Probe(s, "cross_self_map");
  } else {
    MessageBox(st.error, Pal().error_bg, Pal().error_text);
  }
  ImGui::EndGroup();
  ImGui::SameLine(0, gap);
  ImGui::BeginGroup();
  std::snprintf(title, sizeof title, _("cross-attention: the sentence reads the memory (%d x %d)"), t.seq, t.seq_kv);
  ImGui::TextUnformatted(Ellipsize(title, half).c_str());
  Muted(_("rows: the sentence's queries; columns: the memory's keys"));
  {
    const Mat m = cross_map;
    MatrixArgs a;
    a.id = "cross contrast cross";
    a.key = "g" + std::to_string(s.result.generation) + " h" + std::to_string(h);
    a.data = m.data();
    a.rows = t.seq;
    a.cols = t.seq_kv;
    a.row_labels = &t.in.tokens;
    a.col_labels = &t.in.memory_tokens;
    a.fixed_decimals = true;
    a.row_axis = _("query");
    a.col_axis = _("memory token");
    a.size = ImVec2(half, map_h);
    DrawMatrix(s, a);
    Probe(s, "cross_map");
  }
  ImGui::EndGroup();
  DrawScaleLegend(ColourScale::Sequential, 1.0f, std::min(avail.x, fs * 20.0f), _("weight"), false);
}

}  // namespace

void DrawCrossView(AppState& s) {
  SectionTitle(
      s, _("Cross-attention vs self-attention"),
      _("Self-attention: a sentence looks at itself (Q = K = V source). Cross-attention: the sentence's queries "
        "look at another sentence, as a Transformer decoder reads its encoder."),
      true);
  // The switch and the memory sentence, mirrored from Configuration.
  if (ImGui::Checkbox(_("Cross-attention: keys and values from a second sentence"), &s.choice.cross)) {
    if (s.choice.cross && s.choice.memory.empty()) {
      s.choice.memory = DefaultMemory(s.choice.sentence);
      SyncBuffersFromChoice(s);
    }
    if (s.choice.cross && s.choice.cfg.mask == Mask::Causal) s.choice.cfg.mask = Mask::None;
    s.dirty = true;
  }
  Probe(s, "cross_toggle");
  if (s.choice.cross && s.choice.files.input_path.empty()) {
    ImGui::SetNextItemWidth(-1.0f);
    if (ImGui::InputTextWithHint("##cross_memory", _("memory sentence for keys and values"), s.ui.memory_buf.data(),
                                 s.ui.memory_buf.size())) {
      s.choice.memory = FromDisplay(s.ui.memory_buf.data());
      s.dirty = true;
    }
    Probe(s, "cross_memory");
  }
  if (!s.choice.files.input_path.empty() && s.choice.cross && !(s.result.ok && s.result.trace.in.cross()))
    Muted(i18n::Format(_("x comes from %s, which has no 'memory' array: cross-attention needs one there, or use the "
                         "sentence again (Examples tab)."),
                       SourceShown(s.choice.files.input_path).c_str())
              .c_str());
  if (!HaveResultsToShow(s)) return;
  const auto& sc = SourcesCache(s);
  if (!sc.ok) {
    MessageBox(sc.error, Pal().error_bg, Pal().error_text);
    return;
  }
  const AttentionSources& src = sc.value;
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(src.cross ? _("This layer: cross-attention (encoder-decoder)")
                                   : _("This layer: self-attention"));
  if (s.ui.font_bold) ImGui::PopFont();
  // The core's explanation is English (--dump-state, scripts); the window says it in its language.
  if (i18n::Current() == i18n::Lang::kEnglish)
    Explanation(src.explanation.c_str());
  else if (src.cross)
    Explanation(
        i18n::Format(_("Queries come from the sentence (Q = x W_Q); keys and values come from the memory sentence "
                       "(K = m W_K, V = m W_V), as when a decoder reads the encoder's output. Each map is %d x %d: "
                       "one row per query token, one column per memory token."),
                     src.seq, src.seq_kv)
            .c_str());
  else
    Explanation(
        i18n::Format(_("Q, K and V all come from the same sentence x (Q = x W_Q, K = x W_K, V = x W_V), so every "
                       "token looks at every token of its own sentence and each map is square, %d x %d."),
                     src.seq, src.seq)
            .c_str());
  Probe(s, "cross_explanation");
  ImGui::Spacing();

  HeadPicker(s, "##cross_head");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float legend_h = ImGui::GetTextLineHeightWithSpacing() * 1.5f;
  const int h = s.choice.head;

  if (!src.cross)
    DrawSelfOnly(s, h, avail, legend_h);
  else
    DrawContrast(s, h, avail, legend_h);
}

json DumpCrossView(AppState& s) {
  const auto& c = SourcesCache(s);
  if (!c.ok) return dump::Error(c.error);
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
    if (st.ok && st.value.seq * st.value.seq <= dump::kMaxDumpValues)
      cv["self_attention_head"] = Matrix(st.value.AttnHead(s.choice.head));
    else if (!st.ok)
      cv["self_attention_error"] = st.error;
  }
  return cv;
}

ViewEntry CrossView() {
  ViewEntry v{"cross", N_("Cross"), N_("Cross-attention vs self-attention"),
              "where queries, keys and values come from, beside self-attention"};
  v.essentials = "cross_self_map;cross_toggle";
  v.draw = &DrawCrossView;
  v.dump = &DumpCrossView;
  v.shows = "cross_explanation";
  return v;
}

}  // namespace mha::gui
