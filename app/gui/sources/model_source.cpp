#include "gui/sources/model_source.hpp"

#include <algorithm>
#include <cstdio>
#include <new>

#include <imgui.h>
#include <imgui_internal.h>

#include "gui/sources/file_sources.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "gui/sources/recompute.hpp"
#include "gui/state/app_state.hpp"
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

}  // namespace

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

namespace {

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
  if (s.choice.source.kind != ModelSourceKind::Trained) return;
  // A language model read the typed text itself: it stays.
  if (!s.choice.source.lm) SetSentence(s, s.choice.source.seeded_sentence);
  s.choice.source = SourceChoice();
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
  explicit ModelJob(AppState& s) : model_(s.choice.source.model) {
    Result& r = s.result;
    const ModelConfig& c = model_->cfg;
    r.tokens = Words(s.choice.sentence);
    r.memory_tokens.clear();
    r.notices.clear();
    try {
      ids_ = IdsOf(c, r.tokens);
    } catch (const Error& e) {
      error_ = e.what();
    }
    plan_ = KnockoutPlan(s.choice.knockout, *model_);
    layer_ = std::clamp(s.choice.layer, 0, c.num_layers - 1);
    // The last pass's buffers are reused; on an error the last result comes back.
    pass_ = std::move(r.pass);
    trace_ = std::move(r.trace);
    mean_ = std::move(r.mean_attn);
  }
  void Compute() override {
    if (!error_.empty()) return;
    try {
      RunModel(*model_, ids_, pass_, plan_.Any() ? &plan_.layers() : nullptr);
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
    Result& r = s.result;
    r.pass = std::move(pass_);
    if (!GiveBack(r)) return;
    const int layers = model_->cfg.num_layers;
    r.reuse = "trained model, layer " + std::to_string(layer_) + " of " + std::to_string(layers);
    r.reuse_shown = i18n::Format(_("trained model, layer %d of %d"), layer_, layers);
    r.knocked_out = plan_.heads();
    r.knocked_mean = plan_.mean();
    AppendKnockout(s);
    r.ok = true;
    r.error.clear();
    ++r.generation;
  }

 private:
  std::shared_ptr<const Model> model_;
  std::vector<int> ids_;
  KnockoutPlan plan_;
  int layer_ = 0;
  ModelTrace pass_;
};

}  // namespace

std::unique_ptr<WorkerJob> MakeModelJob(AppState& s) {
  if (s.choice.source.lm) return MakeLanguageModelJob(s);
  return std::make_unique<ModelJob>(s);
}

WorkSize ModelWork(const AppState& s) {
  const ModelConfig& c = s.choice.source.model->cfg;
  int seq = 0;
  if (s.choice.source.lm) {  // pieces: at most one per byte (and the start piece), at most the context
    seq = static_cast<int>(std::min<std::size_t>(s.choice.sentence.size() + 1, static_cast<std::size_t>(c.max_seq)));
  } else {
    seq = std::min(static_cast<int>(Words(s.choice.sentence).size()), c.max_seq);
  }
  return LayerWork(c.layer, seq, seq, c.num_layers, c.vocab_size() * c.num_targets);
}

void UseTrainedModel(AppState& s, std::shared_ptr<const Model> model, const std::string& name, int run_id,
                     const std::vector<int>& tokens) {
  SourceChoice& src = s.choice.source;
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
    s.result.next.clear();
  }
  src.name = name;
  src.run_id = run_id;
  s.choice.layer = std::clamp(s.choice.layer, 0, src.model->cfg.num_layers - 1);
  if (!keep_typed && !tokens.empty()) SetSentence(s, JoinIds(tokens));
  s.dirty = true;
}

void LeaveTrainedModel(AppState& s) {
  if (s.choice.source.kind != ModelSourceKind::Trained) return;
  RestoreSentence(s);
  s.dirty = true;
}

void UseSeededSource(AppState& s) {
  RestoreSentence(s);
  UseSentenceInputs(s);
  UseSeededWeights(s);
  s.choice.source.kind = ModelSourceKind::Seeded;
  s.dirty = true;
}

void UsePositionalHeadsSource(AppState& s) {
  RestoreSentence(s);
  LoadPositionalHeadsExample(s);
  s.choice.source.kind = UsesPositionalHeadsExample(s) ? ModelSourceKind::PositionalHeads : ModelSourceKind::Seeded;
  s.dirty = true;
}

}  // namespace mha::gui
