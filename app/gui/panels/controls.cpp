// Controls: num_heads and d_model (the card's two sliders) and the switches of the
// layer. The sliders stop only at valid configurations: num_heads at the divisors of
// d_model, d_model at the multiples of num_heads. A value typed in (Ctrl+click) may be
// invalid; it is kept, and the results area explains it with one-click fixes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <imgui_internal.h>  // ClearActiveID: Ctrl+click types instead of dragging

#include "gui/draw/widgets.hpp"
#include "gui/panels/panels.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/style/theme.hpp"
#include "gui/style/wide_glyphs.hpp"
#include "text/normalize.hpp"
#include "gui/sources/file_sources.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The Configuration panel with a language model: num_heads and d_model are the
// model's, shown read-only with the reason. Returns false when not on a language model.
bool DrawFixedShape(AppState& s) {
  if (!UsingLanguageModel(s)) return false;
  const ModelConfig& c = s.choice.source.lm->model.cfg;
  SectionTitle(s, _("Configuration"), _("Each head gets d_model / num_heads dimensions."));
  const float lw = ImGui::CalcTextSize("num_kv_heads").x + ImGui::GetStyle().ItemSpacing.x * 2;
  int heads = c.layer.num_heads, d_model = c.layer.d_model;
  ImGui::BeginDisabled();
  FormLabel(_("num_heads"), lw);
  ImGui::SliderInt("##num_heads", &heads, heads, heads);
  Probe(s, "num_heads");
  FormLabel(_("d_model"), lw);
  ImGui::SliderInt("##d_model", &d_model, d_model, d_model);
  Probe(s, "d_model");
  ImGui::EndDisabled();
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextWrapped(_("head_dim = d_k = %d / %d = %d. A trained model's shape is fixed: its weights were learned "
                       "for exactly these sizes. Change them in the Train view, which trains a new model."),
                     d_model, heads, d_model / std::max(1, heads));
  ImGui::PopStyleColor();
  return true;
}

}  // namespace

namespace {

constexpr int kHeadsMax = 32;  // slider range; Ctrl+click types any value
constexpr int kDModelMax = 1024;

// The stops of the num_heads slider: every divisor of d_model up to kHeadsMax.
std::vector<int> HeadStops(int d_model) {
  std::vector<int> out;
  for (int h = 1; h <= std::min(d_model, kHeadsMax); ++h)
    if (d_model % h == 0) out.push_back(h);
  if (out.empty()) out.push_back(1);
  return out;
}

// The stops of the d_model slider: the multiples of num_heads up to kDModelMax.
std::vector<int> DModelStops(int num_heads) {
  const int h = std::clamp(num_heads, 1, kDModelMax);
  std::vector<int> out;
  for (int d = h; d <= kDModelMax; d += h) out.push_back(d);
  return out;
}

// Index of the stop nearest `v` (the lower one on a tie).
int NearestStop(const std::vector<int>& stops, int v) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(stops.size()); ++i)
    if (std::abs(stops[i] - v) < std::abs(stops[best] - v)) best = i;
  return best;
}

// A slider that lands only on `stops`; Ctrl+click opens a field that takes any
// value from 1 to `type_max` (the core explains an invalid one). Returns true when
// it changed *value.
bool StopSlider(AppState& s, const char* id, int* value, const std::vector<int>& stops, int type_max) {
  const int at = NearestStop(stops, *value);
  int idx = at;
  char shown[48];
  std::snprintf(shown, sizeof shown, "%d", *value);
  std::string format;  // the value as text: the slider's own number is the stop's index
  for (const char* c = shown; *c; ++c) format += *c == '%' ? "%%" : std::string(1, *c);
  bool changed = ImGui::SliderInt(id, &idx, 0, static_cast<int>(stops.size()) - 1, format.c_str(),
                                  ImGuiSliderFlags_NoInput | ImGuiSliderFlags_AlwaysClamp);
  const std::string popup = std::string(id) + "_type";
  if (ImGui::IsItemActivated() && ImGui::GetIO().KeyCtrl) {
    changed = false;  // Ctrl+click types a value instead of jumping to the click
    ImGui::ClearActiveID();
    ImGui::OpenPopup(popup.c_str());
    s.ui.typed_value = *value;
  }
  if (changed && idx != at) *value = stops[static_cast<std::size_t>(idx)];
  if (ImGui::BeginPopup(popup.c_str())) {
    ImGui::TextUnformatted(_("Type a value, Enter to use it:"));
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
    if (ImGui::InputInt("##typed", &s.ui.typed_value, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) {
      *value = std::clamp(s.ui.typed_value, 1, type_max);
      ImGui::CloseCurrentPopup();
      ImGui::EndPopup();
      return true;
    }
    ImGui::EndPopup();
  }
  return changed && idx != at;
}

// One-click fixes for the configuration error at hand. Each button sets one value.
// Drawn where the error is explained (the results area), not in the side panel, so
// the controls never move when a message comes and goes.
void DrawConfigFixes(AppState& s) {
  Config& c = s.choice.cfg;
  std::vector<std::pair<std::string, std::function<void()>>> fixes;
  auto add = [&](std::string label, std::function<void()> f) { fixes.emplace_back(std::move(label), std::move(f)); };
  if (c.d_model > 0 && c.num_heads > 0 && c.d_model % c.num_heads != 0) {
    if (c.num_heads <= c.d_model) {
      const auto [lo, hi] = NearestValidDModel(c.d_model, c.num_heads);
      for (int d : {lo, hi})
        if (d >= 1 && d <= Limits::kMaxDModel && d != c.d_model)
          add("d_model = " + std::to_string(d), [&c, d] { c.d_model = d; });
    }
    int below = 0, above = 0;
    for (int h : CommonHeadCounts(c.d_model)) {
      if (h < c.num_heads) below = h;
      if (h > c.num_heads && above == 0) above = h;
    }
    for (int h : {below, above})
      if (h > 0) add("num_heads = " + std::to_string(h), [&c, h] { c.num_heads = h; });
  }
  const int g = c.kv_heads();
  if (c.num_heads > 0 && c.num_heads <= Limits::kMaxHeads && (g > c.num_heads || c.num_heads % g != 0)) {
    int below = 1, above = 0;
    for (int i = 1; i <= c.num_heads; ++i) {
      if (c.num_heads % i) continue;
      if (i < g) below = i;
      if (i > g && above == 0) above = i;
    }
    for (int k : {below, above})
      if (k > 0) add("num_kv_heads = " + std::to_string(k), [&c, k] { c.num_kv_heads = k == c.num_heads ? 0 : k; });
  }
  if (c.mask == Mask::Causal && s.choice.cross) {
    add("mask = none", [&c] { c.mask = Mask::None; });
    add(_("self-attention (no memory)"), [&s] { s.choice.cross = false; });
  }
  if (s.choice.cross && s.result.memory_tokens.empty() && s.choice.files.input_path.empty())
    add(_("self-attention (no memory)"), [&s] { s.choice.cross = false; });
  if (fixes.empty()) return;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(_("Nearest valid:"));
  for (std::size_t i = 0; i < fixes.size(); ++i) {
    const ImVec2 sz = ImGui::CalcTextSize(fixes[i].first.c_str());
    const float w = sz.x + 2 * ImGui::GetStyle().FramePadding.x;
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
    if (ImGui::Button(fixes[i].first.c_str())) {
      fixes[i].second();
      s.dirty = true;
    }
    Probe(s, ("fix " + fixes[i].first).c_str());
  }
}

}  // namespace

namespace {

// "{1, 2, 4, 8}": the common head counts d_model takes, as the core lists them.
std::string HeadList(int d_model) {
  std::string out;
  for (int h : CommonHeadCounts(d_model)) out += (out.empty() ? "" : ", ") + std::to_string(h);
  return "{" + out + "}";
}

}  // namespace

// The core's teaching error, in the interface's language. The core speaks English (it
// never reads global state); the sizes errors a learner meets by dragging the sliders
// are rebuilt here from the configuration, with the same suggestions. Any other error
// is shown as the core wrote it.
std::string ShownConfigError(const AppState& s) {
  const std::string& core = s.result.error;
  if (i18n::Current() == i18n::Lang::kEnglish) return core;
  if (core == "the sentence is empty: type a few words.") return _("the sentence is empty: type a few words.");
  const Config& c = s.choice.cfg;
  char buf[640];
  const bool sizes = core.rfind("d_model = ", 0) == 0 || core.rfind("num_heads = ", 0) == 0;
  if (!sizes || c.d_model <= 0 || c.num_heads <= 0) return core;
  if (c.num_heads > c.d_model && core.find(" is more than d_model") != std::string::npos) {
    std::snprintf(buf, sizeof buf,
                  _("num_heads = %d is more than d_model = %d: each head needs at least one of the d_model "
                    "dimensions. Try num_heads in %s."),
                  c.num_heads, c.d_model, HeadList(c.d_model).c_str());
    return buf;
  }
  if (c.d_model % c.num_heads != 0 && core.find("is not divisible by num_heads") != std::string::npos) {
    const auto [lo, hi] = NearestValidDModel(c.d_model, c.num_heads);
    const std::string dm = hi != lo ? std::to_string(lo) + _(" or ") + std::to_string(hi) : std::to_string(lo);
    std::snprintf(buf, sizeof buf,
                  _("d_model = %d is not divisible by num_heads = %d: each head gets d_model / num_heads "
                    "dimensions, which must be a whole number. Try d_model = %s, or num_heads in %s."),
                  c.d_model, c.num_heads, dm.c_str(), HeadList(c.d_model).c_str());
    return buf;
  }
  const int g = c.kv_heads();
  if (core.find("is not divisible by num_kv_heads") != std::string::npos && g > 0) {
    std::string ok;
    for (int i = 1; i <= c.num_heads; ++i)
      if (c.num_heads % i == 0) ok += (ok.empty() ? "" : ", ") + std::to_string(i);
    std::snprintf(buf, sizeof buf,
                  _("num_heads = %d is not divisible by num_kv_heads = %d: in grouped-query attention each "
                    "key/value head serves num_heads / num_kv_heads query heads, which must be a whole number. "
                    "Try num_kv_heads in {%s} (1 is multi-query attention, %d is plain multi-head attention)."),
                  c.num_heads, g, ok.c_str(), c.num_heads);
    return buf;
  }
  return core;
}

void DrawConfigError(AppState& s) {
  if (s.result.ok || s.result.error.empty()) return;
  std::string text = ShownConfigError(s);
  if (s.result.generation > 0)
    text += std::string("  ") + _("The results below are the last valid configuration's, dimmed.");
  MessageBox(text, Pal().error_bg, Pal().error_text);
  Probe(s, "error");
  DrawConfigFixes(s);
}

int StepHeads(int d_model, int num_heads, int dir) {
  const std::vector<int> stops = HeadStops(d_model);
  if (dir > 0) {
    for (int h : stops)
      if (h > num_heads) return h;
  } else {
    for (auto it = stops.rbegin(); it != stops.rend(); ++it)
      if (*it < num_heads) return *it;
  }
  return num_heads;
}

namespace {

const char* KvLabel(int kv, int heads, char* buf, std::size_t n) {
  if (kv == 0 || kv == heads)
    std::snprintf(buf, n, _("%d (multi-head)"), heads);
  else if (kv == 1)
    std::snprintf(buf, n, "%s", _("1 (multi-query)"));
  else if (heads % kv == 0)
    std::snprintf(buf, n, _("%d (grouped-query)"), kv);
  else
    std::snprintf(buf, n, _("%d (does not divide num_heads)"), kv);
  return buf;
}

}  // namespace

namespace {

// num_heads, d_model (with its steps) and the division the lesson is about, num_kv_heads.
void DrawShapeControls(AppState& s, float lw) {
  Config& c = s.choice.cfg;
  const float step_w = ImGui::GetFrameHeight();
  FormLabel(_("num_heads"), lw);
  ImGui::SetNextItemWidth(-1.0f);
  s.dirty |= StopSlider(s, "##num_heads", &c.num_heads, HeadStops(c.d_model), Limits::kMaxHeads);
  Probe(s, "num_heads");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("Stops at the head counts that divide d_model = %d. Ctrl+click to type any value."), c.d_model);

  FormLabel(_("d_model"), lw);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 2 * (step_w + ImGui::GetStyle().ItemInnerSpacing.x));
  const std::vector<int> dstops = DModelStops(c.num_heads);
  s.dirty |= StopSlider(s, "##d_model", &c.d_model, dstops, Limits::kMaxDModel);
  Probe(s, "d_model");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(_("Stops at the multiples of num_heads = %d, so every head gets a whole head_dim.\n"
                        "- / + step by %d; Ctrl+click to type any value.\n"
                        "A new d_model draws new random weights: every map changes."),
                      c.num_heads, c.num_heads);
  ImGui::PushButtonRepeat(true);
  const int step = std::max(1, c.num_heads);
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::Button("-##dm", ImVec2(step_w, 0)) && c.d_model > step) {
    c.d_model = (c.d_model - 1) / step * step;  // the multiple below
    s.dirty = true;
  }
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::Button("+##dm", ImVec2(step_w, 0)) && c.d_model + step <= Limits::kMaxDModel) {
    c.d_model = (c.d_model / step + 1) * step;  // the multiple above
    s.dirty = true;
  }
  ImGui::PopButtonRepeat();

  // The division the lesson is about, with the numbers filled in: always one line,
  // so nothing below moves when it turns into an error.
  ImGui::Dummy(ImVec2(lw - ImGui::GetStyle().ItemSpacing.x, 0));
  ImGui::SameLine(lw);
  char line[160];
  const bool divides = c.num_heads > 0 && c.d_model > 0 && c.d_model % c.num_heads == 0;
  if (divides)
    std::snprintf(line, sizeof line, "head_dim = d_k = %d / %d = %d", c.d_model, c.num_heads, c.d_model / c.num_heads);
  else
    std::snprintf(line, sizeof line, _("%d / %d = %.3g: no whole head_dim"), c.d_model, std::max(c.num_heads, 1),
                  static_cast<double>(c.d_model) / std::max(c.num_heads, 1));
  ImGui::PushStyleColor(ImGuiCol_Text, divides ? Pal().muted_text : Pal().error_text);
  const std::string shown = Ellipsize(line, ImGui::GetContentRegionAvail().x);
  ImGui::TextUnformatted(shown.c_str());
  ImGui::PopStyleColor();
  Probe(s, "head_dim");
  if (shown != line && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", line);
  ImGui::Spacing();

  FormLabel(_("num_kv_heads"), lw);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("(?)").x -
                          ImGui::GetStyle().ItemSpacing.x);
  char buf[96];
  if (ImGui::BeginCombo("##kv", KvLabel(c.num_kv_heads, c.num_heads, buf, sizeof buf))) {
    for (int k = c.num_heads; k >= 1; --k) {
      if (c.num_heads % k) continue;
      const int value = k == c.num_heads ? 0 : k;
      if (ImGui::Selectable(KvLabel(value, c.num_heads, buf, sizeof buf), c.kv_heads() == k)) {
        c.num_kv_heads = value;
        s.dirty = true;
      }
    }
    ImGui::EndCombo();
  }
  Probe(s, "num_kv_heads");
  HelpMarker(
      _("How many key/value heads the query heads share. num_heads: ordinary multi-head attention. "
        "Fewer: grouped-query attention (GQA), num_heads / num_kv_heads query heads read each K/V head. "
        "1: multi-query attention (MQA). Fewer K/V heads mean fewer parameters and a smaller KV cache."));
}

// The seed, the mask, the norm, the √d_k scaling and the positional encoding.
void DrawLayerOptions(AppState& s, float lw) {
  Config& c = s.choice.cfg;
  FormLabel(_("seed"), lw);
  const std::uint64_t one = 1;
  s.dirty |= ImGui::InputScalar("##seed", ImGuiDataType_U64, &c.seed, &one, nullptr, "%llu");
  Probe(s, "seed");

  FormLabel(_("mask"), lw);
  int mask = static_cast<int>(c.mask);
  bool m = ImGui::RadioButton(_("none##mask"), &mask, static_cast<int>(Mask::None));
  ImGui::SameLine();
  m |= ImGui::RadioButton(_("causal"), &mask, static_cast<int>(Mask::Causal));
  HelpMarker(_("Causal: each token may attend only to itself and earlier tokens, as in a decoder (GPT)."));
  if (m) {
    c.mask = static_cast<Mask>(mask);
    s.dirty = true;
  }

  FormLabel(_("norm"), lw);
  int norm = static_cast<int>(c.norm);
  bool n = ImGui::RadioButton(_("post##norm"), &norm, static_cast<int>(Norm::Post));
  ImGui::SameLine();
  n |= ImGui::RadioButton(_("pre##norm"), &norm, static_cast<int>(Norm::Pre));
  ImGui::SameLine();
  n |= ImGui::RadioButton(_("none##norm"), &norm, static_cast<int>(Norm::None));
  HelpMarker(
      _("post: out = LN(x + MHA(x)), the original Transformer and BERT.\n"
        "pre: out = x + MHA(LN(x)), GPT and ViT.\nnone: out = x + MHA(x)."));
  if (n) {
    c.norm = static_cast<Norm>(norm);
    s.dirty = true;
  }

  s.dirty |= ImGui::Checkbox(_("Divide scores by \xE2\x88\x9A"
                               "d_k"),
                             &c.scale);
  Probe(s, "scale");
  HelpMarker(
      _("Without the scaling, dot products grow with d_k and the softmax saturates: one key takes almost all the "
        "weight."));
  if (s.choice.files.input_path.empty()) {
    s.dirty |= ImGui::Checkbox(_("Positional encoding"), &c.positional_encoding);
    HelpMarker(_("Adds sin/cos position signals to each token's embedding, so word order matters."));
  } else {
    // x is given (a file or an example): nothing is added to it, which is not "off".
    const bool heads_example = s.choice.files.input_path == "the positional-heads example";
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped("%s", heads_example
                                 ? _("Positional encoding: x is the encoding itself (sin/cos of each "
                                     "position, no word embeddings), so the heads can only use position.")
                                 : _("Positional encoding: x comes as given, with whatever encoding it has."));
    ImGui::PopStyleColor();
    Probe(s, "pe_given");
  }
}

// Cross-attention and its memory sentence; where the weights come from.
void DrawCrossAndWeights(AppState& s) {
  s.dirty |= ImGui::Checkbox(_("Cross-attention"), &s.choice.cross);
  Probe(s, "cross");
  HelpMarker(
      _("Queries come from the sentence; keys and values come from a second sentence (the memory), "
        "as in an encoder-decoder Transformer."));
  if (s.choice.cross) {
    ImGui::SetNextItemWidth(-1.0f);
    if (ImGui::InputTextWithHint("##memory", _("memory sentence for keys and values"), s.ui.memory_buf.data(),
                                 s.ui.memory_buf.size())) {
      if (std::string typed = text::KeepBeyondBmp(s.choice.memory, FromDisplay(s.ui.memory_buf.data()));
          text::TypedChange(s.choice.memory, typed)) {
        s.choice.memory = std::move(typed);
        s.dirty = true;
      }
    }
    Probe(s, "memory");
    const auto& mt = s.result.memory_tokens;
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped(P_("%d memory token (seq_kv = %d)", "%d memory tokens (seq_kv = %d)", mt.size()),
                       static_cast<int>(mt.size()), static_cast<int>(mt.size()));
    ImGui::PopStyleColor();
    TokenChips(s, "##memory_chips", mt, -1);
  }

  if (!s.choice.files.weights_path.empty()) {
    MessageBox(i18n::Format(_("Weights come from %s."), SourceShown(s.choice.files.weights_path).c_str()),
               Pal().notice_bg, Pal().notice_text);
    if (ImGui::Button(_("Use seeded random weights"))) {
      s.choice.files.weights_path.clear();
      s.choice.files.weights.reset();
      s.dirty = true;
    }
  }
}

}  // namespace

void DrawControlsPanel(AppState& s) {
  if (DrawFixedShape(s)) return;  // a language model's shape is its own (lm_source.hpp)
  SectionTitle(s, _("Configuration"), _("Each head gets d_model / num_heads dimensions."));
  const float lw = ImGui::CalcTextSize("num_kv_heads").x + ImGui::GetStyle().ItemSpacing.x * 2;

  DrawShapeControls(s, lw);
  DrawLayerOptions(s, lw);
  DrawBlockControls(s);
  DrawCrossAndWeights(s);
}

}  // namespace mha::gui
