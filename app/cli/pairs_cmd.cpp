#include "cli/pairs_cmd.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "io/assets.hpp"
#include "lm/minimal_pairs.hpp"
#include "options/flags.hpp"
#include "options/table.hpp"
#include "cli/uses_options.hpp"

namespace mha::cli {
namespace {

constexpr const char* kPairsFile = "pairs.jsonl";

// --model mhaviz-small and a missing --pairs, found among the shipped assets; a usage
// error (exit 2) names what is missing and where it was looked for.
void ResolvePaths(std::string& model, std::string& pairs_path) {
  if (model.empty()) throw UsageError("--model is required: give a language model, e.g. --model mhaviz-small.");
  std::error_code ec;
  if (model == io::kSmallModelArg && !std::filesystem::exists(model, ec)) {
    model = io::FindAsset("models", io::kSmallModelFile);
    if (model.empty())
      throw UsageError(std::string("--model mhaviz-small: ") + io::kSmallModelFile +
                       " is not in assets/models here, beside the program, or in its install's "
                       "share/mhaviz/models. Give the checkpoint's path.");
  }
  if (pairs_path.empty()) {
    pairs_path = io::FindAsset("corpus", kPairsFile);
    if (pairs_path.empty())
      throw UsageError(std::string("no --pairs given and ") + kPairsFile +
                       " is not in assets/corpus: give a pairs file, e.g. --pairs pairs.jsonl "
                       "(scripts/make_teaching_corpus.py writes one).");
  }
}

}  // namespace

int PairsCommand(const std::vector<std::string>& args) {
  return Guard("pairs", [&] {
    std::string model, pairs_path;
    bool json = false, knockout = false;
    CLI::App app{
        "mhaviz pairs: score a language model on minimal pairs (a good sentence against the same sentence "
        "with one form wrong). Prints, per phenomenon, the share of pairs where the model gives the good "
        "sentence the higher probability, and the head (layer, head) whose attention from the deciding "
        "position to the cue word is highest on average, with that mean weight and what uniform attention "
        "would give.",
        "mhaviz pairs"};
    TextFlag(app, "--model", model,
             "the language model: a checkpoint from mhaviz train --task text, or mhaviz-small (the shipped one)",
             "--model needs a checkpoint, e.g. --model mhaviz-small.")
        ->type_name("M.npz");
    TextFlag(app, "--pairs", pairs_path,
             "the pairs, one JSON object a line: phenomenon, good, bad, cue, prefix (default: the shipped "
             "assets/corpus/pairs.jsonl)",
             "--pairs needs a file, e.g. --pairs assets/corpus/pairs.jsonl.")
        ->type_name("FILE");
    app.add_flag("--ablate", knockout,
                 "also knock out, one at a time (zero ablation), each phenomenon's head and a control head (the "
                 "head of the same layer that looks least at the cue), and print each phenomenon's accuracy "
                 "without them: does the model need the head it attends with?");
    app.add_flag("--json", json, "print the report as one JSON object");
    if (ParseFlags(app, "pairs", args)) {
      std::cout << app.help();
      return 0;
    }
    ResolvePaths(model, pairs_path);
    // Bad input is a usage error (exit 2): a pairs file that cannot be read or parsed, a
    // checkpoint that cannot be loaded or is not a language model.
    std::vector<lm::MinimalPair> pairs;
    try {
      pairs = lm::LoadMinimalPairs(pairs_path);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    lm::LanguageModel lm;
    try {
      lm = lm::LoadLanguageModel(model);
    } catch (const Error& e) {
      throw UsageError(std::string(e.what()) + " mhaviz pairs needs a language model (mhaviz train --task text).");
    }
    lm::PairsReport r;
    try {
      r = lm::ScoreMinimalPairs(lm, pairs);
    } catch (const Error& e) {
      throw UsageError("'" + pairs_path + "': " + e.what());
    }
    lm::PairsKnockouts k;
    if (knockout) k = lm::KnockOutFoundHeads(lm, pairs, r);
    auto run_json = [&](int run) -> nlohmann::json {
      if (run < 0) return nullptr;
      const lm::KnockoutRun& x = k.runs[static_cast<std::size_t>(run)];
      return {{"layer", x.head.layer}, {"head", x.head.head}, {"name", HeadName(x.head)}};
    };

    if (json) {
      nlohmann::json j{
          {"model", model}, {"pairs_file", pairs_path}, {"num_layers", r.num_layers}, {"num_heads", r.num_heads}};
      nlohmann::json list = nlohmann::json::array();
      for (const lm::PhenomenonScore& p : r.phenomena) {
        nlohmann::json weights = nlohmann::json::array();
        for (int l = 0; l < r.num_layers; ++l) {
          nlohmann::json row = nlohmann::json::array();
          for (int h = 0; h < r.num_heads; ++h)
            row.push_back(p.mean_weight[static_cast<std::size_t>(l * r.num_heads + h)]);
          weights.push_back(row);
        }
        list.push_back({{"phenomenon", p.phenomenon},
                        {"pairs", p.pairs},
                        {"correct", p.correct},
                        {"accuracy", p.accuracy},
                        {"attention_pairs", p.attention_pairs},
                        {"head", {{"layer", p.best_layer}, {"head", p.best_head}, {"weight", p.best_weight}}},
                        {"uniform", p.uniform},
                        {"weights", weights}});
        if (knockout) {
          const std::size_t i = list.size() - 1;
          const int f = k.found[i], c = k.control[i];
          list.back()["knockout"] = {
              {"head", run_json(f)},
              {"accuracy_without_head", k.runs[static_cast<std::size_t>(f)].accuracy[i]},
              {"control", run_json(c)},
              {"accuracy_without_control",
               c < 0 ? nlohmann::json(nullptr) : nlohmann::json(k.runs[static_cast<std::size_t>(c)].accuracy[i])}};
        }
      }
      j["phenomena"] = list;
      if (knockout) {
        // Every phenomenon's accuracy without each head: does only its own drop?
        nlohmann::json runs = nlohmann::json::array();
        for (std::size_t run = 0; run < k.runs.size(); ++run) {
          nlohmann::json one = run_json(static_cast<int>(run));
          one["mode"] = "zero";
          one["accuracy"] = k.runs[run].accuracy;
          runs.push_back(one);
        }
        j["knockouts"] = runs;
      }
      std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
      return 0;
    }
    std::cout << "Minimal pairs: " << pairs.size() << " from " << pairs_path << "\n"
              << "accuracy: how often the good sentence is the likelier one; head: the (layer, head) whose weight "
                 "from the deciding position to the cue word is highest on average; uniform: that weight if "
                 "attention were spread evenly; of pairs: the pairs whose cue ends before the deciding position "
                 "(where a piece joins the cue to the form, the pair counts for accuracy only).\n\n";
    std::cout << Pad("phenomenon", 32) << Pad("pairs", 7) << Pad("accuracy", 10) << Pad("head", 7) << Pad("weight", 8)
              << Pad("uniform", 9) << "of pairs\n";
    for (const lm::PhenomenonScore& p : r.phenomena)
      std::cout << Pad(p.phenomenon, 32) << Pad(std::to_string(p.pairs), 7) << Pad(Fixed(p.accuracy, 3), 10)
                << Pad("L" + std::to_string(p.best_layer) + "H" + std::to_string(p.best_head), 7)
                << Pad(Fixed(p.best_weight, 2), 8) << Pad(Fixed(p.uniform, 2), 9) << p.attention_pairs << "\n";
    if (!knockout) return 0;
    std::cout << "\nKnock-outs (zero ablation, one head at a time): each phenomenon's head, and a control head, the "
                 "head of the same layer that looks least at the cue. Accuracy with every head, then without the "
                 "head; chance is 0.5.\n\n";
    std::cout << Pad("phenomenon", 32) << Pad("accuracy", 10) << Pad("head", 7) << Pad("without", 9)
              << Pad("control", 9) << "without\n";
    for (std::size_t i = 0; i < r.phenomena.size(); ++i) {
      const lm::PhenomenonScore& p = r.phenomena[i];
      const lm::KnockoutRun& f = k.runs[static_cast<std::size_t>(k.found[i])];
      std::cout << Pad(p.phenomenon, 32) << Pad(Fixed(p.accuracy, 3), 10) << Pad(HeadName(f.head), 7)
                << Pad(Fixed(f.accuracy[i], 3), 9);
      if (k.control[i] < 0) {
        std::cout << "-        -\n";
        continue;
      }
      const lm::KnockoutRun& c = k.runs[static_cast<std::size_t>(k.control[i])];
      std::cout << Pad(HeadName(c.head), 9) << Fixed(c.accuracy[i], 3) << "\n";
    }
    return 0;
  });
}

}  // namespace mha::cli
