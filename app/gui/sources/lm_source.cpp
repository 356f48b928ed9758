#include "gui/sources/lm_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <future>
#include <new>
#include <unistd.h>

#include <imgui.h>

#include "lm/ablate_model.hpp"
#include "lm/model_trace.hpp"
#include "options/model_flags.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "io/assets.hpp"
#include "io/checkpoint.hpp"
#include "lm/corpus.hpp"
#include "lm/head_labels.hpp"
#include "mha/live.hpp"
#include "options/ablate_flags.hpp"
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

bool UsingLanguageModel(const AppState& s) { return UsingTrainedModel(s) && s.source.lm; }

std::string FindSmallModel() { return io::FindAsset("models", io::kSmallModelFile); }

void UseLanguageModel(AppState& s, std::shared_ptr<const lm::LanguageModel> lm, const std::string& name) {
  // The model the views run points into the language model, so both live as long as either.
  std::shared_ptr<const Model> model(lm, &lm->model);
  const bool entering = s.source.kind != ModelSourceKind::Trained;
  const std::string typed = s.choice.sentence;
  UseTrainedModel(s, std::move(model), name, 0, {});
  s.source.lm = std::move(lm);
  s.source.load_error.clear();
  // From a model of token ids, the ids mean nothing to the language model: the
  // sentence typed before them comes back.
  if (!entering && !s.source.seeded_sentence.empty() && typed != s.source.seeded_sentence) {
    bool ids_only = !typed.empty();
    for (const char c : typed) ids_only &= (c >= '0' && c <= '9') || c == ' ' || c == ',';
    if (ids_only) SetSentence(s, s.source.seeded_sentence);
  }
  s.dirty = true;
}

void UseSmallModel(AppState& s) {
  auto& cached = CachedSmallModel();
  if (!cached) {
    const std::string path = FindSmallModel();
    if (path.empty()) {
      s.source.load_error = std::string("Could not find ") + kSmallModelFile +
                            " in assets/models (here, beside the program, or where it was installed). "
                            "Run mhaviz from its source directory, or reinstall it.";
      return;
    }
    // About 0.1 s (2 MB of weights and the tokenizer): done once, on the UI thread.
    try {
      cached = std::make_shared<const lm::LanguageModel>(lm::LoadLanguageModel(path));
    } catch (const std::exception& e) {
      s.source.load_error = std::string("Could not load ") + kSmallModelName + ": " + e.what();
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
  s.source.layer = m.layer;
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

bool MeansFit(const AppState& s, const Model& m) {
  const auto& mm = s.source.knock_means;
  if (static_cast<int>(mm.size()) != m.cfg.num_layers) return false;
  for (const Mat& x : mm)
    if (x.rows() != m.cfg.layer.num_heads || x.cols() != m.cfg.LayerConfig().head_dim()) return false;
  return true;
}

}  // namespace

void FitKnockedOut(AppState& s, int num_layers, int num_heads) {
  auto& k = s.source.knocked;
  k.erase(std::remove_if(k.begin(), k.end(),
                         [&](const HeadRef& h) { return h.layer >= num_layers || h.head >= num_heads; }),
          k.end());
}

std::vector<HeadAblation> KnockoutAblations(const AppState& s, const Model& m) {
  if (s.source.knocked.empty()) return {};
  const bool mean = s.source.knock_mode == AblationMode::Mean && MeansFit(s, m);
  return LayerAblations(m.cfg.num_layers, m.cfg.LayerConfig(), mean ? AblationMode::Mean : AblationMode::Zero,
                        s.source.knocked, mean ? &s.source.knock_means : nullptr);
}

void SetKnockedOut(AppState& s, std::vector<HeadRef> heads) {
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  s.source.knocked = std::move(heads);
  s.dirty = true;
}

std::string KnockoutText(const AppState& s, bool shown) {
  if (s.source.knocked.empty()) return "";
  std::string names;
  for (const HeadRef& h : s.source.knocked) names += (names.empty() ? "" : ", ") + HeadName(h);
  bool mean = s.source.knock_mode == AblationMode::Mean;
  if (mean && UsingTrainedModel(s)) mean = MeansFit(s, *s.source.model);
  if (shown) return names + (mean ? _(" (mean)") : _(" (zero)"));
  return names + (mean ? " (mean)" : " (zero)");
}

void DrawKnockoutBanner(AppState& s) {
  const std::string heads = KnockoutText(s, true);
  if (heads.empty()) return;
  const std::string text = i18n::Format(
      s.source.knocked.size() == 1
          ? _("Knocked out: %s. Every view shows the model without this head: its context is replaced before W_O (its "
              "own attention is still drawn).")
          : _("Knocked out: %s. Every view shows the model without these heads: their context is replaced before W_O "
              "(their own attention is still drawn)."),
      heads.c_str());
  MessageBox(text, Pal().notice_bg, Pal().notice_text);
  Probe(s, "knockout_banner");
  if (ImGui::SmallButton(_("Put every head back"))) SetKnockedOut(s, {});
  Probe(s, "knockout_restore");
}

void ApplyAblateFlags(const options::RunOptions& o, const std::string& model_path, AppState& s) {
  if (!o.ablate_given) return;
  s.source.knock_mode = o.ablate_mode;
  if (UsingTrainedModel(s)) {
    const Model& m = *s.source.model;
    cli::CheckHeadsFit("--ablate", o.ablate, m.cfg.num_layers, m.cfg.layer.num_heads, "the model",
                       /*allow_all=*/true);
    if (o.ablate_mode == AblationMode::Mean && !model_path.empty()) {
      // The same reference text as `mhaviz ablate --mode mean`: once, before the window opens.
      const lm::AblationSubject sub = lm::LoadSubject(model_path);
      Trainer trainer(m.cfg.layer.threads);
      s.source.knock_means = MeanContexts(trainer, sub.model(), sub.reference);
    }
  } else {
    cli::CheckHeadsFit("--ablate", o.ablate, 1, s.choice.cfg.num_heads, "this model", /*allow_all=*/true);
  }
  SetKnockedOut(s, o.ablate);
}

namespace {

// A language model on the typed text: RunOnSentence (twice with heads knocked out: the
// plain pass gives the before of each next piece's probability).
class LmJob final : public WorkerJob {
 public:
  explicit LmJob(AppState& s) : lm_(s.source.lm), sentence_(s.choice.sentence) {
    ModelSource& src = s.source;
    Result& r = s.result;
    r.memory_tokens.clear();
    r.notice.clear();
    src.p_before.clear();
    src.p_after.clear();
    src.next_before.clear();
    FitKnockedOut(s, lm_->model.cfg.num_layers, lm_->model.cfg.layer.num_heads);
    ablate_ = KnockoutAblations(s, lm_->model);
    layer_ = std::clamp(src.layer, 0, lm_->model.cfg.num_layers - 1);
    // On an error the last result comes back.
    old_pass_ = std::move(src.pass);
    trace_ = std::move(r.trace);
    mean_ = std::move(r.mean_attn);
  }
  void Compute() override {
    try {
      run_ = lm::RunOnSentence(*lm_, sentence_, kNextTopK, ablate_.empty() ? nullptr : &ablate_);
      if (!ablate_.empty()) {
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
    ModelSource& src = s.source;
    Result& r = s.result;
    if (!GiveBack(r)) {
      src.pass = std::move(old_pass_);
      if (clear_tokens_) r.tokens.clear();
      src.next.clear();
      src.byte_spelled.clear();
      return;
    }
    src.p_before = std::move(p_before_);
    src.p_after = std::move(p_after_);
    src.next_before = std::move(next_before_);
    r.tokens.clear();
    for (const std::string& p : run_.pieces) r.tokens.push_back(DisplayPiece(p));
    r.notice = run_.notice;
    src.byte_spelled = lm::ByteSpellings(run_.pieces);
    src.pass = std::move(run_.trace);
    src.next = std::move(run_.next);
    const int layers = lm_->model.cfg.num_layers;
    src.layer = layer_;
    r.reuse = "language model, layer " + std::to_string(src.layer) + " of " + std::to_string(layers);
    r.reuse_shown = i18n::Format(_("language model, layer %d of %d"), src.layer, layers);
    AppendKnockout(s, !ablate_.empty());
    r.ok = true;
    r.error.clear();
    ++r.generation;
  }

 private:
  std::shared_ptr<const lm::LanguageModel> lm_;
  std::string sentence_;
  std::vector<HeadAblation> ablate_;
  int layer_ = 0;
  ModelTrace old_pass_;
  lm::SentenceRun run_;
  std::vector<double> p_before_, p_after_;
  std::vector<std::vector<lm::NextPiece>> next_before_;
  bool clear_tokens_ = false;
};

}  // namespace

std::unique_ptr<WorkerJob> MakeLanguageModelJob(AppState& s) { return std::make_unique<LmJob>(s); }

bool DrawFixedShape(AppState& s) {
  if (!UsingLanguageModel(s)) return false;
  const ModelConfig& c = s.source.lm->model.cfg;
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

namespace {

// Every head's scores on the validation text, measured as the CLI's ablate labels them
// (lm::ProfileOnValidation: induction on each window's first half repeated).
std::vector<HeadProfile> ProfileOnValidation(std::shared_ptr<const lm::LanguageModel> lm, std::string valid) {
  const std::vector<std::int32_t> ids = lm::EncodeParagraphs(lm->tokenizer, lm::ReadText(valid));
  return lm::ProfileOnValidation(*lm, ids, lm::kLabelWindows);
}

}  // namespace

const std::vector<HeadProfile>* ValidationLabels(const AppState& s, std::string* why) {
  static const lm::LanguageModel* for_model = nullptr;
  static std::future<std::vector<HeadProfile>> job;
  static std::vector<HeadProfile> labels;
  static std::string error;
  if (!UsingLanguageModel(s)) return nullptr;
  if (for_model != s.source.lm.get()) {
    for_model = s.source.lm.get();
    labels.clear();
    error.clear();
    // Beside assets/models/ is assets/corpus/, where the model's validation text lives.
    const std::filesystem::path dir = std::filesystem::path(s.source.lm->path).parent_path().parent_path() / "corpus";
    std::string valid;
    std::error_code ec;
    for (const char* name : {"valid.txt", "valid.txt.gz"})
      if (std::filesystem::is_regular_file(dir / name, ec)) valid = (dir / name).string();
    if (valid.empty())
      error = "no valid.txt or valid.txt.gz in " + dir.string();
    else
      job = std::async(std::launch::async, ProfileOnValidation, s.source.lm, valid);
  }
  if (job.valid() && job.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      labels = job.get();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (why) *why = !error.empty() ? "validation text unavailable (" + error + ")" : labels.empty() ? "measuring" : "";
  return labels.empty() ? nullptr : &labels;
}

}  // namespace mha::gui
