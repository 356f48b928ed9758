// `mhaviz export --notebook OUT.ipynb`: the layer (or trained model) the flags describe
// as a Jupyter notebook of the lessons' PyTorch code, with what it reads saved beside
// it as OUT.npz. Both files are written atomically, together or not at all.
#include <cstdio>
#include <iostream>

#include "ablate_apply.hpp"
#include "commands.hpp"
#include "export_source.hpp"
#include "io/checkpoint.hpp"
#include "io/files.hpp"
#include "lm/language_model.hpp"
#include "notebook/notebook.hpp"
#include "options/terminal.hpp"

namespace mha::cli {
namespace {

// The likeliest next pieces per position, as the Next view lists them.
constexpr int kNextPieces = 5;

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ModelName(const std::string& path) {
  std::string name = BaseName(path);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0) name.resize(name.size() - 4);
  return name;
}

// A notebook past the cap would need more than 1.5 GB to run (notebook.hpp): refused
// before the forward pass of a layer, before anything is written for a model.
void CheckNotebookSize(std::int64_t bytes, const std::string& what, const std::string& fix) {
  if (bytes <= notebook::kMaxNotebookTensorBytes) return;
  const double mib = static_cast<double>(bytes) / (1 << 20);
  char gb[32];
  std::snprintf(gb, sizeof gb, "%.1f", (0.25 * (1 << 30) + 13.0 * static_cast<double>(bytes)) / 1e9);
  throw UsageError("a notebook of " + what + " would hold " + std::to_string(static_cast<long long>(mib)) +
                   " MiB of tensors, and running it (every one recomputed in float64 beside them) would need about " +
                   gb + " GB in Python; a notebook holds at most " +
                   std::to_string(notebook::kMaxNotebookTensorBytes >> 20) + " MiB, so that it runs in 1.5 GB. " + fix +
                   " (mhaviz trace --npz writes the tensors of any accepted size.)");
}

int Written(const ExportArgs& e, const std::string& npz_path, const notebook::Files& f, const std::string& what) {
  if (e.quiet) return 0;
  std::cout << what << "\nwrote " << TerminalSafe(e.notebook_path) << " (" << (f.ipynb.size() + 1023) / 1024
            << " KiB) and " << TerminalSafe(npz_path) << ", which it reads\nrun it in Jupyter (jupyter notebook "
            << TerminalSafe(BaseName(e.notebook_path)) << "), or headless: jupyter nbconvert --to notebook --execute "
            << TerminalSafe(BaseName(e.notebook_path)) << "\n";
  return 0;
}

void WriteBoth(const std::string& ipynb_path, const std::string& npz_path, const notebook::Files& f) {
  io::WriteOutputsAtomic({{ipynb_path, [&f](io::Sink& s) { s.Write(f.ipynb.data(), f.ipynb.size()); }},
                          {npz_path, [&f](io::Sink& s) { io::WriteNpz(s, f.tensors, f.raw); }}});
}

// A language model (a sentence through its tokenizer, or --tokens) or a task model
// (--tokens or a held-out --example), every layer run, the chosen one shown.
int ModelNotebook(const ExportArgs& e, const std::string& npz_path) {
  notebook::ModelSpec spec;
  spec.name = ModelName(e.source.model);
  spec.npz_name = BaseName(npz_path);
  spec.layer = e.source.layer;
  spec.knocked_out = e.run.ablate;
  spec.ablate_mode = e.run.ablate_mode;
  std::vector<HeadAblation> ablation;
  lm::SentenceRun run;
  lm::LoadedModelTrace loaded;
  Model model;
  const bool text = e.run.sentence_given || io::IsTextTask(io::LoadModel(e.source.model).cfg.task);
  if (text) {
    lm::LanguageModel lm = lm::LoadLanguageModel(e.source.model);
    const int layers = lm.model.cfg.num_layers;
    if (e.source.layer >= layers)
      throw Error("--layer " + std::to_string(e.source.layer) + " does not exist: the model has " +
                  std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ").");
    ablation = AblateModel(e.run, e.source.model, lm.model, {});
    const std::vector<HeadAblation>* ab = ablation.empty() ? nullptr : &ablation;
    spec.sentence = e.source.tokens.empty() ? (e.run.sentence_given ? e.run.sentence : kDefaultSentence) : "";
    run = e.source.tokens.empty() ? lm::RunOnSentence(lm, spec.sentence, kNextPieces, ab)
                                  : lm::RunOnIds(lm, lm::ParseTokenIds(e.source.tokens), kNextPieces, ab);
    if (!run.notice.empty()) std::cerr << "mhaviz export: note: " << TerminalSafe(run.notice, true) << "\n";
    spec.tokenizer = io::ReadFile(lm.tokenizer.path(), std::size_t(64) << 20);
    spec.bos = lm.bos;
    spec.ids = run.ids;
    spec.pieces = run.pieces;
    spec.next = &run.next;
    model = std::move(lm.model);
    spec.trace = &run.trace;
  } else {
    lm::TraceHow how = TraceHowFor(e.run, e.source.model);
    how.ablate = [&e, &ablation](const Model& m, const std::vector<int>& tokens) {
      ablation = AblateModel(e.run, e.source.model, m, tokens);
      return ablation;
    };
    loaded = lm::LoadForTrace(e.source.model, e.source.tokens, e.source.example, e.source.layer, how);
    spec.ids = loaded.trace.tokens;
    spec.pieces = TokenLabels(loaded.model.cfg, spec.ids);
    model = std::move(loaded.model);
    spec.trace = &loaded.trace;
  }
  spec.model = &model;
  spec.ablation = ablation.empty() ? nullptr : &ablation;
  const notebook::Files f = notebook::ModelNotebook(spec);
  CheckNotebookSize(notebook::TensorBytes(f),
                    "the model's checkpoint and its pass over " + std::to_string(spec.ids.size()) + " tokens",
                    "Use fewer tokens (the checkpoint alone is " + std::to_string(ParameterCount(model.cfg) * 4 >> 20) +
                        " MiB), or a smaller model.");
  WriteBoth(e.notebook_path, npz_path, f);
  const std::string banner = AblationBanner(e.run, model.cfg.num_layers, model.cfg.layer.num_heads);
  return Written(e, npz_path, f,
                 "trained model " + TerminalSafe(e.source.model) + " on " + std::to_string(spec.ids.size()) +
                     " tokens, every layer (layer " + std::to_string(e.source.layer) + " shown)" +
                     (banner.empty() ? "" : "; " + banner));
}

}  // namespace

std::string NotebookNpzPath(const std::string& ipynb_path) {
  return ipynb_path.substr(0, ipynb_path.size() - std::string(".ipynb").size()) + ".npz";
}

int ExportNotebook(const ExportArgs& e) {
  const std::string npz_path = NotebookNpzPath(e.notebook_path);
  io::CheckOutputs({{"--notebook", e.notebook_path}, {"--notebook's .npz", npz_path}});
  if (!e.source.model.empty()) return ModelNotebook(e, npz_path);
  const ExportSource src = LoadExportSource(e, [&e](const Config& c, long long seq, long long seq_kv) {
    CheckNotebookSize(notebook::LayerTensorBytes(c, static_cast<int>(seq), static_cast<int>(seq_kv),
                                                 !e.run.memory.empty() || seq != seq_kv),
                      "this layer", "Use fewer tokens, fewer heads or a smaller d_model.");
  });
  if (!src.notice.empty()) std::cerr << "mhaviz export: note: " << TerminalSafe(src.notice, true) << "\n";
  const Trace& t = src.own;
  notebook::LayerSpec spec;
  spec.trace = &t;
  spec.npz_name = BaseName(npz_path);
  spec.memory = e.run.memory;
  spec.weights_file = e.run.weights_npz;
  spec.preset = e.preset;
  spec.ablate_mode = e.run.ablate_mode;
  LessonExample lesson;
  if (e.preset == "lesson" || e.preset == "hand") {
    lesson = e.preset == "lesson" ? MakeLessonExample() : MakeHandCalculationExample();
    spec.lesson = &lesson;
  } else if (e.preset == "heads" || e.run.input_npz.empty()) {
    spec.sentence = e.preset == "heads" ? e.run.sentence : src.sentence;
    if (e.preset == "heads" && !e.run.sentence_given) spec.sentence = kDefaultSentence;
  }
  const notebook::Files f = notebook::LayerNotebook(spec);
  WriteBoth(e.notebook_path, npz_path, f);
  const int H = t.cfg.num_heads;
  return Written(e, npz_path, f,
                 "attention of " + std::to_string(t.seq) + " query x " + std::to_string(t.seq_kv) + " key tokens, " +
                     std::to_string(H) + (H == 1 ? " head" : " heads"));
}

}  // namespace mha::cli
