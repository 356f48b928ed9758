#include "export_source.hpp"

#include "io/checkpoint.hpp"
#include "mha/forward.hpp"
#include "mha/teach.hpp"

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

// A language model on the sentence: its pieces, every layer, the layer asked for.
void FromLanguageModel(const ExportArgs& e, ExportSource& s) {
  const lm::LanguageModel model = lm::LoadLanguageModel(e.source.model);
  const int layers = model.model.cfg.num_layers;
  if (e.source.layer >= layers)
    throw Error("--layer " + std::to_string(e.source.layer) + " does not exist: the model has " +
                std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ").");
  s.lm_run = e.source.tokens.empty()
                 ? lm::RunOnSentence(model, e.run.sentence_given ? e.run.sentence : kDefaultSentence, 0)
                 : lm::RunOnIds(model, lm::ParseTokenIds(e.source.tokens), 0);
  s.notice = s.lm_run.notice;
  s.kind = ExportSource::Kind::LanguageModel;
  s.layer = e.source.layer;
  s.sentence = "layer " + std::to_string(e.source.layer) + " of " + e.source.model +
               (e.source.tokens.empty() ? " on \u201C" + (e.run.sentence_given ? e.run.sentence : kDefaultSentence) +
                                              "\u201D"
                                        : std::string());
  s.positional = PositionalNote(model.model.cfg.positional);
}

void FromCheckpoint(const ExportArgs& e, ExportSource& s) {
  s.checkpoint = lm::LoadForTrace(e.source.model, e.source.tokens, e.source.example, e.source.layer);
  s.kind = ExportSource::Kind::Checkpoint;
  s.sentence = "layer " + std::to_string(s.checkpoint.layer) + " of " + e.source.model;
  s.positional = PositionalNote(s.checkpoint.model.cfg.positional);
}

}  // namespace

ExportSource LoadExportSource(const ExportArgs& e, const SizeCheck& check) {
  ExportSource s;
  if (!e.source.model.empty()) {
    const bool text = e.run.sentence_given || io::IsTextTask(io::LoadModel(e.source.model).cfg.task);
    if (text) FromLanguageModel(e, s);
    else FromCheckpoint(e, s);
    check(s.Layer().cfg, s.Layer().seq, s.Layer().seq_kv);
    return s;
  }
  Prepared p = Prepare(e.run);
  s.notice = p.notice;
  if (e.run.input_npz.empty()) {
    s.sentence = p.sentence;  // as read: --sentence-file included
    s.memory = e.run.memory;
  }
  if (!e.preset.empty()) {
    LessonExample ex = e.preset == "lesson" ? MakeLessonExample() : MakePositionalHeadsExample(p.in.tokens);
    p.cfg = ex.cfg;
    p.in = std::move(ex.in);
    p.weights = std::make_shared<const Weights>(std::move(ex.weights));
    s.sentence = ex.title + (e.preset == "lesson" ? std::string() : " \u00B7 " + p.sentence);
    s.memory.clear();
    s.notice = ex.title + ": " + ex.description;
  }
  check(p.cfg, p.in.x.rows(), p.in.cross() ? p.in.memory.rows() : p.in.x.rows());
  s.own = Forward(p.cfg, p.weights, p.in);
  return s;
}

}  // namespace mha::cli
