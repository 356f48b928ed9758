#include "gui/sources/model_source.hpp"

#include <algorithm>
#include <cstdio>
#include <new>

#include <imgui.h>
#include <imgui_internal.h>

#include "gui/draw/widgets.hpp"
#include "gui/sources/files.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/recompute.hpp"
#include "gui/sources/train_session.hpp"
#include "gui/state/app_state.hpp"
#include "gui/state/view_caches.hpp"
#include "gui/style/theme.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The sentence field's words: split at spaces and commas, as `--tokens` reads ids.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> out;
  std::string w;
  for (const char c : text) {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r') {
      if (!w.empty()) out.push_back(std::move(w));
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(std::move(w));
  return out;
}

std::string VocabRange(const ModelConfig& c) {
  const int n = c.vocab_size();
  if (n == 0) return _("no tokens");
  if (n <= 12) {
    std::string v;
    for (const auto& t : c.vocab) v += (v.empty() ? "" : " ") + t;
    return v;
  }
  return c.vocab.front() + " " + c.vocab[1] + " ... " + c.vocab.back();
}

// The typed words as ids of the model's vocabulary; mha::Error that teaches the
// vocabulary when a word is not in it.
std::vector<int> IdsOf(const ModelConfig& c, const std::vector<std::string>& words) {
  if (words.empty())
    throw Error(i18n::Format(_("Type a sequence of the trained model's tokens, e.g. \"3 1 4 1 5 9\". Its vocabulary: "
                               "%s."),
                             VocabRange(c).c_str()));
  if (static_cast<int>(words.size()) > c.max_seq)
    throw Error(i18n::Format(_("The trained model takes at most %d tokens (its max_seq, the task's sequence length); "
                               "%d were typed."),
                             c.max_seq, static_cast<int>(words.size())));
  std::vector<int> ids;
  for (const std::string& w : words) {
    const auto it = std::find(c.vocab.begin(), c.vocab.end(), w);
    if (it == c.vocab.end())
      throw Error(i18n::Format(_("'%s' is not a token of the trained model. It knows only its task's %d tokens: %s. "
                                 "Type a sequence such as \"3 1 4 1 5 9\", or pick seeded random weights above to use "
                                 "words."),
                               w.c_str(), c.vocab_size(), VocabRange(c).c_str()));
    ids.push_back(static_cast<int>(it - c.vocab.begin()));
  }
  return ids;
}

}  // namespace

// A field being edited keeps its own copy of the text and would write it back over
// ours, so it lets go first.
void SetSentence(AppState& s, const std::string& text) {
  if (ImGui::GetCurrentContext() && ImGui::GetIO().WantTextInput) ImGui::ClearActiveID();
  s.ui.focus_sentence = false;
  s.choice.sentence = text;
  SyncBuffersFromChoice(s);
}

namespace {

// Leaves a trained model: the sentence typed before it comes back.
void RestoreSentence(AppState& s) {
  if (s.source.kind != ModelSourceKind::Trained) return;
  // A language model read the typed text itself: it stays.
  if (!s.source.lm) SetSentence(s, s.source.seeded_sentence);
  s.source = ModelSource();
}

}  // namespace

std::string JoinIds(const std::vector<int>& ids) {
  std::string out;
  for (const int id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

namespace {

// A trained model's pass on the typed ids (not a language model: LmJob).
class ModelJob final : public WorkerJob {
 public:
  explicit ModelJob(AppState& s) : model_(s.source.model) {
    ModelSource& src = s.source;
    Result& r = s.result;
    const ModelConfig& c = model_->cfg;
    r.tokens = Words(s.choice.sentence);
    r.memory_tokens.clear();
    r.notice.clear();
    try {
      ids_ = IdsOf(c, r.tokens);
      FitKnockedOut(s, c.num_layers, c.layer.num_heads);
      ablate_ = KnockoutAblations(s, *model_);
    } catch (const Error& e) {
      error_ = e.what();
    }
    layer_ = std::clamp(src.layer, 0, c.num_layers - 1);
    // The last pass's buffers are reused; on an error the last result comes back.
    pass_ = std::move(src.pass);
    trace_ = std::move(r.trace);
    mean_ = std::move(r.mean_attn);
  }
  void Compute() override {
    if (!error_.empty()) return;
    try {
      RunModel(*model_, ids_, pass_, ablate_.empty() ? nullptr : &ablate_);
      trace_ = pass_.layers[static_cast<std::size_t>(layer_)];
      MeanAttention(trace_, mean_);
      ok_ = true;
    } catch (const Error& e) {
      error_ = e.what();
    } catch (const std::bad_alloc&) {
      error_ = _("Out of memory running the trained model.");
    }
  }
  void Apply(AppState& s) override {
    ModelSource& src = s.source;
    Result& r = s.result;
    src.pass = std::move(pass_);
    if (!GiveBack(r)) return;
    const int layers = model_->cfg.num_layers;
    src.layer = layer_;
    r.reuse = "trained model, layer " + std::to_string(src.layer) + " of " + std::to_string(layers);
    r.reuse_shown = i18n::Format(_("trained model, layer %d of %d"), src.layer, layers);
    AppendKnockout(s, !ablate_.empty());
    r.ok = true;
    r.error.clear();
    ++r.generation;
  }

 private:
  std::shared_ptr<const Model> model_;
  std::vector<int> ids_;
  std::vector<HeadAblation> ablate_;
  int layer_ = 0;
  ModelTrace pass_;
};

}  // namespace

std::unique_ptr<WorkerJob> MakeModelJob(AppState& s) {
  if (s.source.lm) return MakeLanguageModelJob(s);
  return std::make_unique<ModelJob>(s);
}

WorkSize ModelWork(const AppState& s) {
  const ModelConfig& c = s.source.model->cfg;
  int seq = 0;
  if (s.source.lm) {  // pieces: at most one per byte (and the start piece), at most the context
    seq = static_cast<int>(std::min<std::size_t>(s.choice.sentence.size() + 1, static_cast<std::size_t>(c.max_seq)));
  } else {
    seq = std::min(static_cast<int>(Words(s.choice.sentence).size()), c.max_seq);
  }
  return LayerWork(c.layer, seq, seq, c.num_layers, c.vocab_size() * c.num_targets);
}

void AppendKnockout(AppState& s, bool knocked) {
  if (!knocked) return;
  Result& r = s.result;
  r.reuse += ", knocked out: " + KnockoutText(s);
  r.reuse_shown += i18n::Format(_(", knocked out: %s"), KnockoutText(s, true).c_str());
}

void UseTrainedModel(AppState& s, std::shared_ptr<const Model> model, const std::string& name, int run_id,
                     const std::vector<int>& tokens) {
  ModelSource& src = s.source;
  const bool entering = src.kind != ModelSourceKind::Trained;
  bool keep_typed = !entering;
  if (keep_typed) {
    try {
      IdsOf(model->cfg, Words(s.choice.sentence));
    } catch (const Error&) {
      keep_typed = false;
    }
  }
  if (entering) {
    // The seeded views' inputs (a file's x, the positional heads) step aside.
    src.seeded_sentence = s.choice.sentence;
    UseSentenceInputs(s);
    UseSeededWeights(s);
    s.choice.cross = false;
  }
  src.kind = ModelSourceKind::Trained;
  src.model = std::move(model);
  if (src.lm && src.model.get() != &src.lm->model) {
    src.lm.reset();
    src.next.clear();
  }
  src.name = name;
  src.run_id = run_id;
  src.layer = std::clamp(src.layer, 0, src.model->cfg.num_layers - 1);
  if (!keep_typed && !tokens.empty()) SetSentence(s, JoinIds(tokens));
  s.dirty = true;
}

void LeaveTrainedModel(AppState& s) {
  if (s.source.kind != ModelSourceKind::Trained) return;
  RestoreSentence(s);
  s.dirty = true;
}

void UseSeededSource(AppState& s) {
  RestoreSentence(s);
  UseSentenceInputs(s);
  UseSeededWeights(s);
  s.source.kind = ModelSourceKind::Seeded;
  s.dirty = true;
}

void UsePositionalHeadsSource(AppState& s) {
  RestoreSentence(s);
  LoadPositionalHeadsExample(s);
  s.source.kind = UsesPositionalHeadsExample(s) ? ModelSourceKind::PositionalHeads : ModelSourceKind::Seeded;
  s.dirty = true;
}

void DrawModelSourcePanel(AppState& s) {
  SectionTitle(s, _("Model"), _("where the weights come from"), true);
  // The positional heads may also come from the Lesson or Head metrics view, or a flag.
  if (s.source.kind != ModelSourceKind::Trained)
    s.source.kind = UsesPositionalHeadsExample(s) ? ModelSourceKind::PositionalHeads : ModelSourceKind::Seeded;
  std::string current;
  switch (s.source.kind) {
    case ModelSourceKind::Seeded:
      current = s.files.weights_path.empty() ? i18n::Format(_("Seeded random weights (seed %llu)"),
                                                            static_cast<unsigned long long>(s.choice.cfg.seed))
                                             : _("Weights from ") + SourceShown(s.files.weights_path);
      break;
    case ModelSourceKind::PositionalHeads: current = _("Four positional heads (hand-built)"); break;
    case ModelSourceKind::Trained:
      // The shipped model by its name (which already says "trained"); another checkpoint by its path.
      current = s.source.lm ? std::string(_(kSmallModelName)) : i18n::Format(_("Trained: %s"), s.source.name.c_str());
      break;
  }
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::BeginCombo("##model_source", current.c_str())) {
    if (ImGui::Selectable(_("Seeded random weights"), s.source.kind == ModelSourceKind::Seeded)) UseSeededSource(s);
    Probe(s, "source_seeded");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(_("Untrained weights drawn from the seed: any sentence, noisy heads."));
    if (ImGui::Selectable(_("Four positional heads (hand-built)"), s.source.kind == ModelSourceKind::PositionalHeads))
      UsePositionalHeadsSource(s);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(_("Heads built by hand to attend to the previous, the same, the first and the next word."));
    // kSmallModelName, marked for xgettext here: lm_source.hpp keeps the English key.
    static_cast<void>(N_("mhaviz-small (trained)"));
    if (ImGui::Selectable((std::string(_(kSmallModelName)) + "##small").c_str(), UsingLanguageModel(s)))
      UseSmallModel(s);
    Probe(s, "source_small");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          _("The bilingual language model mhaviz ships (2 layers x 8 heads, d_model 128): type any "
            "English or Korean sentence."));
    std::string trained;
    if (TrainedModelAvailable(s, &trained)) {
      if (ImGui::Selectable(i18n::Format(_("Trained: %s"), trained.c_str()).c_str(),
                            s.source.kind == ModelSourceKind::Trained))
        ShowTrainedModel(s);
    } else {
      ImGui::TextDisabled(_("Trained model: train one in the Train tab, or load a checkpoint there"));
    }
    ImGui::EndCombo();
  }
  Probe(s, "model_source");
  if (!s.source.load_error.empty()) MessageBox(s.source.load_error, Pal().error_bg, Pal().error_text);
  if (!UsingTrainedModel(s)) return;

  const ModelConfig& c = s.source.model->cfg;
  if (c.num_layers > 1) {
    FormLabel(_("layer"),
              ImGui::CalcTextSize(_("layer")).x + ImGui::CalcTextSize(" ").x + ImGui::GetStyle().ItemSpacing.x);
    int layer = s.source.layer;
    if (ImGui::SliderInt("##source_layer", &layer, 0, c.num_layers - 1, _("layer %d"))) {
      s.source.layer = layer;
      s.dirty = true;
    }
    Probe(s, "source_layer");
    HelpMarker(
        _("Which layer the shape flow, the heatmaps and the teaching views show. Layer 0 reads the token "
          "embeddings; each later layer reads the layer below's output."));
  }
  char buf[1024];
  if (s.source.lm) {
    std::snprintf(buf, sizeof buf,
                  _("Every view shows this model: %d layers x %d heads, d_model %d, on the typed sentence cut into its "
                    "%d SentencePiece pieces (<s> first; _ starts a word), at most %d pieces (its context)."),
                  c.num_layers, c.layer.num_heads, c.layer.d_model, c.vocab_size(), c.max_seq);
  } else {
    std::snprintf(buf, sizeof buf,
                  _("Every view shows this model: %d layer(s) x %d head(s), d_model %d, on the token ids in the "
                    "sentence field (its vocabulary: %s). Configuration sets the next model to train."),
                  c.num_layers, c.layer.num_heads, c.layer.d_model, VocabRange(c).c_str());
  }
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextWrapped("%s", buf);
  ImGui::PopStyleColor();
}

}  // namespace mha::gui
