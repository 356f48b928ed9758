#include "gui/sources/head_jobs_source.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>

#include "gui/sources/lm_source.hpp"
#include "gui/sources/model_source.hpp"
#include "gui/state/app_state.hpp"
#include "io/assets.hpp"
#include "lm/minimal_pairs.hpp"

namespace mha::gui {
namespace {

std::string& PairsFile() {
  static std::string file;
  return file;
}

std::vector<lm::HeadJob> Measure(std::shared_ptr<const lm::LanguageModel> lm, std::string pairs) {
  return lm::HeadJobs(lm::ScoreMinimalPairs(*lm, lm::LoadMinimalPairs(pairs)));
}

}  // namespace

const std::string& HeadJobPairsFile() { return PairsFile(); }

const std::vector<lm::HeadJob>* HeadJobLabels(const AppState& s, std::string* why) {
  static const lm::LanguageModel* for_model = nullptr;
  static std::future<std::vector<lm::HeadJob>> job;
  static std::vector<lm::HeadJob> jobs;
  static bool ready = false;
  static std::string error;
  if (!UsingLanguageModel(s)) return nullptr;
  if (for_model != s.source.lm.get()) {
    for_model = s.source.lm.get();
    jobs.clear();
    ready = false;
    error.clear();
    // The pairs beside the model's own corpus first (assets/models -> assets/corpus), as
    // the validation text is found, else the app's.
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path beside = fs::path(s.source.lm->path).parent_path().parent_path() / "corpus" / "pairs.jsonl";
    PairsFile() = fs::is_regular_file(beside, ec) ? beside.string() : io::FindAsset("corpus", "pairs.jsonl");
    if (PairsFile().empty())
      error = "no pairs.jsonl in " + beside.parent_path().string() + " or the app's assets/corpus";
    else {
      // A future from std::async waits for its work when dropped: a measure still running
      // for the model before is kept until it ends, so switching models never blocks.
      static std::vector<std::future<std::vector<lm::HeadJob>>> retired;
      retired.erase(
          std::remove_if(retired.begin(), retired.end(),
                         [](auto& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }),
          retired.end());
      if (job.valid()) retired.push_back(std::move(job));
      job = std::async(std::launch::async, Measure, s.source.lm, PairsFile());
    }
  }
  if (job.valid() && job.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      jobs = job.get();
      ready = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (why) *why = !error.empty() ? error : ready ? "" : "measuring";
  return ready ? &jobs : nullptr;
}

}  // namespace mha::gui
