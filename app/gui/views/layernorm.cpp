// Post-LN and pre-LN side by side (lesson 002): the same sentence and the same weights
// through the block both ways, each a column of its steps with every token's row
// spread (mean, standard deviation, L2 norm) at each, and one head's weights under
// each, since pre-LN's queries and keys read LN(x), not x. The numbers are the core's
// RunArrangement (mha/teach_norms.hpp), run on the view's task off the window's
// thread once the block is too big for a frame, once per trace (and layer); a new head
// only recomputes its two maps from the passes' kept q and k.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gui/draw/matrix_view.hpp"
#include "gui/draw/view_widgets.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "gui/views/dump.hpp"
#include "gui/views/registry.hpp"
#include "mha/teach_norms.hpp"
#include "text/i18n.hpp"

namespace mha::gui {

using dump::json;

namespace {

// Multiply-adds of both passes below which they run in the frame (a few ms): the
// class sentence at d_model 512 with the FFN is ~3e7.
constexpr double kPassesInFrame = 4e7;

// LayerNorm's learned scale and shift: their range over d_model.
struct LnRange {
  double gamma_min = 1, gamma_max = 1, beta_min = 0, beta_max = 0;
};

// Both arrangements' passes for one trace (and layer).
struct NormsPasses {
  std::array<ArrangementRun, 2> runs;  // post, pre
  std::array<LnRange, 2> ln;           // LN1, LN2 (LN2: the encoder block only)
};

// What the view draws: the passes and the chosen head's weights under each.
struct NormsResult {
  std::string passes_key;
  int head = 0;
  std::shared_ptr<const NormsPasses> passes;
  std::array<HeadAttention, 2> maps;
};

// The view's own state (AppState::views).
struct NormsState {
  Task<NormsResult> task;
  std::string key;                           // what the task computes (trace, layer, head)
  std::shared_ptr<const NormsResult> shown;  // the newest result
};

LnRange RangeOf(const RowVec& gamma, const RowVec& beta) {
  LnRange r;
  if (gamma.size() > 0) r.gamma_min = gamma.minCoeff(), r.gamma_max = gamma.maxCoeff();
  if (beta.size() > 0) r.beta_min = beta.minCoeff(), r.beta_max = beta.maxCoeff();
  return r;
}

std::string PassesKey(const AppState& s) {
  return GenKey(s) + " L" + std::to_string(UsingTrainedModel(s) ? s.choice.layer : 0);
}

// Starts the task for the trace shown and the chosen head when either changed; polls
// it; with `wait` (the dump, at exit) waits for it.
const NormsResult* Refresh(AppState& s, bool wait) {
  NormsState& st = s.views.Get<NormsState>();
  ClampSelection(s);
  const std::string passes_key = PassesKey(s);
  const std::string key = passes_key + " h" + std::to_string(s.choice.head);
  if (st.key != key) {
    st.key = key;
    const Trace& t = s.result.trace;
    std::shared_ptr<const NormsPasses> kept;
    if (st.shown && st.shown->passes_key == passes_key) kept = st.shown->passes;
    const int head = s.choice.head;
    Config cfg = t.cfg;
    // The weights are immutable and shared; the input rows are copied (seq x d_model),
    // so the task never reads the app's trace.
    auto work = [kept, passes_key, head, cfg, w = t.weights,
                 in = kept ? Inputs{} : t.in](TaskContext<NormsResult>& ctx) {
      NormsResult r;
      r.passes_key = passes_key;
      r.head = head;
      if (kept) {
        r.passes = kept;
      } else {
        auto p = std::make_shared<NormsPasses>();
        p->runs[0] = RunArrangement(cfg, w, in, Norm::Post);
        ctx.Check();
        p->runs[1] = RunArrangement(cfg, w, in, Norm::Pre);
        p->ln[0] = RangeOf(w->ln_gamma, w->ln_beta);
        p->ln[1] = RangeOf(w->ln2_gamma, w->ln2_beta);
        r.passes = std::move(p);
      }
      ctx.Check();
      for (int k = 0; k < 2; ++k)
        r.maps[static_cast<std::size_t>(k)] =
            ComputeHeadAttention(r.passes->runs[static_cast<std::size_t>(k)].lean, head, cfg.scale, cfg.temperature);
      return r;
    };
    // A new head alone: its two maps, seq x seq_kv x head_dim each.
    const double madds = kept ? 2.0 * t.seq * t.seq_kv * cfg.head_dim() : LayerWork(cfg, t.seq, t.seq_kv).madds * 2;
    if (madds <= kPassesInFrame)
      st.task.RunHere(work);
    else
      st.task.Start(work);
  }
  st.task.Poll();
  if (wait && st.task.Running()) {
    st.task.Wait();
    st.task.Poll();
  }
  if (auto r = st.task.result()) st.shown = r;
  return st.shown && st.shown->passes_key == passes_key ? st.shown.get() : nullptr;
}

const char* StageName(BlockStage s) {
  switch (s) {
    case BlockStage::Input: return "x";
    case BlockStage::Norm1: return "LN1";
    case BlockStage::Attention: return "MHA";
    case BlockStage::Add1: return "+";
    case BlockStage::Norm2: return "LN2";
    case BlockStage::Ffn: return "FFN";
    case BlockStage::Add2: return "+";
  }
  return "";
}

// What a step computes, for its tooltip.
const char* StageFormula(BlockStage s, Norm n) {
  const bool post = n == Norm::Post;
  switch (s) {
    case BlockStage::Input:
      return _("x: the token rows entering the block (embeddings + positions, or the last layer's output)");
    case BlockStage::Norm1:
      return post ? _("LN1(x + attn): each row minus its mean, divided by its std, times \xCE\xB3 plus \xCE\xB2")
                  : _("LN1(x): each row minus its mean, divided by its std, times \xCE\xB3 plus \xCE\xB2; "
                      "only the attention reads it");
    case BlockStage::Attention:
      return post ? _("attn = MHA(x): Multi-Head Attention of the rows as they came in")
                  : _("attn = MHA(LN1(x)): the queries, keys and values read the normalised rows");
    case BlockStage::Add1:
      return post ? _("x + attn: the residual (short-cut), not yet normalised")
                  : _("x + attn: the residual stream, never normalised in pre-LN");
    case BlockStage::Norm2:
      return post ? _("LN2(h + FFN(h)): the block's output, normalised again")
                  : _("LN2(h): what the FFN reads; the residual stream h stays as it is");
    case BlockStage::Ffn:
      return _("FFN: the same two-layer network applied to each position on its own (the non-linearity)");
    case BlockStage::Add2:
      return post ? _("h + FFN(h): the second residual") : _("h + FFN(LN2(h)): the block's output, unnormalised");
  }
  return "";
}

ImU32 StageColour(BlockStage s) {
  const Palette& p = Pal();
  switch (s) {
    case BlockStage::Norm1:
    case BlockStage::Norm2: return p.highlight_bg;
    case BlockStage::Attention:
    case BlockStage::Ffn: return p.block_bg;
    default: return p.chip_bg;
  }
}

// A step's spread over the tokens as "σ 0.98–1.02" (or "σ 1.00" when they agree).
std::string StdRange(const RowSpread& r) {
  if (r.std.empty()) return "";
  const auto [lo, hi] = std::minmax_element(r.std.begin(), r.std.end());
  const std::string a = Sig(*lo, 3), b = Sig(*hi, 3);
  return "\xCF\x83 " + (a == b ? a : a + "\xE2\x80\x93" + b);
}

// One arrangement's steps as a column of boxes, each with a bar per token (its row's
// std, on a scale both columns share, a line at 1), a residual's short-cut drawn down
// the column's right edge. Hovering a bar gives the token's exact numbers.
void DrawDiagram(const ArrangementRun& run, const std::vector<std::string>& tokens, ImVec2 a, ImVec2 size, double top) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const Palette& pal = Pal();
  const int n = static_cast<int>(run.stages.size());
  const float lane = fs * 1.4f;
  // Short of height (a lesson's caption band at 150 %), the arrows shrink before the
  // boxes go under one line of text, so the last LayerNorm stays in view.
  const float arrow = n > 1 ? std::clamp((size.y - n * fs * 1.3f) / (n - 1), fs * 0.35f, fs * 0.7f) : fs * 0.7f;
  const float box_h = std::min(fs * 4.5f, (size.y - arrow * (n - 1)) / std::max(n, 1));
  const float box_w = size.x - lane;
  // The step's name on top and its range of std under it where the box has two lines;
  // else the range right of the bars where it fits (and in the tooltip always).
  const bool two_lines = box_h >= fs * 2.4f;
  float left_w = 0.0f, range_w = 0.0f;
  for (const StageRows& st : run.stages) {
    left_w = std::max(left_w, ImGui::CalcTextSize(StageName(st.stage)).x);
    range_w = std::max(range_w, ImGui::CalcTextSize(StdRange(st.rows).c_str()).x);
  }
  if (two_lines) left_w = std::max(left_w, range_w);
  left_w += fs * 0.8f;
  const bool range_right = !two_lines && box_w - left_w - range_w > fs * 4.0f;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), muted = pal.muted_text;
  const ImU32 one_line = ImGui::GetColorU32(ImGuiCol_Text, 0.55f);
  std::vector<float> mid(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const StageRows& st = run.stages[static_cast<std::size_t>(i)];
    const float y = a.y + i * (box_h + arrow);
    mid[static_cast<std::size_t>(i)] = y + box_h * 0.5f;
    dl->AddRectFilled(ImVec2(a.x, y), ImVec2(a.x + box_w, y + box_h), StageColour(st.stage), fs * 0.25f);
    dl->AddRect(ImVec2(a.x, y), ImVec2(a.x + box_w, y + box_h), pal.block_border, fs * 0.25f);
    const std::string range = StdRange(st.rows);
    if (two_lines) {
      dl->AddText(ImVec2(a.x + fs * 0.4f, y + box_h * 0.5f - fs * 1.1f), text, StageName(st.stage));
      dl->AddText(ImVec2(a.x + fs * 0.4f, y + box_h * 0.5f + fs * 0.1f), muted, range.c_str());
    } else {
      dl->AddText(ImVec2(a.x + fs * 0.4f, y + (box_h - fs) * 0.5f), text, StageName(st.stage));
    }
    const float bars_x0 = a.x + left_w, bars_x1 = a.x + box_w - (range_right ? range_w + fs * 0.5f : fs * 0.3f);
    if (range_right) dl->AddText(ImVec2(bars_x1 + fs * 0.3f, y + (box_h - fs) * 0.5f), muted, range.c_str());
    // A bar per token from the box's foot, std / top of its height (at most 2.5 font
    // sizes wide: a few tokens' bars stay bars); the line across marks std = 1.
    const float foot = y + box_h - fs * 0.2f, room = box_h - fs * 0.4f;
    const int seq = static_cast<int>(st.rows.std.size());
    const float bw = std::min(fs * 2.5f, (bars_x1 - bars_x0) / std::max(seq, 1));
    for (int k = 0; k < seq; ++k) {
      const double v = st.rows.std[static_cast<std::size_t>(k)];
      const float x = bars_x0 + k * bw, h = room * static_cast<float>(std::min(v / top, 1.0));
      dl->AddRectFilled(ImVec2(x + bw * 0.12f, foot - h), ImVec2(x + bw * 0.88f, foot), pal.accent);
      if (ImGui::IsMouseHoveringRect(ImVec2(x, y), ImVec2(x + bw, y + box_h)) && ImGui::IsWindowHovered()) {
        const std::string tok =
            k < static_cast<int>(tokens.size()) ? ForDisplay(tokens[static_cast<std::size_t>(k)]) : "";
        ImGui::SetTooltip(_("%s, token %d \"%s\"\nmean %s\nstd %s\nL2 norm %s"), StageName(st.stage), k, tok.c_str(),
                          Sig(st.rows.mean[static_cast<std::size_t>(k)], 4).c_str(), Sig(v, 4).c_str(),
                          Sig(st.rows.l2[static_cast<std::size_t>(k)], 4).c_str());
      }
    }
    const float one = foot - room * static_cast<float>(1.0 / top);
    dl->AddLine(ImVec2(bars_x0, one), ImVec2(bars_x0 + bw * seq, one), one_line, 1.5f);
    if (ImGui::IsMouseHoveringRect(ImVec2(a.x, y), ImVec2(bars_x0, y + box_h)) && ImGui::IsWindowHovered())
      ImGui::SetTooltip("%s\n%s", StageFormula(st.stage, run.norm), range.c_str());
    if (i + 1 < n) {  // the arrow down to the next step
      const float cx = a.x + fs * 0.9f, y0 = y + box_h, y1 = y0 + arrow;
      dl->AddLine(ImVec2(cx, y0), ImVec2(cx, y1 - 2.0f), pal.accent, 2.0f);
      dl->AddTriangleFilled(ImVec2(cx - arrow * 0.35f, y1 - arrow * 0.45f),
                            ImVec2(cx + arrow * 0.35f, y1 - arrow * 0.45f), ImVec2(cx, y1), pal.accent);
    }
  }
  // The short-cuts: from the step a residual adds back to its "+".
  for (int i = 0; i < n; ++i) {
    const int from = run.stages[static_cast<std::size_t>(i)].adds;
    if (from < 0) continue;
    const float x0 = a.x + box_w, xr = x0 + lane * (from == 0 ? 0.45f : 0.8f);
    const float y0 = mid[static_cast<std::size_t>(from)], y1 = mid[static_cast<std::size_t>(i)];
    dl->AddLine(ImVec2(x0, y0), ImVec2(xr, y0), pal.accent, 2.0f);
    dl->AddLine(ImVec2(xr, y0), ImVec2(xr, y1), pal.accent, 2.0f);
    dl->AddLine(ImVec2(xr, y1), ImVec2(x0 + arrow * 0.5f, y1), pal.accent, 2.0f);
    dl->AddTriangleFilled(ImVec2(x0 + arrow * 0.5f, y1 - arrow * 0.35f), ImVec2(x0 + arrow * 0.5f, y1 + arrow * 0.35f),
                          ImVec2(x0, y1), pal.accent);
  }
  ImGui::SetCursorScreenPos(a);
  ImGui::Dummy(ImVec2(size.x, n * box_h + (n - 1) * arrow));
}

// The largest std any step shows, so both columns' bars share one scale (at least 1.25,
// so std = 1 sits below the top).
double TopOfBars(const NormsPasses& p) {
  double top = 1.25;
  for (const ArrangementRun& r : p.runs)
    for (const StageRows& st : r.stages)
      for (double v : st.rows.std) top = std::max(top, v * 1.05);
  return top;
}

// The columns' header: "Post-LN  Transformer (2017), BERT  (what the model runs now)", on
// one line where the current column's fits, else on two in both columns, so that their
// steps start level.
bool HeadsOnTwoLines(const AppState& s, float width) {
  const char* now = _("(what the model runs now)");
  const bool post = s.result.trace.cfg.norm != Norm::Pre;
  const char* who = post ? _("Transformer (2017), BERT") : _("GPT, ViT");
  float bold = ImGui::CalcTextSize("Post-LN ").x;
  if (s.ui.font_bold) bold = s.ui.font_bold->CalcTextSizeA(ImGui::GetFontSize(), FLT_MAX, 0.0f, "Post-LN ").x;
  return bold + ImGui::CalcTextSize((std::string(who) + "  " + now).c_str()).x > width;
}

void DrawColumn(AppState& s, const NormsResult& r, int k, ImVec2 a, ImVec2 size, bool two_line_head) {
  const Trace& t = s.result.trace;
  const ArrangementRun& run = r.passes->runs[static_cast<std::size_t>(k)];
  const float fs = ImGui::GetFontSize();
  const bool post = run.norm == Norm::Post;
  ImGui::SetCursorScreenPos(a);
  ImGui::BeginGroup();
  if (s.ui.font_bold) ImGui::PushFont(s.ui.font_bold);
  ImGui::TextUnformatted(post ? "Post-LN" : "Pre-LN");
  if (s.ui.font_bold) ImGui::PopFont();
  ImGui::SameLine();
  const char* who = post ? _("Transformer (2017), BERT") : _("GPT, ViT");
  const char* now = t.cfg.norm == run.norm ? _("(what the model runs now)") : "";
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  if (two_line_head) {
    ImGui::TextUnformatted(who);
    ImGui::TextUnformatted(*now ? now : " ");
  } else {
    ImGui::Text("%s  %s", who, now);
  }
  ImGui::PopStyleColor();
  const float head_h = ImGui::GetCursorScreenPos().y - a.y;
  const float body = size.y - head_h;
  // The map beside the diagram where the column is wider than tall, else under it
  // (the diagram then keeps room for boxes of two lines).
  const bool map_beside = size.x >= body * 0.9f;
  const float diagram_h = std::min(body * 0.6f, static_cast<float>(r.passes->runs[0].stages.size()) * fs * 3.2f);
  const float side = map_beside ? std::min(size.x * 0.42f, body) : std::max(body - diagram_h - fs * 1.5f, fs * 6.0f);
  const ImVec2 d0 = ImGui::GetCursorScreenPos();
  const ImVec2 dsize = map_beside ? ImVec2(size.x - side - fs * 0.8f, body) : ImVec2(size.x, diagram_h);
  DrawDiagram(run, QueryTokens(t), d0, dsize, TopOfBars(*r.passes));
  Probe(s, post ? "norms_post" : "norms_pre");
  const ImVec2 m0 = map_beside ? ImVec2(d0.x + dsize.x + fs * 0.8f, d0.y) : ImVec2(d0.x, d0.y + dsize.y + fs * 0.5f);
  ImGui::SetCursorScreenPos(m0);
  ImGui::BeginGroup();
  char title[160];
  std::snprintf(title, sizeof title, _("head %d's weights"), r.head);
  ImGui::TextUnformatted(title);
  MatrixArgs m;
  const HeadAttention& h = r.maps[static_cast<std::size_t>(k)];
  m.id = post ? "norms map post" : "norms map pre";
  m.key = s.views.Get<NormsState>().key;
  m.data = h.weights.data();
  m.rows = static_cast<int>(h.weights.rows());
  m.cols = static_cast<int>(h.weights.cols());
  m.row_labels = &QueryTokens(t);
  m.col_labels = &KeyTokens(t);
  m.scale = ColourScale::Sequential;
  m.range = 1.0f;
  m.fixed_decimals = true;
  m.masked_by = h.masked_scores.data();
  m.row_axis = _("query");
  m.col_axis = _("key");
  m.max_cell = fs * 5.0f;  // a short sentence's map as large as a projector wants
  m.size = ImVec2(side, side - ImGui::GetTextLineHeightWithSpacing());
  DrawMatrix(s, m);
  Probe(s, post ? "norms_map_post" : "norms_map_pre");
  ImGui::EndGroup();
  ImGui::EndGroup();
}

// What γ and β are, and what they make the normalised rows.
std::string GammaBetaText(const NormsPasses& p, bool encoder) {
  const LnRange& a = p.ln[0];
  const bool init = a.gamma_min == 1 && a.gamma_max == 1 && a.beta_min == 0 && a.beta_max == 0 &&
                    (!encoder || (p.ln[1].gamma_min == 1 && p.ln[1].gamma_max == 1 && p.ln[1].beta_min == 0 &&
                                  p.ln[1].beta_max == 0));
  if (init)
    return _(
        "LayerNorm's \xCE\xB3 (scale) and \xCE\xB2 (shift) are learned per dimension; here \xCE\xB3 = 1 and "
        "\xCE\xB2 = 0, as at initialisation, so every row LN puts out has mean 0 and std 1 by construction.");
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      _("LayerNorm's \xCE\xB3 (scale) and \xCE\xB2 (shift) are learned per dimension: here LN1's \xCE\xB3 runs "
        "%s to %s and \xCE\xB2 %s to %s, so the rows LN puts out are not exactly mean 0, std 1."),
      Sig(a.gamma_min, 3).c_str(), Sig(a.gamma_max, 3).c_str(), Sig(a.beta_min, 3).c_str(), Sig(a.beta_max, 3).c_str());
  return buf;
}

void DrawNotes(AppState& s, const NormsResult& r) {
  const Trace& t = s.result.trace;
  const bool encoder = t.cfg.block == Block::Encoder;
  Explanation(GammaBetaText(*r.passes, encoder).c_str());
  if (UsingTrainedModel(s)) {
    Explanation(
        _("This model was trained with one arrangement only; the other column runs the same layer's "
          "weights on the same input arranged the other way, which it was never trained for."));
  } else if (t.cfg.norm == Norm::None) {
    Explanation(_("The model runs with no LayerNorm now: both columns run its weights with one."));
  }
  Explanation(
      _("Each bar is one token's row: its standard deviation over the d_model numbers (hover for its mean "
        "and L2 norm). The line marks std = 1. A short-cut on the right carries a step's rows to the + "
        "that adds them back."));
}

}  // namespace

void DrawLayerNormView(AppState& s) {
  SectionTitle(s, _("LayerNorm: post-LN and pre-LN side by side"),
               _("The same sentence and the same weights through the block both ways: post-LN normalises each "
                 "sublayer's output, pre-LN only what each sublayer reads."),
               true);
  LayerSelector(s, "##norms_layer");
  HeadPicker(s, "##norms_head");
  if (!HaveResultsToShow(s)) return;
  const Trace& t = s.result.trace;
  if (t.cfg.block != Block::Encoder && !UsingTrainedModel(s)) {
    const char* add = _("Add the FFN (encoder block)");
    SameLineIfFits(ButtonWidth(add), ImGui::GetFontSize());
    if (ImGui::Button(add)) {
      s.choice.cfg.block = Block::Encoder;
      s.dirty = true;
    }
    Probe(s, "norms_add_ffn");
  }
  const NormsResult* r = Refresh(s, false);
  if (!r) {
    const auto& task = s.views.Get<NormsState>().task;
    if (!task.error().empty()) {
      MessageBox(task.error(), Pal().error_bg, Pal().error_text);
    } else {
      Muted(_("Running the block both ways\xE2\x80\xA6"));
      s.ui.report.views_busy += 1;
    }
    Probe(s, "norms_busy");
    return;
  }
  DrawNotes(s, *r);
  const float fs = ImGui::GetFontSize();
  const ImVec2 a = ImGui::GetCursorScreenPos(), avail = ImGui::GetContentRegionAvail();
  const float gap = fs * 1.5f;
  const ImVec2 col((avail.x - gap) * 0.5f, std::max(avail.y - fs * 0.5f, fs * 13.0f));
  const bool two = HeadsOnTwoLines(s, col.x);
  DrawColumn(s, *r, 0, a, col, two);
  DrawColumn(s, *r, 1, ImVec2(a.x + col.x + gap, a.y), col, two);
  ImGui::SetCursorScreenPos(ImVec2(a.x, a.y + col.y));
  ImGui::Dummy(ImVec2(avail.x, 1.0f));
}

namespace {

json SpreadJson(const RowSpread& r) { return json{{"mean", r.mean}, {"std", r.std}, {"l2", r.l2}}; }

json RunJson(const ArrangementRun& run, const HeadAttention& map) {
  json stages = json::array();
  for (const StageRows& st : run.stages)
    stages.push_back({{"stage", ToString(st.stage)},
                      {"tensor", st.tensor},
                      {"adds", st.adds >= 0 ? json(run.stages[static_cast<std::size_t>(st.adds)].tensor) : json()},
                      {"rows", SpreadJson(st.rows)}});
  json j{{"norm", ToString(run.norm)}, {"stages", stages}};
  if (map.weights.size() <= dump::kMaxDumpValues) j["weights"] = dump::Matrix(map.weights);
  return j;
}

json LnJson(const LnRange& r) {
  return json{{"gamma", {r.gamma_min, r.gamma_max}}, {"beta", {r.beta_min, r.beta_max}}};
}

}  // namespace

json DumpLayerNormView(AppState& s) {
  if (!HasResults(s)) return dump::Error(s.result.error.empty() ? "Nothing computed yet." : s.result.error);
  const NormsResult* r = Refresh(s, true);
  if (!r) return dump::Error(s.views.Get<NormsState>().task.error());
  const Trace& t = s.result.trace;
  return {{"head", r->head},
          {"layer", UsingTrainedModel(s) ? s.choice.layer : 0},
          {"trained", UsingTrainedModel(s)},
          {"block", ToString(t.cfg.block)},
          {"current", ToString(t.cfg.norm)},
          {"post", RunJson(r->passes->runs[0], r->maps[0])},
          {"pre", RunJson(r->passes->runs[1], r->maps[1])},
          {"ln1", LnJson(r->passes->ln[0])},
          {"ln2", LnJson(r->passes->ln[1])}};
}

json ProbeNorms(const AppState& s) {
  const NormsState* st = s.views.Find<NormsState>();
  if (!st) return json{{"ready", false}};
  return json{{"ready", st->shown != nullptr && !st->task.Running()},
              {"busy", st->task.Running()},
              {"head", st->shown ? st->shown->head : -1}};
}

ViewEntry LayerNormView() {
  ViewEntry v{"layernorm", N_("LayerNorm"), N_("Post-LN and pre-LN side by side: LayerNorm, the residual and the FFN"),
              "post-LN and pre-LN side by side on the same weights: each step's row mean and std, one head's weights"};
  v.draw = &DrawLayerNormView;
  v.dump = &DumpLayerNormView;
  v.probe = &ProbeNorms;
  v.shows = "norms_post";
  v.essentials = "norms_post;norms_pre;norms_map_post;norms_map_pre;##norms_head";
  return v;
}

}  // namespace mha::gui
