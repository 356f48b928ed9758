// Controls: num_heads and d_model (the card's two sliders) and the switches of the
// layer. An invalid combination is never changed behind the learner's back: the
// core's reason is shown with the nearest valid values as one-click buttons.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "gui/lm_source.hpp"
#include "gui/panels.hpp"
#include "gui/theme.hpp"
#include "gui/widgets.hpp"

namespace mha::gui {
namespace {

constexpr int kHeadsMax = 32;     // slider range; Ctrl+click types any value
constexpr int kDModelMax = 1024;

// One-click fixes for the configuration error at hand. Each button sets one value.
void FixButtons(AppState& s) {
  Config& c = s.choice.cfg;
  std::vector<std::pair<std::string, std::function<void()>>> fixes;
  auto add = [&](std::string label, std::function<void()> f) { fixes.emplace_back(std::move(label), std::move(f)); };
  if (c.d_model > 0 && c.num_heads > 0 && c.num_heads <= c.d_model && c.d_model % c.num_heads != 0) {
    const auto [lo, hi] = NearestValidDModel(c.d_model, c.num_heads);
    for (int d : {lo, hi})
      if (d >= 1 && d <= Limits::kMaxDModel && d != c.d_model)
        add("d_model = " + std::to_string(d), [&c, d] { c.d_model = d; });
    const auto heads = ValidHeadCounts(c.d_model);
    int below = 0, above = 0;
    for (int h : heads) {
      if (h < c.num_heads) below = h;
      if (h > c.num_heads && above == 0) above = h;
    }
    for (int h : {below, above})
      if (h > 0) add("num_heads = " + std::to_string(h), [&c, h] { c.num_heads = h; });
  } else if (c.num_heads > c.d_model && c.d_model > 0) {
    add("num_heads = " + std::to_string(ValidHeadCounts(c.d_model).back()),
        [&c] { c.num_heads = ValidHeadCounts(c.d_model).back(); });
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
    add("self-attention (no memory)", [&s] { s.choice.cross = false; });
  }
  if (s.choice.cross && s.result.memory_tokens.empty() && s.files.input_path.empty())
    add("self-attention (no memory)", [&s] { s.choice.cross = false; });
  if (fixes.empty()) return;
  ImGui::TextUnformatted("Nearest valid:");
  for (std::size_t i = 0; i < fixes.size(); ++i) {
    const ImVec2 sz = ImGui::CalcTextSize(fixes[i].first.c_str());
    const float w = sz.x + 2 * ImGui::GetStyle().FramePadding.x;
    if (i > 0) {
      ImGui::SameLine();
      if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
    }
    if (ImGui::Button(fixes[i].first.c_str())) {
      fixes[i].second();
      s.dirty = true;
    }
    Probe(s, ("fix " + fixes[i].first).c_str());
  }
}

const char* KvLabel(int kv, int heads, char* buf, std::size_t n) {
  if (kv == 0 || kv == heads)
    std::snprintf(buf, n, "%d (multi-head)", heads);
  else if (kv == 1)
    std::snprintf(buf, n, "1 (multi-query)");
  else if (heads % kv == 0)
    std::snprintf(buf, n, "%d (grouped-query)", kv);
  else
    std::snprintf(buf, n, "%d (does not divide num_heads)", kv);
  return buf;
}

}  // namespace

void DrawControlsPanel(AppState& s) {
  if (DrawFixedShape(s)) return;  // a language model's shape is its own (lm_source.hpp)
  Config& c = s.choice.cfg;
  SectionTitle(s, "Configuration", "Each head gets d_model / num_heads dimensions.");
  const float lw = ImGui::CalcTextSize("num_kv_heads").x + ImGui::GetStyle().ItemSpacing.x * 2;
  const float step_w = ImGui::GetFrameHeight();

  FormLabel("num_heads", lw);
  s.dirty |= ImGui::SliderInt("##num_heads", &c.num_heads, 1, kHeadsMax, "%d", ImGuiSliderFlags_None);
  Probe(s, "num_heads");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Drag, or Ctrl+click to type a value.");

  FormLabel("d_model", lw);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 2 * (step_w + ImGui::GetStyle().ItemInnerSpacing.x));
  s.dirty |= ImGui::SliderInt("##d_model", &c.d_model, 1, kDModelMax);
  Probe(s, "d_model");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Drag, use - / +, or Ctrl+click to type a value.");
  ImGui::PushButtonRepeat(true);
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::Button("-##dm", ImVec2(step_w, 0)) && c.d_model > 1) { --c.d_model; s.dirty = true; }
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::Button("+##dm", ImVec2(step_w, 0)) && c.d_model < Limits::kMaxDModel) { ++c.d_model; s.dirty = true; }
  ImGui::PopButtonRepeat();

  // The division the lesson is about, with the numbers filled in.
  ImGui::Dummy(ImVec2(lw - ImGui::GetStyle().ItemSpacing.x, 0));
  ImGui::SameLine(lw);
  if (c.num_heads > 0 && c.d_model > 0 && c.d_model % c.num_heads == 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped("head_dim = d_k = %d / %d = %d", c.d_model, c.num_heads, c.d_model / c.num_heads);
    ImGui::PopStyleColor();
  } else if (c.num_heads > 0) {
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().error_text);
    ImGui::TextWrapped("%d / %d = %.4g is not a whole number", c.d_model, c.num_heads,
                       static_cast<double>(c.d_model) / c.num_heads);
    ImGui::PopStyleColor();
  }

  if (!s.result.ok && !s.result.error.empty()) {
    MessageBox(s.result.error, Pal().error_bg, Pal().error_text);
    Probe(s, "error");
    FixButtons(s);
  }
  ImGui::Spacing();

  FormLabel("num_kv_heads", lw);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("(?)").x - ImGui::GetStyle().ItemSpacing.x);
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
  HelpMarker("How many key/value heads the query heads share. num_heads: ordinary multi-head attention. "
             "Fewer: grouped-query attention (GQA), num_heads / num_kv_heads query heads read each K/V head. "
             "1: multi-query attention (MQA). Fewer K/V heads mean fewer parameters and a smaller KV cache.");

  FormLabel("seed", lw);
  const std::uint64_t one = 1;
  s.dirty |= ImGui::InputScalar("##seed", ImGuiDataType_U64, &c.seed, &one, nullptr, "%llu");
  Probe(s, "seed");

  FormLabel("mask", lw);
  int mask = static_cast<int>(c.mask);
  bool m = ImGui::RadioButton("none##mask", &mask, static_cast<int>(Mask::None));
  ImGui::SameLine();
  m |= ImGui::RadioButton("causal", &mask, static_cast<int>(Mask::Causal));
  HelpMarker("Causal: each token may attend only to itself and earlier tokens, as in a decoder (GPT).");
  if (m) {
    c.mask = static_cast<Mask>(mask);
    s.dirty = true;
  }

  FormLabel("norm", lw);
  int norm = static_cast<int>(c.norm);
  bool n = ImGui::RadioButton("post##norm", &norm, static_cast<int>(Norm::Post));
  ImGui::SameLine();
  n |= ImGui::RadioButton("pre##norm", &norm, static_cast<int>(Norm::Pre));
  ImGui::SameLine();
  n |= ImGui::RadioButton("none##norm", &norm, static_cast<int>(Norm::None));
  HelpMarker("post: out = LN(x + MHA(x)), the original Transformer and BERT.\n"
             "pre: out = x + MHA(LN(x)), GPT and ViT.\nnone: out = x + MHA(x).");
  if (n) {
    c.norm = static_cast<Norm>(norm);
    s.dirty = true;
  }

  s.dirty |= ImGui::Checkbox("Divide scores by \xE2\x88\x9A" "d_k", &c.scale);
  Probe(s, "scale");
  HelpMarker("Without the scaling, dot products grow with d_k and the softmax saturates: one key takes almost all the weight.");
  s.dirty |= ImGui::Checkbox("Positional encoding", &c.positional_encoding);
  HelpMarker("Adds sin/cos position signals to each token's embedding, so word order matters.");
  DrawBlockControls(s);

  s.dirty |= ImGui::Checkbox("Cross-attention", &s.choice.cross);
  Probe(s, "cross");
  HelpMarker("Queries come from the sentence; keys and values come from a second sentence (the memory), "
             "as in an encoder-decoder Transformer.");
  if (s.choice.cross) {
    ImGui::SetNextItemWidth(-1.0f);
    if (ImGui::InputTextWithHint("##memory", "memory sentence for keys and values", s.ui.memory_buf.data(),
                                 s.ui.memory_buf.size())) {
      s.choice.memory = s.ui.memory_buf.data();
      s.dirty = true;
    }
    Probe(s, "memory");
    const auto& mt = s.result.memory_tokens;
    ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
    ImGui::TextWrapped("%d memory token%s (seq_kv = %d)", static_cast<int>(mt.size()), mt.size() == 1 ? "" : "s",
                       static_cast<int>(mt.size()));
    ImGui::PopStyleColor();
    TokenChips(s, "##memory_chips", mt, -1);
  }

  if (!s.files.weights_path.empty()) {
    MessageBox("Weights come from " + s.files.weights_path + ".", Pal().notice_bg, Pal().notice_text);
    if (ImGui::Button("Use seeded random weights")) {
      s.files.weights_path.clear();
      s.files.weights.reset();
      s.dirty = true;
    }
  }
}

}  // namespace mha::gui
