#include "gui/sources/lm_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>

#include "gui/sources/knockout.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/app_state.hpp"
#include "io/assets.hpp"
#include "io/checkpoint.hpp"
#include "lm/model_trace.hpp"
#include "options/model_flags.hpp"
#include "options/run_options.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// The session keeps the one load: switching sources back and forth reads no file again.
std::shared_ptr<const lm::LanguageModel>& CachedSmallModel() {
  static std::shared_ptr<const lm::LanguageModel> cached;
  return cached;
}

}  // namespace

std::string DisplayPiece(const std::string& piece) {
  // The UI font has no U+2581 (SentencePiece's word-start mark): '_' stands in for it,
  // with a thin space (U+2009) after it: NanumGothic's '_' spans its whole advance, so
  // "_고" drew the bar running into the syllable.
  static const std::string mark = "\xE2\x96\x81";
  std::string out;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.compare(i, mark.size(), mark) == 0) {
      out += "_\xE2\x80\x89";
      i += mark.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

bool UsingLanguageModel(const AppState& s) { return UsingTrainedModel(s) && s.choice.source.lm; }

std::string FindSmallModel() { return io::FindAsset("models", io::kSmallModelFile); }

void UseLanguageModel(AppState& s, std::shared_ptr<const lm::LanguageModel> lm, const std::string& name) {
  // The model the views run points into the language model, so both live as long as either.
  std::shared_ptr<const Model> model(lm, &lm->model);
  const bool entering = s.choice.source.kind != ModelSourceKind::Trained;
  const std::string typed = s.choice.sentence;
  UseTrainedModel(s, std::move(model), name, 0, {});
  s.choice.source.lm = std::move(lm);
  s.result.source_error.clear();
  // From a model of token ids, the ids mean nothing to the language model: the
  // sentence typed before them comes back.
  const std::string& seeded = s.choice.source.seeded_sentence;
  if (!entering && !seeded.empty() && typed != seeded) {
    bool ids_only = !typed.empty();
    for (const char c : typed) ids_only &= (c >= '0' && c <= '9') || c == ' ' || c == ',';
    if (ids_only) SetSentence(s, seeded);
  }
  s.dirty = true;
}

void UseSmallModel(AppState& s) {
  auto& cached = CachedSmallModel();
  if (!cached) {
    const std::string path = FindSmallModel();
    if (path.empty()) {
      s.result.source_error = std::string("Could not find ") + kSmallModelFile +
                              " in assets/models (here, beside the program, or where it was installed). "
                              "Run mhaviz from its source directory, or reinstall it.";
      return;
    }
    // About 0.1 s (2 MB of weights and the tokenizer): done once, on the UI thread.
    try {
      cached = std::make_shared<const lm::LanguageModel>(lm::LoadLanguageModel(path));
    } catch (const std::exception& e) {
      s.result.source_error = std::string("Could not load ") + kSmallModelName + ": " + e.what();
      return;
    }
  }
  UseLanguageModel(s, cached, kSmallModelName);
}

bool ApplyLanguageModelFlag(const options::ModelFlags& m, AppState& s) {
  if (m.model.empty()) return false;
  Model model = io::LoadModel(m.model);
  if (!lm::IsLanguageModel(model.cfg)) return false;
  if (!m.tokens.empty() || m.example != 0)
    throw options::UsageError("--tokens and --example choose the input of a task model; " + m.model +
                              " is a language model: give it a sentence with --sentence \"...\".");
  if (m.layer >= model.cfg.num_layers)
    throw options::UsageError("--layer " + std::to_string(m.layer) + " is out of range: " + m.model + " has " +
                              std::to_string(model.cfg.num_layers) + " layers (0 .. " +
                              std::to_string(model.cfg.num_layers - 1) + ").");
  auto lm = std::make_shared<const lm::LanguageModel>(lm::WrapLanguageModel(std::move(model), "", m.model));
  UseLanguageModel(s, std::move(lm), m.model);
  s.choice.layer = m.layer;
  return true;
}

namespace {

// P(piece `id`) at position i: the softmax of the logits row, in double (as
// `mhaviz ablate --sentence` computes it).
double PieceProbability(const lm::SentenceRun& r, int i, int id) {
  const Mat& z = r.trace.logits[0];
  const double mx = z.row(i).maxCoeff();
  double sum = 0;
  for (Eigen::Index c = 0; c < z.cols(); ++c) sum += std::exp(static_cast<double>(z(i, c)) - mx);
  return std::exp(static_cast<double>(z(i, id)) - mx) / sum;
}

}  // namespace

namespace {

// A language model on the typed text: RunOnSentence (twice with heads knocked out: the
// plain pass gives the before of each next piece's probability).
class LmJob final : public WorkerJob {
 public:
  explicit LmJob(AppState& s) : lm_(s.choice.source.lm), sentence_(s.choice.sentence) {
    Result& r = s.result;
    r.memory_tokens.clear();
    r.notices.clear();
    r.p_before.clear();
    r.p_after.clear();
    r.next_before.clear();
    plan_ = KnockoutPlan(s.choice.knockout, lm_->model);
    layer_ = std::clamp(s.choice.layer, 0, lm_->model.cfg.num_layers - 1);
    // On an error the last result comes back.
    old_pass_ = std::move(r.pass);
    trace_ = std::move(r.trace);
    mean_ = std::move(r.mean_attn);
  }
  void Compute() override {
    try {
      run_ = lm::RunOnSentence(*lm_, sentence_, kNextTopK, plan_.Any() ? &plan_.layers() : nullptr);
      if (plan_.Any()) {
        // Before -> after for each position: the plain pass on the same pieces.
        lm::SentenceRun plain = lm::RunOnSentence(*lm_, sentence_, kNextTopK);
        for (std::size_t i = 0; i + 1 < run_.ids.size(); ++i) {
          p_before_.push_back(PieceProbability(plain, static_cast<int>(i), run_.ids[i + 1]));
          p_after_.push_back(PieceProbability(run_, static_cast<int>(i), run_.ids[i + 1]));
        }
        next_before_ = std::move(plain.next);
      }
      trace_ = run_.trace.layers[static_cast<std::size_t>(layer_)];
      MeanAttention(trace_, mean_);
      ok_ = true;
    } catch (const Error& e) {
      error_ = e.what();
      clear_tokens_ = true;
    } catch (const std::bad_alloc&) {
      error_ = _("Out of memory running the language model.");
    }
  }
  void Apply(AppState& s) override {
    Result& r = s.result;
    if (!GiveBack(r)) {
      r.pass = std::move(old_pass_);
      if (clear_tokens_) r.tokens.clear();
      r.next.clear();
      r.byte_spelled.clear();
      return;
    }
    r.p_before = std::move(p_before_);
    r.p_after = std::move(p_after_);
    r.next_before = std::move(next_before_);
    r.tokens.clear();
    for (const std::string& p : run_.pieces) r.tokens.push_back(DisplayPiece(p));
    // The context's cut, in the words of lm::RunOnIds's notice (the command line's).
    const int cap = lm_->model.cfg.max_seq;
    if (run_.total_pieces > cap)
      r.notices.push_back({N_("the sentence is %1$s pieces long, but the model reads at most %2$s (its context, "
                              "max_seq): only the first %2$s are shown."),
                           {std::to_string(run_.total_pieces), std::to_string(cap)}});
    r.byte_spelled = lm::ByteSpellings(run_.pieces);
    r.pass = std::move(run_.trace);
    r.next = std::move(run_.next);
    const int layers = lm_->model.cfg.num_layers;
    r.reuse = "language model, layer " + std::to_string(layer_) + " of " + std::to_string(layers);
    r.reuse_shown = i18n::Format(_("language model, layer %d of %d"), layer_, layers);
    r.knocked_out = plan_.heads();
    r.knocked_mean = plan_.mean();
    AppendKnockout(s);
    r.ok = true;
    r.error.clear();
    ++r.generation;
  }

 private:
  std::shared_ptr<const lm::LanguageModel> lm_;
  std::string sentence_;
  KnockoutPlan plan_;
  int layer_ = 0;
  ModelTrace old_pass_;
  lm::SentenceRun run_;
  std::vector<double> p_before_, p_after_;
  std::vector<std::vector<lm::NextPiece>> next_before_;
  bool clear_tokens_ = false;
};

}  // namespace

std::unique_ptr<WorkerJob> MakeLanguageModelJob(AppState& s) { return std::make_unique<LmJob>(s); }

}  // namespace mha::gui
