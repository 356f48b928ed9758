// The Heatmaps view's "what each key adds": each head's value-weighted norms as shares of
// its query rows (norms.hpp). A small trace computes them in the frame; a big one on the
// recompute's worker: beside a new trace (the prime hook), or on the trace shown (a view
// job), and the maps say "computing" meanwhile.
#include "gui/views/heatmaps/norms.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include <CLI/CLI.hpp>
#include <imgui.h>

#include "gui/draw/widgets.hpp"
#include "gui/sources/recompute.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "gui/views/dump.hpp"
#include "mha/influence.hpp"
#include "render/colormap.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The view's own state (AppState::views).
struct NormsState {
  Cached<HeatmapNorms> cache;
  std::string asked;  // the trace whose norms the worker computes (GenKey), "" when none
};

// All maps' cells together above which the norms are not drawn: the weights' texture cap,
// which also bounds the norms' memory (raw and shares, 8 bytes a cell: 128 MiB).
constexpr double kMaxNormCells = HeatmapTextures::kMaxTexels;
double NormCells(const Trace& t) { return static_cast<double>(t.cfg.num_heads + 1) * t.seq * t.seq_kv; }

HeatmapNorms ComputeNorms(const Trace& t) {
  HeatmapNorms n;
  n.raw = ValueWeightedNorms(t);  // throws the core's teaching error (Flash keeps no weights)
  n.share = n.raw;
  const int H = t.cfg.num_heads;
  n.mean = Mat::Zero(t.seq, t.seq_kv);
  for (Eigen::Index r = 0; r < n.raw.rows(); ++r) {
    const double sum = n.raw.row(r).cast<double>().sum();
    if (sum > 0.0) n.share.row(r) = (n.raw.row(r).cast<double>() / sum).cast<float>();
    n.mean.row(r % t.seq) += n.share.row(r) / static_cast<float>(H);
  }
  const Eigen::Index cells = static_cast<Eigen::Index>(t.seq) * t.seq_kv;
  for (int h = 0; h < H; ++h)
    n.map_max.push_back(Eigen::Map<const Eigen::VectorXf>(n.share.data() + h * cells, cells).maxCoeff());
  n.map_max.push_back(n.mean.maxCoeff());
  return n;
}

// Whether the norms of `t` are computed in the frame, by the recompute's own rule: their
// cells, and their multiply-adds (each key's value through W_V and W_O, 2 d_model^2, and
// a weight per cell).
bool InFrame(const Trace& t) {
  const double d = t.cfg.d_model;
  return !OnWorker(NormCells(t), 2.0 * t.seq_kv * d * d + NormCells(t));
}

// The norms as the cache holds them, the core's error included.
Cached<HeatmapNorms> Computed(const Trace& t) {
  Cached<HeatmapNorms> v;
  try {
    v.value = ComputeNorms(t);
    v.ok = true;
  } catch (const std::exception& e) {  // the core's error, shown by the view
    v.error = e.what();
  }
  return v;
}

// The norms of the trace shown as a job on the recompute's task; what it returns stores
// them (or why not) under `key` on the window's thread.
ViewWork NormsWork(const Trace& t, std::string key) {
  return [&t, key = std::move(key)]() -> Primed {
    std::shared_ptr<Cached<HeatmapNorms>> v;
    try {
      v = std::make_shared<Cached<HeatmapNorms>>(Computed(t));
    } catch (const std::bad_alloc&) {  // said below, and not asked again for this trace
    }
    return [v, key](AppState& s) {
      NormsState& st = s.views.Get<NormsState>();
      if (v) {
        st.cache = std::move(*v);
      } else {
        st.cache = Cached<HeatmapNorms>();
        st.cache.error = _("Out of memory: what each key adds could not be computed for these maps.");
      }
      st.cache.key = key;
      st.asked.clear();
    };
  };
}

}  // namespace

bool HeatmapMasked(const Trace& t, int index, int i, int j) {
  auto masked = [&](int h) {
    const float sc = t.scores(static_cast<Eigen::Index>(h) * t.seq + i, j);
    return std::isinf(sc) && sc < 0;
  };
  if (index < t.cfg.num_heads) return masked(index);
  for (int h = 0; h < t.cfg.num_heads; ++h)
    if (!masked(h)) return false;
  return true;
}

const Cached<HeatmapNorms>* HeatmapNormsCache(AppState& s, bool wait) {
  NormsState& st = s.views.Get<NormsState>();
  auto& c = st.cache;
  if (!HasResults(s)) return &NoTrace(c, s);
  const std::string key = GenKey(s);
  if (c.key == key) return &c;
  const Trace& t = s.result.trace;
  if (NormCells(t) > kMaxNormCells) {
    c.key = key;
    c.ok = false;
    c.value = HeatmapNorms();
    c.error = i18n::Format(_("What each key adds is drawn for at most %.1f million cells over all maps; these "
                             "maps have %.1f million. Fewer tokens or heads show it; the weights are shown "
                             "whatever the size."),
                           kMaxNormCells / 1e6, NormCells(t) / 1e6);
    return &c;
  }
  if (!wait && !InFrame(t)) {
    // On the worker, reading the trace shown, which stays the app's while it runs (the
    // recompute waits). Asked again in a later frame while the worker is busy.
    if (st.asked != key && StartViewWork(s, NormsWork(t, key), _("what each key adds"))) st.asked = key;
    return nullptr;
  }
  return &Refresh(c, key, [&](HeatmapNorms& v) { v = ComputeNorms(t); });
}

Primed PrimeHeatmapNorms(const Trace& t, const Choice& c) {
  if (!c.heatmap_norms || c.view != "heatmaps" || NormCells(t) > kMaxNormCells) return nullptr;
  auto v = std::make_shared<Cached<HeatmapNorms>>(Computed(t));
  return [v](AppState& s) {
    NormsState& st = s.views.Get<NormsState>();
    st.cache = std::move(*v);
    st.cache.key = GenKey(s);
    st.asked.clear();
  };
}

void DrawNormsSwitch(AppState& s) {
  // On the colour scale's line if it fits, else on its own where the panel has the room
  // (a short panel keeps its height for the maps: the View menu has the switch too).
  const ImGuiStyle& st = ImGui::GetStyle();
  const float need = ImGui::GetFontSize() + ImGui::GetFrameHeight() + st.ItemInnerSpacing.x +
                     ImGui::CalcTextSize(_("what each key adds")).x;
  ImGui::SameLine(0, ImGui::GetFontSize());
  if (ImGui::GetContentRegionAvail().x < need) {
    ImGui::NewLine();
    if (ImGui::GetContentRegionAvail().y < ImGui::GetFontSize() * 24) return;
  }
  ImGui::Checkbox(_("what each key adds"), &s.choice.heatmap_norms);
  Probe(s, "heatmap_show norms");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", _("Each cell: the length of what the key adds to the head's output, "
                              "||alpha_ij (x_j W_V + b_V) W_O||, as a share of its row (Kobayashi et al. 2020). "
                              "Off: the attention weights."));
}

const HeatmapNorms* DrawNormsExplanation(AppState& s, bool line) {
  const Cached<HeatmapNorms>* c = HeatmapNormsCache(s);
  if (!c) {
    MessageBox(_("Computing what each key adds (value-weighted norms) on the worker ..."), Pal().notice_bg,
               Pal().notice_text);
    Probe(s, "heatmap_norms_computing");
    return nullptr;
  }
  if (!c->ok) {
    MessageBox(c->error, Pal().error_bg, Pal().error_text);
    Probe(s, "heatmap_norms_error");
    return nullptr;
  }
  if (!line) return &c->value;
  // One line over the maps (the formula too where the maps keep room); why a weight is
  // not an influence behind its (?).
  const bool roomy = ImGui::GetContentRegionAvail().y >= ImGui::GetFontSize() * 16.0f;
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextUnformatted(roomy ? _("Each key's share of its row's summed norms ||alpha_ij (x_j W_V + b_V) W_O||: "
                                   "what the key adds to the head's output.")
                               : _("Each key's share of its row's summed norms"));
  ImGui::PopStyleColor();
  Probe(s, "heatmap_norms_explanation");
  ImGui::SameLine();
  HelpMarker(
      _("Each cell: ||alpha_ij (x_j W_V + b_V) W_O||, what key j adds to the head's output at query i, over its "
        "row's sum. A weight is not an influence: what a key adds is its weight times the vector it hands over. A "
        "head that gives <s> most of its weight but hands over a nearly zero vector from it adds almost nothing "
        "from <s>: its <s> column is dark here, and its output comes from the keys that add long vectors "
        "(Kobayashi et al. 2020). Hover a cell for its norm and its weight."));
  return &c->value;
}

unsigned int NormsTexture(AppState& s, const HeatmapNorms& n, int index, int* rows_ready) {
  const Trace& t = s.result.trace;
  const int H = t.cfg.num_heads, seq = t.seq, skv = t.seq_kv;
  const render::ColourScale scale = s.ui.colour_scale;
  const float* v = index < H ? n.share.data() + static_cast<std::size_t>(index) * seq * skv : n.mean.data();
  const float map_max = n.map_max[static_cast<std::size_t>(index)];
  const std::string key = GenKey(s) + " " + render::ToString(scale);
  return s.ui.matrices.Get(
      "heatmap_norms " + std::to_string(index), key, seq, skv,
      [&t, v, map_max, index, scale, skv](std::uint8_t* rgba, int row0, int row1) {
        // The divisors of the rows filled now only (the per-map one was found once).
        const std::vector<float> div =
            scale == render::ColourScale::Map
                ? std::vector<float>(static_cast<std::size_t>(row1 - row0), map_max > 0.0f ? map_max : 1.0f)
                : render::ScaleDivisors(scale, v + static_cast<std::size_t>(row0) * skv, nullptr, row1 - row0, skv);
        const bool causal = t.cfg.mask == Mask::Causal;
        for (int i = row0; i < row1; ++i)
          for (int j = 0; j < skv; ++j) {
            const std::size_t k = static_cast<std::size_t>(i) * skv + j;
            const render::Rgb c = causal && HeatmapMasked(t, index, i, j)
                                      ? render::kMaskedColour
                                      : render::Colormap(v[k] / div[static_cast<std::size_t>(i - row0)]);
            std::uint8_t* p = rgba + 4 * (static_cast<std::size_t>(i - row0) * skv + j);
            p[0] = c[0];
            p[1] = c[1];
            p[2] = c[2];
            p[3] = 255;
          }
      },
      rows_ready);
}

nlohmann::json DumpHeatmapNorms(AppState& s) {
  nlohmann::json j{{"show", s.choice.heatmap_norms ? "norms" : "weights"}};
  if (!s.choice.heatmap_norms) return j;
  const Cached<HeatmapNorms>* c = HeatmapNormsCache(s, /*wait=*/true);
  if (!c->ok) {
    j["error"] = c->error;
    return j;
  }
  const Trace& t = s.result.trace;
  if (static_cast<double>(t.cfg.num_heads) * t.seq * t.seq_kv > dump::kMaxDumpWeights) {
    j["norms"] = dump::kWeightsLeftOut;
    return j;
  }
  // [head][query][key], as mhaviz trace --json's attn_norms: the raw norms and the
  // shares the maps show.
  nlohmann::json raw = nlohmann::json::array(), share = nlohmann::json::array();
  for (int h = 0; h < t.cfg.num_heads; ++h) {
    raw.push_back(dump::Matrix(c->value.raw.middleRows(static_cast<Eigen::Index>(h) * t.seq, t.seq)));
    share.push_back(dump::Matrix(c->value.share.middleRows(static_cast<Eigen::Index>(h) * t.seq, t.seq)));
  }
  j["norms"] = raw;
  j["shares"] = share;
  j["mean_shares"] = dump::Matrix(c->value.mean);
  return j;
}

nlohmann::json ProbeHeatmaps(const AppState& s) {
  nlohmann::json j{{"show", s.choice.heatmap_norms ? "norms" : "weights"}};
  if (const NormsState* st = s.views.Find<NormsState>()) {
    j["norms_ready"] = s.choice.heatmap_norms && st->cache.ok && st->cache.key == GenKey(s);
    j["norms_error"] = st->cache.key == GenKey(s) ? st->cache.error : std::string();
  }
  return j;
}

void DeclareHeatmapFlags(CLI::App& app, const std::string& g, ViewFlagActions& actions) {
  app.add_option_function<std::string>(
         "--heatmap-show",
         [&actions](const std::string& v) {
           actions.push_back([on = v == "norms"](AppState& s) { s.choice.heatmap_norms = on; });
         },
         "what the Heatmaps view's maps show: weights (the attention weights) or norms (what each key adds: "
         "value-weighted norms, as shares of each row)")
      ->type_name("weights|norms")
      ->group(g)
      ->check(CLI::IsMember({"weights", "norms"}));
}

}  // namespace mha::gui
