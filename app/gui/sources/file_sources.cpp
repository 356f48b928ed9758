// Where x and the weights come from besides "sentence + seeded weights": the
// lesson's worked example, the weight editor, and .npz files loaded or saved from
// the Lesson view. All of them go through Choice::files, the same slots that
// --input / --weights fill, so every other view (heatmaps, shape flow, export)
// works on them unchanged; Recompute() reads them.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "gui/sources/exports.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/view_caches.hpp"
#include "io/files.hpp"
#include "render/render.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

const char* const kLessonSource = N_("the lesson example");
const char* const kHeadsSource = N_("the positional-heads example");
const char* const kEditorFromSeed = N_("the weight editor (started from seed %llu)");
const char* const kEditorFrom = N_("the weight editor (started from %s)");
// render::kUntrainedWeights, marked here for xgettext (render.hpp stays free of i18n).
[[maybe_unused]] const char* const kUntrainedMsgid = N_("random weights (untrained)");

FileOutcome Report(bool ok, std::string message) { return {ok, std::move(message)}; }

// The weights the current computation uses (a file's, edited ones, or the seeded
// ones of the last trace); null if there are none yet.
std::shared_ptr<const Weights> CurrentWeights(const AppState& s) {
  if (s.choice.files.weights) return s.choice.files.weights;
  if (s.result.ok) return s.result.trace.weights;
  return nullptr;
}

// What a weights file holds: every parameter of the layer, with ln_eps after the
// attention sublayer's (the order of Tensors and of `mhaviz export`).
std::vector<std::string> WeightNames(const Trace& t) {
  std::vector<std::string> names;
  const Weights none;
  for (const bool ffn : {false, true}) {
    ForEachWeight(none, t.cfg, [&](const WeightSpec& spec, const auto&) {
      if (spec.ffn == ffn) names.push_back(spec.name);
    });
    if (!ffn) names.push_back("ln_eps");
  }
  return names;
}

FileOutcome Save(AppState& s, const std::string& path, const std::vector<std::string>& names, const char* what) {
  const bool x = std::string(what) == "x";
  if (path.empty())
    return Report(false, x ? _("Type a file name to save x to, e.g. x.npz.")
                           : _("Type a file name to save the weights to, e.g. weights.npz."));
  if (!s.result.ok)
    return Report(false,
                  i18n::Format(_("Nothing to save: the configuration cannot run yet (%s)"), s.result.error.c_str()));
  try {
    const auto all = Tensors(s.result.trace);
    std::vector<TensorView> chosen;
    for (const auto& n : names)
      if (const TensorView* t = FindTensor(all, n)) chosen.push_back(*t);
    io::WriteFilesAtomic({{path, io::EncodeNpz(chosen)}});
    std::string keys;
    for (const auto& t : chosen) keys += (keys.empty() ? "" : ", ") + t.name;
    return Report(true, i18n::Format(x ? _("Saved x (%s) to %s.") : _("Saved the weights (%s) to %s."), keys.c_str(),
                                     AbsolutePath(path).c_str()));
  } catch (const std::exception& e) {
    return Report(false, std::string(x ? _("Could not save x: ") : _("Could not save the weights: ")) + e.what());
  }
}

}  // namespace

namespace {

// An example's x, weights and configuration replace the learner's choice; `source`
// names where x and the weights now come from.
FileOutcome LoadExample(AppState& s, LessonExample ex, const char* source, const std::string& message) {
  s.choice.cfg = ex.cfg;
  s.choice.cross = false;
  s.choice.files.input = std::move(ex.in);
  s.choice.files.input_path = source;
  s.choice.files.weights = std::make_shared<const Weights>(std::move(ex.weights));
  s.choice.files.weights_path = source;
  s.choice.files.weights_edited = false;
  s.choice.head = 0;
  s.choice.query = 0;
  s.ui.enlarged = -1;
  s.dirty = true;
  return Report(true, message);
}

}  // namespace

FileOutcome LoadLessonExample(AppState& s) { return LoadLessonPreset(s, 0); }

// Where x and the weights come from, per lesson preset (LessonPresets()'s order).
const char* const kLessonSources[] = {kLessonSource, N_("the lesson's hand calculation")};

std::string SourceShown(const std::string& source) {
  for (const char* fixed : {kLessonSource, kHeadsSource, kLessonSources[1]})
    if (source == fixed) return _(fixed);
  // The weight editor's names (EditableWeights), nested once per edit of a file's weights.
  unsigned long long seed = 0;
  char rest = 0;
  if (std::sscanf(source.c_str(), "the weight editor (started from seed %llu%c", &seed, &rest) == 2 && rest == ')')
    return i18n::Format(_(kEditorFromSeed), seed);
  const std::string from = "the weight editor (started from ";
  if (source.size() > from.size() + 1 && source.compare(0, from.size(), from) == 0 && source.back() == ')')
    return i18n::Format(_(kEditorFrom),
                        SourceShown(source.substr(from.size(), source.size() - from.size() - 1)).c_str());
  return source;
}

FileOutcome LoadLessonPreset(AppState& s, int index) {
  std::vector<LessonExample> presets = LessonPresets();
  if (index < 0 || index >= static_cast<int>(presets.size())) return {};
  LeaveTrainedModel(s);
  LessonExample ex = std::move(presets[static_cast<std::size_t>(index)]);
  const std::string message =
      "Loaded " + std::string(index == 0 ? "the lesson example" : "the hand calculation") + " (" + ex.title + ").";
  return LoadExample(s, std::move(ex), kLessonSources[index], message);
}

int LessonPresetInUse(const AppState& s) {
  for (int k = 0; k < static_cast<int>(std::size(kLessonSources)); ++k)
    if (s.choice.files.weights_path == kLessonSources[k] && s.choice.files.input_path == kLessonSources[k]) return k;
  return -1;
}

FileOutcome LoadPositionalHeadsExample(AppState& s) {
  LeaveTrainedModel(s);  // its tokens are the sentence's, not a trained model's ids
  std::vector<std::string> tokens =
      s.choice.files.input_path.empty() ? std::vector<std::string>() : s.choice.files.input.tokens;
  if (tokens.empty())
    for (auto& t : Tokenize(s.choice.sentence, Limits::kMaxTokens).tokens) tokens.push_back(std::move(t.text));
  if (tokens.empty()) return Report(false, _("The positional-heads example needs a sentence: type one first."));
  LessonExample ex = MakePositionalHeadsExample(tokens);
  const std::string message = "Loaded " + ex.title + ". " + ex.description;
  return LoadExample(s, std::move(ex), kHeadsSource, message);
}

bool UsesPositionalHeadsExample(const AppState& s) {
  return s.choice.files.weights_path == kHeadsSource && s.choice.files.input_path == kHeadsSource;
}

WeightsProvenance DescribeWeights(const AppState& s) {
  const std::string layer = " \u00B7 layer " + std::to_string(s.choice.layer);
  if (UsingTrainedModel(s)) {
    const std::string name = s.choice.source.lm ? std::string("mhaviz-small") : s.choice.source.name;
    return {"trained", "trained: " + name + layer,
            i18n::Format(_("trained: %s \u00B7 layer %d"), name.c_str(), s.choice.layer)};
  }
  const std::string& w = s.choice.files.weights_path;
  if (w.empty()) return {"random", render::kUntrainedWeights, _(render::kUntrainedWeights)};
  if (w == kHeadsSource || LessonPresetInUse(s) >= 0)
    return {"hand-set", "set by hand (" + w + ")", i18n::Format(_("set by hand (%s)"), SourceShown(w).c_str())};
  return {"file", "from " + w, i18n::Format(_("from %s"), SourceShown(w).c_str())};
}

std::shared_ptr<Weights> EditableWeights(AppState& s) {
  const auto cur = CurrentWeights(s);
  if (!cur) return nullptr;
  auto w = std::make_shared<Weights>(*cur);
  if (!s.choice.files.weights) {
    s.choice.files.weights_path = i18n::Format(kEditorFromSeed, static_cast<unsigned long long>(s.choice.cfg.seed));
  } else if (!s.choice.files.weights_edited) {
    s.choice.files.weights_path = i18n::Format(kEditorFrom, s.choice.files.weights_path.c_str());
  }
  s.choice.files.weights_edited = true;
  s.choice.files.weights = w;
  s.dirty = true;
  return w;
}

void UseSentenceInputs(AppState& s) {
  s.choice.files.input_path.clear();
  s.choice.files.input = Inputs();
  s.dirty = true;
}

void UseSeededWeights(AppState& s) {
  s.choice.files.weights_path.clear();
  s.choice.files.weights.reset();
  s.choice.files.weights_edited = false;
  s.dirty = true;
}

FileOutcome LoadInputFile(AppState& s, const std::string& path) {
  if (path.empty()) return Report(false, _("Type the path of an .npz file with an array x of shape (seq, d_model)."));
  LeaveTrainedModel(s);
  try {
    Inputs in = io::LoadInputs(path);
    const int d = static_cast<int>(in.x.cols());
    if (in.cross() && in.memory.cols() != in.x.cols())
      throw Error("'" + path + "': memory has " + std::to_string(in.memory.cols()) + " columns but x has " +
                  std::to_string(d) + ": both must have d_model columns.");
    s.choice.files.input = std::move(in);
    s.choice.files.input_path = path;
    s.choice.cross = s.choice.files.input.cross();
    Config& c = s.choice.cfg;
    c.d_model = d;
    c.positional_encoding = false;  // x already holds whatever encoding it had
    std::string extra;
    if (c.num_heads < 1 || d % c.num_heads != 0) {
      const auto heads = ValidHeadCounts(d);
      int h = 1;
      for (int v : heads)
        if (v <= std::max(c.num_heads, 1)) h = v;
      extra = i18n::Format(_(" num_heads %d does not divide d_model = %d, so num_heads is now %d."), c.num_heads, d, h);
      c.num_heads = h;
      c.num_kv_heads = 0;
    }
    if (s.choice.files.weights && s.choice.files.weights->W_q.rows() != d) {
      UseSeededWeights(s);
      extra += _(" The weights in use had another d_model, so the seeded weights are used.");
    }
    s.dirty = true;
    return Report(true,
                  i18n::Format(_("Loaded x (%d x %d) from %s: d_model = %d, positional encoding off."),
                               static_cast<int>(s.choice.files.input.x.rows()), d, AbsolutePath(path).c_str(), d) +
                      extra);
  } catch (const std::exception& e) {
    return Report(false, std::string(_("Could not load x: ")) + e.what());
  }
}

FileOutcome LoadWeightsFile(AppState& s, const std::string& path) {
  if (path.empty()) return Report(false, _("Type the path of an .npz file with W_q, W_k, W_v and W_o."));
  LeaveTrainedModel(s);
  try {
    auto npz = io::LoadNpz(path, io::WeightsFilter(path, nullptr));  // d_model may come from the file
    Config c = s.choice.cfg;
    std::string extra;
    // A sentence can be embedded at any d_model, so the file's d_model wins; x from a
    // file has its own, and the weights must match it.
    const auto wq = npz.find("W_q");
    if (wq != npz.end() && wq->second.shape.size() == 2 && wq->second.shape[0] != c.d_model &&
        s.choice.files.input_path.empty() && wq->second.shape[0] >= 1 && wq->second.shape[0] <= Limits::kMaxDModel) {
      c.d_model = static_cast<int>(wq->second.shape[0]);
      extra += i18n::Format(_(" d_model is now %d."), c.d_model);
    }
    if (c.num_heads < 1 || c.d_model % c.num_heads != 0) {
      int h = 1;
      for (int v : ValidHeadCounts(c.d_model))
        if (v <= std::max(c.num_heads, 1)) h = v;
      extra += i18n::Format(_(" num_heads is now %d (it must divide d_model)."), h);
      c.num_heads = h;
    }
    c.num_kv_heads = 0;  // read from W_k's shape
    // FFN weights in the file are kept, so the encoder block can use them.
    const bool has_ffn = npz.count("ffn_W1") > 0;
    Config load = c;
    load.block = has_ffn ? Block::Encoder : Block::Attention;  // no FFN weights: seeded ones (Recompute)
    if (has_ffn) load.d_ff = 0;                                // from the file
    Weights w = io::WeightsFromNpz(std::move(npz), path, &load);
    c.num_kv_heads = load.num_kv_heads;
    c.ln_eps = load.ln_eps;
    if (has_ffn) c.d_ff = load.d_ff;
    s.choice.cfg = c;
    s.choice.files.weights = std::make_shared<const Weights>(std::move(w));
    s.choice.files.weights_path = path;
    s.choice.files.weights_edited = false;
    s.dirty = true;
    return Report(true, i18n::Format(has_ffn ? _("Loaded the weights from %s (with FFN weights).")
                                             : _("Loaded the weights from %s."),
                                     AbsolutePath(path).c_str()) +
                            extra);
  } catch (const std::exception& e) {
    return Report(false, std::string(_("Could not load the weights: ")) + e.what());
  }
}

FileOutcome SaveInputFile(AppState& s, const std::string& path) { return Save(s, path, {"x", "memory"}, "x"); }

FileOutcome SaveWeightsFile(AppState& s, const std::string& path) {
  if (!s.result.ok) return Save(s, path, {}, "the weights");
  return Save(s, path, WeightNames(s.result.trace), "the weights");
}

}  // namespace mha::gui
