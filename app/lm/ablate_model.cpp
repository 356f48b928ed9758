#include "lm/ablate_model.hpp"

#include <algorithm>

#include "io/checkpoint.hpp"
#include "io/assets.hpp"
#include "lm/corpus.hpp"
#include "lm/head_labels.hpp"
#include "mha/text_task.hpp"

namespace mha::lm {
namespace {

// Sequences [first, first + count) of `b`.
Batch Slice(const Batch& b, int first, int count) {
  Batch out;
  out.batch = count;
  out.seq = b.seq;
  out.num_targets = b.num_targets;
  const auto row = static_cast<std::ptrdiff_t>(b.seq), at = static_cast<std::ptrdiff_t>(first) * row;
  out.tokens.assign(b.tokens.begin() + at, b.tokens.begin() + at + count * row);
  const std::ptrdiff_t t = row * b.num_targets;
  out.targets.assign(b.targets.begin() + first * t, b.targets.begin() + (first + count) * t);
  return out;
}

}  // namespace

int ReferenceBatchSize(const ModelConfig& cfg, int seq, int most, const std::string& name) {
  const MemoryEstimate one = EstimateEvaluation(cfg, 1, seq);
  const double per = one.activations + one.logits;
  if (per > static_cast<double>(Limits::kMaxTraceBytes))
    throw Error("'" + name + "' cannot be measured here: one of its " + std::to_string(seq) +
                "-token reference sequences needs " + one.Text() + ", over the cap of " +
                std::to_string(Limits::kMaxTraceBytes >> 20) +
                " MiB for a model's traces and logits. A model with "
                "a shorter context (max_seq), fewer heads or layers, or a smaller vocabulary fits.");
  return static_cast<int>(std::clamp(kReferenceBatchBytes / per, 1.0, static_cast<double>(most)));
}

AblationSubject LoadSubject(const std::string& path, int amount, int examples) {
  Model m = io::LoadModel(path);
  if (io::IsTextTask(m.cfg.task))
    return LanguageSubject(std::make_shared<lm::LanguageModel>(lm::LoadLanguageModel(path)), amount);
  const std::string small = io::FindAsset("models", io::kSmallModelFile);
  return TaskSubject(std::move(m), !small.empty() && small == path ? io::kSmallModelArg : path, examples);
}

AblationSubject LanguageSubject(std::shared_ptr<lm::LanguageModel> lm, int amount) {
  AblationSubject s;
  s.path = lm->path;
  s.name = lm->path;
  const std::string small = io::FindAsset("models", io::kSmallModelFile);
  if (!small.empty() && small == lm->path) s.name = io::kSmallModelArg;
  s.lm = std::move(lm);
  const std::vector<std::int32_t> ids =
      lm::EncodeParagraphs(s.lm->tokenizer, lm::ReadText(lm::FindValidationText(s.lm->path)));
  const int seq = s.lm->model.cfg.max_seq;
  CheckTokenStream(ids, s.lm->model.cfg.vocab_size(), seq, "The validation text");
  int windows = CountWindows(ids, seq);
  if (amount < 0) amount = kValidationWindows;
  if (amount > 0) windows = std::min(windows, amount);
  const int per = ReferenceBatchSize(s.lm->model.cfg, seq, 64, s.name);
  for (int first = 0; first < windows; first += per) {
    Batch b;
    MakeConsecutiveBatch(ids, seq, first, std::min(per, windows - first), b);
    s.reference.push_back(std::move(b));
  }
  s.reference_text = std::to_string(windows) + " validation windows of " + std::to_string(seq) + " pieces";
  s.reference_windows = windows;
  s.reference_pieces = seq;
  return s;
}

AblationSubject TaskSubject(Model m, const std::string& name, int examples) {
  AblationSubject s;
  s.path = name;
  s.name = name;
  if (m.cfg.task.empty())
    throw Error("'" + name +
                "' was not trained on a task and is not a language model, so there is no held-out text "
                "to measure what a head is worth on.");
  s.task = io::ParseTaskJson(m.cfg.task, "'" + name + "'");
  s.task_model = std::move(m);
  if (examples <= 0) examples = kHeldOutExamples;
  const int per = ReferenceBatchSize(s.task_model.cfg, s.task->seq, kHeldOutBatch, name);
  // Batch 0 of the held-out stream labels the heads (as the Train view does); the
  // loss is measured on the batches after it, cut to `per` examples to be evaluated:
  // the same examples whatever the cut.
  for (int done = 0, index = 1; done < examples; ++index) {
    Batch b;
    HeldOutBatch(*s.task, s.task_model.cfg.layer.seed, static_cast<std::uint64_t>(index),
                 std::min(kHeldOutBatch, examples - done), b);
    done += b.batch;
    for (int first = 0; first < b.batch; first += per)
      s.reference.push_back(Slice(b, first, std::min(per, b.batch - first)));
  }
  s.reference_text = std::to_string(examples) + " held-out examples of the " + ToString(s.task->kind) + " task";
  return s;
}

StepStats ReferenceLoss(Trainer& trainer, const AblationSubject& s, const std::vector<HeadAblation>* ablate,
                        const std::function<void()>& each_batch) {
  // Weighted by the targets each batch counts, per target: the mean over every example.
  StepStats total;
  std::vector<double> loss_sum, correct;
  double all = 0, loss = 0;
  for (const Batch& b : s.reference) {
    if (each_batch) each_batch();
    const StepStats& st = trainer.Evaluate(s.model(), b, ablate);
    const std::size_t K = st.counted.size();
    total.counted.resize(K, 0);
    correct.resize(K, 0.0);
    double n = 0;
    for (std::size_t k = 0; k < K; ++k) {
      total.counted[k] += st.counted[k];
      correct[k] += st.accuracy[k] * static_cast<double>(st.counted[k]);
      n += static_cast<double>(st.counted[k]);
    }
    loss += st.loss * n;
    all += n;
  }
  total.loss = all > 0 ? loss / all : 0;
  total.accuracy.resize(correct.size());
  for (std::size_t k = 0; k < correct.size(); ++k)
    total.accuracy[k] = total.counted[k] > 0 ? correct[k] / static_cast<double>(total.counted[k]) : 0;
  return total;
}

std::vector<HeadProfile> SubjectLabels(Trainer& trainer, const AblationSubject& s) {
  if (s.lm) {
    const std::vector<std::int32_t> ids =
        lm::EncodeParagraphs(s.lm->tokenizer, lm::ReadText(lm::FindValidationText(s.path)));
    return lm::ProfileOnValidation(*s.lm, ids);
  }
  return HeldOutLabels(trainer, s.task_model, *s.task, s.name);
}

std::vector<HeadProfile> HeldOutLabels(Trainer& trainer, const Model& m, const TaskSpec& task,
                                       const std::string& name) {
  Batch b;
  HeldOutBatch(task, m.cfg.layer.seed, 0, kHeldOutBatch, b);
  const int per = ReferenceBatchSize(m.cfg, b.seq, kHeldOutBatch, name);
  std::vector<Batch> parts;
  for (int first = 0; first < b.batch; first += per) parts.push_back(Slice(b, first, std::min(per, b.batch - first)));
  return ProfileHeads(trainer, m, parts, &task);
}

IclShape IclShapeOf(const AblationSubject& s) {
  const Model& m = s.model();
  IclShape shape;
  for (int id = 0; id < m.cfg.vocab_size(); ++id) {
    const std::string& p = m.cfg.vocab[id];
    const bool special = p.size() >= 2 && p.front() == '<' && p.back() == '>';  // <s>, <unk>, <0xEC>
    const bool content = s.lm ? !special : !p.empty() && p.find_first_not_of("0123456789") == std::string::npos;
    if (content) shape.candidates.push_back(id);
  }
  if (s.lm) shape.prefix = s.lm->bos;
  shape.room = (m.cfg.max_seq - (shape.prefix >= 0 ? 1 : 0)) / 2;
  shape.span = std::min<int>(shape.room, s.lm ? shape.room : static_cast<int>(shape.candidates.size()));
  return shape;
}

HeadRef InductionHead(const std::vector<HeadProfile>& labels) {
  const HeadProfile* best = nullptr;
  for (const HeadProfile& p : labels)
    if (!best || p.induction > best->induction) best = &p;
  return best ? HeadRef{best->layer, best->head} : HeadRef{};
}

const HeadProfile* FindProfile(const std::vector<HeadProfile>& labels, const HeadRef& h) {
  for (const HeadProfile& p : labels)
    if (p.layer == h.layer && p.head == h.head) return &p;
  return nullptr;
}

}  // namespace mha::lm
