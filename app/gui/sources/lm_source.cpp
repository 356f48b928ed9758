#include "gui/sources/lm_source.hpp"

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <future>
#include <new>
#include <unistd.h>

#include <imgui.h>

#include "lm/model_trace.hpp"
#include "options/model_flags.hpp"
#include "gui/draw/widgets.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/app_state.hpp"
#include "gui/style/theme.hpp"
#include "io/assets.hpp"
#include "io/checkpoint.hpp"
#include "lm/corpus.hpp"
#include "mha/live.hpp"
#include "options/run_options.hpp"

namespace mha::gui {
namespace {

// The session keeps the one load: switching sources back and forth reads no file again.
std::shared_ptr<const lm::LanguageModel>& CachedSmallModel() {
  static std::shared_ptr<const lm::LanguageModel> cached;
  return cached;
}

}  // namespace

std::string DisplayPiece(const std::string& piece) {
  // The UI font has no U+2581 (SentencePiece's word-start mark): '_' stands in for it.
  static const std::string mark = "\xE2\x96\x81";
  std::string out;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.compare(i, mark.size(), mark) == 0) {
      out += '_';
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

void RecomputeFromLanguageModel(AppState& s) {
  ModelSource& src = s.source;
  Result& r = s.result;
  r.memory_tokens.clear();
  r.notice.clear();
  try {
    lm::SentenceRun run = lm::RunOnSentence(*src.lm, s.choice.sentence, kNextTopK);
    r.tokens.clear();
    for (const std::string& p : run.pieces) r.tokens.push_back(DisplayPiece(p));
    r.notice = run.notice;
    src.byte_spelled = lm::ByteSpellings(run.pieces);
    src.pass = std::move(run.trace);
    src.next = std::move(run.next);
    const int layers = src.lm->model.cfg.num_layers;
    src.layer = std::clamp(src.layer, 0, layers - 1);
    r.trace = src.pass.layers[static_cast<std::size_t>(src.layer)];
    MeanAttention(r.trace, r.mean_attn);
    r.reuse = "language model, layer " + std::to_string(src.layer) + " of " + std::to_string(layers);
    r.ok = true;
    r.error.clear();
    ++r.generation;
  } catch (const Error& e) {
    r.tokens.clear();
    src.next.clear();
    src.byte_spelled.clear();
    r.ok = false;
    r.error = e.what();
  } catch (const std::bad_alloc&) {
    src.next.clear();
    src.byte_spelled.clear();
    r.ok = false;
    r.error = "Out of memory running the language model.";
  }
}

bool DrawFixedShape(AppState& s) {
  if (!UsingLanguageModel(s)) return false;
  const ModelConfig& c = s.source.lm->model.cfg;
  SectionTitle(s, "Configuration", "Each head gets d_model / num_heads dimensions.");
  const float lw = ImGui::CalcTextSize("num_kv_heads").x + ImGui::GetStyle().ItemSpacing.x * 2;
  int heads = c.layer.num_heads, d_model = c.layer.d_model;
  ImGui::BeginDisabled();
  FormLabel("num_heads", lw);
  ImGui::SliderInt("##num_heads", &heads, heads, heads);
  Probe(s, "num_heads");
  FormLabel("d_model", lw);
  ImGui::SliderInt("##d_model", &d_model, d_model, d_model);
  Probe(s, "d_model");
  ImGui::EndDisabled();
  ImGui::PushStyleColor(ImGuiCol_Text, Pal().muted_text);
  ImGui::TextWrapped("head_dim = d_k = %d / %d = %d. A trained model's shape is fixed: its weights were learned "
                     "for exactly these sizes. Change them in the Train view, which trains a new model.",
                     d_model, heads, d_model / std::max(1, heads));
  ImGui::PopStyleColor();
  return true;
}

namespace {

// Windows of the validation text the labels are measured on: 32 of the model's
// context, about 0.1 s of forward passes.
constexpr int kLabelWindows = 32;

// Every head's scores on windows of the validation text, except induction: that is
// measured as TransformerLens's detector does, on text that repeats (each window's
// first half, then the same half again), since running text rarely repeats a phrase
// and an induction head rests elsewhere (on <s>) where nothing repeats.
std::vector<HeadProfile> ProfileOnValidation(std::shared_ptr<const lm::LanguageModel> lm, std::string valid) {
  const std::vector<std::int32_t> ids = lm::EncodeParagraphs(lm->tokenizer, lm::ReadText(valid));
  const int ctx = lm->model.cfg.max_seq, half = ctx / 2;
  std::vector<HeadProfile> heads, repeated;
  std::vector<std::vector<double>> counts, repeated_counts;
  for (int w = 0; w < kLabelWindows && static_cast<std::size_t>((w + 1) * ctx) <= ids.size(); ++w) {
    std::vector<int> window(ids.begin() + w * ctx, ids.begin() + (w + 1) * ctx);
    const lm::SentenceRun run = lm::RunOnIds(*lm, window, 0);
    for (std::size_t l = 0; l < run.trace.layers.size(); ++l)
      AddToProfile(run.trace.layers[l], window, static_cast<int>(l), heads, counts);
    window.resize(static_cast<std::size_t>(half));
    window.insert(window.end(), window.begin(), window.end());
    const lm::SentenceRun twice = lm::RunOnIds(*lm, window, 0);
    for (std::size_t l = 0; l < twice.trace.layers.size(); ++l)
      AddToProfile(twice.trace.layers[l], window, static_cast<int>(l), repeated, repeated_counts);
  }
  if (heads.empty()) throw Error("the validation text is shorter than one window");
  FinishProfile(heads, counts);
  FinishProfile(repeated, repeated_counts);
  for (std::size_t n = 0; n < heads.size(); ++n) {
    heads[n].induction = repeated[n].induction;
    LabelHead(heads[n]);
  }
  return heads;
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
    const std::filesystem::path dir =
        std::filesystem::path(s.source.lm->path).parent_path().parent_path() / "corpus";
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
