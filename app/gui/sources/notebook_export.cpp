#include "gui/sources/notebook_export.hpp"

#include <cctype>
#include <limits>
#include <memory>

#include "gui/sources/exports.hpp"
#include "gui/sources/file_sources.hpp"
#include "gui/sources/knockout.hpp"
#include "gui/sources/lm_source.hpp"
#include "io/files.hpp"
#include "notebook/notebook.hpp"
#include "text/i18n.hpp"

namespace mha::gui {
namespace {

// As `mhaviz export --notebook`: the likeliest next pieces per position, the Next
// view's count.
constexpr int kNextPieces = 5;

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool EndsWithNoCase(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

std::string NpzPath(const std::string& ipynb) { return ipynb.substr(0, ipynb.size() - 6) + ".npz"; }

void WriteBoth(const std::string& ipynb, const std::string& npz, const notebook::Files& f) {
  io::WriteOutputsAtomic({{ipynb, [&f](io::Sink& k) { k.Write(f.ipynb.data(), f.ipynb.size()); }},
                          {npz, [&f](io::Sink& k) { io::WriteNpz(k, f.tensors, f.raw); }}});
}

// A notebook past the cap would need more than 1.5 GB to run (notebook.hpp).
void CheckSize(std::int64_t bytes) {
  if (bytes <= notebook::kMaxNotebookTensorBytes) return;
  throw Error(i18n::Format(_("a notebook of this state would hold %lld MiB of tensors; a notebook holds at most %lld "
                             "MiB, so that it runs in 1.5 GB of Python. Use fewer tokens, fewer heads or a smaller "
                             "d_model."),
                           static_cast<long long>(bytes >> 20),
                           static_cast<long long>(notebook::kMaxNotebookTensorBytes >> 20)));
}

ExportOutcome Saved(const std::string& ipynb, const std::string& npz) {
  return {i18n::Format(_("Saved the notebook to %s and the tensors it reads to %s. Run it in Jupyter."),
                       AbsolutePath(ipynb).c_str(), BaseName(npz).c_str()),
          true};
}

// The language model: its pass re-run on the worker exactly as `export --notebook
// --model` runs it (the sentence through its tokenizer, the knock-out applied).
std::function<ExportOutcome()> ModelWork(AppState& s, const std::string& ipynb, const std::string& npz) {
  std::shared_ptr<const lm::LanguageModel> lm = s.choice.source.lm;
  const KnockoutPlan plan(s.choice.knockout, lm->model);
  const int layer = std::clamp(s.choice.layer, 0, lm->model.cfg.num_layers - 1);
  return [lm, plan, layer, sentence = s.choice.sentence, ipynb, npz]() {
    std::string name = BaseName(lm->path);
    if (EndsWithNoCase(name, ".npz")) name.resize(name.size() - 4);
    const std::vector<HeadAblation>* ab = plan.Any() ? &plan.layers() : nullptr;
    lm::SentenceRun run = lm::RunOnSentence(*lm, sentence, kNextPieces, ab);
    Model model = lm->model;  // the spec's tensors point into a model of its own
    notebook::ModelSpec spec;
    spec.model = &model;
    spec.trace = &run.trace;
    spec.ids = run.ids;
    spec.pieces = run.pieces;
    spec.sentence = sentence;
    spec.tokenizer = io::ReadFile(lm->tokenizer.path(), std::size_t(64) << 20);
    spec.bos = lm->bos;
    spec.layer = layer;
    spec.name = name;
    spec.npz_name = BaseName(npz);
    spec.knocked_out = plan.heads();
    spec.ablate_mode = plan.mean() ? AblationMode::Mean : AblationMode::Zero;
    spec.ablation = ab;
    spec.next = &run.next;
    const notebook::Files f = notebook::ModelNotebook(spec);
    CheckSize(notebook::TensorBytes(f));
    WriteBoth(ipynb, npz, f);
    return Saved(ipynb, npz);
  };
}

// One layer: the app's trace, read on the worker while recomputes wait (as the
// heatmaps' export reads it).
std::function<ExportOutcome()> LayerWork(AppState& s, const std::string& ipynb, const std::string& npz) {
  const Trace& t = s.result.trace;
  CheckSize(notebook::LayerTensorBytes(t.cfg, t.seq, t.seq_kv, t.in.cross()));
  notebook::LayerSpec spec;
  spec.npz_name = BaseName(npz);
  spec.ablate_mode = s.result.knocked_mean ? AblationMode::Mean : AblationMode::Zero;
  const int lesson = LessonPresetInUse(s);
  if (lesson >= 0) {
    spec.preset = lesson == 0 ? "lesson" : "hand";
  } else if (UsesPositionalHeadsExample(s)) {
    spec.preset = "heads";
    spec.sentence = s.choice.sentence;
  } else {
    spec.weights_file = s.choice.files.weights_path;
    if (s.choice.files.input_path.empty()) spec.sentence = s.choice.sentence;
    if (t.in.cross()) spec.memory = s.choice.memory;
  }
  return [&t, spec, lesson, ipynb, npz]() mutable {
    LessonExample example;
    if (lesson >= 0) {
      example = lesson == 0 ? MakeLessonExample() : MakeHandCalculationExample();
      spec.lesson = &example;
    }
    spec.trace = &t;
    const notebook::Files f = notebook::LayerNotebook(spec);
    WriteBoth(ipynb, npz, f);
    return Saved(ipynb, npz);
  };
}

}  // namespace

std::string NotebookPath(const std::string& field) {
  if (field.empty() || EndsWithNoCase(field, ".ipynb")) return field;
  if (EndsWithNoCase(field, ".png") || EndsWithNoCase(field, ".svg"))
    return field.substr(0, field.size() - 4) + ".ipynb";
  return field + ".ipynb";
}

void PrepareNotebookExport(AppState& s, const std::string& field, ExportWork* work) {
  // Always the worker's: a notebook of the language model re-runs it.
  work->cells = std::numeric_limits<double>::infinity();
  std::function<ExportOutcome()> run;
  try {
    const std::string ipynb = NotebookPath(field);
    if (ipynb.empty()) throw Error(_("Type a file name for the notebook first, e.g. attention.ipynb."));
    if (!s.result.ok)
      throw Error(std::string(_("There is nothing to export until the configuration is valid: ")) + s.result.error);
    if (UsingTrainedModel(s) && !s.choice.source.lm)
      throw Error(
          _("The window exports notebooks of a layer and of a language model; for a task model run mhaviz "
            "export --notebook OUT.ipynb --model FILE."));
    const std::string npz = NpzPath(ipynb);
    io::CheckOutputs({{_("the notebook"), ipynb}, {_("the notebook's .npz"), npz}});
    run = s.choice.source.lm ? ModelWork(s, ipynb, npz) : LayerWork(s, ipynb, npz);
  } catch (const std::exception& e) {
    const ExportOutcome failed{std::string(_("Export failed: ")) + e.what(), false};
    run = [failed] { return failed; };
  }
  work->run = [run]() -> ExportOutcome {
    try {
      return run();
    } catch (const std::exception& e) {
      return {std::string(_("Export failed: ")) + e.what(), false};
    }
  };
}

}  // namespace mha::gui
