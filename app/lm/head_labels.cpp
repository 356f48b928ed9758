#include "lm/head_labels.hpp"

#include <filesystem>

#include "io/assets.hpp"

namespace mha::lm {

std::vector<HeadProfile> ProfileOnValidation(const LanguageModel& lm, const std::vector<std::int32_t>& ids,
                                             int windows) {
  const int ctx = lm.model.cfg.max_seq, half = ctx / 2;
  std::vector<HeadProfile> heads, repeated;
  std::vector<std::vector<double>> counts, repeated_counts;
  for (int w = 0; w < windows && static_cast<std::size_t>((w + 1) * ctx) <= ids.size(); ++w) {
    std::vector<int> window(ids.begin() + w * ctx, ids.begin() + (w + 1) * ctx);
    const SentenceRun run = RunOnIds(lm, window, 0);
    for (std::size_t l = 0; l < run.trace.layers.size(); ++l)
      AddToProfile(run.trace.layers[l], window, static_cast<int>(l), heads, counts);
    // A context of one piece has no first half to repeat: no induction to measure.
    if (half < 1) continue;
    window.resize(static_cast<std::size_t>(half));
    window.insert(window.end(), window.begin(), window.end());
    const SentenceRun twice = RunOnIds(lm, window, 0);
    for (std::size_t l = 0; l < twice.trace.layers.size(); ++l)
      AddToProfile(twice.trace.layers[l], window, static_cast<int>(l), repeated, repeated_counts);
  }
  if (heads.empty()) throw Error("the validation text is shorter than one window of the model's context");
  FinishProfile(heads, counts);
  FinishProfile(repeated, repeated_counts);
  for (std::size_t n = 0; n < heads.size() && n < repeated.size(); ++n) {
    heads[n].induction = repeated[n].induction;
    LabelHead(heads[n]);
    NameOnValidation(heads[n]);
  }
  return heads;
}

void NameOnValidation(HeadProfile& p) {
  if (p.label == "first" && p.induction >= kMinLabelScore) {
    p.label = "induction";
    p.score = p.induction;
  }
}

std::string FindValidationText(const std::string& checkpoint) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path beside = fs::path(checkpoint).parent_path().parent_path() / "corpus";
  for (const char* name : {"valid.txt", "valid.txt.gz"})
    if (fs::is_regular_file(beside / name, ec)) return (beside / name).string();
  for (const char* name : {"valid.txt", "valid.txt.gz"}) {
    const std::string p = io::FindAsset("corpus", name);
    if (!p.empty()) return p;
  }
  throw Error("No validation text (valid.txt or valid.txt.gz) in " + beside.string() +
              " or in the app's assets/corpus: the loss a head is worth is measured on it. Put the model's "
              "validation text there.");
}

}  // namespace mha::lm
