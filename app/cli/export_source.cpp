#include "export_source.hpp"

#include "ablate_apply.hpp"
#include "io/checkpoint.hpp"
#include "mha/forward.hpp"
#include "mha/teach.hpp"
#include "render/render.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

std::string PositionalNote(Positional p) {
  // The layer itself runs without PE: the model adds it to the embeddings below layer 0.
  switch (p) {
    case Positional::Learned: return "learned positional embeddings, added below layer 0";
    case Positional::Sinusoidal: return "sinusoidal PE, added below layer 0";
    case Positional::None: break;
  }
  return "no positional encoding";
}

// The model's name as the GUI's marker gives it: the shipped model by its name, a
// checkpoint by its file name.
std::string TrainedName(const std::string& model) {
  const std::size_t slash = model.find_last_of('/');
  std::string name = slash == std::string::npos ? model : model.substr(slash + 1);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0) name.resize(name.size() - 4);
  return name;
}

// A language model on the sentence: its pieces, every layer, the layer asked for.
void FromLanguageModel(const ExportArgs& e, ExportSource& s) {
  const lm::LanguageModel model = lm::LoadLanguageModel(e.source.model);
  const int layers = model.model.cfg.num_layers;
  if (e.source.layer >= layers)
    throw Error("--layer " + std::to_string(e.source.layer) + " does not exist: the model has " +
                std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ").");
  const std::vector<HeadAblation> ab = AblateModel(e.run, e.source.model, model.model, {});
  const std::vector<HeadAblation>* ablate = ab.empty() ? nullptr : &ab;
  s.lm_run = e.source.tokens.empty()
                 ? lm::RunOnSentence(model, e.run.sentence_given ? e.run.sentence : kDefaultSentence, 0, ablate)
                 : lm::RunOnIds(model, lm::ParseTokenIds(e.source.tokens), 0, ablate);
  s.notice = s.lm_run.notice;
  s.kind = ExportSource::Kind::LanguageModel;
  s.layer = e.source.layer;
  s.sentence =
      "layer " + std::to_string(e.source.layer) + " of " + e.source.model +
      (e.source.tokens.empty() ? " on \u201C" + (e.run.sentence_given ? e.run.sentence : kDefaultSentence) + "\u201D"
                               : std::string());
  s.positional = PositionalNote(model.model.cfg.positional);
  s.weights = "trained: " + TrainedName(e.source.model) + " \u00B7 layer " + std::to_string(e.source.layer);
}

void FromCheckpoint(const ExportArgs& e, ExportSource& s) {
  s.checkpoint = lm::LoadForTrace(e.source.model, e.source.tokens, e.source.example, e.source.layer,
                                  TraceHowFor(e.run, e.source.model));
  s.kind = ExportSource::Kind::Checkpoint;
  s.sentence = "layer " + std::to_string(s.checkpoint.layer) + " of " + e.source.model;
  s.positional = PositionalNote(s.checkpoint.model.cfg.positional);
  s.weights = "trained: " + TrainedName(e.source.model) + " \u00B7 layer " + std::to_string(s.checkpoint.layer);
}

// The header names the knocked-out heads: the picture is of the ablated model.
void NameAblation(const ExportArgs& e, ExportSource& s, int num_layers) {
  if (!e.run.ablate_given) return;
  std::string heads;
  for (const HeadRef& h : e.run.ablate) heads += (heads.empty() ? "" : ", ") + HeadName(h);
  s.sentence += " \u00B7 knocked out (" + std::string(ToString(e.run.ablate_mode)) + "): " + heads;
  const std::string banner = AblationBanner(e.run, num_layers, s.Layer().cfg.num_heads);
  s.notice += (s.notice.empty() ? "" : " ") + banner;
}

}  // namespace

ExportSource LoadExportSource(const ExportArgs& e, const SizeCheck& check) {
  ExportSource s;
  if (!e.source.model.empty()) {
    const bool text = e.run.sentence_given || io::IsTextTask(io::LoadModel(e.source.model).cfg.task);
    if (text)
      FromLanguageModel(e, s);
    else
      FromCheckpoint(e, s);
    NameAblation(e, s,
                 static_cast<int>(s.kind == ExportSource::Kind::LanguageModel ? s.lm_run.trace.layers.size()
                                                                              : s.checkpoint.trace.layers.size()));
    check(s.Layer().cfg, s.Layer().seq, s.Layer().seq_kv);
    return s;
  }
  Prepared p = Prepare(e.run);
  s.notice = p.notice;
  if (e.run.input_npz.empty()) {
    s.sentence = p.sentence;  // as read: --sentence-file included
    s.memory = e.run.memory;
  }
  s.weights = e.run.weights_npz.empty() ? render::kUntrainedWeights : "from " + e.run.weights_npz;
  if (!e.preset.empty()) {
    LessonExample ex = e.preset == "lesson" ? MakeLessonExample()
                       : e.preset == "hand" ? MakeHandCalculationExample()
                                            : MakePositionalHeadsExample(p.in.tokens);
    p.cfg = ex.cfg;
    p.in = std::move(ex.in);
    p.weights = std::make_shared<const Weights>(std::move(ex.weights));
    s.sentence = ex.title + (e.preset != "heads" ? std::string() : " \u00B7 " + p.sentence);
    s.weights = "set by hand (" + ex.title + ")";
    s.memory.clear();
    s.notice = ex.title + ": " + ex.description;
  }
  check(p.cfg, p.in.x.rows(), p.in.cross() ? p.in.memory.rows() : p.in.x.rows());
  AblateOwnLayer(e.run, p.cfg, p.weights, p.in);
  s.own = Forward(p.cfg, p.weights, p.in);
  NameAblation(e, s, 1);
  return s;
}

}  // namespace mha::cli
