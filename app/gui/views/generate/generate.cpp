// Generate view: mhaviz-small continues the learner's sentence one piece at a time
// with a KV cache (mha/decode.hpp through lm::Generation, what `mhaviz generate`
// runs), and the cache is drawn as it grows: for the chosen layer and head, the cached
// K and V (one row per piece read) beside the newest query's weights over them; a plot
// of each step's measured time and FLOPs with and without the cache; the cache's bytes
// and what fewer K/V heads (GQA, MQA) would make of them (those two: kv_cost.cpp).
//
// Generation is a task (generate_task.hpp), which the UI thread never waits for.
// What it generates is a choice (choice.generate: how many pieces after the prompt,
// and the sampling); a new sentence, model or sampling setting cancels the task; it
// ends after its current step (a few milliseconds) and is joined once it has.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/generate/kv_cost.hpp"
#include "gui/views/generate/generate_task.hpp"
#include "gui/panels/panels.hpp"
#include "gui/views/registry.hpp"
#include "lm/generation.hpp"
#include "options/flags.hpp"
#include "options/shared_flags.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;

namespace {

// The view's own state (AppState::views). What is generated is a choice
// (choice.generate: the pieces, the sampling); the task makes it.
struct GenerateState {
  int per_generate = 10;    // pieces one Generate adds (--generate-pieces)
  bool show_flops = false;  // the plot: measured time, or FLOPs from the formulas
  bool values = true;       // K and V: the first dimensions that fit, with their values
  int dims_shown = 0;       // the K and V columns the last frame drew
  std::string key;          // the model, prompt and sampling the task generates for
  Task<GenSnapshot> task;
  std::shared_ptr<const GenSnapshot> shown;  // the newest snapshot, read once per frame
  std::string prompt_notice;                 // the prompt was cut to the context
  std::string error;
};

Sampling SamplingOf(const GenerateChoice& g) {
  Sampling sm;
  sm.temperature = g.temperature;
  sm.top_k = g.temperature > 0 ? g.top_k : 0;  // greedy takes the likeliest piece: top-k changes nothing
  sm.seed = static_cast<std::uint64_t>(g.seed);
  sm.no_repeat_ngram = g.no_repeat;
  return sm;
}

std::string KeyOf(const AppState& s) {
  const GenerateChoice& g = s.choice.generate;
  char b[128];
  std::snprintf(b, sizeof b, "%p|%.6g|%d|%d|%d|%d|", static_cast<const void*>(s.choice.source.lm.get()), g.temperature,
                g.top_k, g.seed, g.no_repeat, g.stop_at_s ? 1 : 0);
  return b + g.prompt;
}

// Cancels the generation (its task ends on its own) and forgets its pieces.
void Retire(GenerateState& st) {
  st.task.Cancel();
  st.shown.reset();
  st.error.clear();
  st.prompt_notice.clear();
}

// A task for the current prompt and sampling (its pieces are asked for as chosen).
void Begin(AppState& s, GenerateState& st) {
  try {
    const lm::LanguageModel& lm = *s.choice.source.lm;
    const Sampling sampling = SamplingOf(s.choice.generate);
    CheckSampling(sampling, lm.model.cfg.vocab_size());
    std::string notice;
    std::vector<int> prompt = lm::PromptIds(lm, s.choice.generate.prompt, &notice);
    st.prompt_notice = notice;
    st.task.Start([lm = s.choice.source.lm, prompt = std::move(prompt), sampling, stop = s.choice.generate.stop_at_s](
                      TaskContext<GenSnapshot>& ctx) { return Generate(lm, prompt, sampling, stop, ctx); });
  } catch (const std::exception& e) {
    st.error = e.what();
  }
}

// Every frame: the task follows choice.generate. A newly typed sentence starts from no
// pieces (a lesson step sets the prompt and its pieces together); another model or
// sampling starts over; fewer pieces than made start again; more are asked for. The
// newest snapshot is read (one atomic load).
void UpdateGenerate(AppState& s) {
  if (!s.views.Find<GenerateState>()) return;  // the view was never opened
  GenerateState& st = s.views.Get<GenerateState>();
  GenerateChoice& g = s.choice.generate;
  if (g.prompt != s.choice.sentence) {
    g.prompt = s.choice.sentence;
    g.pieces = 0;
  }
  const std::string key = UsingLanguageModel(s) ? KeyOf(s) : std::string();
  if (key != st.key || g.pieces < st.task.asked() || key.empty()) {
    if (key != st.key) st.error.clear();
    Retire(st);
    st.key = key;
  }
  if (!key.empty() && g.pieces > st.task.asked() && st.error.empty()) {
    if (!st.task.Running()) Begin(s, st);
    st.task.Ask(g.pieces - st.task.asked());
  }
  st.task.Poll();
  st.shown = st.task.Latest();
}

bool Generating(const GenerateState& st) { return st.task.Running() && st.task.step() < st.task.asked(); }

bool GenerateAnimating(const AppState& s) {
  const GenerateState* st = s.views.Find<GenerateState>();
  return st && (Generating(*st) || st->task.Latest() != st->shown);
}

// ---- drawing --------------------------------------------------------------------

// The text as pieces: the prompt's in plain chips, the generated ones marked, the
// newest outlined.
void DrawPieces(AppState& s, const GenSnapshot* snap, const std::vector<std::string>& prompt_pieces) {
  const std::vector<std::string>& pieces = snap ? snap->pieces : prompt_pieces;
  const int prompt = snap ? snap->prompt_size : static_cast<int>(prompt_pieces.size());
  const ImGuiStyle& sty = ImGui::GetStyle();
  const Palette& pal = Pal();
  const float fs = ImGui::GetFontSize(), pad = sty.FramePadding.x * 0.6f, gap = sty.ItemSpacing.x * 0.5f;
  const float h = fs + sty.FramePadding.y, width = ImGui::GetContentRegionAvail().x;
  std::vector<ImVec2> pos(pieces.size());
  std::vector<std::string> label(pieces.size());
  float x = 0, y = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    label[i] = DisplayPiece(pieces[i]);
    const float w = ImGui::CalcTextSize(label[i].c_str()).x + 2 * pad;
    if (x > 0 && x + w > width) {
      x = 0;
      y += h + sty.ItemSpacing.y * 0.5f;
    }
    pos[i] = ImVec2(x, y);
    x += w + gap;
  }
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const bool added = static_cast<int>(i) >= prompt, newest = added && i + 1 == pieces.size();
    const ImVec2 a(o.x + pos[i].x, o.y + pos[i].y);
    const ImVec2 b(a.x + ImGui::CalcTextSize(label[i].c_str()).x + 2 * pad, a.y + h);
    dl->AddRectFilled(a, b, added ? pal.highlight_bg : pal.chip_bg, 3.0f);
    dl->AddRect(a, b, newest ? pal.highlight : added ? pal.accent : pal.chip_border, 3.0f, 0, newest ? 2.0f : 1.0f);
    dl->AddText(ImVec2(a.x + pad, a.y + sty.FramePadding.y * 0.5f), pal.chip_text, label[i].c_str());
  }
  ImGui::Dummy(ImVec2(width, y + h));
  Probe(s, "generate_pieces");
}

// One matrix of the cache: n rows (the pieces read), cols columns, heatmap cells with
// their values where they fit; the newest row outlined. Returns the hovered row.
int DrawRows(const char* title, const Mat& m, float x, float y, float cw, float ch, float range, bool sequential,
             const std::vector<std::string>& rows) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = Pal();
  const float fs = ImGui::GetFontSize();
  dl->AddText(ImVec2(x, y - fs * 1.3f), ImGui::GetColorU32(ImGuiCol_Text), title);
  const int n = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hover_r = -1, hover_c = -1;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < cols; ++j) {
      const float v = m(i, j);
      const ImVec2 a(x + j * cw, y + i * ch), b(a.x + cw, a.y + ch);
      // The weights on the heatmaps' scale [0, 1]; K and V on a diverging one.
      const render::Rgb bg = sequential ? render::Colormap(v) : render::Diverging(v / range);
      dl->AddRectFilled(a, b, Col32(bg));
      // The value, with fewer digits where two do not fit ("-0.093" -> "-0.09").
      for (int digits = 2; ch >= fs + 1.0f && digits >= 1; --digits) {
        const std::string t = sequential ? FormatValue(v, digits) : SigValue(v, digits);
        const ImVec2 ts = ImGui::CalcTextSize(t.c_str());
        if (ts.x > cw - 2.0f) continue;
        dl->AddText(ImVec2(a.x + (cw - ts.x) * 0.5f, a.y + (ch - ts.y) * 0.5f), Col32(render::TextColourOn(bg)),
                    t.c_str());
        break;
      }
      if (mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y) hover_r = i, hover_c = j;
    }
  dl->AddRect(ImVec2(x, y), ImVec2(x + cw * cols, y + ch * n), pal.grid_line);
  if (n > 0)
    dl->AddRect(ImVec2(x - 1.0f, y + (n - 1) * ch - 1.0f), ImVec2(x + cw * cols + 1.0f, y + n * ch + 1.0f),
                pal.highlight, 0.0f, 0, 2.0f);
  if (hover_r >= 0 && ImGui::IsWindowHovered()) {
    const std::string& piece = hover_r < static_cast<int>(rows.size()) ? rows[hover_r] : std::string();
    if (sequential)
      ImGui::SetTooltip(_("key %d (%s): weight %.6f"), hover_r, piece.c_str(), m(hover_r, hover_c));
    else
      ImGui::SetTooltip(_("row %d (%s), dimension %d: %.6f"), hover_r, piece.c_str(), hover_c, m(hover_r, hover_c));
  }
  return hover_r;
}

void DrawCache(AppState& s, GenerateState& st, const GenSnapshot& snap) {
  LayerSelector(s, "##generate_layer");
  if (snap.layers > 1) ImGui::SameLine();
  HeadPicker(s, "##generate_head");
  ImGui::Checkbox(_("values"), &st.values);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", _("On: while the rows are tall enough (up to 24 pieces), K and V show their first "
                              "dimensions with the values written in. Off: every dimension, as a heatmap. Hover a "
                              "cell for its exact value."));
  const int layer = std::clamp(s.choice.layer, 0, snap.layers - 1);
  const int head = std::clamp(s.choice.head, 0, snap.num_heads - 1);
  const int g = head / std::max(1, snap.num_heads / std::max(1, snap.kv_heads));
  if (snap.n == 0 || snap.attn.empty()) {
    Muted(_("The cache is empty until the first piece is generated: press Step."));
    return;
  }
  const Mat& K = snap.k[static_cast<std::size_t>(layer * snap.kv_heads + g)];
  const Mat& V = snap.v[static_cast<std::size_t>(layer * snap.kv_heads + g)];
  const Mat w = snap.attn[static_cast<std::size_t>(layer)].row(head).transpose();  // (n, 1)
  std::vector<std::string> rows;
  for (int i = 0; i < snap.n; ++i) rows.push_back(DisplayPiece(snap.pieces[static_cast<std::size_t>(i)]));
  ImGui::TextWrapped(_("Layer %d, head %d (reads K/V head %d). Left: the newest piece's query q weighs the %d cached "
                       "keys. Then the cache's K and V, one row per piece read (%d x %d each); the newest row is "
                       "outlined: %s"),
                     layer, head, g, snap.n, snap.n, snap.head_dim, rows.back().c_str());

  const float fs = ImGui::GetFontSize();
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float avail_h = std::max(ImGui::GetContentRegionAvail().y - fs * 2.0f, fs * 12.0f);
  float label_w = 0;
  for (const auto& r : rows) label_w = std::max(label_w, ImGui::CalcTextSize(r.c_str()).x);
  label_w = std::min(label_w, fs * 6.0f) + fs * 0.5f;
  // Rows tall enough for their pieces and values while few; a heatmap (the view
  // scrolls) once the cache is long.
  const float ch = std::clamp(std::floor(avail_h / (snap.n + 1.5f)), snap.n <= 24 ? fs * 1.15f : 3.0f, fs * 1.35f);
  const float gap = fs * 0.8f, wcol = fs * 3.2f;
  // Every dimension as a heatmap, or as many as fit with their values written in.
  const float room = avail_w - label_w - wcol - 2 * gap;
  const float number_w = ImGui::CalcTextSize("-0.00").x + fs * 0.4f;
  int dims = snap.head_dim;
  if (st.values && ch >= fs + 1.0f) dims = std::clamp(static_cast<int>(room / (2.0f * number_w)), 1, snap.head_dim);
  st.dims_shown = dims;
  const float cw = std::clamp(std::floor(room / (2.0f * dims)), 2.0f, std::max(number_w * 1.5f, 2.0f));
  const float range = std::max({K.cwiseAbs().maxCoeff(), V.cwiseAbs().maxCoeff(), 1e-6f});
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float top = o.y + fs * 1.4f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (ch >= fs * 0.8f)
    for (int i = 0; i < snap.n; ++i) {
      const std::string l = Ellipsize(rows[static_cast<std::size_t>(i)], label_w - fs * 0.5f);
      dl->AddText(ImVec2(o.x + label_w - fs * 0.3f - ImGui::CalcTextSize(l.c_str()).x, top + i * ch + (ch - fs) * 0.5f),
                  i + 1 == snap.n ? Pal().highlight : ImGui::GetColorU32(ImGuiCol_Text), l.c_str());
    }
  float x = o.x + label_w;
  DrawRows(_("weights"), w, x, top, wcol, ch, 1.0f, true, rows);
  x += wcol + gap;
  char k_title[96] = "K", v_title[96] = "V";
  if (dims < snap.head_dim) {
    std::snprintf(k_title, sizeof k_title, _("%s: dimensions 0-%d of %d"), "K", dims - 1, snap.head_dim);
    std::snprintf(v_title, sizeof v_title, _("%s: dimensions 0-%d of %d"), "V", dims - 1, snap.head_dim);
  }
  DrawRows(k_title, K.leftCols(dims), x, top, cw, ch, range, false, rows);
  x += cw * dims + gap;
  DrawRows(v_title, V.leftCols(dims), x, top, cw, ch, range, false, rows);
  ImGui::Dummy(ImVec2(avail_w, fs * 1.4f + ch * snap.n + fs * 0.3f));
  Probe(s, "generate_cache");
  char legend[96];
  std::snprintf(legend, sizeof legend, "%s", _("K and V values"));
  DrawScaleLegend(ColourScale::Diverging, range, std::min(avail_w * 0.4f, fs * 16.0f), legend, false);
}

}  // namespace

void DrawGenerateView(AppState& s) {
  SectionTitle(s, _("Generate: the KV cache"), _("mhaviz-small continues your sentence one piece at a time"), true);
  if (!UsingLanguageModel(s)) {
    ImGui::TextWrapped(_("Generation needs a language model. Pick \"%s\" under Model (left), or press the button."),
                       kSmallModelName);
    UseSmallModelButton(s, "generate_use_small");
    return;
  }
  GenerateState& st = s.views.Get<GenerateState>();
  UpdateGenerate(s);  // the first frame after the view opens: the task's newest snapshot
  const GenSnapshot* snap = st.shown.get();
  const bool busy = Generating(st);
  GenerateChoice& g = s.choice.generate;
  const int context = s.choice.source.lm->model.cfg.max_seq;
  const bool full = snap && (snap->at_context || snap->stopped_at_s);

  // Controls: Generate and Step add pieces; Start over forgets them. Each goes on the
  // row while it fits, so at large text the row wraps rather than running past the edge.
  const float fs = ImGui::GetFontSize();
  ImGui::BeginDisabled(full);
  char label[64];
  std::snprintf(label, sizeof label, _("Generate %d"), st.per_generate);
  if (ImGui::Button((std::string(label) + "###generate_go").c_str())) g.pieces += st.per_generate;
  Probe(s, "generate_go");
  SameLineIfFits(ButtonWidth(_("Step")));
  if (ImGui::Button(_("Step"))) ++g.pieces;
  Probe(s, "generate_step");
  ImGui::EndDisabled();
  SameLineIfFits(ButtonWidth(_("Start over")));
  ImGui::BeginDisabled(g.pieces == 0);
  if (ImGui::Button(_("Start over"))) g.pieces = 0;
  Probe(s, "generate_reset");
  ImGui::EndDisabled();
  SameLineIfFits(fs * 7.0f);
  ImGui::SetNextItemWidth(fs * 7.0f);
  ImGui::SliderInt("##per_generate", &st.per_generate, 1, context - 1, _("%d pieces"));
  SameLineIfFits(fs * 7.0f);
  ImGui::SetNextItemWidth(fs * 7.0f);
  // Sampling as mhaviz generate offers it; a change starts over (UpdateGenerate).
  ImGui::SliderFloat("##temperature", &g.temperature, 0.0f, 2.0f,
                     g.temperature <= 0 ? _("greedy (T = 0)") : _("temperature %.2f"));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", _("0: always the likeliest piece (greedy). Above 0: sample from softmax(logits / T)."));
  if (g.temperature > 0) {
    SameLineIfFits(fs * 6.0f);
    ImGui::SetNextItemWidth(fs * 6.0f);
    ImGui::SliderInt("##top_k", &g.top_k, 0, 100, g.top_k == 0 ? _("top-k: all") : _("top-k %d"));
    SameLineIfFits(fs * 5.0f + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(_("seed")).x);
    ImGui::SetNextItemWidth(fs * 5.0f);
    ImGui::InputInt(_("seed"), &g.seed);
    g.seed = std::max(g.seed, 0);
  }
  // Where the model ends a text (<s>: after a paragraph it often goes on in the other
  // language); a change starts over, as a sampling change does.
  SameLineIfFits(ToggleWidth(_("stop at <s>")));
  ImGui::Checkbox(_("stop at <s>"), &g.stop_at_s);
  Probe(s, "generate_stop_at_s");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", _("End the text where the model writes <s>, the start of a new text (after a paragraph "
                              "it often changes language), as mhaviz generate --stop-at-s."));
  if (busy) {
    SameLineIfFits(ImGui::CalcTextSize(_("generating...")).x);
    ImGui::TextDisabled(_("generating..."));
  }
  if (!st.error.empty()) MessageBox(st.error, Pal().error_bg, Pal().error_text);
  if (!st.task.error().empty()) MessageBox(st.task.error(), Pal().error_bg, Pal().error_text);
  if (!st.prompt_notice.empty()) MessageBox(st.prompt_notice, Pal().notice_bg, Pal().notice_text);
  if (snap && snap->stopped_at_s) {
    MessageBox(_("Stopped at <s>: the model ended this text and would start a new one. Turn off \"stop at <s>\" to "
                 "see what it writes next."),
               Pal().notice_bg, Pal().notice_text);
  } else if (full) {
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  _("The text fills the model's context of %d pieces: nothing more fits. Start over, or shorten the "
                    "sentence."),
                  context);
    MessageBox(msg, Pal().notice_bg, Pal().notice_text);
  }

  // The text, its generated pieces marked.
  std::vector<std::string> prompt_pieces;
  if (!snap) {
    try {
      prompt_pieces = s.choice.source.lm->tokenizer.Pieces(lm::PromptIds(*s.choice.source.lm, g.prompt));
    } catch (const std::exception&) {
    }
  }
  DrawPieces(s, snap, prompt_pieces);
  if (snap && !snap->steps.empty())
    ImGui::TextWrapped(_("%d new pieces (marked); the cache holds the K and V of %d pieces. Cached vs full "
                         "recomputation: max |logit difference| = %.3g."),
                       static_cast<int>(snap->steps.size()), snap->n, snap->max_logit_diff);

  // What the cache is, in the lessons' words.
  Explanation(
      _("Why a cache: the causal mask lets each piece attend only to the pieces before it, so "
        "appending a piece never changes their keys K or values V. Each layer keeps them, per K/V "
        "head: the KV cache. A new piece computes only its own q, k and v; its k and v join the "
        "cache (one new row per piece), and its q is compared with every cached key (scores = "
        "q K^T / sqrt(d_k), softmax, then the weighted sum of V). Fewer K/V heads (GQA, MQA) "
        "make the cache smaller."));
  if (!snap || snap->steps.empty()) {
    Muted(_("Press Generate or Step: mhaviz-small continues the sentence (greedy: the likeliest piece each time)."));
    return;
  }
  ImGui::Separator();
  // The cache on the left, the cost and the bytes on the right.
  if (ImGui::BeginTable("##generate_layout", 2, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("cache", ImGuiTableColumnFlags_WidthStretch, 0.58f);
    ImGui::TableSetupColumn("cost", ImGuiTableColumnFlags_WidthStretch, 0.42f);
    ImGui::TableNextColumn();
    DrawCache(s, st, *snap);
    ImGui::TableNextColumn();
    DrawGenerateCostPlot(s, st.show_flops, *snap);
    ImGui::Spacing();
    DrawGenerateCacheBytes(*snap, context);
    ImGui::EndTable();
  }
  Probe(s, "generate_view");
}

namespace {

json StepJson(const lm::GeneratedPiece& p) {
  return {{"position", p.position},     {"id", p.id},
          {"piece", p.piece},           {"ms_cached", p.ms_cached},
          {"ms_full", p.ms_full},       {"cpu_ms_cached", p.cpu_cached},
          {"cpu_ms_full", p.cpu_full},  {"flops_cached", p.flops.cached},
          {"flops_full", p.flops.full}, {"max_logit_diff", p.logit_diff},
          {"blocked", p.blocked}};
}

}  // namespace

json DumpGenerateView(AppState& s) {
  json j{{"available", UsingLanguageModel(s)}};
  const GenerateState* st = s.views.Find<GenerateState>();
  if (!UsingLanguageModel(s) || !st) return j;
  j["sentence"] = s.choice.sentence;
  j["running"] = Generating(*st);
  const Sampling sm = SamplingOf(s.choice.generate);
  j["sampling"] = {{"temperature", sm.temperature},
                   {"top_k", sm.top_k},
                   {"seed", sm.seed},
                   {"greedy", sm.temperature <= 0},
                   {"no_repeat_ngram", sm.no_repeat_ngram}};
  j["stop_at_s"] = s.choice.generate.stop_at_s;
  if (!st->error.empty()) j["error"] = st->error;
  if (!st->task.error().empty()) j["error"] = st->task.error();
  if (!st->prompt_notice.empty()) j["notice"] = st->prompt_notice;
  const GenSnapshot* snap = st->shown.get();
  if (!snap) return j;
  const auto prompt_end = snap->ids.begin() + snap->prompt_size;
  j["prompt_ids"] = std::vector<int>(snap->ids.begin(), prompt_end);
  j["ids"] = std::vector<int>(prompt_end, snap->ids.end());  // the generated ones, as generate --json
  j["pieces"] = std::vector<std::string>(snap->pieces.begin() + snap->prompt_size, snap->pieces.end());
  j["text"] = snap->text;
  j["cache"] = {{"layers", snap->layers},
                {"kv_heads", snap->kv_heads},
                {"n", snap->n},
                {"head_dim", snap->head_dim},
                {"bytes", snap->bytes}};
  json fewer = json::array();
  for (int g : FewerKvHeads(snap->num_heads, snap->kv_heads))
    fewer.push_back({{"kv_heads", g}, {"bytes", KvCache::Bytes(snap->layers, g, snap->head_dim, snap->n)}});
  j["bytes_with_fewer_kv_heads"] = fewer;
  json steps = json::array();
  for (const auto& p : snap->steps) steps.push_back(StepJson(p));
  j["steps"] = steps;
  j["max_logit_diff"] = snap->max_logit_diff;
  j["at_context"] = snap->at_context;
  j["stopped_at_s"] = snap->stopped_at_s;
  if (snap->n > 0 && !snap->attn.empty()) {
    const int layer = std::clamp(s.choice.layer, 0, snap->layers - 1);
    const int head = std::clamp(s.choice.head, 0, snap->num_heads - 1);
    const int g = head / std::max(1, snap->num_heads / std::max(1, snap->kv_heads));
    j["layer"] = layer;
    j["head"] = head;
    j["kv_head"] = g;
    j["k"] = dump::Matrix(snap->k[static_cast<std::size_t>(layer * snap->kv_heads + g)]);
    j["v"] = dump::Matrix(snap->v[static_cast<std::size_t>(layer * snap->kv_heads + g)]);
    j["weights"] = dump::Vec(snap->attn[static_cast<std::size_t>(layer)].row(head));
    j["dims_shown"] = st->dims_shown;  // K and V columns drawn (all head_dim, or those with values)
  }
  return j;
}

json GenerateProbe(const AppState& s) {
  const GenerateState* st = s.views.Find<GenerateState>();
  if (!st) return {{"pieces", 0}, {"running", false}, {"asked", 0}, {"stop_at_s", s.choice.generate.stop_at_s}};
  const GenSnapshot* snap = st->shown.get();
  return {{"pieces", snap ? static_cast<int>(snap->steps.size()) : 0},
          {"stop_at_s", s.choice.generate.stop_at_s},
          {"stopped_at_s", snap && snap->stopped_at_s},
          {"n", snap ? snap->n : 0},
          {"running", Generating(*st)},
          {"asked", st->task.asked()},
          {"error", !st->error.empty() || !st->task.error().empty()}};
}

// --generate-pieces: how many pieces one Generate adds; --generate-temperature,
// --generate-top-k and --generate-seed: the sampling, within the view's sliders' ranges.
void DeclareGenerateFlags(CLI::App& app, const std::string& g, ViewFlagActions& actions) {
  options::IntFlag(
      app, "--generate-pieces", 1, 63,
      [&actions](int v) { actions.push_back([v](AppState& s) { s.views.Get<GenerateState>().per_generate = v; }); },
      "pieces the Generate view's Generate button adds (default 10)")
      ->type_name("N")
      ->group(g);
  options::DecimalFlag(
      app, "--generate-temperature",
      [&actions](double t) {
        actions.push_back([t](AppState& s) { s.choice.generate.temperature = static_cast<float>(t); });
      },
      "the Generate view's sampling: softmax(logits / T), 0 (default) to 2; 0 is greedy", "0.8",
      [](double t, const std::string& typed) {
        return t >= 0 && t <= 2 ? std::string()
                                : "--generate-temperature = '" + typed +
                                      "': give a number from 0 to 2, the range of the view's slider (0: greedy, the "
                                      "likeliest piece; 0.8 sharpens the distribution, 1.5 flattens it).";
      })
      ->type_name("T")
      ->group(g);
  options::IntFlag(
      app, "--generate-top-k", 0, 100,
      [&actions](int v) { actions.push_back([v](AppState& s) { s.choice.generate.top_k = v; }); },
      "the Generate view's sampling: only the K likeliest pieces (0, the default: all)")
      ->type_name("K")
      ->group(g);
  options::IntFlag(
      app, "--generate-seed", 0, 2147483647,
      [&actions](int v) { actions.push_back([v](AppState& s) { s.choice.generate.seed = v; }); },
      "the Generate view's seed of the draws (default 0): the same seed, the same text")
      ->type_name("S")
      ->group(g);
  options::IntFlag(
      app, "--generate-no-repeat", 0, 8,
      [&actions](int v) { actions.push_back([v](AppState& s) { s.choice.generate.no_repeat = v; }); },
      "the Generate view's n-gram blocking: no run of N pieces comes back, as generate --no-repeat (0, the "
      "default: off)")
      ->type_name("N")
      ->group(g);
  app.add_flag_callback(
         "--generate-stop-at-s",
         [&actions] { actions.push_back([](AppState& s) { s.choice.generate.stop_at_s = true; }); },
         "the Generate view's \"stop at <s>\": the text ends where the model writes <s>, as generate --stop-at-s")
      ->group(g);
}

// Presentation mode's PgDn / PgUp: one piece more (as Step, while the context has
// room) or one fewer (the task starts again and stops a piece earlier).
void StepGeneratePieces(AppState& s, int dir) {
  GenerateChoice& g = s.choice.generate;
  const GenerateState& st = s.views.Get<GenerateState>();
  if (dir > 0 && !(st.shown && (st.shown->at_context || st.shown->stopped_at_s))) ++g.pieces;
  if (dir < 0) g.pieces = std::max(0, g.pieces - 1);
}

ViewEntry GenerateView() {
  ViewEntry v{"generate", N_("Generate"), N_("Generate text with a KV cache"),
              "the language model continues the sentence piece by piece; the KV cache grows on screen"};
  v.essentials = "generate_go;generate_step;generate_pieces";
  v.draw = &DrawGenerateView;
  v.dump = &DumpGenerateView;
  v.update = &UpdateGenerate;
  v.animating = &GenerateAnimating;
  v.probe = &GenerateProbe;
  v.flags = &DeclareGenerateFlags;
  v.step = &StepGeneratePieces;
  return v;
}

}  // namespace mha::gui
