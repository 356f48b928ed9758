// What an ablation experiment runs on: a trained checkpoint (a task model or a language
// model such as mhaviz-small), its reference text (a language model's validation
// windows, a task model's held-out examples), its head labels as the app measures
// them, and the loss with any set of heads knocked out. Shared by `mhaviz ablate` and
// the --ablate flag of trace and export.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lm/language_model.hpp"
#include "mha/ablation.hpp"
#include "mha/heads.hpp"
#include "mha/tasks.hpp"

namespace mha::lm {

// Held-out examples of a task model the loss is measured on, by default, and per batch.
inline constexpr int kHeldOutExamples = 512;
inline constexpr int kHeldOutBatch = 128;
// Validation windows of a language model the loss is measured on, by default (0: all).
inline constexpr int kValidationWindows = 256;
// What one reference batch may hold: its traces and logits (EstimateEvaluation), a
// quarter of the trace cap, so that the reference pass beside the app's own trace of
// the model (up to the cap) stays within the 1.5 GB budget. A model whose windows are
// long runs them a few at a time: 64 windows of 1,024 pieces in one batch were 4.3 GB.
inline constexpr double kReferenceBatchBytes = static_cast<double>(Limits::kMaxTraceBytes) / 4;
// How many sequences of `seq` tokens one reference batch holds: at most `most`, at least
// 1. Throws mha::Error (naming `name`) if one sequence alone is over the trace cap.
int ReferenceBatchSize(const ModelConfig& cfg, int seq, int most, const std::string& name);

struct AblationSubject {
  std::string path;                       // the checkpoint
  std::string name;                       // what messages call it ("mhaviz-small", or the path)
  std::shared_ptr<lm::LanguageModel> lm;  // a language model, or null
  Model task_model;                       // a task model (when lm is null)
  std::optional<TaskSpec> task;           // its task
  std::vector<Batch> reference;           // where losses and mean contexts are measured, in batches
                                          // of at most ReferenceBatchSize sequences
  std::string reference_text;             // "256 validation windows of 64 pieces (16,384 predictions)"
  // A language model's reference in numbers (0 for a task model), for a window that
  // says it in its own language.
  int reference_windows = 0, reference_pieces = 0;

  const Model& model() const { return lm ? lm->model : task_model; }
  int layers() const { return model().cfg.num_layers; }
  int heads() const { return model().cfg.layer.num_heads; }
};

// Loads the checkpoint and its reference text: `windows` validation windows (language
// model; 0: all, -1: kValidationWindows) or `examples` held-out examples (task model;
// -1: kHeldOutExamples). Throws mha::Error.
AblationSubject LoadSubject(const std::string& path, int windows = -1, int examples = -1);
// A language model already in memory (the app's) and `windows` windows of its
// validation text, found beside its checkpoint as LoadSubject finds it (0: all, -1:
// kValidationWindows): what LoadSubject makes of its file, without reading it again.
AblationSubject LanguageSubject(std::shared_ptr<lm::LanguageModel> lm, int windows = -1);
// A task model already in memory (a Train view run, a loaded checkpoint) and its
// `examples` held-out examples (-1: kHeldOutExamples): what LoadSubject makes of its
// file. `name` is what messages call it. Throws mha::Error if it has no task.
AblationSubject TaskSubject(Model m, const std::string& name, int examples = -1);

// The mean loss (and per-target accuracy) over the reference, with `ablate` if given.
// `each_batch`, if set, runs before every batch: a worker's cancel point (it throws).
StepStats ReferenceLoss(Trainer& trainer, const AblationSubject& s, const std::vector<HeadAblation>* ablate,
                        const std::function<void()>& each_batch = {});

// Every head's label and scores, measured as the app's views do (the Model view for a
// language model, the Train view for a task model).
std::vector<HeadProfile> SubjectLabels(Trainer& trainer, const AblationSubject& s);
// A task model's labels: on the first kHeldOutBatch held-out examples of its task (the
// stream's batch 0, as the Train view measures them), evaluated ReferenceBatchSize at a
// time. `name` is what a refusal calls the model.
std::vector<HeadProfile> HeldOutLabels(Trainer& trainer, const Model& m, const TaskSpec& task, const std::string& name);

// The in-context learning experiment's repeated spans (mha/ablation.hpp) for the
// subject: A's candidates are a language model's pieces (no <s>, <unk> or byte
// pieces) after <s>, or a task model's number tokens. `room` is the longest span that
// fits the context twice; `span` is the default, as long as fits (a task model: at most
// its number tokens, so A's tokens are distinct).
inline constexpr int kIclSequences = 64;
struct IclShape {
  std::vector<int> candidates;
  int prefix = -1;  // the token before A (a language model's <s>), or -1
  int room = 0, span = 0;
};
IclShape IclShapeOf(const AblationSubject& s);
// The head with the highest induction score (the first such in `labels`' order).
HeadRef InductionHead(const std::vector<HeadProfile>& labels);

// The head's profile in `labels`, or null.
const HeadProfile* FindProfile(const std::vector<HeadProfile>& labels, const HeadRef& h);

}  // namespace mha::lm
