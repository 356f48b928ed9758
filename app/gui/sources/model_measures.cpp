#include "gui/sources/model_measures.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "gui/sources/lm_source.hpp"
#include "gui/state/app_state.hpp"
#include "io/assets.hpp"
#include "lm/ablate_model.hpp"
#include "lm/corpus.hpp"
#include "lm/head_evidence.hpp"
#include "lm/head_labels.hpp"
#include "lm/minimal_pairs.hpp"

namespace mha::gui {
namespace {

namespace fs = std::filesystem;

// Beside assets/models/ is assets/corpus/, where the model's own texts live.
fs::path CorpusBeside(const lm::LanguageModel& lm) { return fs::path(lm.path).parent_path().parent_path() / "corpus"; }

void StartLabels(AppState& s, std::shared_ptr<const lm::LanguageModel> lm) {
  auto& m = s.result.validation_labels;
  const fs::path dir = CorpusBeside(*lm);
  std::error_code ec;
  for (const char* name : {"valid.txt", "valid.txt.gz"})
    if (fs::is_regular_file(dir / name, ec)) m.file = (dir / name).string();
  if (m.file.empty()) {
    m.unavailable = "no valid.txt or valid.txt.gz in " + dir.string();
    return;
  }
  m.measuring = true;
  // Every head's scores on the validation text, as the CLI's ablate labels them
  // (lm::ProfileOnValidation: induction on each window's first half repeated).
  s.recompute.labels_task.Start([lm, file = m.file](TaskContext<std::vector<HeadProfile>>&) {
    // Stored beside the checkpoint (or cached) for these very files: no pass needed.
    if (std::optional<lm::HeadEvidence> e = lm::FindHeadEvidence(*lm)) return std::move(e->profiles);
    const std::vector<std::int32_t> ids = lm::EncodeParagraphs(lm->tokenizer, lm::ReadText(file));
    return lm::ProfileOnValidation(*lm, ids, lm::kLabelWindows);
  });
}

void StartJobs(AppState& s, std::shared_ptr<const lm::LanguageModel> lm) {
  auto& m = s.result.head_jobs;
  // The pairs beside the model's own corpus first, as the validation text is found,
  // else the app's.
  std::error_code ec;
  const fs::path beside = CorpusBeside(*lm) / "pairs.jsonl";
  m.file = fs::is_regular_file(beside, ec) ? beside.string() : io::FindAsset("corpus", "pairs.jsonl");
  if (m.file.empty()) {
    m.unavailable = "no pairs.jsonl in " + beside.parent_path().string() + " or the app's assets/corpus";
    return;
  }
  m.measuring = true;
  s.recompute.jobs_task.Start([lm, file = m.file](TaskContext<std::vector<lm::HeadJob>>&) {
    // The stored evidence's intact scores, when it was measured on this pairs file.
    std::optional<lm::HeadEvidence> e = lm::FindHeadEvidence(*lm);
    if (e && e->pairs.name == std::filesystem::path(file).filename().string() && e->pairs.hash == lm::FileHash(file))
      return lm::HeadJobs(e->table.plain);
    return lm::HeadJobs(lm::ScoreMinimalPairs(*lm, lm::LoadMinimalPairs(file)));
  });
}

void StartEvidence(AppState& s, std::shared_ptr<const lm::LanguageModel> lm) {
  s.result.head_evidence.measuring = true;
  s.recompute.evidence_task.Start([lm](TaskContext<lm::HeadEvidence>&) {
    std::string where;
    if (std::optional<lm::HeadEvidence> e = lm::FindHeadEvidence(*lm, &where)) return std::move(*e);
    throw Error(where);
  });
}

// A finished task's outcome into `m`.
template <class T>
void Take(Task<T>& task, Measured<T>& m) {
  if (!task.Poll()) return;
  m.measuring = false;
  if (auto v = task.result())
    m.value = std::move(v);
  else
    m.unavailable = task.error();
}

}  // namespace

void StepModelMeasures(AppState& s) {
  RecomputeState& rc = s.recompute;
  const std::shared_ptr<const lm::LanguageModel> lm = UsingLanguageModel(s) ? s.choice.source.lm : nullptr;
  if (lm != rc.measured_for) {
    rc.measured_for = lm;
    // A measure still running for the model before ends on its own (a task is never
    // waited for): switching models never blocks.
    rc.labels_task.Cancel();
    rc.jobs_task.Cancel();
    rc.evidence_task.Cancel();
    s.result.validation_labels = {};
    s.result.head_jobs = {};
    s.result.head_evidence = {};
    if (lm) {
      StartEvidence(s, lm);
      StartLabels(s, lm);
      StartJobs(s, lm);
    }
  }
  Take(rc.labels_task, s.result.validation_labels);
  Take(rc.jobs_task, s.result.head_jobs);
  Take(rc.evidence_task, s.result.head_evidence);
}

void AdoptHeadEvidence(AppState& s, const lm::LanguageModel& lm, std::shared_ptr<const lm::HeadEvidence> e) {
  RecomputeState& rc = s.recompute;
  if (rc.measured_for.get() != &lm || !e) return;
  rc.evidence_task.Cancel();
  s.result.head_evidence = {};
  s.result.head_evidence.value = std::move(e);
}

}  // namespace mha::gui
